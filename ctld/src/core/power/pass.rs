//! The power pass, run by every tick: notices nodes becoming idle (`LastBusyTime`), runs the
//! timers (`SuspendTimeout`: powering down → powered down; `ResumeTimeout`: not registered →
//! DOWN), resumes queued nodes (jobs' nodes first) and powers down idle ones, each within its
//! rate.
//!
//! Rates follow Slurm's sliding minute: a counter of recent actions decays linearly with the
//! time since the last pass (to zero after 60 s), and a pass may act while the rounded counter
//! is below the rate. One pass is a single scan of the node table plus work proportional to
//! the nodes that change, so it stays cheap on 100,000 nodes.

use super::super::nodes::{NodeBase, idx};
use super::super::outbox::{AcctRecord, NodeEventKind, Outbox, SaveHint};
use super::super::registration::set_node_down;
use super::super::{Core, SimTime};
use super::boot::{release_ready, resume_job};
use super::settings::suspendable;
use super::{PowerCommand, PowerStatus, ResumeFile};
use sluice_vocab::NodeIdx;

/// The reason a node not registered by `ResumeTimeout` is set DOWN with.
pub const RESUME_TIMEOUT_REASON: &str = "ResumeTimeout reached";
/// The reason of the node event written when a node is powered down.
pub const POWERED_DOWN_REASON: &str = "Powered down after SuspendTimeout";

/// A rate limit over Slurm's sliding minute.
struct Budget {
    count: u32,
    rate: u32,
}

impl Budget {
    fn new(recent: f64, rate: u32) -> Self {
        Self {
            count: (recent + 0.5) as u32,
            rate,
        }
    }

    /// Takes one action if the rate allows.
    fn take(&mut self) -> bool {
        if self.rate != 0 && self.count >= self.rate {
            return false;
        }
        self.count += 1;
        true
    }
}

/// Runs the power pass at `now`.
pub fn on_power_tick(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    let p = &mut core.power;
    let decay = match p.last_pass {
        Some(t) if now.since(t) < 60 => (60 - now.since(t)) as f64 / 60.0,
        _ => 0.0,
    };
    p.suspended_recently *= decay;
    p.resumed_recently *= decay;
    p.last_pass = Some(now);
    let scan = scan(core, out, now);
    for &i in &scan.powered_off {
        powered_off(core, out, now, i);
    }
    resume_timed_out(core, out, now, &scan.timed_out);
    resume(core, out, now, &scan.queued);
    suspend(core, out, now, &scan.candidates);
    release_ready(core, out, now);
}

/// What one scan of the node table found.
#[derive(Default)]
struct Scan {
    powered_off: Vec<NodeIdx>,
    timed_out: Vec<NodeIdx>,
    queued: Vec<NodeIdx>,
    candidates: Vec<NodeIdx>,
}

fn scan(core: &mut Core, out: &mut impl Outbox, now: SimTime) -> Scan {
    let settings = &core.power.settings;
    let keep = settings.enabled.then(|| settings.kept_up(&core.nodes));
    let mut found = Scan::default();
    for (i, node) in core.nodes.nodes.iter_mut().enumerate() {
        let busy = node.job.is_some();
        let p = &mut node.power;
        if busy {
            p.busy = true;
        } else if p.busy {
            p.busy = false;
            p.last_busy = Some(now);
            if p.down_on_idle {
                p.down_requested = true;
            }
            out.save(SaveHint::Node(idx(i)));
        }
        let status = p.status;
        match status {
            PowerStatus::PoweringDown { since }
                if now.since(since) >= u64::from(settings.suspend_timeout[i]) =>
            {
                found.powered_off.push(idx(i));
            }
            PowerStatus::PoweringUp { since }
                if now.since(since) >= u64::from(settings.resume_timeout[i]) =>
            {
                found.timed_out.push(idx(i));
            }
            PowerStatus::ResumeQueued => found.queued.push(idx(i)),
            PowerStatus::On if suspendable(node) => {
                let idle_long = node
                    .power
                    .last_busy
                    .is_some_and(|t| now.since(t) > settings.suspend_time[i]);
                let automatic = idle_long
                    && keep.as_ref().is_some_and(|k| !k.contains(i))
                    && !settings.state_excluded(node);
                if node.power.down_requested || automatic {
                    found.candidates.push(idx(i));
                }
            }
            _ => {}
        }
    }
    found
}

/// `SuspendTimeout` passed: the node is powered down, usable again (it will be resumed).
fn powered_off(core: &mut Core, out: &mut impl Outbox, now: SimTime, i: NodeIdx) {
    let node = core.nodes.get_mut(i);
    node.power.status = PowerStatus::Off;
    node.power.last_busy = None;
    node.invalid = false;
    if node.power.cloud {
        // A cloud node's address is the cloud's business until it registers again.
        node.addr = node.name.clone();
        node.power.hostname = None;
    }
    let (name, cpus) = (node.name.clone(), node.cpus);
    core.nodes.refresh(i);
    out.accounting(AcctRecord::NodeEvent {
        node: name,
        at: now,
        kind: NodeEventKind::PowerDown,
        reason: Some(POWERED_DOWN_REASON.to_string()),
        reason_uid: 0,
        cpus,
    });
    out.save(SaveHint::Node(i));
}

/// Nodes not registered by `ResumeTimeout`: DOWN and powered down, their jobs requeued (they
/// never ran, so even a `--no-requeue` job goes back to the queue), ResumeFailProgram asked.
fn resume_timed_out(core: &mut Core, out: &mut impl Outbox, now: SimTime, nodes: &[NodeIdx]) {
    if nodes.is_empty() {
        return;
    }
    for &i in nodes {
        let node = core.nodes.get_mut(i);
        node.drain = false;
        node.not_responding = false;
        node.power.down_requested = false;
        node.power.status = PowerStatus::Off;
        node.power.last_busy = None;
        node.power.busy = false;
        let job = node.job;
        let requeue = job
            .and_then(|j| core.jobs.map.get_mut(&j))
            .map(|j| std::mem::replace(&mut j.requeue, true));
        set_node_down(core, out, now, i, RESUME_TIMEOUT_REASON);
        if let (Some(j), Some(r)) = (job, requeue)
            && let Some(job) = core.jobs.map.get_mut(&j)
        {
            job.requeue = r;
        }
    }
    out.power(PowerCommand::ResumeFailed {
        nodes: nodes.to_vec(),
        hostlist: core.nodes.hostlist(nodes),
    });
}

/// Resumes queued nodes within `ResumeRate`: those of CONFIGURING jobs first (in job id
/// order, each listed in the resume file), then those asked by `power_up`.
fn resume(core: &mut Core, out: &mut impl Outbox, now: SimTime, queued: &[NodeIdx]) {
    if queued.is_empty() {
        return;
    }
    let mut budget = Budget::new(core.power.resumed_recently, core.power.settings.resume_rate);
    let mut woken = Vec::new();
    let mut jobs = Vec::new();
    let ids: Vec<_> = core.power.configuring.keys().copied().collect();
    for id in ids {
        let Some(job) = core.jobs.map.get(&id) else {
            continue;
        };
        let mut mine = Vec::new();
        for &n in &job.nodes {
            if core.nodes.get(n).power.status == PowerStatus::ResumeQueued && budget.take() {
                core.nodes.get_mut(n).power.status = PowerStatus::PoweringUp { since: now };
                mine.push(n);
            }
        }
        if !mine.is_empty() {
            jobs.extend(resume_job(core, id, &mine));
            woken.extend(mine);
        }
    }
    for &n in queued {
        if core.nodes.get(n).power.status == PowerStatus::ResumeQueued && budget.take() {
            core.nodes.get_mut(n).power.status = PowerStatus::PoweringUp { since: now };
            woken.push(n);
        }
    }
    if woken.is_empty() {
        return;
    }
    core.power.resumed_recently += woken.len() as f64;
    for &n in &woken {
        let node = core.nodes.get_mut(n);
        node.not_responding = false;
        let (name, cpus) = (node.name.clone(), node.cpus);
        core.nodes.refresh(n);
        out.accounting(AcctRecord::NodeEvent {
            node: name,
            at: now,
            kind: NodeEventKind::PowerUp,
            reason: None,
            reason_uid: 0,
            cpus,
        });
        out.save(SaveHint::Node(n));
    }
    woken.sort_unstable();
    let hostlist = core.nodes.hostlist(&woken);
    out.power(PowerCommand::Resume {
        nodes: woken,
        file: ResumeFile {
            all_nodes_resume: hostlist.clone(),
            jobs,
        },
        hostlist,
    });
}

/// Powers down candidates within `SuspendRate`: they become POWERING_DOWN (`%`) and are not
/// usable until `SuspendTimeout`.
fn suspend(core: &mut Core, out: &mut impl Outbox, now: SimTime, candidates: &[NodeIdx]) {
    let mut budget = Budget::new(
        core.power.suspended_recently,
        core.power.settings.suspend_rate,
    );
    let idle_on_suspend = core.power.settings.idle_on_node_suspend;
    let mut sleeping = Vec::new();
    for &i in candidates {
        if !budget.take() {
            break;
        }
        let node = core.nodes.get_mut(i);
        if node.power.down_requested && node.drain {
            // power_down_asap drained it on the way.
            node.drain = false;
        }
        node.power.down_requested = false;
        node.power.status = PowerStatus::PoweringDown { since: now };
        node.not_responding = false;
        let mut back_up = None;
        if idle_on_suspend {
            node.drain = false;
            if node.base == NodeBase::Down {
                node.base = NodeBase::Up;
                node.reason = None;
                back_up = Some((node.name.clone(), node.cpus));
            }
        }
        core.nodes.refresh(i);
        if let Some((name, cpus)) = back_up {
            out.accounting(AcctRecord::NodeEvent {
                node: name,
                at: now,
                kind: NodeEventKind::Up,
                reason: None,
                reason_uid: 0,
                cpus,
            });
        }
        out.save(SaveHint::Node(i));
        sleeping.push(i);
    }
    if sleeping.is_empty() {
        return;
    }
    core.power.suspended_recently += sleeping.len() as f64;
    out.power(PowerCommand::Suspend {
        hostlist: core.nodes.hostlist(&sleeping),
        nodes: sleeping,
    });
}
