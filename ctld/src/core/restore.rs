//! The core rebuilt from a [`Snapshot`] after a restart.
//!
//! The core is first built from the configuration as at a fresh start ([`Core::new`]); saved
//! node states are applied over it, then each saved job is put back through the same indexes
//! the handlers maintain: the pending queue (same submit time and id, so the same place),
//! the active set and node ownership (bitmaps refreshed), dependency links, `singleton`
//! counts, array metadata and throttles, and the purge queue. Nothing derived is read from disk.
//!
//! What the configuration no longer allows cannot come back as it was: a job whose partition
//! is gone, or that held a node no longer configured, is left out and reported in a
//! [`RestoreNote`]; [`followups`] turns the notes into the accounting records and store
//! deletions the runtime commits right after.

use super::deps::{self, Dep, DepKind, DepStatus, Dependencies};
use super::features::Constraint;
use super::jobs::{ArrayTask, HoldKind, Job, JobReason, JobRequest, JobTable};
use super::outbox::{AcctRecord, SaveHint};
use super::snapshot::{HoldSnap, JobSnap, Snapshot, dep_from_snap, reason_from_str};
use super::{Core, JobIdSource, SimTime, partitions};
use crate::conf::{CtldConf, TimeLimit};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState, NodeIdx};
use std::sync::Arc;

/// Something of the snapshot the restore could not bring back as it was.
#[derive(Debug, Clone, PartialEq)]
pub enum RestoreNote {
    /// A saved node that is no longer configured; its saved state is ignored.
    UnknownNode { name: String },
    /// A saved job record that does not decode (bad id or state); it is ignored.
    BadJob { id: u32, why: String },
    /// A job left out of the core (`why`). `ended` is the accounting end of its current run
    /// when it had not ended yet.
    JobDropped {
        job: FedJobId,
        why: String,
        ended: Option<Box<AcctRecord>>,
    },
}

/// What the runtime commits after a restore with `notes`: the dropped jobs' deletions and the
/// accounting ends of their runs.
pub fn followups(notes: &[RestoreNote]) -> (Vec<SaveHint>, Vec<AcctRecord>) {
    let mut saves = Vec::new();
    let mut acct = Vec::new();
    for note in notes {
        if let RestoreNote::JobDropped { job, ended, .. } = note {
            saves.push(SaveHint::JobPurged(*job));
            acct.extend(ended.as_deref().cloned());
        }
    }
    (saves, acct)
}

impl Core {
    /// Rebuilds the core for `conf` from `snap` at time `now` (see the module doc); `ids`
    /// and `group_id` as for [`Core::new`]. Jobs that cannot come back are left out; use
    /// [`Core::restore_noted`] to learn which.
    pub fn restore(
        conf: &CtldConf,
        snap: Snapshot,
        ids: Box<dyn JobIdSource>,
        group_id: &dyn Fn(&str) -> Option<u32>,
        now: SimTime,
    ) -> Result<Core, CtldError> {
        Self::restore_noted(conf, snap, ids, group_id, now).map(|(core, _)| core)
    }

    /// [`Core::restore`], also returning what could not be restored as it was.
    pub fn restore_noted(
        conf: &CtldConf,
        snap: Snapshot,
        ids: Box<dyn JobIdSource>,
        group_id: &dyn Fn(&str) -> Option<u32>,
        now: SimTime,
    ) -> Result<(Core, Vec<RestoreNote>), CtldError> {
        let mut core = Core::new(conf, ids, group_id, now)?;
        let mut notes = Vec::new();
        // Partition states an administrator set survive the restart.
        for (name, state) in &snap.partitions {
            let state = super::snapshot::part_state_from(state);
            if let (Some(p), Some(state)) = (core.parts.iter_mut().find(|p| &p.name == name), state)
            {
                p.state = state;
            }
        }
        for n in &snap.nodes {
            let Ok(i) = core.nodes.lookup(&n.name) else {
                notes.push(RestoreNote::UnknownNode {
                    name: n.name.clone(),
                });
                continue;
            };
            let node = core.nodes.get_mut(i);
            if node.base != super::NodeBase::Future {
                node.base = n.node_base();
                node.drain = n.drain;
                node.invalid = n.invalid;
                node.not_responding = n.not_responding;
                node.reason = n.reason.clone();
                node.boot_time = n.boot_time.map(SimTime::from_secs);
                if let Some(p) = &n.power {
                    p.apply(node);
                }
            }
            core.nodes.refresh(i);
        }
        let mut jobs = snap.jobs;
        jobs.sort_by_key(|j| j.id);
        let mut waits = super::power::snap::Waits::default();
        for s in &jobs {
            match job_from_snap(&mut core, s, now) {
                Ok(job) => {
                    let id = job.id;
                    waits.note(&core, id, s);
                    insert(&mut core, job, s.array_throttle, now);
                    restore_alloc(&mut core, id, s);
                    if let Some(r) = &s.recovery {
                        r.restore(&mut core, id);
                    }
                }
                Err(note) => notes.push(note),
            }
        }
        for meta in core.jobs.arrays.values_mut() {
            meta.tasks.sort_unstable();
        }
        let offset = |core: &Core, id: &FedJobId| core.jobs.map.get(id).and_then(|j| j.het);
        let mut hets = std::mem::take(&mut core.jobs.hets);
        for ids in hets.values_mut() {
            ids.sort_by_key(|id| offset(&core, id).map_or(0, |h| h.offset));
        }
        core.jobs.hets = hets;
        super::gang::restore(&mut core);
        super::power::snap::restore_configuring(&mut core, &waits);
        Ok((core, notes))
    }
}

fn job_from_snap(core: &mut Core, s: &JobSnap, now: SimTime) -> Result<Job, RestoreNote> {
    let bad = |why: &str| RestoreNote::BadJob {
        id: s.id,
        why: why.to_string(),
    };
    let id = FedJobId::from_raw(s.id).map_err(|_| bad("invalid job id"))?;
    let state = JobState::from_stored(s.state).ok_or_else(|| bad("unknown job state"))?;
    let array = match s.array {
        Some((a, task)) => Some(ArrayTask {
            job: FedJobId::from_raw(a).map_err(|_| bad("invalid array job id"))?,
            task,
        }),
        None => None,
    };
    let active = matches!(state, JobState::Running | JobState::Suspended) || s.completing;
    let dropped = |why: String, end_state: JobState, reason: JobReason| RestoreNote::JobDropped {
        job: id,
        why,
        ended: (!state.is_finished()).then_some(Box::new(AcctRecord::JobEnded {
            job: id,
            run: s.restarts,
            end: now,
            state: end_state,
            exit_code: s.exit_code,
            signal: s.exit_signal,
            reason,
            requester_uid: None,
        })),
    };
    let partition = partitions::resolve(&core.parts, Some(&s.partition)).map_err(|_| {
        dropped(
            format!("partition {} no longer exists", s.partition),
            JobState::Failed,
            JobReason::None,
        )
    })?;
    let mut nodes: Vec<NodeIdx> = Vec::with_capacity(s.nodes.len());
    for name in &s.nodes {
        match core.nodes.lookup(name) {
            Ok(i) => nodes.push(i),
            Err(_) if active => {
                return Err(dropped(
                    format!("node {name} no longer exists"),
                    JobState::NodeFail,
                    JobReason::NodeDown,
                ));
            }
            Err(_) => {}
        }
    }
    let feature_nodes = s.constraint.as_ref().map(|spec| {
        if let Some(bits) = core.jobs.constraint_nodes.get(spec) {
            return bits.clone();
        }
        // A constraint that no longer parses matches no node rather than every node.
        let bits = Arc::new(match Constraint::parse(spec) {
            Some(c) => c.bitmap(&core.nodes),
            None => fixedbitset::FixedBitSet::with_capacity(core.nodes.nodes.len()),
        });
        core.jobs
            .constraint_nodes
            .insert(spec.clone(), bits.clone());
        bits
    });
    let deps = s.deps.as_ref().map(|d| {
        Box::new(Dependencies {
            any: d.any,
            // An unreadable dependency can never be met, rather than being met at once.
            items: d
                .items
                .iter()
                .map(|x| {
                    dep_from_snap(x).unwrap_or(Dep {
                        kind: DepKind::AfterOk,
                        target: None,
                        delay_secs: 0,
                        status: DepStatus::Failed,
                    })
                })
                .collect(),
        })
    });
    // A `-w`/`-x` node that no longer exists: the job can never get all its `-w` nodes
    // (counted by name), and an excluded one is simply gone.
    let known = |names: &[String]| -> Vec<String> {
        names
            .iter()
            .filter(|n| core.nodes.lookup(n).is_ok())
            .cloned()
            .collect()
    };
    let kept = super::request::PlaceOpts {
        nodelist: known(&s.place.nodelist),
        exclude: known(&s.place.exclude),
        ..s.place.clone()
    };
    let lost = kept.nodelist.len() < s.place.nodelist.len();
    let mut masks = super::submit::node_masks(&core.nodes, &kept).ok().flatten();
    if lost {
        let m = masks.get_or_insert(super::jobs::NodeMasks {
            required: None,
            required_count: 0,
            allowed: None,
        });
        m.required
            .get_or_insert_with(|| fixedbitset::FixedBitSet::with_capacity(core.nodes.nodes.len()));
        m.required_count = u32::MAX;
    }
    let masks = masks.map(Arc::new);
    let t = |secs: Option<u64>| secs.map(SimTime::from_secs);
    let het = match s.het {
        None => None,
        Some((leader, offset)) => Some(super::jobs::HetMember {
            leader: FedJobId::from_raw(leader).map_err(|_| bad("invalid heterogeneous job id"))?,
            offset,
        }),
    };
    Ok(Job {
        id,
        array,
        het,
        name: s.name.clone(),
        uid: s.uid,
        gid: s.gid,
        partition,
        req: JobRequest {
            min_nodes: s.min_nodes,
            max_nodes: s.max_nodes,
            ntasks: s.ntasks,
            cpus_per_task: s.cpus_per_task,
            mem_per_node_mb: s.mem_per_node_mb,
            constraint: s.constraint.clone(),
            time_limit: s
                .time_limit_min
                .map_or(TimeLimit::Unlimited, TimeLimit::Minutes),
            share: s.share,
            place: s.place.clone(),
        },
        feature_nodes,
        masks,
        signal_sent: s.signal_sent,
        mail_sent: 0,
        part_limit: s.part_limit.as_deref().and_then(reason_from_str),
        state,
        reason: reason_from_str(&s.reason).unwrap_or(JobReason::None),
        hold: s.hold.map(|h| match h {
            HoldSnap::User => HoldKind::User,
            HoldSnap::Admin => HoldKind::Admin,
        }),
        deps,
        requeue: s.requeue,
        no_kill: s.no_kill,
        submit_time: SimTime::from_secs(s.submit_time),
        start_time: t(s.start_time),
        end_time: t(s.end_time),
        suspended_secs: s.suspended_secs,
        suspended_at: t(s.suspended_at),
        nodes,
        exit_code: s.exit_code,
        exit_signal: s.exit_signal,
        completing: s.completing,
        kill_at: t(s.kill_at),
        restarts: s.restarts,
        next_step: s.next_step,
        open_steps: s.open_steps.iter().map(|o| (o.step, o.start())).collect(),
        requester_uid: s.requester_uid,
        launch: s.launch.clone(),
        fed: s.fed.clone().map(Box::new),
        // Computed again when the job is put back in the queue.
        priority: 0,
        tier: 0,
    })
}

/// Puts a restored job into the core's table and indexes, as the handlers would have.
fn insert(core: &mut Core, mut job: Job, throttle: u32, now: SimTime) {
    let id = job.id;
    super::priority::assign(core, &mut job, now);
    if let Some(d) = &job.deps {
        deps::index(&mut core.jobs, id, d);
    }
    if job.is_queued() {
        core.jobs.queue.insert(JobTable::queue_key(&job));
    }
    let running = matches!(job.state, JobState::Running | JobState::Suspended);
    if running || job.completing {
        core.jobs.active.insert(id);
    }
    if running && !job.completing {
        *core
            .jobs
            .running_names
            .entry((job.uid, job.name.clone()))
            .or_insert(0) += 1;
    }
    if job.state.is_finished() && !job.completing {
        core.jobs.finished.insert((job.end_time.unwrap_or(now), id));
    }
    if let Some(h) = job.het {
        core.jobs.hets.entry(h.leader).or_default().push(id);
    }
    if let Some(a) = job.array {
        let meta = core.jobs.arrays.entry(a.job).or_default();
        meta.tasks.push((a.task, id));
        meta.throttle = throttle;
        if running && !job.completing {
            meta.running += 1;
        }
    }
    core.jobs.map.insert(id, job);
}

/// Puts a restored job holding nodes back on them with what it held (whole nodes when the
/// record predates CPU allocation); a job an administrator suspended holds nothing.
fn restore_alloc(core: &mut Core, id: FedJobId, s: &JobSnap) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    if !core.jobs.active.contains(&id) {
        return;
    }
    let alloc = super::alloc::restored(
        core,
        job,
        &s.alloc_cpus,
        &s.alloc_mem_mb,
        &s.alloc_cores,
        s.alloc_exclusive,
    );
    super::alloc::attach(core, id, alloc);
    super::steps::restore(core, id, &s.steps);
    if s.admin_suspended && job_suspended(core, id) {
        core.gang.manual.insert(id);
        super::alloc::release(core, id);
    }
}

fn job_suspended(core: &Core, id: FedJobId) -> bool {
    core.jobs
        .map
        .get(&id)
        .is_some_and(|j| j.state == JobState::Suspended)
}
