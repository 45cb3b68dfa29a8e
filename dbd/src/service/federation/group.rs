//! Group commit of a federated job's writes: `SubmitFedJob`, `OfferFedJob`, `StartFedJob` and
//! `FedJobEnded` calls are queued, and one writer at a time takes everything queued (up to
//! [`MAX_GROUP`]) into one transaction ([`Store::fed_write_group`]). Calls that arrive while a
//! transaction is in flight wait for the next one, so under load every transaction carries many
//! writes, and a lone call is written at once (no timer, no added wait). Each caller is answered
//! once its group is committed, with its own write's answer.
//!
//! The writer runs as a task of its own: a caller that hangs up does not stop a group others
//! wait on, and its write, once queued, is written (as it would have been alone).

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;
use tonic::Status;

use crate::store::Store;
use crate::store::fed::error::FedError;
use crate::store::fed::group::FedWrite;
use crate::store::fed::types::FedJob;

/// The most writes in one transaction (a bound on one commit's size and latency).
pub(crate) const MAX_GROUP: usize = 512;

/// The bookkeeping of group commit, apart from any I/O: what waits, and whether a group is
/// being written.
#[derive(Debug)]
pub(crate) struct Groups<T> {
    waiting: Vec<T>,
    writing: bool,
    max: usize,
}

impl<T> Groups<T> {
    /// No write in flight; groups of at most `max` (at least 1).
    pub(crate) fn new(max: usize) -> Self {
        Self {
            waiting: Vec::new(),
            writing: false,
            max: max.max(1),
        }
    }

    /// `item` arrives. With no group in flight the caller becomes the writer and gets the
    /// group to write now; otherwise `item` waits for the writer's next group.
    pub(crate) fn arrive(&mut self, item: T) -> Option<Vec<T>> {
        self.waiting.push(item);
        if self.writing {
            return None;
        }
        self.writing = true;
        Some(self.take())
    }

    /// The writer committed its group: the next group (what arrived meanwhile), or `None`
    /// when nothing waits, and the writer stops.
    pub(crate) fn written(&mut self) -> Option<Vec<T>> {
        if self.waiting.is_empty() {
            self.writing = false;
            return None;
        }
        Some(self.take())
    }

    fn take(&mut self) -> Vec<T> {
        let n = self.waiting.len().min(self.max);
        self.waiting.drain(..n).collect()
    }
}

/// A queued write and where its answer goes.
struct Queued {
    write: FedWrite,
    answer: oneshot::Sender<Result<FedJob, FedError>>,
}

/// The group-committing writer of federated jobs' writes. Cheap to clone.
#[derive(Clone)]
pub(crate) struct GroupWriter {
    store: Arc<Store>,
    groups: Arc<Mutex<Groups<Queued>>>,
}

impl std::fmt::Debug for GroupWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupWriter").finish_non_exhaustive()
    }
}

impl GroupWriter {
    /// A writer over `store`.
    pub(crate) fn new(store: Arc<Store>) -> Self {
        Self {
            store,
            groups: Arc::new(Mutex::new(Groups::new(MAX_GROUP))),
        }
    }

    /// Writes `write` in the next group and returns its answer once that group committed.
    pub(crate) async fn write(&self, write: FedWrite) -> Result<FedJob, Status> {
        self.write_answer(write).await?.map_err(Status::from)
    }

    /// [`GroupWriter::write`], with the store's answer as it is (for a caller that answers
    /// some refusals itself); the error is the group's own failure.
    pub(crate) async fn write_answer(
        &self,
        write: FedWrite,
    ) -> Result<Result<FedJob, FedError>, Status> {
        let (answer, answered) = oneshot::channel();
        if let Some(group) = self.groups().arrive(Queued { write, answer }) {
            tokio::spawn(self.clone().run(group));
        }
        answered
            .await
            .map_err(|_| Status::internal("store task failed"))
    }

    /// Writes groups until nothing waits.
    async fn run(self, mut group: Vec<Queued>) {
        loop {
            let (writes, answers): (Vec<FedWrite>, Vec<_>) =
                group.into_iter().map(|q| (q.write, q.answer)).unzip();
            let store = Arc::clone(&self.store);
            let now = super::now();
            match tokio::task::spawn_blocking(move || store.fed_write_group(&writes, now)).await {
                Ok(results) => {
                    for (answer, result) in answers.into_iter().zip(results) {
                        let _ = answer.send(result);
                    }
                }
                // The answers are dropped: their callers get "store task failed".
                Err(e) => tracing::error!(error = %e, "federation group write failed"),
            }
            match self.groups().written() {
                Some(next) => group = next,
                None => return,
            }
        }
    }

    fn groups(&self) -> std::sync::MutexGuard<'_, Groups<Queued>> {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::Groups;

    #[test]
    fn a_lone_write_is_written_at_once() {
        let mut g = Groups::new(8);
        assert_eq!(g.arrive(1), Some(vec![1]));
        assert_eq!(g.written(), None, "nothing else waited: the writer stops");
        assert_eq!(
            g.arrive(2),
            Some(vec![2]),
            "the next arrival writes at once"
        );
    }

    #[test]
    fn writes_arriving_during_a_commit_share_the_next_one() {
        let mut g = Groups::new(8);
        assert_eq!(g.arrive(1), Some(vec![1]));
        // While group [1] is being written, three more arrive: none of them writes.
        assert_eq!(g.arrive(2), None);
        assert_eq!(g.arrive(3), None);
        assert_eq!(g.arrive(4), None);
        assert_eq!(
            g.written(),
            Some(vec![2, 3, 4]),
            "one group, in arrival order"
        );
        assert_eq!(g.arrive(5), None, "still writing [2, 3, 4]");
        assert_eq!(g.written(), Some(vec![5]));
        assert_eq!(g.written(), None);
    }

    #[test]
    fn a_group_holds_at_most_the_limit_and_the_rest_follows() {
        let mut g = Groups::new(2);
        assert_eq!(g.arrive(0), Some(vec![0]));
        for i in 1..=5 {
            assert_eq!(g.arrive(i), None);
        }
        assert_eq!(g.written(), Some(vec![1, 2]));
        assert_eq!(g.written(), Some(vec![3, 4]));
        assert_eq!(g.written(), Some(vec![5]));
        assert_eq!(g.written(), None);
        let mut one = Groups::new(0);
        assert_eq!(
            one.arrive('a'),
            Some(vec!['a']),
            "a limit of 0 still writes"
        );
    }
}
