//! This cluster's event log at the dbd, applied. Each event is applied at most once: the core
//! keeps the seq of the last one applied (its cursor, saved in the same commit as the change),
//! and an event at or below it is skipped, so a redelivery after a restart changes nothing.
//! Each handler also tolerates a job it does not know or that has moved on.

use super::super::jobs::HoldKind;
use super::super::outbox::{AcctRecord, Outbox, SaveHint};
use super::super::{Core, SimTime, kill};
use super::copies::{
    cancel_local, create_copy, drop_copy, end_tracker, make_tracker, remove_job, untrack,
};
use super::start::release_reservation;
use super::{FedRequeue, sorted};
use sluice_vocab::{FedJobId, JobState};

/// One event of this cluster's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FedEvent {
    /// Its place in the log (grows by one per event).
    pub seq: u64,
    /// What happened.
    pub kind: FedEventKind,
}

/// What an event says (see the protocol in `schema/proto/sluice.proto`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FedEventKind {
    /// Hold a copy of `job` (replacing an older one); to the origin: its copy is active again.
    SiblingOffered {
        job: FedJobId,
        origin: String,
        viable: Vec<String>,
        desc: Vec<u8>,
    },
    /// Drop the copy (started on `winner`, or withdrawn); the origin keeps a tracker.
    SiblingRevoked {
        job: FedJobId,
        winner: Option<String>,
    },
    /// Cancel the job (by user `requester_uid`, when known), or requeue its run here.
    SiblingCancelled {
        job: FedJobId,
        requeue: FedRequeue,
        requester_uid: Option<u32>,
    },
    /// A new description of a pending job.
    SiblingUpdated { job: FedJobId, desc: Vec<u8> },
    /// To the origin: the job started on `cluster`.
    JobStartedElsewhere { job: FedJobId, cluster: String },
    /// To the origin: the run on `cluster` ended.
    JobEnded {
        job: FedJobId,
        cluster: String,
        state: u32,
        exit_code: i32,
    },
    /// To the origin: pending again after a requeue.
    JobRequeued {
        job: FedJobId,
        held: bool,
        origin_viable: bool,
    },
    /// The job is no longer federated.
    JobLeftFederation { job: FedJobId },
    /// The federation changed (the runtime fetches the view).
    FederationChanged,
}

/// Applies `ev` unless it was applied before; returns whether it was applied. The cursor
/// moves to its seq (the runtime commits it with the change, then acknowledges the event).
pub fn on_fed_event(core: &mut Core, out: &mut impl Outbox, now: SimTime, ev: FedEvent) -> bool {
    if ev.seq <= core.fed.cursor {
        return false;
    }
    core.fed.cursor = ev.seq;
    apply(core, out, now, ev.kind);
    true
}

fn apply(core: &mut Core, out: &mut impl Outbox, now: SimTime, kind: FedEventKind) {
    let me = core.me().to_string();
    match kind {
        FedEventKind::SiblingOffered {
            job,
            origin,
            viable,
            desc,
        } => offered(core, out, job, &origin, &viable, &desc),
        FedEventKind::SiblingRevoked { job, winner } => match is_origin(core, job) {
            Some(true) => make_tracker(core, out, now, job, winner.filter(|w| *w != me)),
            Some(false) => drop_copy(core, out, now, job),
            None => {}
        },
        FedEventKind::SiblingCancelled {
            job,
            requeue,
            requester_uid,
        } => cancelled(core, out, now, job, requeue, requester_uid),
        FedEventKind::SiblingUpdated { job, desc } => updated(core, out, job, &desc),
        FedEventKind::JobStartedElsewhere { job, cluster } => {
            if is_origin(core, job) == Some(true) {
                make_tracker(core, out, now, job, Some(cluster));
            }
        }
        FedEventKind::JobEnded {
            job,
            state,
            exit_code,
            ..
        } => end_tracker(core, out, now, job, state, exit_code),
        FedEventKind::JobRequeued {
            job,
            held,
            origin_viable,
        } => requeued(core, out, now, job, held, origin_viable),
        FedEventKind::JobLeftFederation { job } => left(core, out, job),
        FedEventKind::FederationChanged => {}
    }
}

/// Whether this cluster is `job`'s origin (`None`: no federated copy here).
fn is_origin(core: &Core, job: FedJobId) -> Option<bool> {
    core.fed_job(job).map(|f| f.origin_here)
}

fn offered(
    core: &mut Core,
    out: &mut impl Outbox,
    id: FedJobId,
    origin: &str,
    viable: &[String],
    desc: &[u8],
) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        create_copy(core, out, id, origin, viable, desc);
        return;
    };
    let live = (!job.state.is_finished() || job.completing) && job.state != JobState::Revoked;
    let origin_here = match job.fed.as_deref_mut() {
        Some(fed) if fed.origin_here || live => {
            // The origin's own job (active again), or the same copy offered again after a
            // requeue of its run here: kept.
            fed.viable = sorted(viable.to_vec());
            fed.origin_here
        }
        _ => {
            remove_job(core, out, id);
            create_copy(core, out, id, origin, viable, desc);
            return;
        }
    };
    out.save(SaveHint::Job(id));
    if origin_here {
        untrack(core, out, id);
    }
}

fn cancelled(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    requeue: FedRequeue,
    requester_uid: Option<u32>,
) {
    if requeue == FedRequeue::None {
        cancel_local(core, out, now, id, requester_uid);
    } else {
        requeue_here(core, out, now, id, requeue);
    }
}

/// Requeues the run of `id` here (`requeue`: how), if it runs here; its end then reaches the
/// dbd with that mode.
pub(crate) fn requeue_here(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    requeue: FedRequeue,
) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let runs_here = matches!(job.state, JobState::Running | JobState::Suspended) && !job.completing;
    let Some(fed) = job.fed.as_deref_mut().filter(|_| runs_here) else {
        return;
    };
    fed.requeue = requeue;
    let origin_here = fed.origin_here;
    kill::kill_job(
        core,
        out,
        now,
        id,
        JobState::Pending,
        super::super::jobs::JobReason::None,
    );
    // Requeued held on its origin: it stays there, held.
    if requeue == FedRequeue::Hold
        && origin_here
        && let Some(job) = core.jobs.map.get_mut(&id)
    {
        job.hold = Some(HoldKind::User);
        job.reason = super::super::jobs::JobReason::JobHeldUser;
    }
}

/// A pending copy takes the new description (recreated with the same id and submit time).
fn updated(core: &mut Core, out: &mut impl Outbox, id: FedJobId, desc: &[u8]) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let Some(fed) = job.fed.as_deref() else {
        return;
    };
    let pending = job.is_queued() && !fed.locking;
    if fed.origin_here || !pending {
        return;
    }
    let (origin, viable) = (fed.origin.clone(), fed.viable.clone());
    remove_job(core, out, id);
    create_copy(core, out, id, &origin, &viable, desc);
}

fn requeued(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    held: bool,
    origin_viable: bool,
) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.fed.as_ref().is_none_or(|f| !f.origin_here) {
        return;
    }
    // The tracker (or the ended tracker) starts a new run on the origin's side.
    if let Some(end) = job.end_time.take() {
        core.jobs.finished.remove(&(end, id));
    }
    job.restarts += 1;
    job.start_time = None;
    job.state = JobState::Revoked;
    if held {
        job.hold = Some(HoldKind::User);
        job.reason = super::super::jobs::JobReason::JobHeldUser;
    }
    if let Some(fed) = job.fed.as_deref_mut() {
        fed.running_on = None;
        fed.offered = !held;
        fed.offer_synced = true;
    }
    let part = core
        .parts
        .get(job.partition.get())
        .map(|p| p.name.clone())
        .unwrap_or_default();
    out.accounting(AcctRecord::submitted(job, &part, now));
    out.save(SaveHint::Job(id));
    if origin_viable {
        untrack(core, out, id);
    }
}

/// The job leaves the federation: a pending or running copy stays as a local job; a tracker
/// is dropped.
fn left(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let was_locking = release_reservation(core, id).is_some();
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.fed.is_none() {
        return;
    }
    if job.state == JobState::Revoked {
        remove_job(core, out, id);
        return;
    }
    job.fed = None;
    if was_locking && job.is_queued() {
        core.jobs
            .queue
            .insert(super::super::jobs::JobTable::queue_key(job));
    }
    out.save(SaveHint::Job(id));
}
