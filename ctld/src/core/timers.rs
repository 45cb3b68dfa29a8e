//! The periodic tick: node timeouts, time limits (and associations' used-up `GrpTRESMins`),
//! the SIGKILL after KillWait, the MinJobAge
//! purge, pending jobs past their `--deadline`, the gang timeslice when due, then a scheduling
//! pass. The runtime calls [`on_tick`] about once a second; tests call
//! it after moving simulated time.

use super::completion::SIGKILL;
use super::jobs::{Job, JobReason};
use super::kill;
use super::nodes::{self, NodeBase};
use super::outbox::{NodeCommand, Outbox, SaveHint};
use super::registration::{self, NOT_RESPONDING};
use super::sched::{self, PassStats};
use super::signal::JobPart;
use super::{Core, SimTime};
use sluice_vocab::FedJobId;
use sluice_vocab::JobState;

/// Runs every timer due at `now`, then one scheduling pass.
pub fn on_tick(core: &mut Core, out: &mut impl Outbox, now: SimTime) -> PassStats {
    super::ctld_scripts::restart_prologs(core, out);
    check_nodes(core, out, now);
    check_jobs(core, out, now);
    super::assoc::on_tick(core, out, now);
    super::qos::on_tick(core, out, now);
    purge(core, out, now);
    super::expiry::on_tick(core, out, now);
    super::gang::on_tick(core, out, now);
    super::priority::on_tick(core, now);
    let stats = sched::schedule(core, out, now);
    // After the pass, so nodes it allocated are resumed at once.
    super::power::on_power_tick(core, out, now);
    stats
}

/// Marks silent nodes not responding once they missed a heartbeat
/// ([`not_responding_after`]), and DOWN after SlurmdTimeout.
fn check_nodes(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    let timeout = core.cfg.slurmd_timeout;
    if timeout == 0 {
        return;
    }
    let mut down = Vec::new();
    for i in 0..core.nodes.nodes.len() {
        let n = &core.nodes.nodes[i];
        // Powered-down and booting nodes are silent by design (ResumeTimeout covers them).
        if !matches!(n.base, NodeBase::Up | NodeBase::Unknown) || n.power.silent() {
            continue;
        }
        let silent = now.since(n.last_heard);
        if silent >= timeout {
            down.push(nodes::idx(i));
        } else if silent >= not_responding_after(timeout) && !n.not_responding {
            core.nodes.nodes[i].not_responding = true;
            core.nodes.refresh(nodes::idx(i));
            out.save(SaveHint::Node(nodes::idx(i)));
            super::nonstop::node_changed(core, out, now, nodes::idx(i));
        }
    }
    for i in down {
        core.nodes.get_mut(i).not_responding = true;
        registration::set_node_down(core, out, now, i, NOT_RESPONDING);
    }
}

/// The controller itself did not run for `secs` seconds (stopped with SIGSTOP, or its host
/// froze): nothing a node sent in that time could be heard, so that time does not count as the
/// nodes' silence. Without this, waking up past SlurmdTimeout would set every node DOWN and
/// requeue or fail every running job, though the nodes and their jobs were fine (Slurm, too,
/// judges a node's silence from its previous ping round, not from the moment it wakes).
pub fn on_controller_stalled(core: &mut Core, now: SimTime, secs: u64) {
    for n in &mut core.nodes.nodes {
        n.last_heard = n.last_heard.plus(secs).min(now);
    }
}

/// Seconds of silence after which a node is shown not responding: a third of SlurmdTimeout
/// (Slurm's ping interval, also the nodes' heartbeat interval below 90 s) plus half of that
/// again, so a heartbeat arriving on time, or a little late, never makes a node flap to `*`.
pub fn not_responding_after(slurmd_timeout: u64) -> u64 {
    let ping = (slurmd_timeout / 3).max(1);
    ping + (ping / 2).max(1)
}

/// Time limits (SIGTERM, state TIMEOUT) and the SIGKILL KillWait later.
fn check_jobs(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    let mut timed_out = Vec::new();
    let mut to_kill = Vec::new();
    let mut to_warn = Vec::new();
    let mut to_mail = Vec::new();
    for id in &core.jobs.active {
        let Some(job) = core.jobs.map.get(id) else {
            continue;
        };
        if warning_due(job, now) {
            to_warn.push(*id);
        }
        if job.req.place.mail_type != 0 && job.state == JobState::Running {
            to_mail.push(*id);
        }
        if job.completing {
            if job.kill_at.is_some_and(|t| t <= now) {
                to_kill.push(*id);
            }
        } else if job.state == JobState::Running
            && job.deadline() <= now
            && !core.power.configuring.contains_key(id)
        {
            timed_out.push(*id);
        }
    }
    for id in to_warn {
        warn(core, out, id);
    }
    for id in to_mail {
        super::mail::time_shares(core, out, now, id);
    }
    for id in timed_out {
        kill::kill_job(core, out, now, id, JobState::Timeout, JobReason::TimeLimit);
    }
    for id in to_kill {
        if let Some(job) = core.jobs.map.get_mut(&id) {
            job.kill_at = None;
            out.node(NodeCommand::Signal {
                job: id,
                nodes: job.nodes.clone(),
                signal: SIGKILL,
            });
        }
        kill::settle_interactive(core, out, now, id);
    }
}

/// Whether `job`'s `--signal` is due at `now`: it runs, has a time limit, was not signalled
/// in this run, and its limit is at most `sig_time` seconds away.
pub(crate) fn warning_due(job: &Job, now: SimTime) -> bool {
    let Some(sig) = job.req.place.signal else {
        return false;
    };
    if job.signal_sent || job.completing || job.state != JobState::Running {
        return false;
    }
    let deadline = job.deadline();
    deadline != SimTime::NEVER && now.plus(u64::from(sig.before_secs)) >= deadline
}

/// Sends `id`'s `--signal`: to the batch shell alone with `B:`, else to each of its steps (not
/// the batch shell), as Slurm does.
fn warn(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let Some(sig) = job.req.place.signal else {
        return;
    };
    job.signal_sent = true;
    out.save(SaveHint::Job(id));
    if sig.batch_only {
        if job.runs_batch_script() {
            out.node(NodeCommand::SignalPart {
                job: id,
                nodes: job.nodes.first().copied().into_iter().collect(),
                part: JobPart::Batch,
                signal: sig.signal,
            });
        }
        return;
    }
    for &step in job.open_steps.keys() {
        out.node(NodeCommand::SignalPart {
            job: id,
            nodes: job.nodes.clone(),
            part: JobPart::Step(step),
            signal: sig.signal,
        });
    }
}

/// Drops jobs that finished at least MinJobAge ago.
fn purge(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    let age = core.cfg.min_job_age;
    while let Some(&(end, id)) = core.jobs.finished.first() {
        if end.plus(age) > now {
            break;
        }
        core.jobs.finished.pop_first();
        let Some(job) = core.jobs.map.remove(&id) else {
            continue;
        };
        core.jobs.dependents.remove(&id);
        super::het::purged(core, id, job.het);
        if let Some(a) = job.array {
            let gone = core
                .jobs
                .arrays
                .get(&a.job)
                .is_some_and(|m| m.tasks.iter().all(|t| !core.jobs.map.contains_key(&t.1)));
            if gone {
                core.jobs.arrays.remove(&a.job);
            }
        }
        out.save(SaveHint::JobPurged(id));
    }
}
