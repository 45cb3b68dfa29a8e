//! Matching the runs a node daemon says it holds (in its registration and its heartbeats)
//! against the runs the controller launched there. A job id alone cannot tell a requeued job's
//! new run from the old one a node daemon that was away still holds; every entry names its run
//! (the requeue count the job was launched with) and its steps, and only an entry naming the
//! run the job's nodes hold now counts as that run.

use super::Core;
use sluice_vocab::{FedJobId, NodeIdx};

/// One run of a job a node daemon holds: processes there, or an end it has not had
/// acknowledged yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRun {
    /// The job.
    pub job: FedJobId,
    /// The run: the job's requeue count when it was launched.
    pub run: u32,
    /// Its batch script runs there.
    pub batch: bool,
    /// Its srun steps with tasks there.
    pub steps: Vec<u32>,
}

impl NodeRun {
    /// The whole run `run` of `job` (as a kill order: everything of that run).
    pub fn whole(job: FedJobId, run: u32) -> Self {
        Self {
            job,
            run,
            batch: false,
            steps: Vec::new(),
        }
    }
}

/// The run `id`'s nodes hold now: its requeue count, one less for a requeued job still
/// completing its last run; `None` when it holds no nodes.
pub(crate) fn run_on_nodes(core: &Core, id: FedJobId) -> Option<u32> {
    let job = core.jobs.map.get(&id)?;
    if !core.jobs.active.contains(&id) {
        return None;
    }
    Some(if job.state == sluice_vocab::JobState::Pending {
        job.restarts.saturating_sub(1)
    } else {
        job.restarts
    })
}

/// The run of `job` node `i` holds according to the controller (`None`: none).
pub(crate) fn held_run(core: &Core, i: NodeIdx, job: FedJobId) -> Option<u32> {
    if !core.nodes.get(i).jobs.contains(&job) {
        return None;
    }
    run_on_nodes(core, job)
}

/// Whether node `i` reports the run of `job` the controller holds there.
pub(crate) fn reports_held_run(core: &Core, i: NodeIdx, runs: &[NodeRun], job: FedJobId) -> bool {
    let held = held_run(core, i, job);
    held.is_some() && runs.iter().any(|r| r.job == job && Some(r.run) == held)
}

/// What node `i` must kill of what it reports: every run the controller does not hold there
/// (an older run of a requeued job, a job that ended or that it does not know) as a whole,
/// and of the run it holds, the steps that ended.
pub(crate) fn runs_to_kill(core: &Core, i: NodeIdx, runs: &[NodeRun]) -> Vec<NodeRun> {
    let mut kill = Vec::new();
    for r in runs {
        if held_run(core, i, r.job) != Some(r.run) {
            kill.push(NodeRun::whole(r.job, r.run));
            continue;
        }
        let Some(job) = core.jobs.map.get(&r.job) else {
            continue;
        };
        let ended: Vec<u32> = r
            .steps
            .iter()
            .copied()
            .filter(|s| !job.open_steps.contains_key(s))
            .collect();
        if !ended.is_empty() {
            kill.push(NodeRun {
                job: r.job,
                run: r.run,
                batch: false,
                steps: ended,
            });
        }
    }
    kill
}

/// The first entry of `runs` naming an older run of its job than the one the controller
/// knows of (held on nodes now, or the last one): a node daemon that missed a requeue.
pub(crate) fn older_run(core: &Core, runs: &[NodeRun]) -> Option<(FedJobId, u32)> {
    runs.iter().find_map(|r| {
        let job = core.jobs.map.get(&r.job)?;
        let now = run_on_nodes(core, r.job).unwrap_or(job.restarts);
        (r.run < now).then_some((r.job, r.run))
    })
}
