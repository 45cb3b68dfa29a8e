//! Node events: registration against the configured minimum resources, heartbeats, admin
//! updates, and setting a node DOWN (its job then fails or is requeued).

use super::node_runs::{self, NodeRun};
use super::nodes::NodeBase;
use super::outbox::{AcctRecord, NodeCommand, NodeEventKind, Outbox, SaveHint};
use super::{Caller, Core, SimTime, kill};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState, NodeIdx};

/// What a node daemon reports when it (re)starts and periodically after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRegistration {
    /// The node's name.
    pub name: String,
    /// CPUs it has.
    pub cpus: u32,
    /// Memory in MB it has.
    pub real_memory_mb: u64,
    /// Temporary disk in MB it has.
    pub tmp_disk_mb: u64,
    /// When its node daemon booted; jobs started before then are lost.
    pub boot_time: SimTime,
    /// The runs of jobs it holds.
    pub jobs: Vec<NodeRun>,
    /// Its node daemon's process id (0: not told).
    pub pid: u32,
    /// Not its node daemon's first registration (it answers a controller that restarted or
    /// refused its heartbeat): the node did not restart, so a node an administrator set DOWN
    /// stays DOWN whatever `ReturnToService` says.
    pub again: bool,
}

/// Handles a node's registration: checks its resources against the configured minimum
/// (fewer leaves it INVAL and drained, reason `Low CPUs` / `Low RealMemory (...)` /
/// `Low TmpDisk`), brings it into service, and reconciles its jobs with the core's. Returns
/// what the node must kill of what it holds: runs the controller does not hold there (an
/// older run of a requeued job, an unknown job) and steps that ended.
pub fn on_node_registered(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    reg: NodeRegistration,
) -> Result<Vec<NodeRun>, CtldError> {
    let i = core.nodes.lookup(&reg.name)?;
    let rts = core.cfg.return_to_service;
    let node = core.nodes.get_mut(i);
    node.last_heard = now;
    node.not_responding = false;
    node.boot_time = Some(reg.boot_time);
    node.registered_at = Some(now);
    node.daemon_pid = reg.pid;
    let mut low = Vec::new();
    if reg.cpus < node.cpus {
        low.push("Low CPUs".to_string());
    }
    if reg.real_memory_mb < node.real_memory_mb {
        low.push(format!(
            "Low RealMemory (reported:{} < 100.00% of configured:{})",
            reg.real_memory_mb, node.real_memory_mb
        ));
    }
    if reg.tmp_disk_mb < node.tmp_disk_mb {
        low.push("Low TmpDisk".to_string());
    }
    let mut event = None;
    if low.is_empty() {
        node.invalid = false;
    } else {
        let reason = low.join(", ");
        if !node.invalid || node.reason.as_deref() != Some(reason.as_str()) {
            event = Some((NodeEventKind::Drain, Some(reason.clone())));
        }
        node.invalid = true;
        node.drain = true;
        node.reason = Some(reason);
    }
    match node.base {
        NodeBase::Unknown => node.base = NodeBase::Up,
        NodeBase::Down if low.is_empty() => {
            let was_silent = node.reason.as_deref() == Some(NOT_RESPONDING);
            if (rts == 2 && (was_silent || !reg.again)) || (rts == 1 && was_silent) {
                node.base = NodeBase::Up;
                node.reason = None;
                event = Some((NodeEventKind::Up, None));
            }
        }
        _ => {}
    }
    let (name, cpus) = (node.name.clone(), node.cpus);
    core.nodes.refresh(i);
    if let Some((kind, reason)) = event {
        out.accounting(AcctRecord::NodeEvent {
            node: name,
            at: now,
            kind,
            reason,
            reason_uid: 0,
            cpus,
        });
    }
    out.save(SaveHint::Node(i));
    super::nonstop::node_changed(core, out, now, i);
    let kill = node_runs::runs_to_kill(core, i, &reg.jobs);
    reconcile_jobs(core, out, now, i, &reg);
    super::power::boot::on_registered(core, out, now, i);
    Ok(kill)
}

/// The reason a silent node is set DOWN with.
pub const NOT_RESPONDING: &str = "Not responding";

fn reconcile_jobs(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    i: NodeIdx,
    reg: &NodeRegistration,
) {
    let expected = core.nodes.get(i).jobs.clone();
    for r in &reg.jobs {
        // A job the controller has not placed here at all: whatever run it is, end it (an
        // older run of a job this node does hold is killed by its run alone, by the reply).
        if !expected.contains(&r.job) {
            out.node(NodeCommand::Terminate {
                job: r.job,
                nodes: vec![i],
            });
        }
    }
    for job in expected {
        let Some(j) = core.jobs.map.get(&job) else {
            continue;
        };
        let started = j.start_time;
        // A CONFIGURING job waits for this very boot; it was never launched.
        let configuring = core.power.configuring.contains_key(&job);
        let lost = !node_runs::reports_held_run(core, i, &reg.jobs, job)
            && started.is_some_and(|s| s < reg.boot_time)
            && !configuring;
        if lost || launch_lost(core, i, &reg.jobs, job, now) {
            kill::node_failed_job(core, out, now, job, i);
        }
    }
}

/// Whether node `i` is the batch host of running batch job `job` and, [`BATCH_START_TIMEOUT`]
/// after the job's start, knows nothing of it (neither running it nor holding its exit report,
/// per `runs`, what the node reports): its launch was lost (a controller killed between
/// recording the start and sending it, or a launch the node never got). Slurm's "missing from
/// batch node" check, made at every registration and heartbeat.
fn launch_lost(core: &Core, i: NodeIdx, runs: &[NodeRun], job: FedJobId, now: SimTime) -> bool {
    let Some(j) = core.jobs.map.get(&job) else {
        return false;
    };
    j.state == JobState::Running
        && !j.completing
        && j.runs_batch_script()
        && j.nodes.first() == Some(&i)
        && j.start_time.is_some_and(|s| now.since(s) >= BATCH_START_TIMEOUT)
        // Held for a boot or prologs: not launched yet.
        && !core.power.configuring.contains_key(&job)
        && !node_runs::reports_held_run(core, i, runs, job)
}

/// Fails (requeues, or ends as NODE_FAIL) the batch jobs whose launch to node `i` was lost
/// ([`launch_lost`]).
fn fail_lost_launches(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    i: NodeIdx,
    runs: &[NodeRun],
) {
    let lost: Vec<FedJobId> = core
        .nodes
        .get(i)
        .jobs
        .iter()
        .copied()
        .filter(|&job| launch_lost(core, i, runs, job, now))
        .collect();
    for job in lost {
        tracing::warn!(
            %job,
            node = %core.nodes.get(i).name,
            "batch job missing from its batch node {BATCH_START_TIMEOUT} s after its start: its launch was lost"
        );
        kill::node_failed_job(core, out, now, job, i);
    }
}

/// Seconds after its start a batch job must be known to its batch node (Slurm's default
/// `BatchStartTimeout`).
const BATCH_START_TIMEOUT: u64 = 10;

/// Records that a node is alive (its periodic ping or heartbeat), with the runs it holds. A
/// node holding an older run of a job than the controller's (it missed the requeue's kill) is
/// refused, so that it registers again and hears to kill that run.
pub fn on_node_heartbeat(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    name: &str,
    runs: &[NodeRun],
) -> Result<(), CtldError> {
    let i = core.nodes.lookup(name)?;
    let node = core.nodes.get_mut(i);
    // Set DOWN while silent (the node daemon, or this controller, was stopped past
    // SlurmdTimeout): the node daemon registers again, and ReturnToService decides.
    if node.base == NodeBase::Down && node.reason.as_deref() == Some(NOT_RESPONDING) {
        return Err(CtldError::NodeMustRegister {
            name: name.to_string(),
        });
    }
    node.last_heard = now;
    if let Some((job, run)) = node_runs::older_run(core, runs) {
        return Err(CtldError::StaleRun {
            name: name.to_string(),
            job,
            run,
        });
    }
    let node = core.nodes.get_mut(i);
    if node.not_responding {
        node.not_responding = false;
        core.nodes.refresh(i);
        out.save(SaveHint::Node(i));
        super::nonstop::node_changed(core, out, now, i);
    }
    fail_lost_launches(core, out, now, i, runs);
    Ok(())
}

/// An admin's change to a node (`scontrol update nodename=... state=...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeUpdate {
    /// `state=drain reason=...`: finish the running job, take no new work.
    Drain { reason: String },
    /// `state=down reason=...`: out of service now; its job fails or is requeued.
    Down { reason: String },
    /// `state=resume`: clear DRAIN and DOWN.
    Resume,
}

/// Applies an admin's node update. Only administrators may change nodes.
pub fn on_node_update(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    name: &str,
    update: NodeUpdate,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let i = core.nodes.lookup(name)?;
    match update {
        NodeUpdate::Down { reason } => set_node_down_by(core, out, now, i, &reason, caller.uid),
        NodeUpdate::Drain { reason } => drain_node(core, out, now, i, reason, caller.uid),
        NodeUpdate::Resume => {
            let node = core.nodes.get_mut(i);
            node.drain = false;
            node.invalid = false;
            node.reason = None;
            if node.base == NodeBase::Down {
                node.base = NodeBase::Up;
            }
            let (name, cpus) = (node.name.clone(), node.cpus);
            out.accounting(AcctRecord::NodeEvent {
                node: name,
                at: now,
                kind: NodeEventKind::Up,
                reason: None,
                reason_uid: caller.uid,
                cpus,
            });
            super::power::manual::on_admin_resume(core, i);
        }
    }
    core.nodes.refresh(i);
    out.save(SaveHint::Node(i));
    super::nonstop::node_changed(core, out, now, i);
    Ok(())
}

/// Drains a node with `reason` on behalf of `uid` (0: the controller itself): its jobs finish,
/// it takes no new work.
pub(crate) fn drain_node(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    i: NodeIdx,
    reason: String,
    uid: u32,
) {
    let node = core.nodes.get_mut(i);
    node.drain = true;
    node.reason = Some(reason.clone());
    let (name, cpus) = (node.name.clone(), node.cpus);
    out.accounting(AcctRecord::NodeEvent {
        node: name,
        at: now,
        kind: NodeEventKind::Drain,
        reason: Some(reason),
        reason_uid: uid,
        cpus,
    });
    core.nodes.refresh(i);
    out.save(SaveHint::Node(i));
    super::nonstop::node_changed(core, out, now, i);
}

/// Sets a node DOWN with `reason`; its job fails (or is requeued).
pub(crate) fn set_node_down(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    i: NodeIdx,
    reason: &str,
) {
    set_node_down_by(core, out, now, i, reason, 0);
}

/// Sets a node DOWN with `reason` on behalf of `uid` (0: the controller itself).
fn set_node_down_by(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    i: NodeIdx,
    reason: &str,
    uid: u32,
) {
    let node = core.nodes.get_mut(i);
    node.base = NodeBase::Down;
    node.reason = Some(reason.to_string());
    let (name, jobs, cpus) = (node.name.clone(), node.jobs.clone(), node.cpus);
    core.nodes.refresh(i);
    out.accounting(AcctRecord::NodeEvent {
        node: name,
        at: now,
        kind: NodeEventKind::Down,
        reason: Some(reason.to_string()),
        reason_uid: uid,
        cpus,
    });
    out.save(SaveHint::Node(i));
    for job in jobs {
        kill::node_failed_job(core, out, now, job, i);
    }
    // The jobs that survived (`--no-kill`) hear of the failure.
    super::nonstop::node_changed(core, out, now, i);
}
