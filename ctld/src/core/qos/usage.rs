//! What running jobs hold per QOS and per QOS and user: the counts `GrpJobs`, `GrpTRES`,
//! `MaxJobsPerUser` and `MaxTRESPerUser` compare with. A job counts for its own QOS and for
//! its partition's (once when they are the same), as Slurm charges both. Worked out when a pending job of a QOS
//! that sets such a limit is judged, from the allocations in force, so jobs started earlier
//! in the same pass count.

use super::super::Core;
use crate::core::jobs::Job;

/// What some running jobs hold.
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

/// What the running jobs of QOS `qos` hold: all of them, and those of `user`.
pub(crate) fn held(core: &Core, qos: &str, user: &str) -> (Held, Held) {
    let (mut all, mut mine) = (Held::default(), Held::default());
    for (id, alloc) in &core.allocs {
        let Some(job) = core.jobs.map.get(id) else {
            continue;
        };
        // A completing job's usage ended with it, as Slurm releases it at the job's end.
        if job.state.is_finished() || !under(core, job, qos) {
            continue;
        }
        let nodes = alloc.nodes.len() as u64;
        // Memory that is not consumable is not in the allocation: the job's `--mem` counts.
        let mem_mb = match alloc.mem_mb.iter().sum::<u64>() {
            0 => job.req.mem_per_node_mb.saturating_mul(nodes),
            held => held,
        };
        let h = Held {
            jobs: 1,
            cpus: alloc.cpus.iter().map(|c| u64::from(*c)).sum(),
            mem_mb,
            nodes,
        };
        let add = |to: &mut Held| {
            to.jobs += h.jobs;
            to.cpus += h.cpus;
            to.mem_mb += h.mem_mb;
            to.nodes += h.nodes;
        };
        add(&mut all);
        if job.launch.user == user {
            add(&mut mine);
        }
    }
    (all, mine)
}

/// Whether `job` is held to QOS `qos`: its own, or its partition's.
fn under(core: &Core, job: &Job, qos: &str) -> bool {
    job.launch.qos == qos
        || core
            .parts
            .get(job.partition.get())
            .and_then(|p| p.access.qos.as_deref())
            == Some(qos)
}

/// The unfinished jobs of QOS `qos`: all of them, and those of `user`.
pub(crate) fn submitted(core: &Core, qos: &str, user: &str) -> (u64, u64) {
    let (mut all, mut mine) = (0, 0);
    for job in core.jobs.map.values() {
        if job.state.is_finished() || !under(core, job, qos) {
            continue;
        }
        all += 1;
        if job.launch.user == user {
            mine += 1;
        }
    }
    (all, mine)
}
