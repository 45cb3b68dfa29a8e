//! One group commit's worth of work: what the core asked for while the batch's requests ran,
//! and the replies waiting for the commit. Nothing is answered or launched before it is
//! durable. When a commit fails the batch is thrown away whole: its requests are answered
//! with the store's failure (the runtime puts the core back as the store has it), except
//! reads that ran before the batch's first change, which saw only durable state. So a
//! request whose client was told it failed is never committed later.

use crate::core::federation::FedRequest;
use crate::core::nonstop::NonstopEvent;
use crate::core::{AcctRecord, NodeCommand, Outbox, PowerCommand, SaveHint, ScriptRun};
use std::collections::HashSet;

/// What became of the batch a reply waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Committed (or nothing to commit): the request's result stands.
    Done,
    /// The commit failed: nothing of the request was kept.
    Refused,
}

/// A reply waiting for its batch's commit; it is told the batch's [`Outcome`].
pub type Reply = Box<dyn FnOnce(Outcome) + Send>;

/// A reply and whether its request ran before any change of its batch and changed nothing
/// itself (a read of durable state, answered even when the batch's commit fails).
type Waiting = (Reply, bool);

/// The outbox requests write into, plus the replies that wait for the commit.
#[derive(Default)]
pub struct Batch {
    saves: Vec<SaveHint>,
    seen: HashSet<(u8, u32)>,
    acct: Vec<AcctRecord>,
    cmds: Vec<NodeCommand>,
    power: Vec<PowerCommand>,
    fed: Vec<FedRequest>,
    scripts: Vec<ScriptRun>,
    nonstop: Vec<NonstopEvent>,
    replies: Vec<Waiting>,
    keep_acct: bool,
    force: bool,
    /// Changes asked for so far (every outbox call counts, repeats included).
    changes: u64,
}

impl Batch {
    /// An empty batch; accounting records are dropped unless `keep_acct` (no dbd, no records).
    pub fn new(keep_acct: bool) -> Self {
        Self {
            keep_acct,
            ..Self::default()
        }
    }

    /// Queues a reply to send once the batch is durable. Call it right after the request
    /// ran: a request after which the batch holds no change yet is a read of durable state.
    pub fn reply(&mut self, r: Reply) {
        let read = self.changes == 0;
        self.replies.push((r, read));
    }

    /// Asks for a commit even without saves (e.g. new leased ids to persist).
    pub fn touch(&mut self) {
        self.changes += 1;
        self.force = true;
    }

    /// Whether the store has anything to write.
    pub fn needs_commit(&self) -> bool {
        self.force || !self.saves.is_empty() || !self.acct.is_empty()
    }

    /// Whether anything at all waits (writes, replies or commands).
    pub fn is_empty(&self) -> bool {
        !self.needs_commit()
            && self.replies.is_empty()
            && self.cmds.is_empty()
            && self.power.is_empty()
            && self.fed.is_empty()
            && self.scripts.is_empty()
            && self.nonstop.is_empty()
    }

    /// The state changes to save, each once, in first-seen order.
    pub fn saves(&self) -> &[SaveHint] {
        &self.saves
    }

    /// The accounting records, in order.
    pub fn acct(&self) -> &[AcctRecord] {
        &self.acct
    }

    /// After a successful commit: the power save programs to run.
    pub fn release_power(&mut self) -> Vec<PowerCommand> {
        std::mem::take(&mut self.power)
    }

    /// After a successful commit: the controller programs to run.
    pub fn release_scripts(&mut self) -> Vec<ScriptRun> {
        std::mem::take(&mut self.scripts)
    }

    /// After a successful commit: the failure management events for subscribers.
    pub fn release_nonstop(&mut self) -> Vec<NonstopEvent> {
        std::mem::take(&mut self.nonstop)
    }

    /// After a successful commit: the requests for the federation arbiter.
    pub fn release_fed(&mut self) -> Vec<FedRequest> {
        std::mem::take(&mut self.fed)
    }

    /// After a successful commit: the replies and node commands to release.
    pub fn release(&mut self) -> (Vec<Reply>, Vec<NodeCommand>) {
        self.saves.clear();
        self.seen.clear();
        self.acct.clear();
        self.force = false;
        self.changes = 0;
        let replies = std::mem::take(&mut self.replies);
        (
            replies.into_iter().map(|(r, _)| r).collect(),
            std::mem::take(&mut self.cmds),
        )
    }

    /// After a failed commit: empties the batch (its changes, commands, programs and
    /// federation requests are dropped: none of them happened) and hands back its replies,
    /// each with whether it was a read of durable state.
    pub fn discard(&mut self) -> Vec<(Reply, bool)> {
        let replies = std::mem::take(&mut self.replies);
        *self = Self::new(self.keep_acct);
        replies
    }
}

impl Outbox for Batch {
    fn node(&mut self, cmd: NodeCommand) {
        self.changes += 1;
        self.cmds.push(cmd);
    }

    fn power(&mut self, cmd: PowerCommand) {
        self.changes += 1;
        self.power.push(cmd);
    }

    fn fed(&mut self, req: FedRequest) {
        self.changes += 1;
        self.fed.push(req);
    }

    fn script(&mut self, run: ScriptRun) {
        self.changes += 1;
        self.scripts.push(run);
    }

    fn nonstop(&mut self, event: NonstopEvent) {
        self.nonstop.push(event);
    }

    fn accounting(&mut self, rec: AcctRecord) {
        self.changes += 1;
        if self.keep_acct {
            self.acct.push(rec);
        }
    }

    fn save(&mut self, hint: SaveHint) {
        self.changes += 1;
        let key = match hint {
            SaveHint::Job(id) => (0, id.get()),
            SaveHint::JobPurged(id) => (1, id.get()),
            SaveHint::Node(i) => (2, i.get()),
            SaveHint::Partitions => (3, 0),
        };
        if self.seen.insert(key) {
            self.saves.push(hint);
        }
    }
}

/// The requests of one group commit: `first` (the one the loop waited for), then every request
/// already queued, up to `max` in all. Requests that arrived while the previous commit was in
/// flight are queued, so they are committed together in this one.
pub fn gather<M>(first: M, mut queued: impl FnMut() -> Option<M>, max: usize) -> Vec<M> {
    let mut msgs = vec![first];
    while msgs.len() < max {
        match queued() {
            Some(m) => msgs.push(m),
            None => break,
        }
    }
    msgs
}

/// A batch whose commit failed, emptied: why, and its replies to answer.
pub struct Failed {
    /// The store's error.
    pub reason: String,
    /// The batch's replies, each with whether it was a read of durable state.
    pub replies: Vec<(Reply, bool)>,
}

impl Failed {
    /// Answers the replies: reads of durable state with their result, the rest refused.
    pub fn answer(self) {
        for (reply, read) in self.replies {
            reply(if read {
                Outcome::Done
            } else {
                Outcome::Refused
            });
        }
    }
}

/// Makes `batch` durable with `write` (one transaction of its saves and records, when it has
/// any) and only then hands back its replies and node commands to release. When `write`
/// fails the batch is discarded (see [`Batch::discard`]): nothing of it is ever written,
/// and the replies come back in [`Failed`] to be told so.
pub fn commit_batch(
    batch: &mut Batch,
    write: impl FnOnce(&Batch) -> Result<(), String>,
) -> Result<(Vec<Reply>, Vec<NodeCommand>), Failed> {
    if batch.needs_commit()
        && let Err(reason) = write(batch)
    {
        return Err(Failed {
            reason,
            replies: batch.discard(),
        });
    }
    Ok(batch.release())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_vocab::FedJobId;
    use std::sync::{Arc, Mutex};

    fn job(id: u32) -> SaveHint {
        SaveHint::Job(FedJobId::from_raw(id).unwrap())
    }

    /// A reply that records `name` and its outcome in `answered` when sent.
    fn reply(answered: &Arc<Mutex<Vec<(&'static str, Outcome)>>>, name: &'static str) -> Reply {
        let answered = Arc::clone(answered);
        Box::new(move |outcome| answered.lock().unwrap().push((name, outcome)))
    }

    fn done(names: &[&'static str]) -> Vec<(&'static str, Outcome)> {
        names.iter().map(|&n| (n, Outcome::Done)).collect()
    }

    #[test]
    fn gather_takes_everything_queued_up_to_the_limit() {
        let mut queue = vec![2, 3, 4, 5].into_iter();
        assert_eq!(gather(1, || queue.next(), 3), vec![1, 2, 3]);
        // The rest is the next commit's.
        let first = queue.next().unwrap();
        assert_eq!(gather(first, || queue.next(), 3), vec![4, 5]);
        let mut empty = std::iter::empty::<u32>();
        assert_eq!(gather(9, || empty.next(), 3), vec![9]);
    }

    #[test]
    fn requests_arriving_during_a_commit_are_committed_together_in_the_next() {
        let answered = Arc::new(Mutex::new(Vec::new()));
        let mut b = Batch::new(true);
        b.save(job(1));
        b.reply(reply(&answered, "a"));
        // The commit is in flight: b and c arrive meanwhile and wait in the queue.
        let mut writes = Vec::new();
        let (replies, _) = commit_batch(&mut b, |b| {
            writes.push(b.saves().to_vec());
            Ok(())
        })
        .ok()
        .expect("committed");
        assert!(
            answered.lock().unwrap().is_empty(),
            "answered before its commit"
        );
        replies.into_iter().for_each(|r| r(Outcome::Done));
        assert_eq!(*answered.lock().unwrap(), done(&["a"]));
        let mut queue = vec![("c", 3)].into_iter();
        for (name, id) in gather(("b", 2), || queue.next(), 4096) {
            b.save(job(id));
            b.reply(reply(&answered, name));
        }
        let (replies, _) = commit_batch(&mut b, |b| {
            writes.push(b.saves().to_vec());
            Ok(())
        })
        .ok()
        .expect("committed");
        replies.into_iter().for_each(|r| r(Outcome::Done));
        // Two commits for three requests, each answered after its own.
        assert_eq!(writes, vec![vec![job(1)], vec![job(2), job(3)]]);
        assert_eq!(*answered.lock().unwrap(), done(&["a", "b", "c"]));
    }

    #[test]
    fn a_failed_commit_refuses_its_writes_and_is_never_retried() {
        let answered = Arc::new(Mutex::new(Vec::new()));
        let mut b = Batch::new(true);
        // A read before any change saw only durable state.
        b.reply(reply(&answered, "read"));
        b.save(job(1));
        b.node(NodeCommand::Signal {
            job: FedJobId::from_raw(1).unwrap(),
            nodes: vec![],
            signal: 9,
        });
        b.reply(reply(&answered, "a"));
        // A read after a change saw what is about to be thrown away.
        b.reply(reply(&answered, "late read"));
        let failed = commit_batch(&mut b, |_| Err("disk full".to_string()))
            .err()
            .expect("the commit failed");
        assert_eq!(failed.reason, "disk full");
        assert!(answered.lock().unwrap().is_empty(), "answered on its own");
        failed.answer();
        assert_eq!(
            *answered.lock().unwrap(),
            [
                ("read", Outcome::Done),
                ("a", Outcome::Refused),
                ("late read", Outcome::Refused)
            ]
        );
        // Nothing of the failed batch is left to be written or sent with the next one.
        assert!(b.is_empty());
        answered.lock().unwrap().clear();
        b.save(job(2));
        b.reply(reply(&answered, "b"));
        let mut written = Vec::new();
        let (replies, cmds) = commit_batch(&mut b, |b| {
            written = b.saves().to_vec();
            Ok(())
        })
        .ok()
        .expect("committed");
        assert_eq!(written, vec![job(2)]);
        assert!(cmds.is_empty(), "the failed batch's command was sent");
        replies.into_iter().for_each(|r| r(Outcome::Done));
        assert_eq!(*answered.lock().unwrap(), done(&["b"]));
    }

    #[test]
    fn a_batch_of_reads_is_answered_without_a_write() {
        let answered = Arc::new(Mutex::new(Vec::new()));
        let mut b = Batch::new(true);
        b.reply(reply(&answered, "query"));
        let (replies, _) = commit_batch(&mut b, |_| panic!("nothing to write"))
            .ok()
            .expect("nothing to fail");
        replies.into_iter().for_each(|r| r(Outcome::Done));
        assert_eq!(*answered.lock().unwrap(), done(&["query"]));
    }

    #[test]
    fn saves_are_deduplicated_and_cleared_on_release() {
        let mut b = Batch::new(false);
        let id = FedJobId::from_raw(5).unwrap();
        b.save(SaveHint::Job(id));
        b.save(SaveHint::Job(id));
        b.save(SaveHint::JobPurged(id));
        assert_eq!(b.saves(), [SaveHint::Job(id), SaveHint::JobPurged(id)]);
        b.reply(Box::new(|_| {}));
        assert!(b.needs_commit());
        let (replies, cmds) = b.release();
        assert_eq!((replies.len(), cmds.len()), (1, 0));
        assert!(b.is_empty());
    }
}
