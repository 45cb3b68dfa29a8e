//! The checks of `AccountingStorageEnforce`: at submission (an association is required; a job
//! that breaks a per-job limit or a submit count is refused with Slurm's accounting-policy
//! error) and when a pending job would start (Slurm's `Assoc*` reasons).

use std::collections::HashMap;

use sluice_vocab::assoc_limits::{AssocLimits, Tres};

use super::usage::{Held, alloc_tres};
use super::{AssocKey, AssocTable, Usage};
use crate::conf::TimeLimit;
use crate::core::alloc::JobAlloc;
use crate::core::jobs::{Job, JobReason, JobRequest, LaunchSpec};
use crate::core::{Core, SimTime};
use crate::error::CtldError;

/// Why an association's limits keep a job pending (Slurm's reason names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssocReason {
    /// `MaxJobs`: the association runs as many jobs as it may.
    MaxJobs,
    /// `GrpJobs` of the association or one above it.
    GrpJobs,
    /// `GrpTRES=cpu=`.
    GrpCpu,
    /// `GrpTRES=mem=`.
    GrpMem,
    /// `GrpTRES=node=`.
    GrpNode,
    /// `MaxWall` (lowered after the job was submitted).
    MaxWall,
    /// `MaxTRESPerJob=cpu=` (lowered after submission).
    MaxCpuPerJob,
    /// `MaxTRESPerJob=node=` (lowered after submission).
    MaxNodePerJob,
    /// `MaxTRESPerJob=mem=` (lowered after submission).
    MaxMemPerJob,
    /// `GrpTRESMins=cpu=` (`GrpCPUMins`): used up, or with `safe` the job would not fit.
    GrpCpuMins,
    /// `GrpTRESMins=mem=`.
    GrpMemMins,
    /// `GrpTRESMins=node=`.
    GrpNodeMins,
}

impl AssocReason {
    /// Every reason, for parsing saved ones.
    pub const ALL: [AssocReason; 12] = [
        Self::MaxJobs,
        Self::GrpJobs,
        Self::GrpCpu,
        Self::GrpMem,
        Self::GrpNode,
        Self::MaxWall,
        Self::MaxCpuPerJob,
        Self::MaxNodePerJob,
        Self::MaxMemPerJob,
        Self::GrpCpuMins,
        Self::GrpMemMins,
        Self::GrpNodeMins,
    ];

    /// Slurm's spelling (`squeue -o %r`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxJobs => "AssocMaxJobsLimit",
            Self::GrpJobs => "AssocGrpJobsLimit",
            Self::GrpCpu => "AssocGrpCpuLimit",
            Self::GrpMem => "AssocGrpMemLimit",
            Self::GrpNode => "AssocGrpNodeLimit",
            Self::MaxWall => "AssocMaxWallDurationPerJobLimit",
            Self::MaxCpuPerJob => "AssocMaxCpuPerJobLimit",
            Self::MaxNodePerJob => "AssocMaxNodePerJobLimit",
            Self::MaxMemPerJob => "AssocMaxMemPerJob",
            Self::GrpCpuMins => "AssocGrpCPUMinutesLimit",
            Self::GrpMemMins => "AssocGrpMemMinutes",
            Self::GrpNodeMins => "AssocGrpNodeMinutes",
        }
    }

    /// The reason Slurm spells `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// What a job asks for, as the limits count it.
#[derive(Debug, Clone, Copy)]
struct Ask {
    cpus: u64,
    mem_mb: u64,
    nodes: u64,
}

impl Ask {
    fn of(req: &JobRequest) -> Self {
        let nodes = u64::from(req.min_nodes);
        Self {
            cpus: u64::from(req.alloc_tasks()) * u64::from(req.cpus_per_task.max(1)),
            mem_mb: match req.mem_ask() {
                crate::core::alloc::MemAsk::PerCpu(mb) => mb
                    .saturating_mul(u64::from(req.alloc_tasks()))
                    .saturating_mul(u64::from(req.cpus_per_task.max(1))),
                _ => req.mem_per_node_mb.saturating_mul(nodes),
            },
            nodes,
        }
    }

    /// The first resource of `limit` this ask alone goes over.
    fn over(&self, limit: &Tres) -> Option<&'static str> {
        let over = |l: Option<u64>, v: u64| l.is_some_and(|l| v > l);
        if over(limit.cpu, self.cpus) {
            Some("cpu")
        } else if over(limit.mem_mb, self.mem_mb) {
            Some("mem")
        } else if over(limit.node, self.nodes) {
            Some("node")
        } else {
            None
        }
    }
}

/// Whether `limit` allows `t`.
fn time_within(t: TimeLimit, limit: Option<u32>) -> bool {
    limit.is_none_or(|m| t.within(TimeLimit::Minutes(m)))
}

/// Checks a submission of `count` jobs asking `req` as `launch.user` under `launch.account`.
/// A job that does not name its time (`time_given` false) gets the association's `MaxWall`
/// when that is lower, as Slurm's controller sets it. Nothing is checked without
/// `AccountingStorageEnforce`.
pub(crate) fn check_submit(
    core: &Core,
    launch: &LaunchSpec,
    req: &mut JobRequest,
    time_given: bool,
    count: usize,
    partition: &str,
) -> Result<(), CtldError> {
    let enforce = core.conf.acct_enforce;
    if !enforce.associations {
        return Ok(());
    }
    let invalid = || CtldError::InvalidAccount {
        partition: partition.to_string(),
    };
    // Without the dbd's associations nothing can be checked: refused, as Slurm refuses a job
    // whose association it cannot find.
    let table = core.assocs.as_ref().ok_or_else(invalid)?;
    let rec = table
        .get(&launch.account, &launch.user)
        .ok_or_else(invalid)?;
    if !enforce.limits {
        return Ok(());
    }
    let l = &rec.limits;
    if !time_within(req.time_limit, l.max_wall_minutes) {
        match l.max_wall_minutes {
            Some(max) if !time_given => req.time_limit = TimeLimit::Minutes(max),
            _ => return Err(CtldError::AccountingPolicy),
        }
    }
    let ask = Ask::of(req);
    if ask.over(&l.max_tres_per_job).is_some() {
        return Err(CtldError::AccountingPolicy);
    }
    let chain = table.chain(&launch.account, &launch.user);
    let levels: Vec<&AssocLimits> = chain
        .iter()
        .filter_map(|(a, u)| table.get(a, u).map(|r| &r.limits))
        .collect();
    if levels.iter().any(|lim| ask.over(&lim.grp_tres).is_some()) {
        return Err(CtldError::AccountingPolicy);
    }
    let submitted = submitted_under(core, table, &chain);
    let count = count as u64;
    if l.max_submit_jobs
        .is_some_and(|m| submitted[0] + count > u64::from(m))
    {
        return Err(CtldError::AccountingPolicy);
    }
    for ((a, u), n) in chain.iter().zip(&submitted) {
        let grp = table.get(a, u).and_then(|r| r.limits.grp_submit_jobs);
        if grp.is_some_and(|m| n + count > u64::from(m)) {
            return Err(CtldError::AccountingPolicy);
        }
    }
    Ok(())
}

/// For each key of `chain`, the jobs not yet finished under it.
fn submitted_under(core: &Core, table: &AssocTable, chain: &[AssocKey]) -> Vec<u64> {
    let mut counts = vec![0u64; chain.len()];
    let mut chains: HashMap<(&str, &str), Vec<AssocKey>> = HashMap::new();
    for job in core.jobs.map.values() {
        if job.state.is_finished() {
            continue;
        }
        let (account, user) = (job.launch.account.as_str(), job.launch.user.as_str());
        let theirs = chains
            .entry((account, user))
            .or_insert_with(|| table.chain(account, user));
        for (i, key) in chain.iter().enumerate() {
            if theirs.contains(key) {
                counts[i] += 1;
            }
        }
    }
    counts
}

/// Why `job`'s association keeps it pending now, if it does: the checks before nodes are
/// picked, with what the job asks.
pub(crate) fn blocking_reason(core: &Core, job: &Job, now: SimTime) -> Option<JobReason> {
    let enforce = core.conf.acct_enforce;
    if !enforce.associations {
        return None;
    }
    // Before the dbd listed the associations once there is nothing to judge by; submissions
    // are refused meanwhile (see `check_submit`).
    let table = core.assocs.as_ref()?;
    let (account, user) = (job.launch.account.as_str(), job.launch.user.as_str());
    let Some(rec) = table.get(account, user) else {
        return Some(JobReason::InvalidAccount);
    };
    if !enforce.limits {
        return None;
    }
    let reason = |r: AssocReason| Some(JobReason::Assoc(r));
    let l = &rec.limits;
    if !time_within(job.req.time_limit, l.max_wall_minutes) {
        return reason(AssocReason::MaxWall);
    }
    let ask = Ask::of(&job.req);
    match ask.over(&l.max_tres_per_job) {
        Some("cpu") => return reason(AssocReason::MaxCpuPerJob),
        Some("mem") => return reason(AssocReason::MaxMemPerJob),
        Some(_) => return reason(AssocReason::MaxNodePerJob),
        None => {}
    }
    with_usage(core, now, |usage| {
        let chain = table.chain(account, user);
        if l.max_jobs
            .is_some_and(|m| usage.get(&chain[0]).jobs >= u64::from(m))
        {
            return reason(AssocReason::MaxJobs);
        }
        for key in &chain {
            let Some(level) = table.get(&key.0, &key.1) else {
                continue;
            };
            let held = usage.get(key);
            if let Some(r) = over_grp_tres(&level.limits.grp_tres, &held, ask) {
                return reason(r);
            }
            if level
                .limits
                .grp_jobs
                .is_some_and(|m| held.jobs >= u64::from(m))
            {
                return reason(AssocReason::GrpJobs);
            }
            if let Some(r) = mins_used_up(level, &held) {
                return reason(r);
            }
        }
        None
    })
}

/// Why `job`'s association keeps it from starting on `alloc`, if it does: the checks after
/// nodes are picked, with what the job would hold (whole nodes count all their CPUs), and
/// with `safe` whether its whole time limit fits in what is left of `GrpTRESMins`.
pub(crate) fn allocation_reason(
    core: &Core,
    job: &Job,
    alloc: &JobAlloc,
    now: SimTime,
) -> Option<JobReason> {
    let enforce = core.conf.acct_enforce;
    if !enforce.limits {
        return None;
    }
    let table = core.assocs.as_ref()?;
    let (cpus, mem_mb, nodes) = alloc_tres(job, alloc);
    let ask = Ask {
        cpus,
        mem_mb,
        nodes,
    };
    let job_secs = job
        .req
        .time_limit
        .as_secs()
        .map(|s| crate::core::qos::charged_secs(core, &job.launch.qos, s));
    with_usage(core, now, |usage| {
        for key in table.chain(&job.launch.account, &job.launch.user) {
            let Some(level) = table.get(&key.0, &key.1) else {
                continue;
            };
            let held = usage.get(&key);
            if let Some(r) = over_grp_tres(&level.limits.grp_tres, &held, ask) {
                return Some(JobReason::Assoc(r));
            }
            if !enforce.safe {
                continue;
            }
            if let Some(r) = would_overrun(level, &held, ask, job_secs) {
                return Some(JobReason::Assoc(r));
            }
        }
        None
    })
}

/// Runs `f` with the pass's usage, or with one worked out now outside a pass.
fn with_usage<T>(core: &Core, now: SimTime, f: impl FnOnce(&Usage) -> T) -> T {
    match core.assoc_usage.as_ref() {
        Some(u) => f(u),
        None => f(&Usage::of(core, now)),
    }
}

/// The `GrpTRES` resource `ask` on top of `held` goes over.
fn over_grp_tres(grp: &Tres, held: &Held, ask: Ask) -> Option<AssocReason> {
    let over = |l: Option<u64>, used: u64, asked: u64| l.is_some_and(|l| used + asked > l);
    if over(grp.cpu, held.cpus, ask.cpus) {
        Some(AssocReason::GrpCpu)
    } else if over(grp.mem_mb, held.mem_mb, ask.mem_mb) {
        Some(AssocReason::GrpMem)
    } else if over(grp.node, held.nodes, ask.nodes) {
        Some(AssocReason::GrpNode)
    } else {
        None
    }
}

/// The limits of `GrpTRESMins` at `level`, with each resource's reason; none at the root,
/// where Slurm does not enforce it.
fn mins_limits(level: &super::AssocRecord) -> [(Option<u64>, AssocReason); 3] {
    let root = level.user.is_empty() && level.parent_account.is_empty();
    let m = &level.limits.grp_tres_mins;
    let pick = |v: Option<u64>| if root { None } else { v };
    [
        (pick(m.cpu), AssocReason::GrpCpuMins),
        (pick(m.mem_mb), AssocReason::GrpMemMins),
        (pick(m.node), AssocReason::GrpNodeMins),
    ]
}

/// The `GrpTRESMins` resource whose usage under `level` has reached its limit: its name, the
/// limit and the minutes used.
pub(super) fn mins_reached(
    level: &super::AssocRecord,
    held: &Held,
) -> Option<(&'static str, u64, u64)> {
    let used = [held.used.cpu, held.used.mem, held.used.node];
    mins_limits(level)
        .into_iter()
        .zip(used)
        .zip(["cpu", "mem", "node"])
        .find_map(|(((limit, _), used), name)| {
            limit
                .filter(|l| used / 60 >= *l)
                .map(|l| (name, l, used / 60))
        })
}

/// The `GrpTRESMins` resource whose usage under `level` has reached its limit.
fn mins_used_up(level: &super::AssocRecord, held: &Held) -> Option<AssocReason> {
    let used = [held.used.cpu, held.used.mem, held.used.node];
    mins_limits(level)
        .into_iter()
        .zip(used)
        .find(|((limit, _), used)| limit.is_some_and(|l| used / 60 >= l))
        .map(|((_, r), _)| r)
}

/// With `safe`: the `GrpTRESMins` resource that could not cover a job holding `ask` for its
/// whole time limit (`None`: unlimited, which never fits) on top of the usage and what the
/// running jobs have left.
fn would_overrun(
    level: &super::AssocRecord,
    held: &Held,
    ask: Ask,
    job_secs: Option<u64>,
) -> Option<AssocReason> {
    let committed = [
        (held.used.cpu, held.run_left.cpu, ask.cpus),
        (held.used.mem, held.run_left.mem, ask.mem_mb),
        (held.used.node, held.run_left.node, ask.nodes),
    ];
    mins_limits(level)
        .into_iter()
        .zip(committed)
        .find(|((limit, _), (used, left, amount))| {
            let Some(limit) = limit else { return false };
            let Some(secs) = job_secs else { return true };
            let need = used
                .saturating_add(*left)
                .saturating_add(amount.saturating_mul(secs));
            need > limit.saturating_mul(60)
        })
        .map(|((_, r), _)| r)
}
