//! A node's report that its `Prolog` or `Epilog` failed, as Slurm handles it: the node is
//! drained (`Prolog error`, `Epilog error`); a batch job whose prolog failed never ran (or ran
//! no step on that node), so it is requeued and held (`launch failed requeued held`, released
//! by an administrator), or ends as NODE_FAIL when it may not be requeued (an `srun`
//! allocation never is).

use super::completion::{end_run, leave_running, release_nodes};
use super::jobs::{HoldKind, JobReason};
use super::outbox::{NodeCommand, Outbox, SaveHint};
use super::{Core, SimTime, kill, registration};
use sluice_vocab::{FedJobId, JobState};

/// Slurm's drain reason after a failed prolog.
pub const PROLOG_ERROR: &str = "Prolog error";
/// Slurm's drain reason after a failed epilog.
pub const EPILOG_ERROR: &str = "Epilog error";
/// Slurm's drain reason when a job's processes outlived their SIGKILL.
pub const KILL_TASK_FAILED: &str = "Kill task failed";

/// A node program that failed, as a node reports it with a job's exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeScript {
    /// `Prolog`: the batch script never ran.
    Prolog,
    /// `Epilog`: it ran after the script ended.
    Epilog,
    /// Not a program: the job's processes on the node outlived their SIGKILL by
    /// `UnkillableStepTimeout` (reported about the job as a whole).
    KillTask,
}

/// Drains `node` (by name) for a failed program; a node drained already keeps its reason (the
/// first failure, e.g. a prolog's, stays visible when the epilog that follows fails too).
pub(crate) fn drain_for(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    node: &str,
    reason: &str,
) {
    match core.nodes.lookup(node) {
        Ok(i) if core.nodes.get(i).drain => {
            tracing::warn!(node, "{reason} on a drained node");
        }
        Ok(i) => registration::drain_node(core, out, now, i, reason.to_string(), 0),
        Err(_) => tracing::warn!(node, "{reason} reported by an unknown node"),
    }
}

/// `id`'s prolog failed on `node` (its batch host): drain the node, give back the job's nodes
/// and requeue it held (or end it when it may not be requeued, or as its kill asked).
pub(crate) fn prolog_failed(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    node: &str,
) {
    drain_for(core, out, now, node, PROLOG_ERROR);
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let requeue = job.may_requeue();
    let (nodes, completing) = (job.nodes.clone(), job.completing);
    out.node(NodeCommand::Terminate { job: id, nodes });
    release_nodes(core, id);
    if completing {
        // Cancelled or requeued while the prolog ran: that already decided its fate.
        kill::finish_completing(core, id, now);
        super::federation::report::flush(core, out, id);
        return;
    }
    leave_running(&mut core.jobs, id);
    super::gang::job_stopped(core, out, now, id);
    if !requeue {
        end_run(core, out, now, id, JobState::NodeFail, JobReason::NodeDown);
        core.jobs.finished.insert((now, id));
        return;
    }
    kill::requeue_run(core, out, now, id, JobState::Requeued);
    if let Some(job) = core.jobs.map.get_mut(&id) {
        job.hold = Some(HoldKind::Admin);
        job.reason = JobReason::LaunchFailedRequeuedHeld;
        out.save(SaveHint::Job(id));
    }
}

/// A report about `id` as a whole on `node` (a node running only its steps): a failed epilog
/// drains the node; a failed prolog also ends the run if the node holds it.
pub(crate) fn whole_job_report(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    node: &str,
    failed: NodeScript,
) {
    let holds = core.nodes.lookup(node).ok().is_some_and(|i| {
        core.jobs.active.contains(&id)
            && core.jobs.map.get(&id).is_some_and(|j| {
                j.nodes.contains(&i) && j.state == JobState::Running && !j.completing
            })
    });
    match failed {
        NodeScript::Prolog if holds => prolog_failed(core, out, now, id, node),
        NodeScript::Prolog => drain_for(core, out, now, node, PROLOG_ERROR),
        NodeScript::Epilog => drain_for(core, out, now, node, EPILOG_ERROR),
        NodeScript::KillTask => kill_task_failed(core, out, now, id, node),
    }
}

/// `id`'s processes on `node` outlived their SIGKILL: the node is drained (`Kill task
/// failed`) and, when the job's end waits for its batch script there (killed, completing),
/// the job ends now as it was killed, leaving the stuck processes to the drained node, as
/// Slurm does.
fn kill_task_failed(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    node: &str,
) {
    drain_for(core, out, now, node, KILL_TASK_FAILED);
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let batch_host = job.nodes.first().map(|&i| core.nodes.get(i).name.as_str()) == Some(node);
    if core.jobs.active.contains(&id) && job.completing && batch_host && job.runs_batch_script() {
        tracing::warn!(job = %id, node, "Kill task failed: the job ends without its script's end");
        super::completion::killed_script_ended(core, out, now, id, None);
    }
}
