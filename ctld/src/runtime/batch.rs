//! One group commit's worth of work: what the core asked for while the batch's requests ran,
//! and the replies waiting for the commit. When a commit fails the batch is kept whole and
//! retried with the next one, so nothing is answered or launched before it is durable.

use crate::core::federation::FedRequest;
use crate::core::{AcctRecord, NodeCommand, Outbox, PowerCommand, SaveHint};
use std::collections::HashSet;

/// A reply waiting for its batch's commit.
pub type Reply = Box<dyn FnOnce() + Send>;

/// The outbox requests write into, plus the replies that wait for the commit.
#[derive(Default)]
pub struct Batch {
    saves: Vec<SaveHint>,
    seen: HashSet<(u8, u32)>,
    acct: Vec<AcctRecord>,
    cmds: Vec<NodeCommand>,
    power: Vec<PowerCommand>,
    fed: Vec<FedRequest>,
    replies: Vec<Reply>,
    keep_acct: bool,
    force: bool,
}

impl Batch {
    /// An empty batch; accounting records are dropped unless `keep_acct` (no dbd, no records).
    pub fn new(keep_acct: bool) -> Self {
        Self {
            keep_acct,
            ..Self::default()
        }
    }

    /// Queues a reply to send once the batch is durable.
    pub fn reply(&mut self, r: Reply) {
        self.replies.push(r);
    }

    /// Asks for a commit even without saves (e.g. new leased ids to persist).
    pub fn touch(&mut self) {
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
        (
            std::mem::take(&mut self.replies),
            std::mem::take(&mut self.cmds),
        )
    }
}

impl Outbox for Batch {
    fn node(&mut self, cmd: NodeCommand) {
        self.cmds.push(cmd);
    }

    fn power(&mut self, cmd: PowerCommand) {
        self.power.push(cmd);
    }

    fn fed(&mut self, req: FedRequest) {
        self.fed.push(req);
    }

    fn accounting(&mut self, rec: AcctRecord) {
        if self.keep_acct {
            self.acct.push(rec);
        }
    }

    fn save(&mut self, hint: SaveHint) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_vocab::FedJobId;

    #[test]
    fn saves_are_deduplicated_and_cleared_on_release() {
        let mut b = Batch::new(false);
        let id = FedJobId::from_raw(5).unwrap();
        b.save(SaveHint::Job(id));
        b.save(SaveHint::Job(id));
        b.save(SaveHint::JobPurged(id));
        assert_eq!(b.saves(), [SaveHint::Job(id), SaveHint::JobPurged(id)]);
        b.reply(Box::new(|| {}));
        assert!(b.needs_commit());
        let (replies, cmds) = b.release();
        assert_eq!((replies.len(), cmds.len()), (1, 0));
        assert!(b.is_empty());
    }
}
