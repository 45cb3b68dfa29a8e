//! `scontrol update job`: changes to a job after submission. Every change of one request is
//! checked first and applied together, so a refused request changes nothing.
//!
//! As in Slurm: a user may lower a job's time limit but only an administrator may raise it;
//! the partition and dependency change only while the job is pending; the name may change at
//! any time before the job ends.

use super::features::Constraint;
use super::jobs::{Job, JobRef, JobRequest, JobTable};
use super::lifecycle::each;
use super::outbox::{AcctRecord, Outbox, SaveHint};
use super::{Caller, Core, SimTime, deps, partitions};
use crate::conf::{PartState, TimeLimit};
use crate::error::CtldError;
use sluice_vocab::FedJobId;

/// One setting of `scontrol update job`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobChange {
    /// `TimeLimit=`.
    TimeLimit(TimeLimit),
    /// `Partition=`.
    Partition(String),
    /// `Name=` / `JobName=`.
    Name(String),
    /// `Dependency=` ("" clears it).
    Dependency(String),
    /// `Nice=`: only administrators may give a negative value.
    Nice(i32),
    /// `Priority=`: a fixed priority (see [`super::priority::set_priority`]).
    Priority(u32),
}

/// Applies `changes` to the job(s) named by `job`. `groups` are the caller's groups, checked
/// against the new partition's `AllowGroups`.
pub fn on_update_job(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    job: JobRef,
    changes: &[JobChange],
    groups: &[u32],
) -> Result<(), CtldError> {
    let ids = core.jobs.resolve(job)?;
    each(core, caller, &ids, |core, id| {
        let Some(current) = core.jobs.map.get(&id) else {
            return Err(CtldError::InvalidJobId);
        };
        if current.state.is_finished() || current.completing {
            return Err(CtldError::AlreadyDone);
        }
        let old_key = JobTable::queue_key(current);
        let mut job = current.clone();
        for change in changes {
            apply(core, &mut job, caller, groups, now, change)?;
        }
        let old_name = current.name.clone();
        let running = core
            .jobs
            .active
            .contains(&id)
            .then(|| (job.uid, old_name.clone()));
        if let Some(key) = running.filter(|_| old_name != job.name) {
            if let Some(n) = core.jobs.running_names.get_mut(&key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    core.jobs.running_names.remove(&key);
                }
            }
            *core
                .jobs
                .running_names
                .entry((job.uid, job.name.clone()))
                .or_insert(0) += 1;
        }
        if let Some(d) = &job.deps {
            deps::index(&mut core.jobs, id, d);
        }
        core.jobs.map.insert(id, job);
        // Its nice, priority or partition may have changed: its place in the queue too.
        if core.jobs.queue.remove(&old_key) {
            super::priority::reinsert(core, id, now);
        }
        out.save(SaveHint::Job(id));
        amend_history(core, out, id);
        Ok(())
    })
}

fn apply(
    core: &Core,
    job: &mut Job,
    caller: Caller,
    groups: &[u32],
    now: SimTime,
    change: &JobChange,
) -> Result<(), CtldError> {
    match change {
        JobChange::TimeLimit(limit) => {
            if !caller.admin {
                if *limit > job.req.time_limit {
                    return Err(CtldError::AccessDenied);
                }
                if !limit.within(core.parts[job.partition.get()].max_time) {
                    return Err(CtldError::InvalidTimeLimit);
                }
            }
            job.req.time_limit = *limit;
            // Now asked for: a federated job's siblings get it in their description.
            if let Some(f) = job.fed.as_deref_mut() {
                f.asked.time_limit = true;
            }
        }
        JobChange::Name(name) => job.name = name.clone(),
        JobChange::Partition(name) => {
            if !job.is_queued() {
                return Err(CtldError::JobNotPending);
            }
            let idx = partitions::resolve(&core.parts, Some(name))?;
            let part = &core.parts[idx.get()];
            if !caller.admin && !part.allows(groups) {
                return Err(CtldError::PartitionGroupDenied {
                    partition: part.name.clone(),
                });
            }
            if !part
                .access
                .allows_account(super::submit::account_of(&job.launch))
            {
                return Err(CtldError::InvalidAccount {
                    partition: part.name.clone(),
                });
            }
            if matches!(part.state, PartState::Drain | PartState::Inactive) {
                return Err(CtldError::PartitionNotAvailable {
                    partition: part.name.clone(),
                });
            }
            if part.max_nodes.is_some_and(|m| job.req.min_nodes > m) {
                return Err(CtldError::InvalidNodeCount);
            }
            if !job.req.time_limit.within(part.max_time) {
                return Err(CtldError::InvalidTimeLimit);
            }
            let max_nodes = job
                .req
                .max_nodes
                .min(part.max_nodes.unwrap_or(u32::MAX))
                .min(part.node_count.max(1))
                .max(job.req.min_nodes);
            let constraint = job.req.constraint.as_deref().and_then(Constraint::parse);
            let r = JobRequest {
                max_nodes,
                ..job.req.clone()
            };
            if !part.could_ever_run(&r, constraint.as_ref()) {
                return Err(CtldError::NodeConfigUnavailable);
            }
            job.partition = idx;
            job.req.max_nodes = max_nodes;
            job.part_limit = None;
            if let Some(f) = job.fed.as_deref_mut() {
                f.asked.partition = true;
            }
        }
        JobChange::Dependency(spec) => {
            if !job.is_queued() {
                return Err(CtldError::JobNotPending);
            }
            job.deps = if spec.is_empty() {
                None
            } else {
                Some(Box::new(deps::parse(core, spec, now)?))
            };
        }
        JobChange::Nice(nice) => {
            if *nice < 0 && !caller.admin {
                return Err(CtldError::AccessDenied);
            }
            job.req.place.nice = *nice;
        }
        JobChange::Priority(p) => super::priority::set_priority(core, job, caller, now, *p)?,
    }
    Ok(())
}

/// `scontrol requeuehold`: requeues the job(s) and holds them once back in the queue (a user
/// hold, so the owner may release them).
pub fn on_requeue_hold(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    job: JobRef,
) -> Result<(), CtldError> {
    super::lifecycle::on_requeue(core, out, now, caller, job)?;
    for id in core.jobs.resolve(job)? {
        let realms = &core.coordinators;
        if let Some(j) = core.jobs.map.get_mut(&id)
            && j.state == sluice_vocab::JobState::Pending
            && super::coordinators::may_manage(realms, caller, j).is_ok()
        {
            j.hold = Some(super::jobs::HoldKind::User);
            j.reason = super::jobs::JobReason::JobHeldUser;
            out.save(SaveHint::Job(id));
        }
    }
    Ok(())
}

/// Sends the job's submission record again after a change `sacct` shows (time limit, name),
/// unless it is a federated job not running here (its history is its origin's or its
/// winner's).
pub(crate) fn amend_history(core: &Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    if job.fed.is_some() && !core.jobs.active.contains(&id) {
        return;
    }
    let part = &core.parts[job.partition.get()].name;
    out.accounting(AcctRecord::amended(job, part));
}
