//! Protobuf ↔ core conversions: requests into core requests, core records into replies.

use super::users::UserInfo;
use crate::conf::{OverSubscribe, PartState, TimeLimit, parse_time_limit};
use crate::core::nodes::NodeBase;
use crate::core::{
    Caller, Core, Job, JobRef, LaunchSpec, Node, NodeCountPref, Partition, PlaceOpts, SimTime,
    SubmitRequest, WarnSignal,
};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState};
use sluice_wire::proto::{self, JobInfo, NodeInfo, PartitionInfo, SubmitJobRequest};

/// `-t`: Slurm's time format; `None` when not given.
pub fn time_limit(spec: Option<&str>) -> Result<Option<TimeLimit>, CtldError> {
    spec.map(|s| parse_time_limit(s).map_err(|_| CtldError::InvalidTimeLimit))
        .transpose()
}

/// Minutes as the wire carries them (-1 = UNLIMITED).
pub fn minutes(t: TimeLimit) -> i64 {
    t.as_secs()
        .map_or(-1, |s| i64::try_from(s / 60).unwrap_or(i64::MAX))
}

fn secs(t: Option<SimTime>) -> i64 {
    t.map_or(0, |t| i64::try_from(t.secs()).unwrap_or(0))
}

/// `-s/--oversubscribe` or `--exclusive` as the wire carries them.
pub fn job_share(value: i32) -> Result<crate::core::JobShare, CtldError> {
    use crate::core::JobShare;
    match proto::JobShare::try_from(value) {
        Ok(proto::JobShare::Unset) => Ok(JobShare::Unset),
        Ok(proto::JobShare::Oversubscribe) => Ok(JobShare::OverSubscribe),
        Ok(proto::JobShare::Exclusive) => Ok(JobShare::Exclusive),
        Err(_) => Err(CtldError::InvalidShare { value }),
    }
}

/// A submission from `caller`, whose groups were looked up on this host. The primary group is
/// the one asked for when the user belongs to it (administrators may name any), else the
/// user's own.
pub fn submit_request(
    r: &SubmitJobRequest,
    caller: Caller,
    user: &UserInfo,
    interactive: bool,
) -> Result<SubmitRequest, CtldError> {
    let gid = if caller.admin || user.groups.contains(&r.gid) {
        r.gid
    } else {
        user.gid
    };
    Ok(SubmitRequest {
        uid: caller.uid,
        gid,
        groups: user.groups.clone(),
        name: r.name.clone(),
        partition: r.partition.clone().filter(|p| !p.is_empty()),
        min_nodes: r.min_nodes,
        max_nodes: r.max_nodes,
        ntasks: r.ntasks,
        cpus_per_task: r.cpus_per_task,
        mem_per_node_mb: r.mem_mb,
        time_limit: time_limit(r.time_limit.as_deref())?,
        constraint: r.constraint.clone().filter(|c| !c.is_empty()),
        dependency: r.dependency.clone().filter(|d| !d.is_empty()),
        array: if interactive {
            None
        } else {
            r.array.clone().filter(|a| !a.is_empty())
        },
        hold: r.hold,
        requeue: r.requeue,
        no_kill: r.no_kill,
        share: job_share(r.share)?,
        place: place_opts(r)?,
        admin: caller.admin,
        // The service decides (it knows root and the SlurmUser).
        root_or_slurm_user: false,
        launch: LaunchSpec {
            script: r.script.clone(),
            workdir: r.workdir.clone(),
            env: r
                .env
                .iter()
                .map(|e| (e.name.clone(), e.value.clone()))
                .collect(),
            stdout: r.stdout.clone().filter(|s| !s.is_empty()),
            stderr: r.stderr.clone().filter(|s| !s.is_empty()),
            stdin: r.stdin.clone().filter(|s| !s.is_empty()),
            interactive,
            account: r.account.clone(),
            user: user.name.clone(),
            submit_host: r.submit_host.clone(),
            comment: r.comment.clone(),
            script_args: r.script_args.clone(),
            cpus_per_task_given: r.cpus_per_task.is_some(),
            wckey: r.wckey.clone(),
            open_append: r.open_append,
            qos: r.qos.clone(),
            burst_buffer: r.burst_buffer.clone(),
            reboot: r.reboot,
            container: r.container.clone(),
        },
    })
}

/// `--ntasks-per-node`, `--mincpus`, `-w`, `-x`, `--begin`, `--nice`, `--signal`,
/// `--deadline`, `--kill-on-invalid-dep` and `--priority` as the
/// wire carries them; a hostlist that does not parse names an invalid node.
fn place_opts(r: &SubmitJobRequest) -> Result<PlaceOpts, CtldError> {
    let hosts = |expr: &str| -> Result<Vec<String>, CtldError> {
        if expr.trim().is_empty() {
            return Ok(Vec::new());
        }
        sluice_vocab::hostlist::expand(expr).map_err(|_| CtldError::InvalidNodeName {
            name: expr.to_string(),
        })
    };
    let signal = match &r.signal {
        None => None,
        Some(s) if s.signal <= 0 || s.signal > 64 || s.before_secs > 0xffff => {
            return Err(CtldError::InvalidSignal);
        }
        Some(s) => Some(WarnSignal {
            signal: s.signal,
            before_secs: s.before_secs,
            batch_only: s.batch_only,
        }),
    };
    Ok(PlaceOpts {
        ntasks_per_node: r.ntasks_per_node,
        mincpus: r.mincpus,
        nodelist: hosts(&r.nodelist)?,
        exclude: hosts(&r.exclude)?,
        begin: u64::try_from(r.begin).ok().filter(|b| *b > 0),
        nice: r.nice.unwrap_or(0),
        signal,
        deadline: u64::try_from(r.deadline).ok().filter(|d| *d > 0),
        kill_invalid_dep: r.kill_invalid_dep,
        priority: r.priority,
        mail_type: mail_type(&r.mail_type)?,
        mail_user: Some(r.mail_user.trim().to_string()).filter(|u| !u.is_empty()),
        // The commands send one of `--mem` and `--mem-per-cpu` (as Slurm's request holds
        // one): a per-node size, when present, is the one the job asks.
        mem_per_cpu_mb: r.mem_per_cpu_mb.filter(|_| r.mem_mb.is_none_or(|m| m == 0)),
        tmp_mb: r.tmp_mb,
        contiguous: r.contiguous,
        topo: crate::core::TopoAsk {
            sockets_per_node: r.sockets_per_node,
            cores_per_socket: r.cores_per_socket,
            threads_per_core: r.threads_per_core,
            ntasks_per_core: r.ntasks_per_core,
            ntasks_per_socket: r.ntasks_per_socket,
        },
        time_min: match time_limit(r.time_min.as_deref()) {
            Err(_) => return Err(CtldError::InvalidTimeMin),
            Ok(None | Some(TimeLimit::Minutes(0))) => None,
            Ok(Some(TimeLimit::Minutes(m))) => Some(m),
            // An unlimited minimum is no minimum below the limit.
            Ok(Some(TimeLimit::Unlimited)) => None,
        },
        overcommit: r.overcommit,
        node_pref: if r.use_min_nodes {
            NodeCountPref::UseMin
        } else if r.spread_job {
            NodeCountPref::Spread
        } else {
            // The core makes it `Range` when `-N` gave a maximum.
            NodeCountPref::Fewest
        },
        ntasks_given: false,
        wait_all_nodes: r.wait_all_nodes,
        batch_features: Some(r.batch_features.trim().to_string()).filter(|b| !b.is_empty()),
    })
}

/// `--mail-type` as the wire carries it ("" for none).
fn mail_type(text: &str) -> Result<u16, CtldError> {
    if text.trim().is_empty() {
        return Ok(0);
    }
    sluice_vocab::mail_type::MailTypes::parse(text)
        .map(|t| t.0)
        .ok_or_else(|| CtldError::InvalidMailType {
            spec: text.to_string(),
        })
}

/// Job ids as Slurm lists a heterogeneous job's (`HetJobIdSet=`): runs of consecutive ids as
/// `first-last`, joined by commas.
fn id_set(ids: &[FedJobId]) -> String {
    let mut raw: Vec<u32> = ids.iter().map(|i| i.get()).collect();
    raw.sort_unstable();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for id in raw {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == id => *hi = id,
            _ => runs.push((id, id)),
        }
    }
    runs.iter()
        .map(|&(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A job as the user wrote it: `12`, `12_3` or `12+1`.
pub fn job_ref(text: &str) -> Result<JobRef, CtldError> {
    let id = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .and_then(|n| FedJobId::from_raw(n).ok())
            .ok_or(CtldError::InvalidJobId)
    };
    if let Some((job, offset)) = text.split_once('+') {
        let offset = offset.trim().parse().map_err(|_| CtldError::InvalidJobId)?;
        return Ok(JobRef::Het(id(job)?, offset));
    }
    match text.split_once('_') {
        Some((job, task)) => Ok(JobRef::Task(
            id(job)?,
            task.trim().parse().map_err(|_| CtldError::InvalidJobId)?,
        )),
        None => Ok(JobRef::Job(id(text)?)),
    }
}

/// A step as the user wrote it: `12.3` or `12_4.3`.
pub fn step_ref(text: &str) -> Result<(JobRef, u32), CtldError> {
    let (job, step) = text.split_once('.').ok_or(CtldError::InvalidJobId)?;
    let step = step.trim().parse().map_err(|_| CtldError::InvalidJobId)?;
    Ok((job_ref(job)?, step))
}

/// The state commands show: COMPLETING (`CG`) while a job's processes are being killed,
/// whatever state its run ended in (PENDING for a requeue), as Slurm's COMPLETING flag shows.
pub fn shown_state(core: &Core, job: &Job) -> JobState {
    // Waiting for powered-down nodes to boot: CONFIGURING (squeue's CF).
    if core.job_configuring(job.id) {
        JobState::Configuring
    } else if job.completing {
        JobState::Completing
    } else {
        job.state
    }
}

/// `squeue`'s view of a job; `priority` ranks pending jobs (higher first). `user` is filled
/// in by the service.
pub fn job_info(core: &Core, job: &Job, now: SimTime, priority: u64) -> JobInfo {
    let running = matches!(job.state, JobState::Running | JobState::Suspended);
    let end = match (running, job.end_time) {
        (_, Some(t)) if !running => secs(Some(t)),
        (true, _) if job.deadline() != SimTime::NEVER => secs(Some(job.deadline())),
        _ => 0,
    };
    let suspended = job.suspended_secs + job.suspended_at.map_or(0, |at| now.since(at));
    let cpus: u32 = if job.nodes.is_empty() {
        job.req.min_cpus()
    } else {
        core.cpus_held(job.id, &job.nodes).iter().sum()
    };
    let batch_host = job
        .nodes
        .first()
        .filter(|_| running || job.completing)
        .and_then(|n| core.nodes().get(n.get() as usize))
        .map(|n| n.name.clone())
        .unwrap_or_default();
    JobInfo {
        job_id: job.id.get(),
        array_job_id: job.array.map_or(0, |a| a.job.get()),
        array_task_id: job.array.map(|a| a.task),
        name: job.name.clone(),
        uid: job.uid,
        gid: job.gid,
        partition: core
            .partitions()
            .get(job.partition.get())
            .map(|p| p.name.clone())
            .unwrap_or_default(),
        state: shown_state(core, job).stored(),
        reason: job.reason.to_string(),
        time_limit_min: minutes(job.req.time_limit),
        submit: secs(Some(job.submit_time)),
        // Eligible from its --begin time (when later than its submission).
        eligible: secs(Some(job.req.place.begin.map_or(job.submit_time, |b| {
            job.submit_time.max(SimTime::from_secs(b))
        }))),
        start: secs(job.start_time),
        end,
        suspended_secs: i64::try_from(suspended).unwrap_or(0),
        node_list: core.hostlist(&job.nodes),
        node_count: if job.nodes.is_empty() {
            job.req.min_nodes
        } else {
            job.nodes.len() as u32
        },
        cpus,
        ntasks: job.req.ntasks,
        cpus_per_task: job.req.cpus_per_task,
        mem_mb: job.req.mem_per_node_mb,
        constraint: job.req.constraint.clone().unwrap_or_default(),
        dependency: crate::core::deps::describe(core, job, now),
        workdir: job.launch.workdir.clone(),
        stdout: job.launch.stdout.clone().unwrap_or_default(),
        stderr: job.launch.stderr.clone().unwrap_or_default(),
        stdin: job.launch.stdin.clone().unwrap_or_default(),
        burst_buffer: job.launch.burst_buffer.clone(),
        reboot: job.launch.reboot,
        container: job.launch.container.clone(),
        comment: job.launch.comment.clone(),
        het_job_id: job.het.map_or(0, |h| h.leader.get()),
        het_job_offset: job.het.map_or(0, |h| h.offset),
        het_job_id_set: job
            .het
            .map(|h| id_set(&crate::core::het::components(core, h.leader)))
            .unwrap_or_default(),
        batch_host,
        exit_code: job.exit_code,
        signal: job.exit_signal,
        requeue: job.requeue,
        restarts: job.restarts,
        priority,
        account: job.launch.account.clone(),
        cluster: core.config().cluster_name.clone(),
        command: String::new(),
        now: secs(Some(now)),
        user: String::new(),
        batch: !job.launch.interactive,
        array_throttle: job
            .array
            .and_then(|a| core.array_throttle(a.job))
            .unwrap_or(0),
        oversubscribe: core.oversubscribe_shown(job).to_string(),
        nice: job.req.place.nice,
        req_nodes: names_hostlist(&job.req.place.nodelist),
        exc_nodes: names_hostlist(&job.req.place.exclude),
        wckey: job.launch.wckey.clone(),
        min_cpus_node: job.req.min_node_cpus(),
        ntasks_per_node: job.req.place.ntasks_per_node.unwrap_or(0),
        mem_per_cpu_mb: job.req.place.mem_per_cpu_mb.unwrap_or(0),
        tmp_mb: job.req.place.tmp_mb.unwrap_or(0),
        contiguous: job.req.place.contiguous,
        time_min_min: job.req.place.time_min.map_or(0, i64::from),
        sockets_per_node: job.req.place.topo.sockets_per_node.unwrap_or(0),
        cores_per_socket: job.req.place.topo.cores_per_socket.unwrap_or(0),
        threads_per_core: job.req.place.topo.threads_per_core.unwrap_or(0),
        ntasks_per_core: job.req.place.topo.ntasks_per_core.unwrap_or(0),
        ntasks_per_socket: job.req.place.topo.ntasks_per_socket.unwrap_or(0),
        factors: priority_factors(core, job, now),
        qos: job.launch.qos.clone(),
        ..fed_fields(core, job)
    }
}

/// Node names as one compressed hostlist ("" for none).
fn names_hostlist(names: &[String]) -> String {
    let mut h = sluice_vocab::hostlist::Hostlist::new();
    for n in names {
        h.push(n);
    }
    h.uniq().to_string()
}

/// A federated job's fields of [`JobInfo`] (all empty for a job that is not federated). Only
/// the origin knows the active siblings: a sibling's copy shows none (squeue's `NA`).
fn fed_fields(core: &Core, job: &Job) -> JobInfo {
    let Some(fed) = job.fed.as_deref() else {
        return JobInfo::default();
    };
    let view = core.fed_view();
    let active: Vec<String> = if fed.origin_here {
        fed.active.clone()
    } else {
        Vec::new()
    };
    JobInfo {
        fed_origin: fed.origin.clone(),
        fed_viable_raw: view.bits(&fed.viable),
        fed_active_raw: view.bits(&active),
        fed_viable: fed.viable.clone(),
        fed_active: active,
        cluster_features: fed.features.clone(),
        fed_clusters: fed.clusters.clone(),
        fed_running_on: fed.running_on.clone().unwrap_or_default(),
        ..JobInfo::default()
    }
}

/// `sinfo`/`scontrol show node`'s view of a node.
pub fn node_info(core: &Core, node: &Node, addr: (String, u16)) -> NodeInfo {
    // A cloud node that never registered is IDLE~ (or ALLOCATED# once given a job).
    let powered = node.power.status != crate::core::PowerStatus::On;
    let base = match (node.base, node.job.is_some()) {
        (NodeBase::Unknown, true) if powered => "ALLOCATED",
        (NodeBase::Unknown, false) if powered => "IDLE",
        (NodeBase::Unknown, _) => "UNKNOWN",
        (NodeBase::Future, _) => "FUTURE",
        (NodeBase::Down, _) => "DOWN",
        // What its jobs hold decides: a job suspended by an administrator holds nothing, and
        // shared nodes (select/cons_tres) may have some CPUs held and some free.
        (NodeBase::Up, _) if node.holders == 0 => "IDLE",
        (NodeBase::Up, _) if node.alloc_cpus < node.cpus => "MIXED",
        (NodeBase::Up, _) => "ALLOCATED",
    };
    let job = node.job.and_then(|j| core.job(j));
    NodeInfo {
        name: node.name.clone(),
        addr: addr.0,
        port: u32::from(addr.1),
        state: base.to_string(),
        drain: node.drain,
        not_responding: node.not_responding,
        invalid: node.invalid,
        completing: job.is_some_and(|j| j.completing),
        reason: node.reason.clone().unwrap_or_default(),
        cpus: node.cpus,
        alloc_cpus: node.alloc_cpus.min(node.cpus),
        real_memory_mb: node.real_memory_mb,
        alloc_memory_mb: if node.alloc_mem_mb > 0 {
            node.alloc_mem_mb
        } else {
            job.map_or(0, |j| j.req.mem_per_node_mb)
        },
        weight: node.weight,
        features: node.features.clone(),
        partitions: core
            .partitions()
            .iter()
            .filter(|p| {
                core.nodes()
                    .iter()
                    .position(|n| n.name == node.name)
                    .is_some_and(|i| p.nodes.contains(i))
            })
            .map(|p| p.name.clone())
            .collect(),
        boot_time: secs(node.boot_time),
        last_busy: secs(node.power.last_busy),
        reason_time: 0,
        reason_uid: 0,
        tmp_disk_mb: node.tmp_disk_mb,
        hostname: node.power.hostname.clone().unwrap_or_default(),
        cloud: node.power.cloud,
        powered_down: node.power.powered_down(),
        powering_up: node.power.powering_up(),
        powering_down: node.power.powering_down(),
        power_down_requested: node.power.down_requested,
        slurmd_start_time: secs(node.registered_at),
        slurmd_pid: node.daemon_pid,
        sockets: node.topo.sockets,
        cores_per_socket: node.topo.cores_per_socket,
        threads_per_core: node.topo.threads_per_core,
    }
}

/// `sinfo`/`scontrol show partition`'s view of a partition.
pub fn partition_info(
    core: &Core,
    p: &Partition,
    group_name: &dyn Fn(u32) -> String,
) -> PartitionInfo {
    let idx: Vec<sluice_vocab::NodeIdx> = p
        .nodes
        .ones()
        .map(|i| sluice_vocab::NodeIdx::new(u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let names: Vec<String> = idx
        .iter()
        .filter_map(|i| core.nodes().get(i.get() as usize))
        .map(|n| n.name.clone())
        .collect();
    let total_cpus = idx
        .iter()
        .filter_map(|i| core.nodes().get(i.get() as usize))
        .map(|n| n.cpus)
        .sum();
    PartitionInfo {
        name: p.name.clone(),
        is_default: p.default,
        state: match p.state {
            PartState::Up => "UP",
            PartState::Down => "DOWN",
            PartState::Drain => "DRAIN",
            PartState::Inactive => "INACTIVE",
        }
        .to_string(),
        max_time_min: minutes(p.max_time),
        max_nodes: p.max_nodes.map_or(-1, i64::from),
        node_list: core.hostlist(&idx),
        nodes: names,
        over_subscribe: match p.oversubscribe {
            OverSubscribe::No => "NO".to_string(),
            OverSubscribe::Exclusive => "EXCLUSIVE".to_string(),
            OverSubscribe::Yes(n) => format!("YES:{n}"),
            OverSubscribe::Force(n) => format!("FORCE:{n}"),
        },
        allow_groups: p
            .allow_gids
            .as_ref()
            .map(|g| g.iter().map(|&gid| group_name(gid)).collect())
            .unwrap_or_default(),
        total_cpus,
        allow_accounts: p.access.allow_accounts.clone().unwrap_or_default(),
        deny_accounts: p.access.deny_accounts.clone(),
        allow_qos: p.access.allow_qos.clone().unwrap_or_default(),
        deny_qos: p.access.deny_qos.clone(),
        root_only: p.access.root_only,
        qos: p.access.qos.clone().unwrap_or_default(),
        priority_job_factor: part_conf(core, &p.name).map_or(1, |c| c.priority_job_factor.into()),
        priority_tier: part_conf(core, &p.name).map_or(1, |c| c.priority_tier.into()),
    }
}

/// The configured partition named `name`.
fn part_conf<'a>(
    core: &'a Core,
    name: &str,
) -> Option<&'a sluice_vocab::cluster_conf::PartitionConf> {
    core.conf().partitions.iter().find(|c| c.name == name)
}

/// A queued job's priority factors under `priority/multifactor` (what `sprio` shows).
fn priority_factors(
    core: &Core,
    job: &Job,
    now: SimTime,
) -> Option<sluice_wire::proto::PriorityFactors> {
    let multifactor =
        core.conf().priority.kind == sluice_vocab::cluster_conf::PriorityType::Multifactor;
    if !multifactor || !job.is_queued() {
        return None;
    }
    let f = core.priority_factors(job, now);
    Some(sluice_wire::proto::PriorityFactors {
        age: f.age,
        fairshare: f.fairshare,
        job_size: f.job_size,
        partition: f.partition,
        qos: f.qos,
        nice: f.nice,
        account: job.launch.account.clone(),
        tres: core
            .conf()
            .priority
            .weight_tres
            .iter()
            .map(|&(kind, _)| sluice_wire::proto::TresFactor {
                name: kind.name().to_string(),
                factor: f.tres[crate::core::priority::tres::slot(kind)],
            })
            .collect(),
    })
}
