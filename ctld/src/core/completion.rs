//! The job manager's state transitions that move nodes: starting a job, killing it (SIGTERM,
//! then SIGKILL after KillWait), its exit, node failure, and requeue.
//!
//! A killed job keeps its nodes (`completing`) until its batch host reports the exit; then every
//! node is told to clean up and the nodes are free. A job whose node failed frees its nodes at
//! once, since the failed node will not report.

use super::alloc::JobAlloc;
use super::jobs::{JobReason, JobTable};
use super::node_runs::run_on_nodes;
use super::node_scripts::{self, EPILOG_ERROR, NodeScript};
use super::outbox::{AcctRecord, NodeCommand, Outbox, SaveHint};
use super::{Core, SimTime, deps, kill};
use crate::error::CtldError;
use sluice_vocab::jobacct::StepUsage;
use sluice_vocab::{FedJobId, JobState};

/// SIGTERM, sent first when a job is cancelled, times out or is requeued.
pub const SIGTERM: i32 = 15;
/// SIGKILL.
pub const SIGKILL: i32 = 9;
/// Slurm's step id of a batch job's script (`123.batch` in sacct).
pub const BATCH_STEP: i32 = -4;
/// The step id of a node's report about a job as a whole there (a failed prolog or epilog on a
/// node that runs only its steps).
pub const WHOLE_JOB_STEP: i32 = -6;

/// A batch script's end, as its batch host reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobExit {
    /// The job.
    pub job: FedJobId,
    /// The script's exit code.
    pub exit_code: i32,
    /// The signal that ended it (0 if none).
    pub signal: i32,
    /// What the batch step used, when the node measured it.
    pub usage: Option<StepUsage>,
    /// Which node, run and step the report is about; `None` for the end of an `srun`
    /// allocation, which `srun` itself reports.
    pub from: Option<RunReport>,
    /// The reporting node's prolog (the script never ran) or epilog failed.
    pub failed: Option<NodeScript>,
}

impl JobExit {
    /// The end of an allocation, told by the command holding it (srun's last step, salloc's
    /// command): its status only; the usage is on its step records and no node reports it.
    pub fn allocation_end(job: FedJobId, exit_code: i32, signal: i32) -> Self {
        Self {
            job,
            exit_code,
            signal,
            usage: None,
            from: None,
            failed: None,
        }
    }
}

/// What every node daemon's report about a job names besides the job: the node sending it,
/// the run it belongs to (the requeue count the controller launched it with) and the step. A
/// report naming anything but the run the job's nodes are running now is stale and dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// The node that sends it.
    pub node: String,
    /// The job's requeue count when the controller launched the run.
    pub run: u32,
    /// The step ([`BATCH_STEP`] for the batch script).
    pub step: i32,
}

/// Why a node's report was dropped without being applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Stale {
    /// It is about an earlier run than the one the job is in (requeued since).
    #[error("run {reported} is over, the job is in run {current}")]
    OlderRun { reported: u32, current: u32 },
    /// The node does not hold the reported step of the run.
    #[error("node {node} does not hold that step of the run")]
    NotAllocated { node: String },
    /// The step ended already (reported twice, or ended by the controller).
    #[error("the step ended already")]
    StepEnded,
}

/// Checks a node's report of the end of `id`'s batch step against the run the controller
/// knows: it must name the run the job's nodes hold, from the job's batch host, and that step
/// must not have ended yet.
pub(crate) fn check_batch_report(core: &Core, id: FedJobId, r: &RunReport) -> Result<(), Stale> {
    let job = core.jobs.map.get(&id).ok_or(Stale::StepEnded)?;
    let Some(current) = run_on_nodes(core, id) else {
        let current = job.restarts;
        return Err(if r.run < current {
            Stale::OlderRun {
                reported: r.run,
                current,
            }
        } else {
            Stale::StepEnded
        });
    };
    if r.run != current {
        return Err(Stale::OlderRun {
            reported: r.run,
            current,
        });
    }
    let batch_host = job.nodes.first().map(|&i| core.nodes.get(i).name.as_str());
    if r.step != BATCH_STEP || !job.runs_batch_script() || batch_host != Some(r.node.as_str()) {
        return Err(Stale::NotAllocated {
            node: r.node.clone(),
        });
    }
    Ok(())
}

/// Starts `id` with `alloc`: puts it on its nodes and asks the batch host to launch it.
pub(crate) fn start_job(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    mut alloc: JobAlloc,
) {
    batch_host_first(core, id, &mut alloc);
    let nodes = alloc.nodes.clone();
    let cpus = alloc.total_cpus();
    super::alloc::attach(core, id, alloc);
    super::power::boot::allocate(core, id, &nodes);
    super::ctld_scripts::hold_for_prolog(core, id);
    super::alloc_prologs::hold_for_node_prologs(core, out, id, &nodes);
    let node_list = core.nodes.hostlist(&nodes);
    let node_mem: u64 = nodes
        .iter()
        .map(|&n| core.nodes.get(n).real_memory_mb)
        .sum();
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    core.jobs.queue.remove(&JobTable::queue_key(job));
    core.jobs.active.insert(id);
    job.state = JobState::Running;
    job.reason = JobReason::None;
    job.start_time = Some(now);
    job.signal_sent = false;
    job.mail_sent = 0;
    job.end_time = None;
    job.suspended_secs = 0;
    job.exit_code = 0;
    job.exit_signal = 0;
    job.nodes = nodes.clone();
    *core
        .jobs
        .running_names
        .entry((job.uid, job.name.clone()))
        .or_insert(0) += 1;
    if let Some(meta) = job.array.and_then(|a| core.jobs.arrays.get_mut(&a.job)) {
        meta.running += 1;
    }
    // An srun allocation has no batch script: srun runs its steps once it hears of the start.
    if job.runs_batch_script() {
        // Held while the job is CONFIGURING (nodes powering up).
        let cmd = NodeCommand::LaunchBatch {
            job: id,
            array: job.array,
            uid: job.uid,
            gid: job.gid,
            nodes: nodes.clone(),
            node_list: node_list.clone(),
            ntasks: job.req.ntasks,
            cpus_per_task: job.req.cpus_per_task,
            mem_per_node_mb: (job.req.mem_per_node_mb > 0).then_some(job.req.mem_per_node_mb),
            time_limit: job.req.time_limit,
            launch: job.launch.clone(),
        };
        super::power::boot::send_or_hold(&mut core.power, out, cmd);
    } else if core.conf.prolog.flags.alloc {
        // Slurm's PrologFlags=Alloc: the prolog runs on every node at allocation, not at the
        // first step there.
        out.node(NodeCommand::AllocProlog {
            job: id,
            nodes: nodes.clone(),
        });
    }
    let mem_mb = job
        .req
        .mem_charged_mb(nodes.len(), u64::from(cpus), node_mem);
    out.accounting(AcctRecord::JobStarted {
        job: id,
        run: job.restarts,
        start: now,
        node_list,
        node_count: nodes.len() as u32,
        cpus,
        mem_mb,
    });
    out.save(SaveHint::Job(id));
    deps::target_changed(&mut core.jobs, out, id, now);
    super::ctld_scripts::start_prolog(core, out, id);
    super::power::boot::launch_early(core, out, id);
    super::mail::job_started(core, out, now, id);
}

/// `sbatch --batch`: the first node of `alloc` with the features asked becomes the job's first
/// node, its batch host (when none has them, the first node stays, as in Slurm).
fn batch_host_first(core: &Core, id: FedJobId, alloc: &mut JobAlloc) {
    let Some(spec) = core
        .jobs
        .map
        .get(&id)
        .and_then(|j| j.req.place.batch_features.as_deref())
    else {
        return;
    };
    let Some(want) = super::features::Constraint::parse(spec) else {
        return;
    };
    if let Some(k) = alloc
        .nodes
        .iter()
        .position(|&n| want.matches(&core.nodes.get(n).features))
    {
        alloc.move_to_front(k);
    }
}

/// Stops counting `id` as running (singleton, array throttle).
pub(crate) fn leave_running(jobs: &mut JobTable, id: FedJobId) {
    let Some(job) = jobs.map.get(&id) else {
        return;
    };
    let key = (job.uid, job.name.clone());
    if let Some(n) = jobs.running_names.get_mut(&key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            jobs.running_names.remove(&key);
        }
    }
    if let Some(meta) = job.array.and_then(|a| jobs.arrays.get_mut(&a.job)) {
        meta.running = meta.running.saturating_sub(1);
    }
}

/// Gives `id`'s nodes back.
pub(crate) fn release_nodes(core: &mut Core, id: FedJobId) {
    super::alloc::detach(core, id);
    core.jobs.active.remove(&id);
}

/// Records the end of a run in `state` and tells dependents.
pub(crate) fn end_run(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    state: JobState,
    reason: JobReason,
) {
    super::federation::report::run_ended(core, out, id, state, false);
    super::steps::close_open_steps(core, out, now, id, state);
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    job.state = state;
    job.reason = reason;
    job.end_time = Some(now);
    let (exit_code, signal) = (job.exit_code, job.exit_signal);
    out.accounting(AcctRecord::JobEnded {
        job: id,
        run: job.restarts,
        end: now,
        state,
        exit_code,
        signal,
        reason,
        requester_uid: job.requester_uid.filter(|_| state == JobState::Cancelled),
    });
    out.save(SaveHint::Job(id));
    deps::target_changed(&mut core.jobs, out, id, now);
    super::ctld_scripts::run_ended(core, out, id);
    super::mail::job_ended(core, out, now, id);
    super::nonstop::job_ended(core, out, now, id);
}

/// Ends a pending job at once (cancelled before it started).
pub(crate) fn cancel_pending(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    end_pending(core, out, now, id, JobState::Cancelled, JobReason::None);
}

/// Ends pending job `id` without running it, in `state` for `reason` (a cancel, a missed
/// `--deadline`, a dependency that can never be met).
pub(crate) fn end_pending(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    state: JobState,
    reason: JobReason,
) {
    if let Some(job) = core.jobs.map.get(&id) {
        core.jobs.queue.remove(&JobTable::queue_key(job));
    }
    end_run(core, out, now, id, state, reason);
    core.jobs.finished.insert((now, id));
    if super::het::is_leader(core, id) {
        super::het::kill_followers(core, out, now, id, state, reason);
    }
}

/// Handles the end of a job's batch script: COMPLETED on exit 0, FAILED otherwise; a job being
/// killed keeps the state it was given. Every node of the job is told to clean up. A failed
/// prolog or epilog is handled as [`node_scripts`] says. A node's
/// report about another run, node or an ended step is refused with
/// [`CtldError::StaleReport`] and changes nothing.
pub fn on_job_exited(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    exit: JobExit,
) -> Result<(), CtldError> {
    if let (Some(failed), Some(from)) = (exit.failed, &exit.from)
        && from.step == WHOLE_JOB_STEP
    {
        node_scripts::whole_job_report(core, out, now, exit.job, &from.node, failed);
        return Ok(());
    }
    if !core.jobs.map.contains_key(&exit.job) {
        return Err(CtldError::InvalidJobId);
    }
    if let Some(from) = &exit.from {
        check_batch_report(core, exit.job, from).map_err(|stale| CtldError::StaleReport {
            job: exit.job,
            stale,
        })?;
    }
    if !core.jobs.active.contains(&exit.job) {
        return Err(CtldError::AlreadyDone);
    }
    if let (Some(failed), Some(from)) = (exit.failed, &exit.from) {
        match failed {
            NodeScript::Prolog => {
                node_scripts::prolog_failed(core, out, now, exit.job, &from.node);
                return Ok(());
            }
            NodeScript::Epilog => node_scripts::drain_for(core, out, now, &from.node, EPILOG_ERROR),
            NodeScript::KillTask => {
                node_scripts::whole_job_report(core, out, now, exit.job, &from.node, failed);
                return Ok(());
            }
        }
    }
    let job = core
        .jobs
        .map
        .get_mut(&exit.job)
        .ok_or(CtldError::InvalidJobId)?;
    job.exit_code = exit.exit_code;
    job.exit_signal = exit.signal;
    let nodes = job.nodes.clone();
    let completing = job.completing;
    out.node(NodeCommand::Terminate {
        job: exit.job,
        nodes,
    });
    if completing {
        // Killed (cancel, time limit, requeue): the run's end is recorded already; its script
        // ended only now, with the signal that killed it.
        killed_script_ended(core, out, now, exit.job, exit.usage);
        return Ok(());
    }
    let (state, reason) = if exit.exit_code == 0 && exit.signal == 0 {
        (JobState::Completed, JobReason::None)
    } else {
        (JobState::Failed, JobReason::NonZeroExitCode)
    };
    batch_step_ended(core, out, now, exit.job, state, exit.usage);
    release_nodes(core, exit.job);
    leave_running(&mut core.jobs, exit.job);
    super::gang::job_stopped(core, out, now, exit.job);
    end_run(core, out, now, exit.job, state, reason);
    core.jobs.finished.insert((now, exit.job));
    // A heterogeneous job ends with its leader's script.
    super::het::end_followers(core, out, now, exit.job, state, reason);
    Ok(())
}

/// The batch script of `id`, a job being killed, ended (or will never end: `Kill task
/// failed`): its batch step is recorded, its nodes given back and its completion finished.
pub(crate) fn killed_script_ended(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    usage: Option<StepUsage>,
) {
    batch_step_ended(core, out, now, id, JobState::Cancelled, usage);
    release_nodes(core, id);
    kill::finish_completing(core, id, now);
    super::federation::report::flush(core, out, id);
    out.save(SaveHint::Job(id));
}

/// Records the end of `id`'s batch step (step -4, `batch`) in `state`, in the same commit as the
/// change that ended it: the script ran on the batch host from the run's start until `now`, and
/// ended with the job's exit code and signal. The run is the one that started last, also for a
/// job already queued again by a requeue. An `srun` allocation has no batch step. `usage` is
/// what the script used, when its node measured it (not when the node failed).
pub(crate) fn batch_step_ended(
    core: &Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    state: JobState,
    usage: Option<StepUsage>,
) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let (Some(start), Some(&host)) = (job.start_time, job.nodes.first()) else {
        return;
    };
    if !job.runs_batch_script() {
        return;
    }
    // A requeued run (state PENDING) already counts as the next run.
    let run = if job.state == JobState::Pending {
        job.restarts.saturating_sub(1)
    } else {
        job.restarts
    };
    out.accounting(AcctRecord::Step {
        job: id,
        run,
        step: BATCH_STEP,
        name: "batch".to_string(),
        start,
        end: Some(now),
        state,
        exit_code: job.exit_code,
        signal: job.exit_signal,
        node_list: core.nodes.get(host).name.clone(),
        node_count: 1,
        ntasks: 1,
        cpus: core.cpus_held(id, &[host]).iter().sum(),
        usage: usage.map(Box::new),
    });
}
