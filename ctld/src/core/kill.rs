//! Ending runs early: kill (SIGTERM, then SIGKILL after KillWait), requeue, and node failure.
//!
//! A killed job keeps its nodes (`completing`) until its batch host reports the exit; a job
//! whose node failed frees its nodes at once, since the failed node will not report.

use super::completion::{SIGTERM, batch_step_ended, end_run, leave_running, release_nodes};
use super::jobs::{JobReason, JobTable};
use super::outbox::{AcctRecord, NodeCommand, Outbox, SaveHint};
use super::{Core, SimTime};
use sluice_vocab::{FedJobId, JobState, NodeIdx};

/// Kills a running or suspended job: SIGTERM now, SIGKILL after KillWait. The job takes
/// `state` (CANCELLED, TIMEOUT, or PENDING for a requeue) and keeps its nodes until it exits.
pub(crate) fn kill_job(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    state: JobState,
    reason: JobReason,
) {
    let kill_wait = core.cfg.kill_wait;
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let nodes = job.nodes.clone();
    if job.state == JobState::Suspended {
        out.node(NodeCommand::Resume {
            job: id,
            nodes: nodes.clone(),
        });
    }
    job.completing = true;
    job.suspended_at = None;
    let interactive_now = kill_wait == 0 && !job.runs_batch_script();
    if kill_wait == 0 {
        out.node(NodeCommand::Terminate { job: id, nodes });
    } else {
        out.node(NodeCommand::Signal {
            job: id,
            nodes,
            signal: SIGTERM,
        });
        job.kill_at = Some(now.plus(kill_wait));
    }
    leave_running(&mut core.jobs, id);
    super::gang::job_stopped(core, out, now, id);
    if state == JobState::Pending {
        requeue_run(core, out, now, id, JobState::Requeued);
    } else {
        end_run(core, out, now, id, state, reason);
    }
    // A job still CONFIGURING never launched: no node will report its exit.
    super::power::boot::forget(core, now, id);
    super::federation::report::flush(core, out, id);
    if interactive_now {
        settle_interactive(core, out, now, id);
    }
    if super::het::is_leader(core, id) {
        super::het::kill_followers(core, out, now, id, state, reason);
    }
}

/// A killed allocation (srun's or salloc's) has no batch script whose end a node reports:
/// once its steps were sent SIGKILL its nodes are free. (An srun whose tasks end first reports
/// their end itself, which settles the job earlier.)
pub(crate) fn settle_interactive(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    if job.runs_batch_script() || !job.completing {
        return;
    }
    release_nodes(core, id);
    finish_completing(core, id, now);
    super::federation::report::flush(core, out, id);
    out.save(SaveHint::Job(id));
}

/// Puts a job whose run ended back in the queue (recording the run as `recorded`).
pub(crate) fn requeue_run(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    recorded: JobState,
) {
    super::federation::report::run_ended(core, out, id, recorded, true);
    super::ctld_scripts::run_ended(core, out, id);
    super::mail::job_requeued(core, out, now, id);
    super::nonstop::job_ended(core, out, now, id);
    super::steps::close_open_steps(core, out, now, id, recorded);
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let (exit_code, signal) = (job.exit_code, job.exit_signal);
    out.accounting(AcctRecord::JobEnded {
        job: id,
        run: job.restarts,
        end: now,
        state: recorded,
        exit_code,
        signal,
        reason: JobReason::None,
        requester_uid: None,
    });
    job.restarts += 1;
    job.requester_uid = None;
    job.state = JobState::Pending;
    job.reason = JobReason::None;
    let part = &core.parts[job.partition.get()].name;
    out.accounting(AcctRecord::submitted(job, part, now));
    out.save(SaveHint::Job(id));
    if !job.completing {
        job.start_time = None;
        core.jobs.queue.insert(JobTable::queue_key(job));
    }
}

/// A node of running job `id` failed: the job is requeued if it may be, else it ends as
/// NODE_FAIL; its other nodes are told to kill what is left, and all its nodes are freed.
pub(crate) fn node_failed_job(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    failed: NodeIdx,
) {
    if super::nonstop::survives_node_failure(core, out, id, failed) {
        return;
    }
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let survivors: Vec<NodeIdx> = job.nodes.iter().copied().filter(|&n| n != failed).collect();
    let was_completing = job.completing;
    let (requeue, state) = (job.may_requeue(), job.state);
    job.completing = false;
    job.kill_at = None;
    job.suspended_at = None;
    if !survivors.is_empty() {
        out.node(NodeCommand::Terminate {
            job: id,
            nodes: survivors,
        });
    }
    batch_step_ended(
        core,
        out,
        now,
        id,
        if was_completing {
            JobState::Cancelled
        } else {
            JobState::NodeFail
        },
        None,
    );
    release_nodes(core, id);
    if was_completing {
        finish_completing(core, id, now);
        super::federation::report::flush(core, out, id);
        return;
    }
    leave_running(&mut core.jobs, id);
    super::gang::job_stopped(core, out, now, id);
    if requeue && matches!(state, JobState::Running | JobState::Suspended) {
        requeue_run(core, out, now, id, JobState::NodeFail);
    } else {
        end_run(core, out, now, id, JobState::NodeFail, JobReason::NodeDown);
        core.jobs.finished.insert((now, id));
    }
    // The rest of a heterogeneous job follows the component that lost a node.
    super::het::node_failed(core, out, now, id);
}

/// A completing job's nodes are free: queue it again (requeue) or let it age out.
pub(crate) fn finish_completing(core: &mut Core, id: FedJobId, now: SimTime) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    job.completing = false;
    job.kill_at = None;
    if job.state == JobState::Pending {
        job.start_time = None;
        core.jobs.queue.insert(JobTable::queue_key(job));
    } else {
        core.jobs.finished.insert((job.end_time.unwrap_or(now), id));
    }
}

/// Requeues a finished (not completing) job: back to the queue.
pub(crate) fn requeue_finished(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if let Some(end) = job.end_time {
        core.jobs.finished.remove(&(end, id));
    }
    job.state = JobState::Pending;
    job.reason = JobReason::None;
    job.restarts += 1;
    job.requester_uid = None;
    job.start_time = None;
    job.end_time = None;
    core.jobs.queue.insert(JobTable::queue_key(job));
    let part = &core.parts[job.partition.get()].name;
    out.accounting(AcctRecord::submitted(job, part, now));
    out.save(SaveHint::Job(id));
}
