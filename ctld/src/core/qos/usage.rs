//! What running jobs hold per QOS, and per QOS and user or account: the counts `GrpJobs`,
//! `GrpTRES`, `MaxJobsPerUser`, `MaxTRESPerUser`, `MaxJobsPerAccount` and
//! `MaxTRESPerAccount` compare with. A job counts for its own QOS and for
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

impl Held {
    fn add(&mut self, h: Held) {
        self.jobs += h.jobs;
        self.cpus += h.cpus;
        self.mem_mb += h.mem_mb;
        self.nodes += h.nodes;
    }
}

/// A count over the jobs of one QOS: all of them, one user's and one account's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shares<T> {
    /// Every job of the QOS.
    pub all: T,
    /// The user's.
    pub user: T,
    /// The account's.
    pub account: T,
}

/// What the running jobs of QOS `qos` hold: all of them, those of `user` and those of
/// `account`.
pub(crate) fn held(core: &Core, qos: &str, user: &str, account: &str) -> Shares<Held> {
    let mut out = Shares::<Held>::default();
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
        out.all.add(h);
        if job.launch.user == user {
            out.user.add(h);
        }
        if job.launch.account == account {
            out.account.add(h);
        }
    }
    out
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

/// The unfinished jobs of QOS `qos`: all of them, those of `user` and those of `account`.
pub(crate) fn submitted(core: &Core, qos: &str, user: &str, account: &str) -> Shares<u64> {
    let mut out = Shares::<u64>::default();
    for job in core.jobs.map.values() {
        if job.state.is_finished() || !under(core, job, qos) {
            continue;
        }
        out.all += 1;
        out.user += u64::from(job.launch.user == user);
        out.account += u64::from(job.launch.account == account);
    }
    out
}
