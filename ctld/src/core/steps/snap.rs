//! The saved form of a job's step holdings (node names, not table indexes, like the rest of
//! the snapshot), and the holdings rebuilt from it after a restart.

use super::{JobSteps, StepHold, StepStart};
use crate::core::{Core, Job, SimTime};
use serde::{Deserialize, Serialize};
use sluice_vocab::FedJobId;

/// One step holding CPUs, as saved with its job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSnap {
    /// The step id.
    pub step: u32,
    /// `--overlap`: its CPUs are shared with every step.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overlap: bool,
    /// Names of its nodes.
    pub nodes: Vec<String>,
    /// CPUs on each of `nodes`.
    pub cpus: Vec<u32>,
}

impl StepSnap {
    /// The saved holdings of `job`'s steps, in step order.
    pub fn of_job(core: &Core, job: FedJobId) -> Vec<StepSnap> {
        let names = core.nodes();
        core.steps
            .get(&job)
            .into_iter()
            .flat_map(|steps| steps.iter())
            .map(|(&step, hold)| StepSnap {
                step,
                overlap: hold.overlap,
                nodes: hold
                    .nodes
                    .iter()
                    .filter_map(|n| names.get(n.get() as usize).map(|n| n.name.clone()))
                    .collect(),
                cpus: hold.cpus.clone(),
            })
            .collect()
    }
}

/// Puts `job`'s saved step holdings back; nodes no longer configured are left out.
pub(crate) fn restore(core: &mut Core, job: FedJobId, saved: &[StepSnap]) {
    let mut steps = JobSteps::new();
    for s in saved {
        let mut hold = StepHold {
            overlap: s.overlap,
            nodes: Vec::new(),
            cpus: Vec::new(),
        };
        for (name, &cpus) in s.nodes.iter().zip(&s.cpus) {
            if let Some(&idx) = core.nodes.by_name.get(name.as_str()) {
                hold.nodes.push(idx);
                hold.cpus.push(cpus);
            }
        }
        steps.insert(s.step, hold);
    }
    if !steps.is_empty() {
        core.steps.insert(job, steps);
    }
}

/// A step given out and not yet done, as saved with its job: what its end record repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenStepSnap {
    /// The step id.
    pub step: u32,
    /// Its name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// When it was given out (unix seconds).
    pub start: u64,
    /// Its nodes, as a hostlist.
    pub node_list: String,
    /// How many nodes.
    pub node_count: u32,
    /// Its tasks.
    pub ntasks: u32,
    /// CPUs over all its nodes.
    pub cpus: u32,
}

impl OpenStepSnap {
    /// The saved starts of `job`'s steps not yet done, in step order.
    pub fn of_job(job: &Job) -> Vec<OpenStepSnap> {
        job.open_steps
            .iter()
            .map(|(&step, s)| OpenStepSnap {
                step,
                name: s.name.clone(),
                start: s.start.secs(),
                node_list: s.node_list.clone(),
                node_count: s.node_count,
                ntasks: s.ntasks,
                cpus: s.cpus,
            })
            .collect()
    }

    /// The start it saved.
    pub(crate) fn start(&self) -> StepStart {
        StepStart {
            name: self.name.clone(),
            start: SimTime::from_secs(self.start),
            node_list: self.node_list.clone(),
            node_count: self.node_count,
            ntasks: self.ntasks,
            cpus: self.cpus,
        }
    }
}
