//! What running jobs hold, per association and every level above it: the counts the group
//! limits (`GrpJobs`, `GrpTRES`) and `MaxJobs` compare with. A scheduling pass works it out
//! once at its start and adds each job it starts, so a pass costs one walk over the running
//! jobs, not one per pending job.

use std::collections::HashMap;

use sluice_vocab::FedJobId;

use super::{AssocKey, AssocTable};
use crate::core::Core;

/// What the running jobs under one association hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Running (or suspended) jobs.
    pub jobs: u64,
    /// Their CPUs.
    pub cpus: u64,
    /// Their memory in megabytes.
    pub mem_mb: u64,
    /// Their nodes.
    pub nodes: u64,
}

/// [`Held`] for every association that has running jobs under it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    by: HashMap<AssocKey, Held>,
}

impl Usage {
    /// What the running jobs of `core` hold, by association.
    pub(crate) fn of(core: &Core) -> Self {
        let mut usage = Self::default();
        if let Some(table) = core.assocs.as_ref() {
            for id in core.allocs.keys() {
                usage.add(core, table, *id);
            }
        }
        usage
    }

    /// Counts `id`, which now holds its allocation, under its association and those above.
    pub(crate) fn add_job(&mut self, core: &Core, id: FedJobId) {
        if let Some(table) = core.assocs.as_ref() {
            self.add(core, table, id);
        }
    }

    fn add(&mut self, core: &Core, table: &AssocTable, id: FedJobId) {
        let (Some(job), Some(alloc)) = (core.jobs.map.get(&id), core.allocs.get(&id)) else {
            return;
        };
        // A completing job's usage ended with it, as Slurm releases it at the job's end.
        if job.state.is_finished() {
            return;
        }
        let nodes = alloc.nodes.len() as u64;
        // Memory that is not consumable is not in the allocation: the job's `--mem` counts.
        let mem_mb = match alloc.mem_mb.iter().sum::<u64>() {
            0 => job.req.mem_per_node_mb.saturating_mul(nodes),
            held => held,
        };
        let held = Held {
            jobs: 1,
            cpus: alloc.cpus.iter().map(|c| u64::from(*c)).sum(),
            mem_mb,
            nodes,
        };
        for key in table.chain(&job.launch.account, &job.launch.user) {
            let h = self.by.entry(key).or_default();
            h.jobs += held.jobs;
            h.cpus += held.cpus;
            h.mem_mb += held.mem_mb;
            h.nodes += held.nodes;
        }
    }

    /// What the running jobs under `key` hold.
    pub fn get(&self, key: &AssocKey) -> Held {
        self.by.get(key).copied().unwrap_or_default()
    }
}
