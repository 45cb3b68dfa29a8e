//! The QOS checks: which QOS a job gets, whether it may have it (Slurm's "Invalid qos
//! specification"), its submit counts (Slurm's accounting-policy refusal) and the limits
//! that keep it pending (Slurm's `QOS*` reasons).

use sluice_vocab::assoc_limits::Tres;
use sluice_vocab::cluster_conf::PartAccess;
use sluice_vocab::qos::{DEFAULT_QOS, Qos};

use super::usage;
use crate::conf::TimeLimit;
use crate::core::Core;
use crate::core::jobs::{Job, JobReason, JobRequest, LaunchSpec};
use crate::error::CtldError;

/// Why a QOS's limits keep a job pending (Slurm's reason names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QosReason {
    /// `MaxWall`.
    MaxWall,
    /// `MaxTRESPerJob=cpu=`.
    MaxCpuPerJob,
    /// `MaxTRESPerJob=mem=`.
    MaxMemPerJob,
    /// `MaxTRESPerJob=node=`.
    MaxNodePerJob,
    /// `MaxJobsPerUser`.
    MaxJobsPerUser,
    /// `MaxTRESPerUser=cpu=`.
    MaxCpuPerUser,
    /// `MaxTRESPerUser=mem=`.
    MaxMemPerUser,
    /// `MaxTRESPerUser=node=`.
    MaxNodePerUser,
    /// `GrpTRES=cpu=`.
    GrpCpu,
    /// `GrpTRES=mem=`.
    GrpMem,
    /// `GrpTRES=node=`.
    GrpNode,
    /// `GrpJobs`.
    GrpJobs,
}

impl QosReason {
    /// Every reason, for parsing saved ones.
    pub const ALL: [QosReason; 12] = [
        Self::MaxWall,
        Self::MaxCpuPerJob,
        Self::MaxMemPerJob,
        Self::MaxNodePerJob,
        Self::MaxJobsPerUser,
        Self::MaxCpuPerUser,
        Self::MaxMemPerUser,
        Self::MaxNodePerUser,
        Self::GrpCpu,
        Self::GrpMem,
        Self::GrpNode,
        Self::GrpJobs,
    ];

    /// Slurm's spelling (`squeue -o %r`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxWall => "QOSMaxWallDurationPerJobLimit",
            Self::MaxCpuPerJob => "QOSMaxCpuPerJobLimit",
            Self::MaxMemPerJob => "QOSMaxMemoryPerJob",
            Self::MaxNodePerJob => "QOSMaxNodePerJobLimit",
            Self::MaxJobsPerUser => "QOSMaxJobsPerUserLimit",
            Self::MaxCpuPerUser => "QOSMaxCpuPerUserLimit",
            Self::MaxMemPerUser => "QOSMaxMemoryPerUser",
            Self::MaxNodePerUser => "QOSMaxNodePerUserLimit",
            Self::GrpCpu => "QOSGrpCpuLimit",
            Self::GrpMem => "QOSGrpMemLimit",
            Self::GrpNode => "QOSGrpNodeLimit",
            Self::GrpJobs => "QOSGrpJobsLimit",
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

/// Which resource a limit is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Res {
    Cpu,
    Mem,
    Node,
}

impl Ask {
    fn of(req: &JobRequest) -> Self {
        let nodes = u64::from(req.min_nodes);
        Self {
            cpus: u64::from(req.alloc_tasks()) * u64::from(req.cpus_per_task.max(1)),
            mem_mb: req.mem_per_node_mb.saturating_mul(nodes),
            nodes,
        }
    }

    /// The first resource of `limit` that `held` plus this ask goes over.
    fn over(&self, limit: &Tres, held: &usage::Held) -> Option<Res> {
        let over = |l: Option<u64>, used: u64, v: u64| l.is_some_and(|l| used + v > l);
        if over(limit.cpu, held.cpus, self.cpus) {
            Some(Res::Cpu)
        } else if over(limit.mem_mb, held.mem_mb, self.mem_mb) {
            Some(Res::Mem)
        } else if over(limit.node, held.nodes, self.nodes) {
            Some(Res::Node)
        } else {
            None
        }
    }
}

/// Whether `limit` allows `t`.
fn time_within(t: TimeLimit, limit: Option<u32>) -> bool {
    limit.is_none_or(|m| t.within(TimeLimit::Minutes(m)))
}

/// The QOS a job of `launch` gets when it asks for `asked` (`""`: none): the one asked for,
/// else its association's default QOS, else the only QOS the association may use, else
/// `normal`.
pub(crate) fn resolve(core: &Core, launch: &LaunchSpec, asked: &str) -> String {
    let asked = asked.trim();
    if !asked.is_empty() {
        return asked.to_ascii_lowercase();
    }
    let rec = core
        .assocs
        .as_ref()
        .and_then(|t| t.get(&launch.account, &launch.user));
    match rec {
        Some(r) if !r.default_qos.is_empty() => r.default_qos.clone(),
        Some(r) if r.qos.len() == 1 => r.qos[0].clone(),
        _ => DEFAULT_QOS.to_string(),
    }
}

/// Checks a submission of `count` jobs asking `req` under QOS `launch.qos` in a partition
/// with `access`. Without the dbd's QOS list nothing is known to check. A job that does not
/// name its time (`time_given` false) gets the QOS's `MaxWall` when that is lower, as Slurm's
/// controller sets it.
pub(crate) fn check_submit(
    core: &Core,
    launch: &LaunchSpec,
    req: &mut JobRequest,
    time_given: bool,
    count: usize,
    access: &PartAccess,
    admin: bool,
) -> Result<(), CtldError> {
    let enforce = core.conf.acct_enforce;
    if !admin && !access.allows_qos(&launch.qos) {
        return Err(CtldError::InvalidQos);
    }
    let Some(table) = core.qos.as_ref() else {
        return Ok(());
    };
    let q = table.get(&launch.qos).ok_or(CtldError::InvalidQos)?;
    if enforce.qos {
        let allowed = core
            .assocs
            .as_ref()
            .and_then(|t| t.get(&launch.account, &launch.user))
            .is_some_and(|r| r.qos.contains(&q.name));
        if !allowed {
            return Err(CtldError::InvalidQos);
        }
    }
    if !enforce.limits {
        return Ok(());
    }
    let l = &q.limits;
    if !time_within(req.time_limit, l.max_wall_minutes) {
        match l.max_wall_minutes {
            Some(max) if !time_given => req.time_limit = TimeLimit::Minutes(max),
            _ if q.flags.deny_on_limit => return Err(CtldError::AccountingPolicy),
            _ => {}
        }
    }
    if q.flags.deny_on_limit {
        let ask = Ask::of(req);
        let none = usage::Held::default();
        if ask.over(&l.max_tres_per_job, &none).is_some()
            || ask.over(&l.max_tres_per_user, &none).is_some()
            || ask.over(&l.grp_tres, &none).is_some()
        {
            return Err(CtldError::AccountingPolicy);
        }
    }
    let (all, mine) = usage::submitted(core, &q.name, &launch.user);
    let count = count as u64;
    let over = |limit: Option<u32>, n: u64| limit.is_some_and(|m| n + count > u64::from(m));
    if over(l.max_submit_jobs_per_user, mine) || over(l.grp_submit_jobs, all) {
        return Err(CtldError::AccountingPolicy);
    }
    Ok(())
}

/// Whether `q` sets a limit on what running jobs hold.
fn limits_running(q: &Qos) -> bool {
    let l = &q.limits;
    l.max_jobs_per_user.is_some()
        || l.grp_jobs.is_some()
        || !l.max_tres_per_user.is_empty()
        || !l.grp_tres.is_empty()
}

/// Why `job`'s QOS keeps it pending now, if it does (`AccountingStorageEnforce=limits`).
pub(crate) fn blocking_reason(core: &Core, job: &Job) -> Option<JobReason> {
    if !core.conf.acct_enforce.limits {
        return None;
    }
    let q = core.qos.as_ref()?.get(&job.launch.qos)?;
    let reason = |r: QosReason| Some(JobReason::Qos(r));
    let l = &q.limits;
    if !time_within(job.req.time_limit, l.max_wall_minutes) {
        return reason(QosReason::MaxWall);
    }
    let ask = Ask::of(&job.req);
    let none = usage::Held::default();
    match ask.over(&l.max_tres_per_job, &none) {
        Some(Res::Cpu) => return reason(QosReason::MaxCpuPerJob),
        Some(Res::Mem) => return reason(QosReason::MaxMemPerJob),
        Some(Res::Node) => return reason(QosReason::MaxNodePerJob),
        None => {}
    }
    if !limits_running(q) {
        return None;
    }
    let (all, mine) = usage::held(core, &q.name, &job.launch.user);
    if l.max_jobs_per_user
        .is_some_and(|m| mine.jobs >= u64::from(m))
    {
        return reason(QosReason::MaxJobsPerUser);
    }
    match ask.over(&l.max_tres_per_user, &mine) {
        Some(Res::Cpu) => return reason(QosReason::MaxCpuPerUser),
        Some(Res::Mem) => return reason(QosReason::MaxMemPerUser),
        Some(Res::Node) => return reason(QosReason::MaxNodePerUser),
        None => {}
    }
    match ask.over(&l.grp_tres, &all) {
        Some(Res::Cpu) => return reason(QosReason::GrpCpu),
        Some(Res::Mem) => return reason(QosReason::GrpMem),
        Some(Res::Node) => return reason(QosReason::GrpNode),
        None => {}
    }
    if l.grp_jobs.is_some_and(|m| all.jobs >= u64::from(m)) {
        return reason(QosReason::GrpJobs);
    }
    None
}
