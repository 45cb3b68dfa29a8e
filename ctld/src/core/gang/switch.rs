//! Stopping and continuing a job's processes, shared by the timeslicer and `scontrol
//! suspend/resume`: the state change, the time-limit clock, the node command and the
//! accounting record. And the administrator's suspend and resume, which also give the job's
//! resources back and take them again (the seed's last paragraph).

use super::{Gang, add_job, remove_job};
use crate::core::alloc;
use crate::core::outbox::{AcctRecord, NodeCommand, Outbox, SaveHint};
use crate::core::{Core, SimTime};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState};

/// Suspends running job `id`: SIGSTOP on its nodes, its time-limit clock stops.
pub(crate) fn suspend(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.state != JobState::Running || job.completing {
        return;
    }
    job.state = JobState::Suspended;
    job.suspended_at = Some(now);
    out.node(NodeCommand::Suspend {
        job: id,
        nodes: job.nodes.clone(),
    });
    out.accounting(AcctRecord::JobSuspended {
        job: id,
        run: job.restarts,
        at: now,
        suspended: true,
    });
    out.save(SaveHint::Job(id));
}

/// Resumes suspended job `id`: SIGCONT on its nodes, its time-limit clock runs again.
pub(crate) fn resume(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.state != JobState::Suspended || job.completing {
        return;
    }
    job.state = JobState::Running;
    job.suspended_secs += job.suspended_at.take().map_or(0, |at| now.since(at));
    out.node(NodeCommand::Resume {
        job: id,
        nodes: job.nodes.clone(),
    });
    out.accounting(AcctRecord::JobSuspended {
        job: id,
        run: job.restarts,
        at: now,
        suspended: false,
    });
    out.save(SaveHint::Job(id));
}

/// `scontrol suspend`: a running job is stopped; a job the timeslicer suspended is taken from
/// it. Either way the job gives its resources back and stays suspended until an
/// administrator resumes it.
pub(crate) fn admin_suspend(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
) -> Result<(), CtldError> {
    let job = core.jobs.map.get(&id).ok_or(CtldError::InvalidJobId)?;
    match (job.state, job.completing) {
        (JobState::Running, false) => suspend(core, out, now, id),
        (JobState::Suspended, false) if !core.gang.manual.contains(&id) => {}
        (JobState::Pending, false) => return Err(CtldError::JobPending),
        _ => return Err(CtldError::JobNotRunning),
    }
    core.gang.manual.insert(id);
    alloc::release(core, id);
    remove_job(core, out, now, id);
    Ok(())
}

/// `scontrol resume`: a job an administrator suspended takes its resources again (even if
/// others hold them now) and runs, unless gang scheduling finds its resources busy: then it
/// waits for its timeslice. A job the timeslicer suspended is left to the timeslicer.
pub(crate) fn admin_resume(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
) -> Result<(), CtldError> {
    let job = core.jobs.map.get(&id).ok_or(CtldError::InvalidJobId)?;
    if job.state != JobState::Suspended || job.completing {
        return Err(CtldError::JobNotSuspended);
    }
    if !core.gang.manual.remove(&id) {
        return Ok(());
    }
    alloc::retake(core, id);
    if Gang::enabled(core) {
        add_job(core, out, now, id);
    } else {
        resume(core, out, now, id);
    }
    Ok(())
}
