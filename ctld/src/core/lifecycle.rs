//! User and admin actions on jobs: cancel (optionally with a signal), hold and release,
//! requeue, suspend and resume (steps are in [`super::steps`]). Users act on their own jobs;
//! administrators on any. A request naming an array job id acts on every task still in the core.

use super::completion::{self, SIGKILL};
use super::gang::switch;
use super::jobs::{HoldKind, Job, JobReason, JobRef};
use super::kill;
use super::outbox::{NodeCommand, Outbox, SaveHint};
use super::{Caller, Core, SimTime};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState};

/// `scancel [-s signal] job`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CancelRequest {
    /// Which job(s).
    pub job: JobRef,
    /// A signal to send instead of cancelling (`SIGKILL` cancels).
    pub signal: Option<i32>,
}

pub(super) fn authorize(caller: Caller, job: &Job) -> Result<(), CtldError> {
    if caller.admin || caller.uid == job.uid {
        Ok(())
    } else {
        Err(CtldError::AccessDenied)
    }
}

/// Cancels jobs, or sends them a signal.
pub fn on_cancel(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    req: CancelRequest,
) -> Result<(), CtldError> {
    let ids = core.jobs.resolve(req.job)?;
    // One component of a heterogeneous job named alone: a running one may be cancelled by
    // itself, a pending one only with its whole job (as Slurm).
    let alone = ids.len() == 1
        && core
            .jobs
            .map
            .get(&ids[0])
            .is_some_and(|j| j.het_follower() && j.is_queued());
    if alone && req.signal.is_none_or(|s| s == SIGKILL) {
        return Err(CtldError::NotWholeHetJob);
    }
    each(core, caller, &ids, |core, id| {
        let job = &core.jobs.map[&id];
        let signal = req.signal.filter(|s| *s != SIGKILL);
        match (job.state, job.completing, signal) {
            (_, true, _) => Err(CtldError::AlreadyDone),
            (s, _, _) if s.is_finished() => Err(CtldError::AlreadyDone),
            (JobState::Pending, _, Some(_)) => Err(CtldError::JobPending),
            (JobState::Pending, _, None) => {
                set_requester(core, id, caller);
                completion::cancel_pending(core, out, now, id);
                Ok(())
            }
            (_, _, Some(sig)) => {
                out.node(NodeCommand::Signal {
                    job: id,
                    nodes: job.nodes.clone(),
                    signal: sig,
                });
                Ok(())
            }
            (_, _, None) => {
                set_requester(core, id, caller);
                kill::kill_job(core, out, now, id, JobState::Cancelled, JobReason::None);
                Ok(())
            }
        }
    })
}

/// Remembers who cancels `id`, for its accounting record (`CANCELLED by <uid>`).
fn set_requester(core: &mut Core, id: FedJobId, caller: Caller) {
    if let Some(job) = core.jobs.map.get_mut(&id) {
        job.requester_uid = Some(caller.uid);
    }
}

/// Runs `f` on each job after checking the caller may act on it; succeeds when at least one
/// succeeded, else returns the first error.
pub(crate) fn each(
    core: &mut Core,
    caller: Caller,
    ids: &[FedJobId],
    mut f: impl FnMut(&mut Core, FedJobId) -> Result<(), CtldError>,
) -> Result<(), CtldError> {
    let mut first_err = None;
    let mut ok = false;
    for &id in ids {
        let res = match core.jobs.map.get(&id) {
            Some(job) => super::coordinators::may_manage(&core.coordinators, caller, job)
                .and_then(|()| f(core, id)),
            None => Err(CtldError::InvalidJobId),
        };
        match res {
            Ok(()) => ok = true,
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match (ok, first_err) {
        (false, Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// Holds pending jobs. A hold asked by a non-administrator is always a user hold.
pub fn on_hold(
    core: &mut Core,
    out: &mut impl Outbox,
    caller: Caller,
    job: JobRef,
    kind: HoldKind,
) -> Result<(), CtldError> {
    let kind = if caller.admin { kind } else { HoldKind::User };
    let ids = core.jobs.resolve(job)?;
    each(core, caller, &ids, |core, id| {
        let Some(job) = core.jobs.map.get_mut(&id) else {
            return Err(CtldError::InvalidJobId);
        };
        if !job.is_queued() {
            return Err(CtldError::JobNotPending);
        }
        job.hold = Some(kind);
        job.reason = match kind {
            HoldKind::User => JobReason::JobHeldUser,
            HoldKind::Admin => JobReason::JobHeldAdmin,
        };
        out.save(SaveHint::Job(id));
        Ok(())
    })
}

/// Releases held jobs; only an administrator may release an administrator's hold.
pub fn on_release(
    core: &mut Core,
    out: &mut impl Outbox,
    caller: Caller,
    job: JobRef,
) -> Result<(), CtldError> {
    let ids = core.jobs.resolve(job)?;
    each(core, caller, &ids, |core, id| {
        let Some(job) = core.jobs.map.get_mut(&id) else {
            return Err(CtldError::InvalidJobId);
        };
        if job.state != JobState::Pending {
            return Err(CtldError::JobNotPending);
        }
        if job.hold == Some(HoldKind::Admin) && !caller.admin {
            return Err(CtldError::AccessDenied);
        }
        job.hold = None;
        job.reason = JobReason::None;
        out.save(SaveHint::Job(id));
        Ok(())
    })
}

/// Requeues jobs: a running one is killed and queued again once it exits; a finished one is
/// queued again at once. Jobs submitted with `--no-requeue` refuse.
pub fn on_requeue(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    job: JobRef,
) -> Result<(), CtldError> {
    let ids = core.jobs.resolve(job)?;
    each(core, caller, &ids, |core, id| {
        let job = &core.jobs.map[&id];
        if job.het_follower() {
            return Err(CtldError::NotHetLeader);
        }
        if job.launch.interactive {
            return Err(CtldError::BatchOnly);
        }
        if !job.requeue {
            return Err(CtldError::Disabled);
        }
        match (job.state, job.completing) {
            (_, true) => Err(CtldError::TransitionState),
            (JobState::Pending, _) => Err(CtldError::JobPending),
            (JobState::Running | JobState::Suspended, _) => {
                kill::kill_job(core, out, now, id, JobState::Pending, JobReason::None);
                Ok(())
            }
            _ => {
                kill::requeue_finished(core, out, now, id);
                // A heterogeneous job is requeued whole.
                for c in super::het::components(core, id).into_iter().skip(1) {
                    if core.jobs.map.get(&c).is_some_and(|j| j.state.is_finished()) {
                        kill::requeue_finished(core, out, now, c);
                    }
                }
                Ok(())
            }
        }
    })
}

/// Suspends running jobs (administrators only): their processes are stopped, the time spent
/// suspended does not count against the time limit, and their resources are given back for
/// other jobs while they keep their nodes (the timeslicer leaves them suspended).
pub fn on_suspend(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    job: JobRef,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let ids = core.jobs.resolve(job)?;
    each(core, caller, &ids, |core, id| {
        switch::admin_suspend(core, out, now, id)
    })
}

/// Resumes suspended jobs (administrators only): they take their resources again, even if
/// others hold them now; with gang scheduling a job whose resources are busy waits for its
/// timeslice.
pub fn on_resume(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    job: JobRef,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let ids = core.jobs.resolve(job)?;
    each(core, caller, &ids, |core, id| {
        switch::admin_resume(core, out, now, id)
    })
}
