//! What the runtime reports back about launches: a batch script that could not be delivered
//! to its node, the end of an `srun` allocation's last step, and the end of `salloc`'s command.
//!
//! A launch that never reached its node means the job never ran: as Slurm does, the node is
//! set DOWN with a reason and the job goes back to the queue (whatever its `--no-requeue`, since
//! nothing of it ran), to start elsewhere.

use super::completion::{JobExit, RunReport, check_batch_report, on_job_exited};
use super::outbox::Outbox;
use super::registration::set_node_down;
use super::{Caller, Core, SimTime};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState, NodeIdx};

/// The reason a node is set DOWN with when a batch launch could not reach it.
pub const LAUNCH_FAILED: &str = "batch job launch failure";

/// The batch launch of `job` (run and node in `from`) on its first node failed. The job is
/// requeued and that node set DOWN. Nothing happens when the job has moved on since (ended,
/// cancelled, or started again after an earlier failure: [`CtldError::StaleReport`] for
/// another run or node).
pub fn on_launch_failed(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    job: FedJobId,
    from: &RunReport,
) -> Result<(), CtldError> {
    let i = core.nodes.lookup(&from.node)?;
    if !core.jobs.map.contains_key(&job) {
        return Err(CtldError::InvalidJobId);
    }
    check_batch_report(core, job, from).map_err(|stale| CtldError::StaleReport { job, stale })?;
    let Some(j) = core.jobs.map.get_mut(&job) else {
        return Err(CtldError::InvalidJobId);
    };
    if j.state != JobState::Running || j.completing || j.nodes.first() != Some(&i) {
        return Err(CtldError::AlreadyDone);
    }
    // The job never ran: requeue it even when submitted with --no-requeue.
    let requeue = std::mem::replace(&mut j.requeue, true);
    set_node_down(core, out, now, i, LAUNCH_FAILED);
    if let Some(j) = core.jobs.map.get_mut(&job) {
        j.requeue = requeue;
    }
    Ok(())
}

/// `srun` ended the allocation it created: the job ends with its last step's exit.
pub fn on_allocation_done(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    exit: JobExit,
) -> Result<(), CtldError> {
    let interactive = core
        .jobs
        .map
        .get(&exit.job)
        .ok_or(CtldError::InvalidJobId)?
        .launch
        .interactive;
    if !interactive {
        return Err(CtldError::AccessDenied);
    }
    on_job_exited(core, out, now, exit)
}

/// salloc's command ended: the allocation `exit.job` ends with its status. Only its owner (or an
/// administrator) may end it, and only an interactive job (an allocation).
pub fn on_allocation_complete(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    exit: JobExit,
) -> Result<(), CtldError> {
    let job = core
        .jobs
        .map
        .get(&exit.job)
        .ok_or(CtldError::InvalidJobId)?;
    crate::core::lifecycle::authorize(caller, job)?;
    on_allocation_done(core, out, now, exit)
}

impl Core {
    /// The task indexes of array `array` (its array job id) still in the core, ascending.
    pub fn array_task_indexes(&self, array: FedJobId) -> Option<Vec<u32>> {
        self.jobs
            .arrays
            .get(&array)
            .map(|m| m.tasks.iter().map(|t| t.0).collect())
    }

    /// The `%N` throttle of array `array` (0: none).
    pub fn array_throttle(&self, array: FedJobId) -> Option<u32> {
        self.jobs.arrays.get(&array).map(|m| m.throttle)
    }

    /// How many job ids the id source has left.
    pub fn job_ids_left(&self) -> u64 {
        self.ids.remaining()
    }

    /// The configured CPUs of each of `nodes`: what a job given them whole holds (see
    /// [`Core::cpus_held`] for what a job actually holds).
    pub fn alloc_cpus(&self, nodes: &[NodeIdx]) -> Vec<u32> {
        nodes.iter().map(|&n| self.nodes.get(n).cpus).collect()
    }

    /// The CPUs `job` holds on each of `nodes` (its `Job::nodes`, or a prefix for a step), in
    /// order: what `SLURM_JOB_CPUS_PER_NODE`, `SLURM_CPUS_ON_NODE`, `JobInfo.cpus` and srun's
    /// allocation all count. From the job's allocation while it holds nodes; a whole node's
    /// CPUs otherwise (a node of its allocation it no longer holds).
    pub fn cpus_held(&self, job: FedJobId, nodes: &[NodeIdx]) -> Vec<u32> {
        let alloc = self.allocs.get(&job);
        nodes
            .iter()
            .map(|&n| {
                alloc
                    .and_then(|a| a.nodes.iter().position(|&x| x == n).map(|k| (a, k)))
                    .and_then(|(a, k)| a.cpus.get(k).copied())
                    .unwrap_or_else(|| self.nodes.get(n).cpus)
            })
            .collect()
    }
}
