//! Job submission: validation with Slurm's error texts, id assignment, array expansion.
//!
//! Partition limits are enforced at submission (as Slurm does with `EnforcePartLimits=ALL`):
//! a time limit above `MaxTime` or a node count above `MaxNodes` is refused rather than left
//! pending forever.

use super::arrays::{ArrayMeta, parse_array};
use super::features::Constraint;
use super::jobs::{ArrayTask, HoldKind, Job, JobReason, JobRequest, JobTable};
use super::outbox::{AcctRecord, Outbox, SaveHint};
use super::request::{SubmitReply, SubmitRequest};
use super::{Core, SimTime, deps, partitions};
use crate::conf::{PartState, TimeLimit};
use crate::error::CtldError;
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
    let part_idx = partitions::resolve(&core.parts, req.partition.as_deref())?;
    let part = &core.parts[part_idx.get()];
    if !part.allows(&req.groups) {
        return Err(CtldError::PartitionGroupDenied {
            partition: part.name.clone(),
        });
    }
    if matches!(part.state, PartState::Drain | PartState::Inactive) {
        return Err(CtldError::PartitionNotAvailable {
            partition: part.name.clone(),
        });
    }
    let min_nodes = req.min_nodes.unwrap_or(1);
    let asked_max = req.max_nodes.unwrap_or(u32::MAX);
    if min_nodes == 0 || asked_max < min_nodes || part.max_nodes.is_some_and(|m| min_nodes > m) {
        return Err(CtldError::InvalidNodeCount);
    }
    let max_nodes = asked_max
        .min(part.max_nodes.unwrap_or(u32::MAX))
        .min(part.node_count.max(1));
    let ntasks = req.ntasks.unwrap_or(min_nodes);
    if ntasks == 0 {
        return Err(CtldError::InvalidTaskCount);
    }
    let cpus_per_task = req.cpus_per_task.unwrap_or(1);
    if cpus_per_task == 0 {
        return Err(CtldError::InvalidCpuCount);
    }
    let time_limit = match req.time_limit {
        None => part.max_time,
        Some(TimeLimit::Minutes(0)) => TimeLimit::Unlimited,
        Some(t) => t,
    };
    if !time_limit.within(part.max_time) {
        return Err(CtldError::InvalidTimeLimit);
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
    let part = &core.parts[part_idx.get()];
    let mem = req.mem_per_node_mb.unwrap_or(0);
    if !part.could_ever_run(
        min_nodes,
        max_nodes,
        ntasks,
        cpus_per_task,
        mem,
        constraint.as_ref(),
    ) {
        return Err(CtldError::NodeConfigUnavailable);
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
    let template = Job {
        id: FedJobId::from_raw(1).map_err(|_| CtldError::JobIdsExhausted)?,
        array: None,
        name: req.name.clone(),
        uid: req.uid,
        gid: req.gid,
        partition: part_idx,
        req: JobRequest {
            min_nodes,
            max_nodes,
            ntasks,
            cpus_per_task,
            mem_per_node_mb: mem,
            constraint: req.constraint.clone(),
            time_limit,
            share: req.share,
        },
        feature_nodes,
        state: JobState::Pending,
        reason: if req.hold {
            JobReason::JobHeldUser
        } else {
            JobReason::None
        },
        hold: req.hold.then_some(HoldKind::User),
        deps: dependencies.map(Box::new),
        requeue: req.requeue.unwrap_or(true),
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
    };
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
        }
        record_new(core, out, job);
    }
    if array.is_some() {
        core.jobs.arrays.insert(job_id, meta);
    }
    Ok(SubmitReply { job_id, jobs: ids })
}

fn next_free_id(core: &mut Core) -> Result<FedJobId, CtldError> {
    loop {
        let id = core.ids.next_id().ok_or(CtldError::JobIdsExhausted)?;
        if !core.jobs.map.contains_key(&id) {
            return Ok(id);
        }
    }
}

fn record_new(core: &mut Core, out: &mut impl Outbox, job: Job) {
    let part = &core.parts[job.partition.get()].name;
    out.accounting(AcctRecord::submitted(&job, part, job.submit_time));
    out.save(SaveHint::Job(job.id));
    if let Some(d) = &job.deps {
        deps::index(&mut core.jobs, job.id, d);
    }
    core.jobs.queue.insert(JobTable::queue_key(&job));
    core.jobs.map.insert(job.id, job);
}
