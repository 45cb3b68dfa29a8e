//! The writes every federated job makes, grouped: the federation service collects the
//! `SubmitFedJob`, `OfferFedJob`, `StartFedJob` and `FedJobEnded` calls that arrive while a
//! transaction is in flight and writes them together in the next one
//! ([`Store::fed_write_group`]), so concurrent jobs share one commit (and one fsync where the
//! backend syncs) instead of taking turns for the connection.
//!
//! Each write inside the group runs in a savepoint of its own and is answered exactly as it
//! would be alone: a refused write (a duplicate id, a draining origin, an offer of a job that
//! started, a start another cluster won) rolls back to its savepoint and changes nothing, while
//! the others commit. Writes run in arrival order, so a write sees the earlier ones of its group
//! (a repeated submission in the same group is answered with the record the first one made). A
//! lost race (deadlock, SQLite busy) runs the whole group again; any other failure of the group
//! runs each write in a transaction of its own, so one broken write cannot fail the others.

use std::collections::BTreeSet;

use diesel::Connection;

use crate::store::Store;
use crate::store::conn::AnyConnection;

use super::error::FedError;
use super::types::{FedJob, LockRefusal, RequeueMode, SubmitFedJob};
use super::{ops, submission};

/// How a federated job's run ended, as its cluster reports it ([`Store::fed_job_ended`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunEnd {
    /// The job's final state (stored form), or pending for a requeue.
    pub state: u32,
    /// Its exit code.
    pub exit_code: i32,
    /// Whether (and how) it goes back to pending.
    pub requeue: RequeueMode,
}

/// A write of a federated job's life that the service groups with concurrent ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FedWrite {
    /// The origin records a submission ([`Store::fed_submit`]).
    Submit(SubmitFedJob),
    /// The origin offers a recorded job to its siblings, with a new description if given
    /// ([`Store::fed_offer`]).
    Offer {
        /// The federated job id.
        job_id: u32,
        /// The calling cluster (the job's origin).
        caller: String,
        /// The job's new description, if it changed.
        desc: Option<Vec<u8>>,
    },
    /// A cluster that reserved an allocation starts the job there, lock and commit in one
    /// ([`Store::fed_start`]); a refusal is [`FedError::StartRefused`].
    Start {
        /// The federated job id.
        job_id: u32,
        /// The calling cluster.
        caller: String,
        /// The origin's description of a job it recorded held and starts before offering
        /// it: offered and started in one step (nothing written if the start is refused).
        offer: Option<Vec<u8>>,
    },
    /// The cluster that ran the job reports the run's end ([`Store::fed_job_ended`]).
    Ended {
        /// The federated job id.
        job_id: u32,
        /// The calling cluster (the one the job ran on).
        caller: String,
        /// How the run ended.
        end: RunEnd,
    },
}

/// A [`FedWrite::Start`]'s answer as the start's outcome: the job as committed, or why it may
/// not start there ([`FedError::StartRefused`] is an answer, not a failure).
pub fn start_outcome(
    answer: Result<FedJob, FedError>,
) -> Result<Result<FedJob, LockRefusal>, FedError> {
    match answer {
        Ok(job) => Ok(Ok(job)),
        Err(FedError::StartRefused { refusal, .. }) => Ok(Err(refusal)),
        Err(e) => Err(e),
    }
}

/// What one write did: the job as recorded, the clusters it appended events for, and how many
/// draining clusters it settled (for the watchers, told after the commit).
pub(super) struct Wrote {
    pub(super) job: FedJob,
    pub(super) appended: BTreeSet<String>,
    pub(super) settled: usize,
}

/// Applies `w` inside the caller's transaction.
fn write_in(c: &mut AnyConnection, w: &FedWrite, now: i64) -> Result<Wrote, FedError> {
    match w {
        FedWrite::Submit(req) => submission::submit_in(c, req, now),
        FedWrite::Offer {
            job_id,
            caller,
            desc,
        } => ops::offer_in(c, *job_id, caller, desc.clone(), now),
        FedWrite::Start {
            job_id,
            caller,
            offer,
        } => ops::start_in(c, *job_id, caller, offer.clone(), now),
        FedWrite::Ended {
            job_id,
            caller,
            end,
        } => ops::ended_in(c, *job_id, caller, *end, now),
    }
}

impl Store {
    /// Applies `writes` in one transaction, in order, and answers each as it would be answered
    /// alone (see the module doc).
    pub fn fed_write_group(&self, writes: &[FedWrite], now: i64) -> Vec<Result<FedJob, FedError>> {
        if let [one] = writes {
            return vec![self.fed_write(one, now)];
        }
        let grouped = self.fed_tx(|c| {
            let mut answers = Vec::with_capacity(writes.len());
            for w in writes {
                // A savepoint: a refused write is undone alone.
                match c.transaction(|c| write_in(c, w, now)) {
                    Err(e) if e.is_transient() => return Err(e),
                    answer => answers.push(answer),
                }
            }
            Ok(answers)
        });
        match grouped {
            Ok(answers) => {
                let wrote = answers.iter().flatten();
                let appended: BTreeSet<&String> = wrote.clone().flat_map(|w| &w.appended).collect();
                let settled = wrote.map(|w| w.settled).sum();
                self.fed_changed(appended, settled);
                answers.into_iter().map(|a| a.map(|w| w.job)).collect()
            }
            Err(e) => {
                tracing::warn!(error = %e, writes = writes.len(), "grouped federation writes failed, writing each alone");
                writes.iter().map(|w| self.fed_write(w, now)).collect()
            }
        }
    }

    /// Applies one write in a transaction of its own.
    pub fn fed_write(&self, w: &FedWrite, now: i64) -> Result<FedJob, FedError> {
        let wrote = self.fed_tx(|c| write_in(c, w, now))?;
        self.fed_changed(&wrote.appended, wrote.settled);
        Ok(wrote.job)
    }

    /// Records a federated job the origin validated (see `submission`'s module doc). Sending
    /// the same submission again returns its record.
    pub fn fed_submit(&self, req: &SubmitFedJob, now: i64) -> Result<FedJob, FedError> {
        self.fed_write(&FedWrite::Submit(req.clone()), now)
    }

    /// The origin releases the job (or its dependency is satisfied): it is offered to its
    /// viable siblings, with `desc` as its new description if given.
    pub fn fed_offer(
        &self,
        job_id: u32,
        caller: &str,
        desc: Option<Vec<u8>>,
        now: i64,
    ) -> Result<FedJob, FedError> {
        let caller = caller.to_string();
        self.fed_write(
            &FedWrite::Offer {
                job_id,
                caller,
                desc,
            },
            now,
        )
    }

    /// Tells the streams what a committed change did: the clusters events were appended for,
    /// how many clusters settled (settling may append to any log: every stream is woken).
    pub(super) fn fed_changed<'a>(
        &self,
        appended: impl IntoIterator<Item = &'a String>,
        settled: usize,
    ) {
        if settled > 0 {
            self.fed.events_appended();
            self.fed.federation_changed();
        } else {
            self.fed.events_appended_to(appended);
        }
    }
}
