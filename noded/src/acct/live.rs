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

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;

    use sluice_vocab::cluster_conf::JobAcctGather;

    use super::*;

    #[tokio::test]
    async fn a_finished_tracker_leaves_the_table_by_itself() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let conf = JobAcctGather {
            enabled: true,
            frequency: 30,
        };
        let tracker = Tracker::start(&conf, pid, 0, 0).unwrap();
        let table = LiveTable::default();
        table.add(5, 2, 1000, "n[1-2]", &tracker);
        assert_eq!(table.owner(5), Some(1000));
        let steps = table.steps(5);
        assert_eq!(steps.len(), 1);
        assert_eq!((steps[0].step, steps[0].node_list.as_str()), (2, "n[1-2]"));
        assert_eq!(
            (steps[0].usage.tasks, steps[0].pids.clone()),
            (1, vec![child.id()])
        );
        assert!(table.steps(6).is_empty(), "another job has nothing here");
        child.kill().unwrap();
        let _ = tracker.finish();
        child.wait().unwrap();
        assert_eq!(table.owner(5), None);
        assert!(table.steps(5).is_empty());
    }
}
