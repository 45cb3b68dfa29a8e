//! The requests of failure management, each on a running job by its owner or an
//! administrator: the job's nodes, replace a failed or failing node by a spare, drop a node,
//! drain a node, extend the time limit within what the job earned. Every change reaches the
//! accounting daemon (a resize of the job's run, so the allocation before it keeps its own
//! record as Slurm's RESIZING one; node events) and the job's subscribers.

use super::super::alloc::{self, Unit};
use super::super::lifecycle::authorize;
use super::super::outbox::{AcctRecord, NodeCommand, Outbox, SaveHint};
use super::super::registration::drain_node;
use super::super::{Caller, Core, SimTime};
use super::{Detail, EventKind, Health, NonstopView, emit, health, note, spares, view};
use crate::conf::TimeLimit;
use crate::error::CtldError;
use sluice_vocab::nonstop_conf::UserList;
use sluice_vocab::{FedJobId, JobState, NodeIdx};

/// Checks that failure management is on and that `caller` may act on running job `id`.
fn running(core: &Core, caller: Caller, id: FedJobId) -> Result<(), CtldError> {
    if core.nonstop.is_none() {
        return Err(CtldError::NonstopNotConfigured);
    }
    let job = core.jobs.map.get(&id).ok_or(CtldError::InvalidJobId)?;
    authorize(caller, job)?;
    match (job.state, job.completing) {
        (JobState::Running, false) => Ok(()),
        (JobState::Pending, _) => Err(CtldError::JobPending),
        (s, c) if c || s.is_finished() => Err(CtldError::AlreadyDone),
        _ => Err(CtldError::JobNotRunning),
    }
}

/// Node `name` and its place in job `id`'s allocation.
fn place(core: &Core, id: FedJobId, name: &str) -> Result<(NodeIdx, usize), CtldError> {
    let i = core.nodes.lookup(name)?;
    let k = core
        .allocs
        .get(&id)
        .and_then(|a| a.nodes.iter().position(|&n| n == i))
        .ok_or_else(|| CtldError::NodeNotInJob {
            job: id,
            node: name.to_string(),
        })?;
    Ok((i, k))
}

fn rec(core: &mut Core, id: FedJobId) -> Option<&mut super::JobRecovery> {
    core.nonstop.as_mut().map(|s| s.jobs.entry(id).or_default())
}

/// The allocation of job `id` and how its nodes stand.
pub fn on_job_nodes(core: &Core, caller: Caller, id: FedJobId) -> Result<NonstopView, CtldError> {
    running(core, caller, id)?;
    view(core, id).ok_or(CtldError::InvalidJobId)
}

/// Replaces failed or failing node `node` of job `id` by a spare. Without a free spare the
/// request fails and the job is granted its `TimeLimitDelay`.
pub fn on_replace_node(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    id: FedJobId,
    node: &str,
) -> Result<NonstopView, CtldError> {
    running(core, caller, id)?;
    let (old, k) = place(core, id, node)?;
    let was = health(core, old);
    if was == Health::Ok {
        return Err(CtldError::NodeNotFailed {
            job: id,
            node: node.to_string(),
        });
    }
    let max = core
        .nonstop
        .as_ref()
        .map_or(0, |s| s.conf.max_spare_node_count);
    let used = rec(core, id).map_or(0, |r| r.replaced);
    if max > 0 && used >= max {
        return Err(CtldError::SpareLimit { job: id, max });
    }
    let job = core.jobs.map.get(&id).ok_or(CtldError::InvalidJobId)?;
    let Some(new) = spares::replacement_for(core, job) else {
        note(
            core,
            Detail::Health,
            format_args!("job {id}: no spare to replace node {node}"),
        );
        if let Some(r) = rec(core, id)
            && !r.delay_granted
        {
            r.delay_granted = true;
            out.save(SaveHint::Job(id));
        }
        return Err(CtldError::NoSpareNode {
            job: id,
            node: node.to_string(),
        });
    };
    swap(core, id, k, Some(new));
    crate::core::gang::allocation_changed(core, out, now, id);
    if was == Health::Failing {
        out.node(NodeCommand::Terminate {
            job: id,
            nodes: vec![old],
        });
    }
    if let Some(r) = rec(core, id) {
        r.replaced += 1;
        r.seen.remove(&old);
    }
    let new_name = core.nodes.get(new).name.clone();
    note(
        core,
        Detail::Action,
        format_args!("job {id}: node {node} replaced by {new_name}"),
    );
    changed(core, out, now, id, &[old, new]);
    emit(
        core,
        out,
        now,
        id,
        EventKind::Replaced,
        node,
        Some(new_name),
    );
    view(core, id).ok_or(CtldError::InvalidJobId)
}

/// Drops node `node` from job `id`'s allocation; the job keeps running on the others.
pub fn on_drop_node(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    id: FedJobId,
    node: &str,
) -> Result<NonstopView, CtldError> {
    running(core, caller, id)?;
    let (old, k) = place(core, id, node)?;
    let job = core.jobs.map.get(&id).ok_or(CtldError::InvalidJobId)?;
    let why = if job.nodes.len() < 2 {
        Some("it is the job's only node")
    } else if job.runs_batch_script() && k == 0 {
        Some("it runs the job's batch script")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(CtldError::NodeNotDroppable {
            job: id,
            node: node.to_string(),
            why,
        });
    }
    let was = health(core, old);
    swap(core, id, k, None);
    crate::core::gang::allocation_changed(core, out, now, id);
    if was != Health::Failed {
        out.node(NodeCommand::Terminate {
            job: id,
            nodes: vec![old],
        });
    }
    if let Some(r) = rec(core, id) {
        if was != Health::Ok {
            r.dropped += 1;
        }
        r.seen.remove(&old);
    }
    note(
        core,
        Detail::Action,
        format_args!("job {id}: node {node} dropped"),
    );
    changed(core, out, now, id, &[old]);
    emit(core, out, now, id, EventKind::Dropped, node, None);
    view(core, id).ok_or(CtldError::InvalidJobId)
}

/// Puts `new` in place of the `k`th node of job `id` (`None`: removes it), with the CPUs and
/// memory the job holds there.
fn swap(core: &mut Core, id: FedJobId, k: usize, new: Option<NodeIdx>) {
    alloc::release(core, id);
    let policy = core.policy;
    let (Some(job), Some(a)) = (core.jobs.map.get_mut(&id), core.allocs.get_mut(&id)) else {
        return;
    };
    let old = a.nodes[k];
    match new {
        Some(n) => {
            let node = core.nodes.get(n);
            let cpus = if policy.unit == Unit::Node || a.exclusive {
                node.cpus
            } else {
                a.cpus[k].min(node.cpus)
            };
            a.nodes[k] = n;
            a.cpus[k] = cpus;
            a.mem_mb[k] = policy.mem_on(job.req.mem_ask(), cpus, node.real_memory_mb);
            if let Some(cores) = a.cores.get_mut(k) {
                *cores = (0..u16::try_from(cpus).unwrap_or(u16::MAX)).collect();
            }
            job.nodes[k] = n;
            let node = core.nodes.get_mut(n);
            node.jobs.push(id);
            node.job = node.jobs.first().copied();
        }
        None => {
            a.nodes.remove(k);
            a.cpus.remove(k);
            a.mem_mb.remove(k);
            if k < a.cores.len() {
                a.cores.remove(k);
            }
            job.nodes.remove(k);
        }
    }
    let node = core.nodes.get_mut(old);
    node.jobs.retain(|j| *j != id);
    node.job = node.jobs.first().copied();
    core.nodes.refresh(old);
    alloc::retake(core, id);
}

/// After a change of job `id`'s nodes at `now`: the resize for accounting (the allocation
/// before it keeps its own record), the saves and the spare pools.
fn changed(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId, nodes: &[NodeIdx]) {
    if let (Some(job), Some(a)) = (core.jobs.map.get(&id), core.allocs.get(&id)) {
        out.accounting(AcctRecord::JobResized {
            job: id,
            run: job.restarts,
            at: now,
            node_list: core.nodes.hostlist(&a.nodes),
            node_count: a.nodes.len() as u32,
            cpus: a.total_cpus(),
            mem_mb: a.mem_mb.iter().sum(),
        });
    }
    out.save(SaveHint::Job(id));
    for &n in nodes {
        out.save(SaveHint::Node(n));
    }
    spares::refresh(core);
}

/// Minutes job `id` may still extend its time limit by: `TimeLimitExtend` per replaced node,
/// `TimeLimitDrop` per dropped node, `TimeLimitDelay` once a replacement found no spare,
/// less what it already took.
pub(crate) fn extension_available(core: &Core, id: FedJobId) -> u32 {
    let Some(state) = core.nonstop.as_ref() else {
        return 0;
    };
    let Some(r) = state.jobs.get(&id) else {
        return 0;
    };
    let c = &state.conf;
    let earned = r
        .replaced
        .saturating_mul(c.time_limit_extend_min)
        .saturating_add(r.dropped.saturating_mul(c.time_limit_drop_min))
        .saturating_add(if r.delay_granted {
            c.time_limit_delay_min
        } else {
            0
        });
    earned.saturating_sub(r.extended_min)
}

/// Extends job `id`'s time limit by `minutes`, within [`extension_available`].
pub fn on_extend_time(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    id: FedJobId,
    minutes: u32,
) -> Result<NonstopView, CtldError> {
    running(core, caller, id)?;
    if minutes == 0 {
        return Err(CtldError::InvalidTimeLimit);
    }
    let available = extension_available(core, id);
    if minutes > available {
        return Err(CtldError::ExtensionRefused {
            job: id,
            asked: minutes,
            available,
        });
    }
    if let Some(job) = core.jobs.map.get_mut(&id)
        && let TimeLimit::Minutes(m) = job.req.time_limit
    {
        job.req.time_limit = TimeLimit::Minutes(m.saturating_add(minutes));
    }
    if let Some(r) = rec(core, id) {
        r.extended_min += minutes;
    }
    out.save(SaveHint::Job(id));
    crate::core::update::amend_history(core, out, id);
    note(
        core,
        Detail::Action,
        format_args!("job {id}: time limit extended by {minutes} minutes"),
    );
    emit(core, out, now, id, EventKind::TimeExtended, "", None);
    view(core, id).ok_or(CtldError::InvalidJobId)
}

/// Whether `list` names the user `uid` called `user`.
fn names(list: &UserList, uid: u32, user: &str) -> bool {
    list.all
        || list
            .users
            .iter()
            .any(|u| (!user.is_empty() && u == user) || u.parse::<u32>() == Ok(uid))
}

/// Whether user `uid` (login `user`) may drain nodes of their own jobs: named in
/// `UserDrainAllow` and not in `UserDrainDeny`.
fn may_drain(core: &Core, uid: u32, user: &str) -> bool {
    core.nonstop.as_ref().is_some_and(|s| {
        names(&s.conf.user_drain_allow, uid, user) && !names(&s.conf.user_drain_deny, uid, user)
    })
}

/// Drains node `node` of job `id` with `reason`: administrators, or the job's owner when
/// `UserDrainAllow` names them. `user` is the caller's login name.
#[allow(clippy::too_many_arguments)]
pub fn on_drain_node(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    user: &str,
    id: FedJobId,
    node: &str,
    reason: &str,
) -> Result<NonstopView, CtldError> {
    running(core, caller, id)?;
    let (i, _) = place(core, id, node)?;
    if !caller.admin && !may_drain(core, caller.uid, user) {
        return Err(CtldError::AccessDenied);
    }
    drain(core, out, now, caller, i, reason);
    view(core, id).ok_or(CtldError::InvalidJobId)
}

/// `scontrol update NodeName=X State=DRAIN` by a user who is not an administrator: allowed
/// when `UserDrainAllow` names them and the node runs one of their running jobs.
pub fn on_user_drain(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    user: &str,
    node: &str,
    reason: &str,
) -> Result<(), CtldError> {
    let i = may_user_drain(core, caller, user, node)?;
    drain(core, out, now, caller, i, reason);
    Ok(())
}

/// Checks [`on_user_drain`]'s rule for `node` without draining it.
pub fn may_user_drain(
    core: &Core,
    caller: Caller,
    user: &str,
    node: &str,
) -> Result<NodeIdx, CtldError> {
    let i = core.nodes.lookup(node)?;
    let own_job = core.nodes.get(i).jobs.iter().any(|j| {
        core.jobs
            .map
            .get(j)
            .is_some_and(|j| j.uid == caller.uid && j.state == JobState::Running)
    });
    if !own_job || !may_drain(core, caller.uid, user) {
        return Err(CtldError::AccessDenied);
    }
    Ok(i)
}

fn drain(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    i: NodeIdx,
    reason: &str,
) {
    let reason = if reason.is_empty() {
        "drained by failure management".to_string()
    } else {
        reason.to_string()
    };
    let uid = caller.uid;
    note(
        core,
        Detail::Action,
        format_args!("node {} drained by uid {uid}", core.nodes.get(i).name),
    );
    drain_node(core, out, now, i, reason, caller.uid);
}
