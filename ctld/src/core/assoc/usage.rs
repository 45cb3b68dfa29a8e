//! What running jobs hold, per association and every level above it: the counts the group
//! limits (`GrpJobs`, `GrpTRES`) and `MaxJobs` compare with, and for `GrpTRESMins` the
//! TRES-seconds used so far (the dbd's decayed usage, see [`set_used`]) and those running
//! jobs still have left of their time limits. A scheduling pass works it out once at its
//! start and adds each job it starts, so a pass costs one walk over the running jobs, not one
//! per pending job.

use std::collections::HashMap;

use sluice_vocab::FedJobId;

use super::{AssocKey, AssocTable};
use crate::core::Core;
use crate::core::SimTime;
use crate::core::alloc::JobAlloc;
use crate::core::jobs::Job;

/// TRES-seconds: CPU-seconds, megabyte-seconds of memory, node-seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TresSecs {
    /// CPU-seconds.
    pub cpu: u64,
    /// Megabyte-seconds.
    pub mem: u64,
    /// Node-seconds.
    pub node: u64,
}

impl TresSecs {
    fn add(&mut self, o: TresSecs) {
        self.cpu = self.cpu.saturating_add(o.cpu);
        self.mem = self.mem.saturating_add(o.mem);
        self.node = self.node.saturating_add(o.node);
    }
}

/// What an allocation holds, as the limits count it: CPUs, memory in megabytes, nodes.
pub(crate) fn alloc_tres(job: &Job, alloc: &JobAlloc) -> (u64, u64, u64) {
    let nodes = alloc.nodes.len() as u64;
    // Memory that is not consumable is not in the allocation: the job's `--mem` counts.
    let mem_mb = match alloc.mem_mb.iter().sum::<u64>() {
        0 => job.req.mem_per_node_mb.saturating_mul(nodes),
        held => held,
    };
    let cpus = alloc.cpus.iter().map(|c| u64::from(*c)).sum();
    (cpus, mem_mb, nodes)
}

/// Replaces the TRES-seconds each user association has used (the dbd's decayed usage, from
/// the fair-share refresh), which `GrpTRESMins` compares with.
pub fn set_used(core: &mut Core, used: HashMap<AssocKey, TresSecs>) {
    core.assoc_used = used;
}

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
    /// TRES-seconds used so far by past and running jobs (decayed; from the dbd).
    pub used: TresSecs,
    /// TRES-seconds the running jobs have left within their time limits (saturating: an
    /// unlimited job counts as never ending).
    pub run_left: TresSecs,
}

/// [`Held`] for every association that has running jobs under it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    by: HashMap<AssocKey, Held>,
}

impl Usage {
    /// What the running jobs of `core` hold at `now`, and what has been used, by association.
    pub(crate) fn of(core: &Core, now: SimTime) -> Self {
        let mut usage = Self::default();
        if let Some(table) = core.assocs.as_ref() {
            for id in core.allocs.keys() {
                usage.add(core, table, *id, now);
            }
            for ((account, user), used) in &core.assoc_used {
                for key in table.chain(account, user) {
                    usage.by.entry(key).or_default().used.add(*used);
                }
            }
        }
        usage
    }

    /// Counts `id`, which now holds its allocation, under its association and those above.
    pub(crate) fn add_job(&mut self, core: &Core, id: FedJobId, now: SimTime) {
        if let Some(table) = core.assocs.as_ref() {
            self.add(core, table, id, now);
        }
    }

    fn add(&mut self, core: &Core, table: &AssocTable, id: FedJobId, now: SimTime) {
        let (Some(job), Some(alloc)) = (core.jobs.map.get(&id), core.allocs.get(&id)) else {
            return;
        };
        // A completing job's usage ended with it, as Slurm releases it at the job's end.
        if job.state.is_finished() {
            return;
        }
        let (cpus, mem_mb, nodes) = alloc_tres(job, alloc);
        // The QOS's UsageFactor weighs what the job will still use, as it weighs what it used.
        let left = crate::core::qos::charged_secs(
            core,
            &job.launch.qos,
            job.deadline().secs().saturating_sub(now.secs()),
        );
        let run_left = TresSecs {
            cpu: cpus.saturating_mul(left),
            mem: mem_mb.saturating_mul(left),
            node: nodes.saturating_mul(left),
        };
        for key in table.chain(&job.launch.account, &job.launch.user) {
            let h = self.by.entry(key).or_default();
            h.jobs += 1;
            h.cpus += cpus;
            h.mem_mb += mem_mb;
            h.nodes += nodes;
            h.run_left.add(run_left);
        }
    }

    /// What the running jobs under `key` hold.
    pub fn get(&self, key: &AssocKey) -> Held {
        self.by.get(key).copied().unwrap_or_default()
    }
}
