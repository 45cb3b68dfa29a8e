//! Starting a federated job: the start lock.
//!
//! Where the scheduler would start a federated job (any copy, the origin's included), the core
//! reserves the allocation instead of launching: the job leaves the queue, its resources are
//! counted on its nodes so no other job takes them, and a [`FedRequest::StartLock`] asks the
//! runtime to take the dbd's lock and commit the start (one request). Only when the commit is
//! durable at the dbd does [`on_start_committed`] launch the job; a refusal
//! ([`on_start_refused`]) gives the reservation back and the job waits (reason `FedJobLock`)
//! or is revoked by the event that follows. A job its origin held or made dependent while the
//! lock was in flight is not launched even when the commit went through: the start goes back
//! to the dbd as a held requeue ([`CommitOutcome::Withheld`]). A reservation is not saved:
//! after a restart the job is pending again, and a start committed just before a crash (or
//! whose answer was lost) is answered `started` again at the job's next request here, see
//! `crate::fed_client`.
//!
//! The origin's offer rides on its start. A job the dbd recorded held (every submission, see
//! [`super::submit`]) or that its origin releases is not offered at once: its offer is due at
//! the end of the batch's scheduling pass ([`FedCore::offers_due`](super::FedCore)). If the
//! pass starts the job here, the start lock carries the offer and the dbd offers and starts it
//! in one step: the job is never offered to a sibling, which therefore has nothing to create,
//! schedule or revoke, and the origin wins its own idle resources as in Slurm. A job the pass
//! does not start is offered alone when the pass ends ([`send_due_offers`]), and so is one whose
//! carried offer was refused or not answered ([`on_start_refused`]). Either way the offer stays
//! owed in the job's saved state until the dbd has it, so a restart sends it again.

use super::super::alloc::{self, JobAlloc};
use super::super::jobs::{JobReason, JobTable};
use super::super::outbox::{Outbox, SaveHint};
use super::super::{Core, SimTime, completion, deps, gang};
use super::{FedPhase, FedRequest, sorted};
use sluice_vocab::{FedJobId, JobState};

/// Seconds a job waits before asking for the lock again after a refusal.
pub const RETRY_SECS: u64 = 2;

/// Whether `id` must take the start lock before it starts: a recorded federated job (not an
/// array task: arrays run on their origin only). Whatever this cluster's view says: a copy can
/// arrive on the event stream before the first view does, and leaving a federation makes its
/// jobs local (`fed` cleared), so a job still federated here is one the dbd arbitrates.
pub(crate) fn needs_lock(core: &Core, id: FedJobId) -> bool {
    core.jobs.map.get(&id).is_some_and(|j| {
        j.array.is_none()
            && j.fed
                .as_ref()
                .is_some_and(|f| f.phase == FedPhase::Recorded)
    })
}

/// The scheduling pass's federation check of a queued job: keeps the origin's offer to its
/// siblings in line with holds and dependencies (a job held or made dependent is withdrawn, one
/// released or whose dependency is met is offered), and says why the job may not start now.
pub(crate) fn gate(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
) -> Option<JobReason> {
    let scheduling_disabled = core.fed.view.scheduling_disabled();
    let in_federation = core.fed.view.in_federation();
    let due = core.fed.offers_due.contains(&id);
    let job = core.jobs.map.get(&id)?;
    let fed = job.fed.as_deref()?;
    if fed.phase != FedPhase::Recorded {
        return Some(job.reason);
    }
    let want_offer = job.hold.is_none()
        && deps::blocking_reason(&core.jobs, job, now).is_none()
        && job.array.is_none();
    let change = fed.origin_here && in_federation && fed.offered != want_offer;
    // The dbd refuses the lock of a job held there: the origin waits for an offer sent alone
    // to arrive (a due offer is carried by the start instead).
    let offering = fed.origin_here && fed.offered && !fed.offer_synced && !due;
    let blocked = fed.end_report.is_some()
        || scheduling_disabled
        || fed.retry_at.is_some_and(|t| t > now)
        || offering;
    let reason = job.reason;
    if change
        && let Some(fed) = core
            .jobs
            .map
            .get_mut(&id)
            .and_then(|j| j.fed.as_deref_mut())
    {
        fed.offered = want_offer;
        out.save(SaveHint::Job(id));
        if want_offer {
            fed.offer_synced = false;
            core.fed.offers_due.insert(id);
        } else if core.fed.offers_due.remove(&id) {
            // Its offer never left: the dbd still records it held.
            fed.offer_synced = true;
        } else {
            fed.offer_synced = false;
            out.fed(FedRequest::Withdraw { job: id });
        }
    }
    (blocked || (change && !want_offer)).then_some(reason)
}

/// Reserves `alloc` for `id` and asks for the start lock (from the scheduler, in place of
/// starting the job); the lock carries the job's offer if one is due.
pub(crate) fn reserve(
    core: &mut Core,
    out: &mut impl Outbox,
    _now: SimTime,
    id: FedJobId,
    mut alloc: JobAlloc,
) {
    let offer = if core.fed.offers_due.remove(&id) {
        core.jobs
            .map
            .get(&id)
            .map(|j| super::report::desc_of(core, j))
    } else {
        None
    };
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    core.jobs.queue.remove(&JobTable::queue_key(job));
    if let Some(fed) = job.fed.as_deref_mut() {
        fed.locking = true;
        fed.offer_carried = offer.is_some();
    }
    // Counted on the nodes (so nothing else takes them) without putting the job on them.
    alloc.held = false;
    core.allocs.insert(id, alloc);
    alloc::retake(core, id);
    out.fed(FedRequest::StartLock { job: id, offer });
}

/// The end of a scheduling pass: every offer still due (its job was not started here) is sent
/// alone.
pub fn send_due_offers(core: &mut Core, out: &mut impl Outbox) {
    for id in std::mem::take(&mut core.fed.offers_due) {
        send_owed_offer(core, out, id);
    }
}

/// Sends `id`'s offer if it is still owed: the origin's pending job, offered and not synced.
fn send_owed_offer(core: &Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let owed = job.fed.as_deref().is_some_and(|f| {
        f.origin_here && f.phase == FedPhase::Recorded && f.offered && !f.offer_synced
    });
    if owed && matches!(job.state, JobState::Pending | JobState::Revoked) {
        let desc = super::report::desc_of(core, job);
        out.fed(FedRequest::Offer { job: id, desc });
    }
}

/// Gives a reserved allocation back (refused, revoked or cancelled while locking); returns it.
pub(crate) fn release_reservation(core: &mut Core, id: FedJobId) -> Option<JobAlloc> {
    let fed = core
        .jobs
        .map
        .get_mut(&id)
        .and_then(|j| j.fed.as_deref_mut())?;
    if !std::mem::take(&mut fed.locking) {
        return None;
    }
    let alloc = core.allocs.get(&id).cloned();
    alloc::detach(core, id);
    alloc
}

/// What became of a committed start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOutcome {
    /// The job was launched on its reserved allocation.
    Launched,
    /// The job is no longer here to launch (it ended meanwhile): its end was reported instead.
    Ended,
    /// The core knows no such job: the runtime must report it ended (cancelled) to the dbd.
    Unknown,
    /// Nothing fits it now (a reservation lost to a restart): it waits for the next pass.
    Retry,
    /// Its origin held it (or gave it a dependency) while the lock was in flight: not launched;
    /// the start goes back to the dbd as a held requeue.
    Withheld,
}

/// The dbd committed "started here" for `id`: launch it on its reservation. A job pending
/// without one is started on whatever fits now, or waits for the next pass (whose lock request
/// finds the start already committed here).
pub fn on_start_committed(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
) -> CommitOutcome {
    let me = core.me().to_string();
    if let Some(fed) = core
        .jobs
        .map
        .get_mut(&id)
        .and_then(|j| j.fed.as_deref_mut())
        && std::mem::take(&mut fed.offer_carried)
    {
        // The dbd applied the offer with the start.
        fed.offer_synced = true;
        out.save(SaveHint::Job(id));
    }
    let Some(job) = core.jobs.map.get(&id) else {
        return CommitOutcome::Unknown;
    };
    if job.state != JobState::Pending || job.completing {
        // Nothing to launch: tell the dbd the start it recorded ended at once.
        let report = super::EndReport {
            state: JobState::Cancelled.stored(),
            exit_code: 0,
            requeue: super::FedRequeue::None,
        };
        if let Some(fed) = core
            .jobs
            .map
            .get_mut(&id)
            .and_then(|j| j.fed.as_deref_mut())
        {
            fed.end_report = Some(report);
            fed.end_sent = true;
            out.fed(FedRequest::Ended { job: id, report });
            out.save(SaveHint::Job(id));
        }
        return CommitOutcome::Ended;
    }
    let withheld = job.fed.as_deref().is_some_and(|f| f.origin_here)
        && (job.hold.is_some() || deps::blocking_reason(&core.jobs, job, now).is_some());
    if withheld {
        withhold(core, out, id);
        return CommitOutcome::Withheld;
    }
    let alloc = match release_reservation(core, id) {
        Some(a) => a,
        None => match pick_now(core, id) {
            Some(a) => a,
            None => {
                on_start_refused(core, out, now, id, 0);
                return CommitOutcome::Retry;
            }
        },
    };
    if let Some(job) = core.jobs.map.get(&id) {
        core.jobs.queue.remove(&JobTable::queue_key(job));
    }
    if let Some(fed) = core
        .jobs
        .map
        .get_mut(&id)
        .and_then(|j| j.fed.as_deref_mut())
    {
        fed.running_on = Some(me.clone());
        fed.active = sorted(vec![me]);
        fed.retry_at = None;
    }
    completion::start_job(core, out, now, id, alloc);
    gang::job_started(core, out, now, id);
    CommitOutcome::Launched
}

/// The origin held `id` (or gave it a dependency) while its own start lock was in flight, and
/// the dbd committed the start before it heard of the withdrawal: the job is not launched. The
/// start goes back to the dbd as a held requeue (pending there again, held on its origin,
/// offered to nobody: the commit revoked the siblings); the job waits here until released.
fn withhold(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let was_locking = release_reservation(core, id).is_some();
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let report = super::EndReport {
        state: JobState::Pending.stored(),
        exit_code: 0,
        requeue: super::FedRequeue::Hold,
    };
    if let Some(fed) = job.fed.as_deref_mut() {
        fed.end_report = Some(report);
        fed.end_sent = true;
        // The held requeue leaves the dbd's record held: nothing to withdraw.
        fed.offered = false;
        fed.offer_synced = true;
        fed.retry_at = None;
    }
    if was_locking && job.is_queued() {
        core.jobs.queue.insert(JobTable::queue_key(job));
    }
    out.fed(FedRequest::Ended { job: id, report });
    out.save(SaveHint::Job(id));
}

/// An allocation for `id` from what is free now (any node of its partition).
fn pick_now(core: &Core, id: FedJobId) -> Option<JobAlloc> {
    let job = core.jobs.map.get(&id)?;
    let part = &core.parts[job.partition.get()];
    let mut maps = super::super::select::job_maps(part, job);
    maps.push(&core.nodes.avail);
    alloc::pick::pick(core, job, &maps, |_| true)
}

/// The start lock was refused (or lost before the commit): the reservation is given back and
/// the job waits `retry_secs` before asking again (reason `FedJobLock`). An offer the start
/// carried was refused with it (or may not have arrived): it is sent alone.
pub fn on_start_refused(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    retry_secs: u64,
) {
    let was_locking = release_reservation(core, id).is_some();
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let mut offer_owed = false;
    if let Some(fed) = job.fed.as_deref_mut() {
        fed.retry_at = Some(now.plus(retry_secs));
        offer_owed = std::mem::take(&mut fed.offer_carried);
    }
    if job.state == JobState::Pending && !job.completing {
        job.reason = JobReason::FedJobLock;
        if was_locking {
            core.jobs.queue.insert(JobTable::queue_key(job));
        }
    }
    out.save(SaveHint::Job(id));
    if offer_owed {
        send_owed_offer(core, out, id);
    }
}
