//! Job submission: validation with Slurm's error texts, id assignment, array expansion.
//!
//! Partition limits (a time limit above `MaxTime`, a node count above `MaxNodes`, a request
//! the partition's nodes can never satisfy) are refused at submission with
//! `EnforcePartLimits=ALL|ANY|YES`; with `NO` (the default, as in Slurm) the job is queued and
//! pends with reason `PartitionTimeLimit`, `PartitionNodeLimit` or `PartitionConfig`, except
//! memory (`--mem`, or one CPU's `--mem-per-cpu`) or `--tmp` beyond every node of the
//! partition, which Slurm refuses whatever `EnforcePartLimits` (with the note `Memory
//! specification can not be satisfied` / `Temporary disk specification ...`). A job
//! whose account `AllowAccounts`/`DenyAccounts` refuses is handled the same way
//! (`Invalid account or account/partition combination specified`, or reason `InvalidAccount`).
//! `AccountingStorageEnforce` adds the association checks of [`super::assoc`] and the QOS
//! checks of [`super::qos`] (partition `AllowQos`/`DenyQos` refuse a non-administrator's job
//! at submission, whatever `EnforcePartLimits`).

use super::alloc::MemAsk;
use super::arrays::{ArrayMeta, parse_array};
use super::features::Constraint;
use super::jobs::{ArrayTask, HoldKind, Job, JobReason, JobRequest, JobTable, NodeMasks};
use super::nodes::NodeTable;
use super::outbox::{AcctRecord, Outbox, SaveHint};
use super::request::{NodeCountPref, PlaceOpts};
use super::request::{SubmitReply, SubmitRequest};
use super::{Core, SimTime, deps, partitions};
use crate::conf::{PartState, TimeLimit};
use crate::error::CtldError;
use fixedbitset::FixedBitSet;
use sluice_vocab::{FedJobId, JobState};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Validates and queues a job. Nothing changes when it fails.
pub fn on_submit(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    req: SubmitRequest,
) -> Result<SubmitReply, CtldError> {
    submit_as(core, out, now, req, None)
}

/// [`on_submit`] under a given id (`preset`: a federation sibling's copy, whose id the origin
/// chose) instead of one from the id source. A preset id takes no array and no id in use.
pub(crate) fn submit_as(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    req: SubmitRequest,
    preset: Option<FedJobId>,
) -> Result<SubmitReply, CtldError> {
    let (template, array) = build(core, now, req, preset)?;
    let tasks: Vec<Option<u32>> = match &array {
        None => vec![None],
        Some(a) => a.tasks.iter().map(|t| Some(*t)).collect(),
    };
    // Take every id first, so a source that runs dry mid-array creates nothing.
    let ids = match preset {
        Some(id) => vec![id],
        None => tasks
            .iter()
            .map(|_| next_free_id(core))
            .collect::<Result<Vec<FedJobId>, CtldError>>()?,
    };
    let Some(&job_id) = ids.first() else {
        return Err(CtldError::JobIdsExhausted);
    };
    let mut meta = ArrayMeta {
        throttle: array.as_ref().map_or(0, |a| a.throttle),
        ..ArrayMeta::default()
    };
    for (&id, task) in ids.iter().zip(tasks) {
        let mut job = template.clone();
        job.id = id;
        if let Some(t) = task {
            job.array = Some(ArrayTask {
                job: job_id,
                task: t,
            });
            meta.tasks.push((t, id));
            if let Some(deps) = &template.deps {
                job.deps = deps::for_task(&core.jobs, deps, t).map(Box::new);
            }
        }
        record_new(core, out, job);
    }
    if array.is_some() {
        core.jobs.arrays.insert(job_id, meta);
    }
    Ok(SubmitReply { job_id, jobs: ids })
}

/// Validates `req` and builds the job it asks for, with its array specification when it is an
/// array. The job is a template: its id is `preset`'s or, until the caller takes ids for it
/// (only once the whole submission is valid, so a refused one uses none up), the first local
/// id. Nothing the job would change is changed.
pub(crate) fn build(
    core: &mut Core,
    now: SimTime,
    mut req: SubmitRequest,
    preset: Option<FedJobId>,
) -> Result<(Job, Option<super::arrays::ArraySpec>), CtldError> {
    req.launch.qos = super::qos::resolve(core, &req.launch, &req.launch.qos);
    let part_idx = partitions::resolve(&core.parts, req.partition.as_deref())?;
    let part = &core.parts[part_idx.get()];
    if part.access.root_only && !req.root_or_slurm_user {
        return Err(CtldError::AccessDenied);
    }
    if !req.root_or_slurm_user && !part.allows(&req.groups) {
        return Err(CtldError::PartitionGroupDenied {
            partition: part.name.clone(),
        });
    }
    if matches!(part.state, PartState::Drain | PartState::Inactive) {
        return Err(CtldError::PartitionNotAvailable {
            partition: part.name.clone(),
        });
    }
    let enforce = core.cfg.enforce_part_limits;
    // What the partition can never give: refused with EnforcePartLimits, else the reason the
    // job pends (the first one found, as Slurm reports one).
    let mut part_limit: Option<JobReason> = None;
    let mut limit = |reason: JobReason, err: CtldError| {
        if enforce {
            Err(err)
        } else {
            part_limit.get_or_insert(reason);
            Ok(())
        }
    };
    if !part.access.allows_account(account_of(&req.launch)) {
        let partition = part.name.clone();
        limit(
            JobReason::InvalidAccount,
            CtldError::InvalidAccount { partition },
        )?;
    }
    // A negative nice and an explicit priority are the administrators' (as in Slurm).
    if (req.place.nice < 0 || req.place.priority.is_some()) && !req.admin {
        return Err(CtldError::AccessDenied);
    }
    let masks = node_masks(&core.nodes, &req.place)?;
    if let Some(m) = &masks {
        let outside = m
            .required
            .as_ref()
            .is_some_and(|r| r.ones().any(|i| !part.nodes.contains(i)));
        let excluded = match (&m.required, &m.allowed) {
            (Some(r), Some(a)) => r.ones().any(|i| !a.contains(i)),
            _ => false,
        };
        if outside || excluded {
            return Err(CtldError::NodeConfigUnavailable);
        }
    }
    let required = masks.as_ref().map_or(0, |m| m.required_count);
    let per_node = req.place.ntasks_per_node;
    if per_node == Some(0) {
        return Err(CtldError::InvalidTaskCount);
    }
    let mut min_nodes = match (req.min_nodes, req.ntasks, per_node) {
        (Some(n), _, _) => n,
        // Overcommitted tasks share one task's CPUs per node: `--ntasks-per-node` asks no
        // more nodes (Slurm ignores it then).
        (None, Some(n), Some(t)) if !req.place.overcommit => n.div_ceil(t).max(1),
        _ => 1,
    };
    let mut asked_max = req.max_nodes.unwrap_or(u32::MAX);
    if required > 0 {
        // `-w` nodes are all taken: at least that many nodes.
        min_nodes = min_nodes.max(required);
        asked_max = asked_max.max(min_nodes);
    }
    if min_nodes == 0 || asked_max < min_nodes {
        return Err(CtldError::InvalidNodeCount);
    }
    if part.max_nodes.is_some_and(|m| min_nodes > m) {
        limit(JobReason::PartitionNodeLimit, CtldError::InvalidNodeCount)?;
    }
    let max_nodes = asked_max
        .min(part.max_nodes.unwrap_or(u32::MAX))
        .min(part.node_count.max(1))
        .max(min_nodes);
    let ntasks = match (req.ntasks, per_node) {
        (Some(n), _) => n,
        (None, Some(t)) => t.saturating_mul(min_nodes),
        (None, None) => min_nodes,
    };
    if ntasks == 0 {
        return Err(CtldError::InvalidTaskCount);
    }
    let cpus_per_task = req.cpus_per_task.unwrap_or(1);
    if cpus_per_task == 0 || req.place.mincpus == Some(0) {
        return Err(CtldError::InvalidCpuCount);
    }
    let time_limit = match req.time_limit {
        None => part.max_time,
        Some(TimeLimit::Minutes(0)) => TimeLimit::Unlimited,
        Some(t) => t,
    };
    if !time_limit.within(part.max_time) {
        limit(JobReason::PartitionTimeLimit, CtldError::InvalidTimeLimit)?;
    }
    if req
        .place
        .time_min
        .is_some_and(|m| !TimeLimit::Minutes(m).within(time_limit))
    {
        return Err(CtldError::InvalidTimeMin);
    }
    let (constraint, feature_nodes) = match &req.constraint {
        None => (None, None),
        Some(spec) => {
            let bad = || CtldError::InvalidFeature { spec: spec.clone() };
            let c = Constraint::parse(spec).ok_or_else(bad)?;
            let nodes = match core.jobs.constraint_nodes.get(spec) {
                Some(bits) => bits.clone(),
                None => {
                    let known = |f: &str| {
                        core.nodes
                            .nodes
                            .iter()
                            .any(|n| n.features.iter().any(|nf| nf == f))
                    };
                    if !c.names().all(known) {
                        return Err(bad());
                    }
                    let bits = Arc::new(c.bitmap(&core.nodes));
                    core.jobs
                        .constraint_nodes
                        .insert(spec.clone(), bits.clone());
                    bits
                }
            };
            (Some(c), Some(nodes))
        }
    };
    if let Some(spec) = &req.place.batch_features {
        batch_within(spec, constraint.as_ref())?;
    }
    let part = &core.parts[part_idx.get()];
    let mut place = req.place.clone();
    place.ntasks_given = req.ntasks.is_some();
    if place.node_pref == NodeCountPref::Fewest && req.max_nodes.is_some() {
        place.node_pref = NodeCountPref::Range;
    }
    let mut job_req = JobRequest {
        min_nodes,
        max_nodes,
        ntasks,
        cpus_per_task,
        mem_per_node_mb: req.mem_per_node_mb.unwrap_or(0),
        constraint: req.constraint.clone(),
        time_limit,
        share: req.share,
        place,
    };
    // Memory or temporary disk beyond every node of the partition is refused whatever
    // `EnforcePartLimits` says (Slurm queues too many CPUs or nodes, but not these): `--mem`,
    // or one CPU's `--mem-per-cpu` (Slurm queues `-c 2 --mem-per-cpu` above half a node's).
    let least_mem = match job_req.mem_ask() {
        MemAsk::PerNode(mb) | MemAsk::PerCpu(mb) => mb,
        MemAsk::Default => 0,
    };
    if !part.shapes.iter().any(|s| s.real_memory_mb >= least_mem) {
        return Err(CtldError::MemoryUnsatisfiable);
    }
    if !part.shapes.iter().any(|s| job_req.tmp_fits(s.tmp_disk_mb)) {
        return Err(CtldError::TmpDiskUnsatisfiable);
    }
    if !part.could_ever_run(&job_req, constraint.as_ref()) {
        limit(JobReason::PartitionConfig, CtldError::NodeConfigUnavailable)?;
    }
    let dependencies = req
        .dependency
        .as_deref()
        .map(|d| deps::parse(core, d, now))
        .transpose()?;
    let array = match &req.array {
        None => None,
        Some(spec) => Some(
            parse_array(spec, core.cfg.max_array_size)
                .ok_or_else(|| CtldError::InvalidArray { spec: spec.clone() })?,
        ),
    };
    let count = array.as_ref().map_or(1, |a| a.tasks.len());
    super::assoc::check_submit(
        core,
        &req.launch,
        &mut job_req,
        req.time_limit.is_some(),
        count,
        &core.parts[part_idx.get()].name,
    )?;
    super::qos::check_submit(
        core,
        &req.launch,
        &mut job_req,
        req.time_limit.is_some(),
        count,
        &core.parts[part_idx.get()].access,
        req.admin,
    )?;
    if core.jobs.map.len() + count > core.cfg.max_job_count as usize {
        return Err(CtldError::MaxJobCount {
            limit: core.cfg.max_job_count,
        });
    }
    if preset.is_none() && core.ids.remaining() < count as u64 {
        return Err(CtldError::JobIdsExhausted);
    }
    if preset.is_some_and(|id| array.is_some() || core.jobs.map.contains_key(&id)) {
        return Err(CtldError::InvalidJobId);
    }
    let held_by_priority = job_req.place.priority == Some(0);
    let mut template = Job {
        id: match preset {
            Some(id) => id,
            None => FedJobId::from_raw(1).map_err(|_| CtldError::JobIdsExhausted)?,
        },
        array: None,
        het: None,
        name: req.name.clone(),
        uid: req.uid,
        gid: req.gid,
        partition: part_idx,
        req: job_req,
        feature_nodes,
        masks: masks.map(Arc::new),
        signal_sent: false,
        mail_sent: 0,
        part_limit,
        state: JobState::Pending,
        reason: if req.hold {
            JobReason::JobHeldUser
        } else {
            part_limit.unwrap_or(JobReason::None)
        },
        // `--priority=0` submits the job held, as Slurm's administrators do.
        hold: if held_by_priority {
            Some(HoldKind::Admin)
        } else {
            req.hold.then_some(HoldKind::User)
        },
        deps: dependencies.map(Box::new),
        requeue: req.requeue.unwrap_or(true),
        no_kill: req.no_kill,
        submit_time: now,
        start_time: None,
        end_time: None,
        suspended_secs: 0,
        suspended_at: None,
        nodes: Vec::new(),
        exit_code: 0,
        exit_signal: 0,
        completing: false,
        kill_at: None,
        restarts: 0,
        next_step: 0,
        open_steps: BTreeMap::new(),
        requester_uid: None,
        launch: Arc::new(req.launch),
        fed: None,
        priority: 0,
        tier: 0,
    };
    super::priority::assign(core, &mut template, now);
    Ok((template, array))
}

/// What `job`'s partition can never give it now (checked again after a reconfiguration).
pub(crate) fn part_limit(core: &Core, job: &Job) -> Option<JobReason> {
    let part = core.parts.get(job.partition.get())?;
    if !part.access.allows_account(account_of(&job.launch)) {
        return Some(JobReason::InvalidAccount);
    }
    if part.max_nodes.is_some_and(|m| job.req.min_nodes > m) {
        return Some(JobReason::PartitionNodeLimit);
    }
    if !job.req.time_limit.within(part.max_time) {
        return Some(JobReason::PartitionTimeLimit);
    }
    let constraint = job.req.constraint.as_deref().and_then(Constraint::parse);
    let fits = part.could_ever_run(&job.req, constraint.as_ref());
    (!fits).then_some(JobReason::PartitionConfig)
}

/// The account a job is charged to, for `AllowAccounts`/`DenyAccounts`: `--account`, or the
/// user's default account as the service filled it in; `None` when neither is known.
pub(crate) fn account_of(launch: &super::jobs::LaunchSpec) -> Option<&str> {
    Some(launch.account.as_str()).filter(|a| !a.is_empty())
}

/// Re-checks the partition limits of the queued jobs (`EnforcePartLimits=NO`) after the
/// partitions changed: a job a new limit allows is no longer held back.
pub(crate) fn recheck_part_limits(core: &mut Core) {
    let queued: Vec<FedJobId> = core.jobs.queue.iter().map(|k| k.id).collect();
    for id in queued {
        let Some(job) = core.jobs.map.get(&id) else {
            continue;
        };
        let limit = part_limit(core, job);
        if let Some(job) = core.jobs.map.get_mut(&id) {
            job.part_limit = limit;
        }
    }
}

/// The bitmaps of `-w` and `-x`; an unknown node name is refused.
pub(crate) fn node_masks(
    nodes: &NodeTable,
    place: &PlaceOpts,
) -> Result<Option<NodeMasks>, CtldError> {
    if place.nodelist.is_empty() && place.exclude.is_empty() {
        return Ok(None);
    }
    let len = nodes.nodes.len();
    let bits = |names: &[String]| -> Result<FixedBitSet, CtldError> {
        let mut b = FixedBitSet::with_capacity(len);
        for n in names {
            b.insert(nodes.lookup(n)?.get() as usize);
        }
        Ok(b)
    };
    let required = if place.nodelist.is_empty() {
        None
    } else {
        Some(bits(&place.nodelist)?)
    };
    let allowed = if place.exclude.is_empty() {
        None
    } else {
        let mut a = bits(&place.exclude)?;
        a.toggle_range(..);
        Some(a)
    };
    let required_count = required
        .as_ref()
        .map_or(0, |r| u32::try_from(r.count_ones(..)).unwrap_or(u32::MAX));
    Ok(Some(NodeMasks {
        required,
        required_count,
        allowed,
    }))
}

pub(crate) fn next_free_id(core: &mut Core) -> Result<FedJobId, CtldError> {
    loop {
        let id = core.ids.next_id().ok_or(CtldError::JobIdsExhausted)?;
        if !core.jobs.map.contains_key(&id) {
            return Ok(id);
        }
    }
}

pub(crate) fn record_new(core: &mut Core, out: &mut impl Outbox, job: Job) {
    let part = &core.parts[job.partition.get()].name;
    // Eligible from its --begin time when that is later than the submission.
    let eligible = job.req.place.begin.map_or(job.submit_time, |b| {
        job.submit_time.max(SimTime::from_secs(b))
    });
    out.accounting(AcctRecord::submitted(&job, part, eligible));
    out.save(SaveHint::Job(job.id));
    if let Some(d) = &job.deps {
        deps::index(&mut core.jobs, job.id, d);
    }
    core.jobs.queue.insert(JobTable::queue_key(&job));
    core.fresh.submitted(job.id);
    core.jobs.map.insert(job.id, job);
}

/// `sbatch --batch=spec`: a well-formed expression naming only features of the job's
/// `--constraint` (Slurm refuses it without one).
fn batch_within(spec: &str, constraint: Option<&Constraint>) -> Result<(), CtldError> {
    let bad = || CtldError::InvalidBatchFeatures {
        spec: spec.to_string(),
    };
    let batch = Constraint::parse(spec).ok_or_else(bad)?;
    let constraint = constraint.ok_or_else(bad)?;
    if batch.names().all(|b| constraint.names().any(|c| c == b)) {
        Ok(())
    } else {
        Err(bad())
    }
}
