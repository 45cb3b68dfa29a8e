//! Steps' accounting: a step's start is recorded when it is given out and kept with its job
//! (saved in the job's snapshot), so the record of its end carries the right start, name,
//! nodes and sizes even when the controller restarted in between.

use crate::core::outbox::{AcctRecord, Outbox, SaveHint};
use crate::core::{Caller, Core, SimTime};
use crate::error::CtldError;
use sluice_vocab::jobacct::StepUsage;
use sluice_vocab::{FedJobId, JobState};

/// What a running step's accounting records repeat: how it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepStart {
    /// The step's name (srun's `--job-name`, else its command).
    pub name: String,
    /// When it was given out.
    pub start: SimTime,
    /// Its nodes, as a hostlist.
    pub node_list: String,
    /// How many nodes.
    pub node_count: u32,
    /// Its tasks.
    pub ntasks: u32,
    /// CPUs over all its nodes.
    pub cpus: u32,
}

impl StepStart {
    /// What is known of a step whose start was not kept (given out before step starts were
    /// saved): the dbd keeps what its start record said.
    fn unknown() -> Self {
        Self {
            name: String::new(),
            start: SimTime::from_secs(0),
            node_list: String::new(),
            node_count: 0,
            ntasks: 0,
            cpus: 0,
        }
    }
}

/// A step's tasks ended (srun's StepDone).
#[derive(Debug, Clone, PartialEq)]
pub struct StepEnd {
    /// The job.
    pub job: FedJobId,
    /// The step id.
    pub step: u32,
    /// The step's exit code (0 with no signal: COMPLETED, else FAILED).
    pub exit_code: i32,
    /// The signal that ended it.
    pub signal: i32,
    /// What its tasks used, when the node daemons measured it.
    pub usage: Option<StepUsage>,
}

/// Records `step` of `job` as started at `now` (its start record, and the start kept with the
/// job for the end record).
pub(super) fn started(
    core: &mut Core,
    out: &mut impl Outbox,
    job: FedJobId,
    step: u32,
    start: StepStart,
) {
    let Some(j) = core.jobs.map.get_mut(&job) else {
        return;
    };
    let run = j.restarts;
    j.open_steps.insert(step, start.clone());
    out.save(SaveHint::Job(job));
    record(
        out,
        job,
        run,
        step,
        &start,
        None,
        JobState::Running,
        0,
        0,
        None,
    );
}

/// A step's tasks ended: its CPUs are free for the job's other steps, and its end is recorded
/// with the start kept since it was given out. Users end steps of their own jobs only.
pub fn on_step_done(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    end: StepEnd,
) -> Result<(), CtldError> {
    let job = core.jobs.map.get(&end.job).ok_or(CtldError::InvalidJobId)?;
    crate::core::lifecycle::authorize(caller, job)?;
    super::release(core, out, end.job, end.step);
    let job = core
        .jobs
        .map
        .get_mut(&end.job)
        .ok_or(CtldError::InvalidJobId)?;
    let run = job.restarts;
    let start = match job.open_steps.remove(&end.step) {
        Some(start) => {
            out.save(SaveHint::Job(end.job));
            start
        }
        // The run ended first and recorded the step's end then (see `close_open_steps`):
        // this late report of its killed tasks changes nothing.
        None if job.state != JobState::Running || job.completing => {
            tracing::debug!(job = %end.job, step = end.step, "step end after its job's: dropped");
            return Ok(());
        }
        None => StepStart::unknown(),
    };
    let state = if end.exit_code == 0 && end.signal == 0 {
        JobState::Completed
    } else {
        JobState::Failed
    };
    record(
        out,
        end.job,
        run,
        end.step,
        &start,
        Some(now),
        state,
        end.exit_code,
        end.signal,
        end.usage,
    );
    Ok(())
}

/// The run of `job` ended (`state` is how it is recorded) with steps still open: their tasks
/// are killed with it, so each is recorded ended now, as Slurm records them, CANCELLED by the
/// job's end (NODE_FAIL when a node failed under it). Without this a step whose srun never
/// reported (killed, or gone with its node) stayed RUNNING in sacct for good.
pub(crate) fn close_open_steps(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    job: FedJobId,
    state: JobState,
) {
    let Some(j) = core.jobs.map.get_mut(&job) else {
        return;
    };
    if j.open_steps.is_empty() {
        return;
    }
    let run = j.restarts;
    let (step_state, signal) = match state {
        JobState::NodeFail => (JobState::NodeFail, 0),
        _ => (JobState::Cancelled, SIGTERM),
    };
    for (step, start) in std::mem::take(&mut j.open_steps) {
        record(
            out,
            job,
            run,
            step,
            &start,
            Some(now),
            step_state,
            0,
            signal,
            None,
        );
    }
    out.save(SaveHint::Job(job));
}

/// The signal a step killed by its job's end is recorded with (`0:15` in sacct, as Slurm).
const SIGTERM: i32 = 15;

#[allow(clippy::too_many_arguments)]
fn record(
    out: &mut impl Outbox,
    job: FedJobId,
    run: u32,
    step: u32,
    start: &StepStart,
    end: Option<SimTime>,
    state: JobState,
    exit_code: i32,
    signal: i32,
    usage: Option<StepUsage>,
) {
    out.accounting(AcctRecord::Step {
        job,
        run,
        step: i32::try_from(step).unwrap_or(i32::MAX),
        name: start.name.clone(),
        start: start.start,
        end,
        state,
        exit_code,
        signal,
        node_list: start.node_list.clone(),
        node_count: start.node_count,
        ntasks: start.ntasks,
        cpus: start.cpus,
        usage: usage.map(Box::new),
    });
}
