//! The controller's side of the federation, pure: the federation view, each job's federation
//! state and the handlers that apply the accounting daemon's answers and events.
//!
//! The dbd arbitrates (DESIGN.md, "Federation through the accounting daemon"); the core keeps
//! what this cluster must know to behave as Slurm's federated controller does:
//! - the view ([`FedView`]): the federation, this cluster's fed id and fedstate, the siblings;
//! - per job ([`FedJob`]): origin, viable and active siblings, where it runs, whether the
//!   origin's copy is a REVOKED tracker, and what still has to reach the dbd;
//! - the event cursor: the last event of this cluster's log applied, saved with the change.
//!
//! Map: [`desc`] (the description siblings recreate a job from), [`submit`] (the origin's
//! submission), [`start`] (the start lock: reserve instead of launch, then commit or release),
//! [`copies`] (sibling copies and trackers), [`events`] (the event log), [`report`] (run ends,
//! offers and withdrawals to send), [`view`] (view changes, leaving the federation).
//!
//! The core never talks to the dbd: it asks through [`FedRequest`]s in its outbox, the runtime
//! hands them to the federation client (`crate::fed_client`, connected to the runtime's port),
//! and the client calls the dbd and feeds the answers back into these handlers.

pub mod copies;
pub mod desc;
pub mod events;
pub mod report;
pub mod start;
pub mod submit;
pub mod view;

pub use copies::{FedInfo, InfoPhase, on_fed_cancelled, on_fed_info, on_fed_requeue};
pub use desc::FedDesc;
pub use events::{FedEvent, FedEventKind, on_fed_event};
pub use report::{on_end_reported, on_offer_synced, unsynced};
pub use start::{CommitOutcome, on_start_committed, on_start_refused};
pub use submit::{
    FedRecord, FedSubmit, OriginSubmit, on_fed_recorded, on_fed_submit, on_fed_submit_abandoned,
    on_fed_submit_failed, on_submission_withdrawn, resubmissions, withdrawals,
};
pub use view::on_fed_view;

use super::{Core, SimTime};
use serde::{Deserialize, Serialize};
use sluice_vocab::{ClusterId, FedJobId, FedState, JobState};

/// One member of the federation, as the dbd's view describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FedMember {
    /// Cluster name.
    pub name: String,
    /// Its fed id (1..=63; 0 outside a federation).
    pub fed_id: u32,
    /// Its fedstate's stored value.
    pub fed_state: u32,
    /// Its cluster features.
    pub features: Vec<String>,
    /// Where its controller listens.
    pub host: String,
    /// Its controller's port.
    pub port: u32,
    /// Whether it has an open event stream to the dbd.
    pub connected: bool,
}

impl FedMember {
    /// Its fedstate (NA for a value the dbd never stores).
    pub fn state(&self) -> FedState {
        FedState::from_stored(self.fed_state).unwrap_or(FedState::Na)
    }
}

/// The federation as this controller last heard of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FedView {
    /// The federation's name ("" outside one).
    pub federation: String,
    /// This cluster.
    pub me: FedMember,
    /// The other members, by name.
    pub siblings: Vec<FedMember>,
}

impl FedView {
    /// Whether this cluster is in a federation (it issues federated job ids).
    pub fn in_federation(&self) -> bool {
        !self.federation.is_empty() && self.me.fed_id > 0
    }

    /// This cluster's fed id, composed into its job ids.
    pub fn fed_id(&self) -> Option<ClusterId> {
        if !self.in_federation() {
            return None;
        }
        ClusterId::new(self.me.fed_id).ok()
    }

    /// Slurm's `submissions_disabled`: every fedstate but ACTIVE refuses new jobs.
    pub fn submissions_disabled(&self) -> bool {
        self.in_federation() && self.me.state() != FedState::Active
    }

    /// Slurm's `scheduling_disabled`: INACTIVE starts no federated job (DRAIN runs what it has).
    pub fn scheduling_disabled(&self) -> bool {
        self.in_federation() && self.me.state() == FedState::Inactive
    }

    /// A member (self included) by name.
    pub fn member(&self, name: &str) -> Option<&FedMember> {
        std::iter::once(&self.me)
            .chain(&self.siblings)
            .find(|m| m.name == name)
    }

    /// The bitmap of `names` (bit fed_id-1 per member; names not in the view count nothing).
    pub fn bits(&self, names: &[String]) -> u64 {
        names
            .iter()
            .filter_map(|n| self.member(n))
            .filter(|m| (1..=63).contains(&m.fed_id))
            .fold(0, |acc, m| acc | (1u64 << (m.fed_id - 1)))
    }
}

/// A requeue asked of the cluster running a federated job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FedRequeue {
    /// No requeue: the run's end is final.
    #[default]
    None,
    /// Requeue (offered again to every viable cluster).
    Requeue,
    /// Requeue held (kept on the origin).
    Hold,
}

/// The end of a run here, until the dbd has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndReport {
    /// The job's state at the end ([`JobState`] stored value; ignored with a requeue).
    pub state: u32,
    /// The batch script's exit code.
    pub exit_code: i32,
    /// Whether the run was requeued, and how.
    pub requeue: FedRequeue,
}

/// Where an origin's submission stands with the dbd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FedPhase {
    /// Created and validated here; the dbd has not recorded it yet (never scheduled).
    Registering,
    /// The dbd never answered its recording and the submitter was told it failed: a
    /// [`FedRequest::WithdrawSubmission`] is owed until the dbd answers, then the job is
    /// dropped (never scheduled meanwhile).
    Withdrawing,
    /// Recorded by the dbd.
    #[default]
    Recorded,
}

/// A job's federation state (origin copy, sibling copy or origin tracker).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FedJob {
    /// The origin cluster's name.
    pub origin: String,
    /// This cluster is the origin.
    pub origin_here: bool,
    /// Viable siblings, sorted.
    pub viable: Vec<String>,
    /// Active siblings (clusters holding a copy), sorted; the running cluster once started.
    pub active: Vec<String>,
    /// `-M/--clusters` as given.
    pub clusters: String,
    /// `--cluster-constraint` as given.
    pub features: String,
    /// Origin: what the submission asked for (for the description siblings get).
    pub asked: desc::Asked,
    /// Origin: the submitting user's groups (siblings check `AllowGroups` with them).
    pub groups: Vec<u32>,
    /// The origin's submission state.
    pub phase: FedPhase,
    /// The cluster that runs (ran) it, once started.
    pub running_on: Option<String>,
    /// Origin: whether the job is offered to its siblings (not held, not dependent).
    pub offered: bool,
    /// Origin: whether the dbd knows `offered` (else an Offer/Withdraw is owed).
    pub offer_synced: bool,
    /// A run's end the dbd has not acknowledged yet.
    pub end_report: Option<EndReport>,
    /// `end_report` was handed to the runtime (not saved: a restart sends it again).
    #[serde(skip)]
    pub end_sent: bool,
    /// A requeue the dbd asked of this (running) cluster.
    pub requeue: FedRequeue,
    /// A start lock is being asked for (its allocation reserved); not saved: a restart
    /// forgets the reservation and the lease lapses.
    #[serde(skip)]
    pub locking: bool,
    /// Origin: the start lock in flight carries the job's offer (see [`start`]'s module doc);
    /// not saved: after a restart the offer is owed (`offered`, not `offer_synced`) and sent.
    #[serde(skip)]
    pub offer_carried: bool,
    /// Do not ask for the start lock again before this time (after a refusal).
    #[serde(skip)]
    pub retry_at: Option<SimTime>,
}

/// What the core asks of the dbd; the runtime sends it after the batch is durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FedRequest {
    /// The scheduler would start `job` here: its allocation is reserved; take the start lock
    /// and commit the start at the dbd (one request), and answer with [`on_start_committed`]
    /// or [`on_start_refused`]. `offer`: origin, the job's description for an offer the
    /// start carries (the dbd offers and starts the job in one step).
    StartLock {
        job: FedJobId,
        offer: Option<Vec<u8>>,
    },
    /// Report the end of `job`'s run here (`FedJobEnded`), then [`on_end_reported`].
    Ended { job: FedJobId, report: EndReport },
    /// Origin: offer `job` to its siblings (released, dependency met), then [`on_offer_synced`].
    Offer { job: FedJobId, desc: Vec<u8> },
    /// Origin: withdraw `job` from its siblings (held or dependent), then [`on_offer_synced`].
    Withdraw { job: FedJobId },
    /// This cluster cannot hold the offered copy of `job` (its own checks failed).
    Reject { job: FedJobId },
    /// Origin: end whatever the dbd recorded of a submission it never answered
    /// (`WithdrawFedSubmission`), then [`on_submission_withdrawn`].
    WithdrawSubmission { record: FedRecord },
}

/// The federation part of the core.
#[derive(Debug, Clone, Default)]
pub struct FedCore {
    /// The view.
    pub view: FedView,
    /// The last event of this cluster's log that was applied (saved with each change).
    pub cursor: u64,
    /// Origin: jobs whose offer waits for the end of this batch's scheduling pass, which
    /// either starts them here with the offer carried by the start lock or sends it alone
    /// ([`start::send_due_offers`]). Not saved: the batch that fills it empties it.
    pub offers_due: std::collections::BTreeSet<FedJobId>,
}

impl Core {
    /// The federation view.
    pub fn fed_view(&self) -> &FedView {
        &self.fed.view
    }

    /// The last applied event of this cluster's event log.
    pub fn fed_cursor(&self) -> u64 {
        self.fed.cursor
    }

    /// Restores the saved view and cursor after a restart (before the dbd is heard from):
    /// job ids keep their origin bits.
    pub fn restore_fed(&mut self, view: FedView, cursor: u64) {
        self.ids.set_origin(view.fed_id());
        self.fed = FedCore {
            view,
            cursor,
            offers_due: Default::default(),
        };
    }

    /// A job's federation state, if it is federated.
    pub fn fed_job(&self, id: FedJobId) -> Option<&FedJob> {
        self.jobs.map.get(&id).and_then(|j| j.fed.as_deref())
    }

    /// This cluster's name.
    pub(crate) fn me(&self) -> &str {
        &self.cfg.cluster_name
    }
}

/// How a request about a job takes its way in a federation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Not federated (or this cluster is in no federation): handled here as any job.
    Local,
    /// A federated job with a copy here.
    Copy {
        /// Its owner.
        uid: u32,
        /// Its origin cluster.
        origin: String,
        /// This cluster is its origin.
        origin_here: bool,
        /// The cluster running it, once started.
        running_on: Option<String>,
    },
    /// No copy here, but the id is a federation member's job (the dbd knows it).
    Foreign,
}

impl Core {
    /// The way requests about job `id` go.
    pub fn fed_route(&self, id: FedJobId) -> Route {
        if !self.fed.view.in_federation() {
            return Route::Local;
        }
        match self.jobs.map.get(&id) {
            // A withdrawing submission is unknown to commands (the usual path says so).
            Some(job) if job.is_withdrawing() => Route::Local,
            Some(job) => match job.fed.as_deref() {
                Some(f) if job.array.is_none() => Route::Copy {
                    uid: job.uid,
                    origin: f.origin.clone(),
                    origin_here: f.origin_here,
                    running_on: f.running_on.clone(),
                },
                _ => Route::Local,
            },
            None => {
                let mine = self.fed.view.fed_id();
                let member = id
                    .origin()
                    .filter(|o| Some(*o) != mine)
                    .is_some_and(|o| self.fed.view.siblings.iter().any(|m| m.fed_id == o.get()));
                if member { Route::Foreign } else { Route::Local }
            }
        }
    }
}

impl super::Job {
    /// Whether this is an origin's submission given up while the dbd has not answered
    /// ([`FedPhase::Withdrawing`]): `sbatch` said it failed, so no command shows it or acts
    /// on it; it only waits for the dbd to end what it recorded.
    pub fn is_withdrawing(&self) -> bool {
        self.fed
            .as_deref()
            .is_some_and(|f| f.phase == FedPhase::Withdrawing)
    }
}

/// Whether `job` is the origin's REVOKED tracker (or a revoked copy).
pub fn is_revoked(state: JobState) -> bool {
    state == JobState::Revoked
}

/// Sorted, deduplicated names.
pub(crate) fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, fed_id: u32, state: FedState) -> FedMember {
        FedMember {
            name: name.into(),
            fed_id,
            fed_state: state.stored(),
            ..FedMember::default()
        }
    }

    #[test]
    fn fedstates_decide_submissions_and_scheduling() {
        let mut view = FedView {
            federation: "fed".into(),
            me: member("a", 1, FedState::Active),
            siblings: vec![member("b", 3, FedState::Active)],
        };
        assert!(!view.submissions_disabled() && !view.scheduling_disabled());
        view.me.fed_state = FedState::Drain.stored();
        assert!(view.submissions_disabled() && !view.scheduling_disabled());
        view.me.fed_state = FedState::Inactive.stored();
        assert!(view.submissions_disabled() && view.scheduling_disabled());
        assert_eq!(view.bits(&["a".into(), "b".into(), "x".into()]), 0b101);
        assert_eq!(view.fed_id().map(|c| c.get()), Some(1));
        let outside = FedView::default();
        assert!(!outside.in_federation() && !outside.submissions_disabled());
        assert_eq!(outside.fed_id(), None);
    }
}
