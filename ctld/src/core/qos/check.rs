//! The QOS checks: which QOS a job gets, whether it may have it (Slurm's "Invalid qos
//! specification"), its submit counts (Slurm's accounting-policy refusal) and the limits
//! that keep it pending (Slurm's `QOS*` reasons). A job is held to its own QOS and to its
//! partition's (`QOS=` on the partition): for each limit the first of them that sets it
//! decides, the partition's QOS first unless the job's has `OverPartQOS`.

use sluice_vocab::assoc_limits::Tres;
use sluice_vocab::cluster_conf::PartAccess;
use sluice_vocab::qos::{DEFAULT_QOS, Qos, QosLimits};

use super::{QosTable, usage};
use crate::conf::TimeLimit;
use crate::core::Core;
use crate::core::assoc::TresSecs;
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
    /// `MaxTRESMinsPerJob=cpu=`.
    MaxCpuMinsPerJob,
    /// `MaxTRESMinsPerJob=mem=`.
    MaxMemMinsPerJob,
    /// `MaxTRESMinsPerJob=node=`.
    MaxNodeMinsPerJob,
    /// `MaxJobsPerAccount`.
    MaxJobsPerAccount,
    /// `MaxTRESPerAccount=cpu=`.
    MaxCpuPerAccount,
    /// `MaxTRESPerAccount=mem=`.
    MaxMemPerAccount,
    /// `MaxTRESPerAccount=node=`.
    MaxNodePerAccount,
    /// `MinTRESPerJob=cpu=`.
    MinCpu,
    /// `MinTRESPerJob=mem=`.
    MinMem,
    /// `MinTRESPerJob=node=`.
    MinNode,
    /// `MaxTRESPerNode=cpu=`.
    MaxCpuPerNode,
    /// `MaxTRESPerNode=mem=`.
    MaxMemPerNode,
    /// `GrpTRESMins=cpu=`.
    GrpCpuMins,
    /// `GrpTRESMins=mem=`.
    GrpMemMins,
    /// `GrpTRESMins=node=`.
    GrpNodeMins,
}

impl QosReason {
    /// Every reason, for parsing saved ones.
    pub const ALL: [QosReason; 27] = [
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
        Self::MaxCpuMinsPerJob,
        Self::MaxMemMinsPerJob,
        Self::MaxNodeMinsPerJob,
        Self::MaxJobsPerAccount,
        Self::MaxCpuPerAccount,
        Self::MaxMemPerAccount,
        Self::MaxNodePerAccount,
        Self::MinCpu,
        Self::MinMem,
        Self::MinNode,
        Self::MaxCpuPerNode,
        Self::MaxMemPerNode,
        Self::GrpCpuMins,
        Self::GrpMemMins,
        Self::GrpNodeMins,
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
            Self::MaxCpuMinsPerJob => "QOSMaxCpuMinutesPerJobLimit",
            Self::MaxMemMinsPerJob => "QOSMaxMemoryMinutesPerJob",
            Self::MaxNodeMinsPerJob => "QOSMaxNodeMinutesPerJob",
            // Slurm names its per-account QOS reasons without the `QOS` prefix.
            Self::MaxJobsPerAccount => "MaxJobsPerAccount",
            Self::MaxCpuPerAccount => "MaxCpuPerAccount",
            Self::MaxMemPerAccount => "MaxMemoryPerAccount",
            Self::MaxNodePerAccount => "MaxNodePerAccount",
            Self::MinCpu => "QOSMinCpuNotSatisfied",
            Self::MinMem => "QOSMinMemory",
            Self::MinNode => "QOSMinNode",
            Self::MaxCpuPerNode => "QOSMaxCpuPerNode",
            Self::MaxMemPerNode => "QOSMaxMemoryPerNode",
            Self::GrpCpuMins => "QOSGrpCPUMinutesLimit",
            Self::GrpMemMins => "QOSGrpMemoryMinutes",
            Self::GrpNodeMins => "QOSGrpNodeMinutes",
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
pub(super) enum Res {
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

    /// The first resource of `limit` (TRES-minutes) that this ask over `time` goes over; an
    /// unlimited time goes over any such limit.
    fn mins_over(&self, limit: &Tres, time: TimeLimit) -> Option<Res> {
        let mins = match time {
            TimeLimit::Minutes(m) => u64::from(m),
            TimeLimit::Unlimited => u64::MAX,
        };
        let over = |l: Option<u64>, v: u64| l.is_some_and(|l| v.saturating_mul(mins) > l);
        if over(limit.cpu, self.cpus) {
            Some(Res::Cpu)
        } else if over(limit.mem_mb, self.mem_mb) {
            Some(Res::Mem)
        } else if over(limit.node, self.nodes) {
            Some(Res::Node)
        } else {
            None
        }
    }

    /// What this ask comes to on each node: its CPUs spread over its nodes (rounded up),
    /// its memory per node, one node. Slurm judges `MaxTRESPerNode` on the request this way,
    /// before nodes are chosen, so a job without `-N` is judged as on one node.
    fn per_node(&self) -> Self {
        let nodes = self.nodes.max(1);
        Self {
            cpus: self.cpus.div_ceil(nodes),
            mem_mb: self.mem_mb / nodes,
            nodes: 1,
        }
    }

    /// The first resource of `limit` (a minimum) that this ask stays under.
    fn under(&self, limit: &Tres) -> Option<Res> {
        let under = |l: Option<u64>, v: u64| l.is_some_and(|l| v < l);
        if under(limit.cpu, self.cpus) {
            Some(Res::Cpu)
        } else if under(limit.mem_mb, self.mem_mb) {
            Some(Res::Mem)
        } else if under(limit.node, self.nodes) {
            Some(Res::Node)
        } else {
            None
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

/// The first resource of `MaxTRESPerNode` limit `limit` that `ask` goes over on a node. Its
/// `node=` limits nothing (a job holds each node once), as Slurm has no per-node node reason.
fn per_node_over(ask: &Ask, limit: &Tres) -> Option<Res> {
    let limit = Tres {
        node: None,
        ..*limit
    };
    ask.per_node().over(&limit, &usage::Held::default())
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

/// The QOS whose limits hold a job of QOS `job_qos` in a partition of QOS `part_qos`, in
/// order of precedence: the partition's first, as Slurm orders them, unless the job's QOS has
/// `OverPartQOS`; one QOS once. A partition QOS the dbd does not list holds nothing.
fn in_force<'a>(table: &'a QosTable, part_qos: Option<&str>, job_qos: &'a Qos) -> Vec<&'a Qos> {
    let part = part_qos
        .and_then(|name| table.get(name))
        .filter(|p| p.name != job_qos.name);
    match part {
        None => vec![job_qos],
        Some(p) if job_qos.flags.over_part_qos => vec![job_qos, p],
        Some(p) => vec![p, job_qos],
    }
}

/// `q`'s limits but those a QOS before it in precedence (`earlier`) sets: for each limit
/// (each resource of a TRES limit) the first QOS that sets it decides, as in Slurm.
fn own_limits(q: &Qos, earlier: &[&Qos]) -> QosLimits {
    let mut l = q.limits.clone();
    for e in earlier.iter().map(|e| &e.limits) {
        let clear = |v: &mut Option<u32>, by: Option<u32>| {
            if by.is_some() {
                *v = None;
            }
        };
        clear(&mut l.max_wall_minutes, e.max_wall_minutes);
        clear(&mut l.max_jobs_per_user, e.max_jobs_per_user);
        clear(&mut l.max_submit_jobs_per_user, e.max_submit_jobs_per_user);
        clear(&mut l.grp_jobs, e.grp_jobs);
        clear(&mut l.grp_submit_jobs, e.grp_submit_jobs);
        clear(&mut l.max_jobs_per_account, e.max_jobs_per_account);
        clear(
            &mut l.max_submit_jobs_per_account,
            e.max_submit_jobs_per_account,
        );
        mask(&mut l.max_tres_per_account, &e.max_tres_per_account);
        mask(&mut l.min_tres_per_job, &e.min_tres_per_job);
        mask(&mut l.max_tres_per_node, &e.max_tres_per_node);
        mask(&mut l.grp_tres_mins, &e.grp_tres_mins);
        mask(&mut l.max_tres_per_job, &e.max_tres_per_job);
        mask(&mut l.max_tres_per_user, &e.max_tres_per_user);
        mask(&mut l.grp_tres, &e.grp_tres);
        mask(&mut l.max_tres_mins_per_job, &e.max_tres_mins_per_job);
    }
    l
}

/// Clears in `t` each resource `by` sets.
fn mask(t: &mut Tres, by: &Tres) {
    for (v, b) in [
        (&mut t.cpu, by.cpu),
        (&mut t.mem_mb, by.mem_mb),
        (&mut t.node, by.node),
    ] {
        if b.is_some() {
            *v = None;
        }
    }
}

/// Checks a submission of `count` jobs asking `req` under QOS `launch.qos` in a partition
/// with `access` (its `AllowQos`/`DenyQos`, and its own QOS, whose limits hold too). Without
/// the dbd's QOS list nothing is known to check. A job that does not name its time
/// (`time_given` false) gets the `MaxWall` in force when that is lower, as Slurm's
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
    let order = in_force(table, access.qos.as_deref(), q);
    for (i, q) in order.iter().enumerate() {
        let l = own_limits(q, &order[..i]);
        if !time_within(req.time_limit, l.max_wall_minutes) {
            match l.max_wall_minutes {
                Some(max) if !time_given => req.time_limit = TimeLimit::Minutes(max),
                _ if q.flags.deny_on_limit => return Err(CtldError::AccountingPolicy),
                _ => {}
            }
        }
        // A job below the QOS's minimum is refused whatever the flags: waiting would not
        // make it any bigger (Slurm's controller refuses it at submission the same way).
        if Ask::of(req).under(&l.min_tres_per_job).is_some() {
            return Err(CtldError::AccountingPolicy);
        }
        if q.flags.deny_on_limit {
            let ask = Ask::of(req);
            let none = usage::Held::default();
            if ask.over(&l.max_tres_per_job, &none).is_some()
                || ask.over(&l.max_tres_per_user, &none).is_some()
                || ask.over(&l.max_tres_per_account, &none).is_some()
                || per_node_over(&ask, &l.max_tres_per_node).is_some()
                || ask.over(&l.grp_tres, &none).is_some()
                || ask
                    .mins_over(&l.max_tres_mins_per_job, req.time_limit)
                    .is_some()
            {
                return Err(CtldError::AccountingPolicy);
            }
        }
        let n = usage::submitted(core, &q.name, &launch.user, &launch.account);
        let count = count as u64;
        let over = |limit: Option<u32>, n: u64| limit.is_some_and(|m| n + count > u64::from(m));
        if over(l.max_submit_jobs_per_user, n.user)
            || over(l.max_submit_jobs_per_account, n.account)
            || over(l.grp_submit_jobs, n.all)
        {
            return Err(CtldError::AccountingPolicy);
        }
    }
    Ok(())
}

/// Whether `l` sets a limit on what running jobs hold.
fn limits_running(l: &QosLimits) -> bool {
    l.max_jobs_per_user.is_some()
        || l.max_jobs_per_account.is_some()
        || !l.grp_tres_mins.is_empty()
        || l.grp_jobs.is_some()
        || !l.max_tres_per_user.is_empty()
        || !l.max_tres_per_account.is_empty()
        || !l.grp_tres.is_empty()
}

/// Why the QOS in force for `job` (its own, and its partition's) keep it pending now, if they
/// do (`AccountingStorageEnforce=limits`).
pub(crate) fn blocking_reason(core: &Core, job: &Job) -> Option<JobReason> {
    if !core.conf.acct_enforce.limits {
        return None;
    }
    let table = core.qos.as_ref()?;
    let q = table.get(&job.launch.qos)?;
    let part_qos = core
        .parts
        .get(job.partition.get())
        .and_then(|p| p.access.qos.as_deref());
    let order = in_force(table, part_qos, q);
    let ask = Ask::of(&job.req);
    order.iter().enumerate().find_map(|(i, q)| {
        let l = own_limits(q, &order[..i]);
        limit_reason(core, &q.name, &l, job, &ask).map(JobReason::Qos)
    })
}

/// Which of limits `l` (those QOS `qos` decides) keeps `job`, asking `ask`, pending.
fn limit_reason(core: &Core, qos: &str, l: &QosLimits, job: &Job, ask: &Ask) -> Option<QosReason> {
    if !time_within(job.req.time_limit, l.max_wall_minutes) {
        return Some(QosReason::MaxWall);
    }
    let none = usage::Held::default();
    match ask.over(&l.max_tres_per_job, &none) {
        Some(Res::Cpu) => return Some(QosReason::MaxCpuPerJob),
        Some(Res::Mem) => return Some(QosReason::MaxMemPerJob),
        Some(Res::Node) => return Some(QosReason::MaxNodePerJob),
        None => {}
    }
    match per_node_over(ask, &l.max_tres_per_node) {
        Some(Res::Cpu) => return Some(QosReason::MaxCpuPerNode),
        Some(Res::Mem) => return Some(QosReason::MaxMemPerNode),
        _ => {}
    }
    match ask.under(&l.min_tres_per_job) {
        Some(Res::Cpu) => return Some(QosReason::MinCpu),
        Some(Res::Mem) => return Some(QosReason::MinMem),
        Some(Res::Node) => return Some(QosReason::MinNode),
        None => {}
    }
    match ask.mins_over(&l.max_tres_mins_per_job, job.req.time_limit) {
        Some(Res::Cpu) => return Some(QosReason::MaxCpuMinsPerJob),
        Some(Res::Mem) => return Some(QosReason::MaxMemMinsPerJob),
        Some(Res::Node) => return Some(QosReason::MaxNodeMinsPerJob),
        None => {}
    }
    if !limits_running(l) {
        return None;
    }
    let held = usage::held(core, qos, &job.launch.user, &job.launch.account);
    if l.max_jobs_per_user
        .is_some_and(|m| held.user.jobs >= u64::from(m))
    {
        return Some(QosReason::MaxJobsPerUser);
    }
    match ask.over(&l.max_tres_per_user, &held.user) {
        Some(Res::Cpu) => return Some(QosReason::MaxCpuPerUser),
        Some(Res::Mem) => return Some(QosReason::MaxMemPerUser),
        Some(Res::Node) => return Some(QosReason::MaxNodePerUser),
        None => {}
    }
    if l.max_jobs_per_account
        .is_some_and(|m| held.account.jobs >= u64::from(m))
    {
        return Some(QosReason::MaxJobsPerAccount);
    }
    match ask.over(&l.max_tres_per_account, &held.account) {
        Some(Res::Cpu) => return Some(QosReason::MaxCpuPerAccount),
        Some(Res::Mem) => return Some(QosReason::MaxMemPerAccount),
        Some(Res::Node) => return Some(QosReason::MaxNodePerAccount),
        None => {}
    }
    let all = held.all;
    match ask.over(&l.grp_tres, &all) {
        Some(Res::Cpu) => return Some(QosReason::GrpCpu),
        Some(Res::Mem) => return Some(QosReason::GrpMem),
        Some(Res::Node) => return Some(QosReason::GrpNode),
        None => {}
    }
    if l.grp_jobs.is_some_and(|m| all.jobs >= u64::from(m)) {
        return Some(QosReason::GrpJobs);
    }
    match mins_reached(&l.grp_tres_mins, &used_by(core, qos)) {
        Some((Res::Cpu, ..)) => Some(QosReason::GrpCpuMins),
        Some((Res::Mem, ..)) => Some(QosReason::GrpMemMins),
        Some((Res::Node, ..)) => Some(QosReason::GrpNodeMins),
        None => None,
    }
}

/// What the jobs of QOS `qos` have used on this cluster, as the dbd last said.
pub(super) fn used_by(core: &Core, qos: &str) -> TresSecs {
    core.qos_used.get(qos).copied().unwrap_or_default()
}

/// The first resource of `GrpTRESMins` limit `limit` whose usage `used` has reached it, with
/// the limit and the minutes used.
pub(super) fn mins_reached(limit: &Tres, used: &TresSecs) -> Option<(Res, u64, u64)> {
    [
        (limit.cpu, used.cpu, Res::Cpu),
        (limit.mem_mb, used.mem, Res::Mem),
        (limit.node, used.node, Res::Node),
    ]
    .into_iter()
    .find_map(|(l, secs, r)| l.filter(|l| secs / 60 >= *l).map(|l| (r, l, secs / 60)))
}
