//! The tasks being sampled now, for `sstat`: each [`super::Tracker`] is entered here as it
//! starts, by a weak reference to its gatherer, so a finished (dropped) tracker leaves the table
//! by itself and no waiter has to remember to remove it.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::{Mutex, Weak};

use sluice_vocab::jobacct::{StepUsage, TaskUsage};

use super::gather::TaskGather;
use super::{Tracker, lock};

/// Slurm's step number of the batch script.
pub const BATCH_STEP: i32 = -4;

#[derive(Debug)]
struct LiveTask {
    step: i32,
    uid: u32,
    node_list: String,
    gather: Weak<Mutex<TaskGather>>,
}

/// One step's tasks here, as sampled so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveStep {
    /// The srun step's number, or [`BATCH_STEP`].
    pub step: i32,
    /// The step's node list (the tasks' node indexes refer to it).
    pub node_list: String,
    /// The usage of its tasks here.
    pub usage: StepUsage,
    /// Its processes here at the last sample, in order.
    pub pids: Vec<u32>,
}

/// Every task being sampled on this node, by job.
#[derive(Debug, Default)]
pub struct LiveTable {
    jobs: Mutex<HashMap<u32, Vec<LiveTask>>>,
}

impl LiveTable {
    /// Enters `tracker`, a task of `job`'s step `step` owned by `uid`.
    pub fn add(&self, job: u32, step: i32, uid: u32, node_list: &str, tracker: &Tracker) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        jobs.retain(|_, tasks| {
            tasks.retain(|t| t.gather.strong_count() > 0);
            !tasks.is_empty()
        });
        jobs.entry(job).or_default().push(LiveTask {
            step,
            uid,
            node_list: node_list.to_string(),
            gather: tracker.watch(),
        });
    }

    /// The owner of `job`'s tasks being sampled here, if any.
    pub fn owner(&self, job: u32) -> Option<u32> {
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        let tasks = jobs.get(&job)?;
        tasks
            .iter()
            .find(|t| t.gather.strong_count() > 0)
            .map(|t| t.uid)
    }

    /// The usage so far of `job`'s steps with tasks sampled here, by step number.
    pub fn steps(&self, job: u32) -> Vec<LiveStep> {
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        let mut by_step: BTreeMap<i32, Parts> = BTreeMap::new();
        for t in jobs.get(&job).into_iter().flatten() {
            let Some(gather) = t.gather.upgrade() else {
                continue;
            };
            let parts = by_step.entry(t.step).or_insert_with(|| Parts {
                node_list: t.node_list.clone(),
                ..Parts::default()
            });
            let gather = lock(&gather);
            parts.tasks.push(gather.usage());
            parts
                .pids
                .extend(gather.pids().filter_map(|p| u32::try_from(p).ok()));
        }
        by_step
            .into_iter()
            .filter_map(|(step, mut p)| {
                p.pids.sort_unstable();
                Some(LiveStep {
                    step,
                    usage: StepUsage::from_tasks(&p.tasks)?,
                    node_list: p.node_list,
                    pids: p.pids,
                })
            })
            .collect()
    }
}

/// One step's tasks while they are collected.
#[derive(Default)]
struct Parts {
    node_list: String,
    tasks: Vec<TaskUsage>,
    pids: Vec<u32>,
}
