//! Processes that outlive their SIGKILL (Slurm's `UnkillableStepTimeout`). Once the controller
//! ends a job here (`Terminate`), its process groups are watched: SIGKILL is sent again while
//! any of their processes lives, and one still alive `UnkillableStepTimeout` seconds after the
//! first SIGKILL (stuck in the kernel: uninterruptible I/O, a frozen cgroup) makes this node
//! report `Kill task failed` for the job: the controller drains the node, as Slurm does, and
//! ends the job if its end waited for these processes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::jobs::signal_group;
use crate::node::{Node, unix_now};
use crate::outbox::{ExitReport, NodeScript};
use nix::sys::signal::Signal;

/// How often a killed job's process groups are looked at.
const POLL: Duration = Duration::from_secs(1);

/// What a look at a killed job's processes decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// None is left: the kill worked.
    Gone,
    /// Some live on, within the timeout: kill again and look later.
    Waiting,
    /// Some outlived the timeout: the kill failed.
    Unkillable,
}

/// The clock of one kill: when SIGKILL was first sent and how long processes may outlive it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KillClock {
    /// When the first SIGKILL went out.
    pub killed_at: Instant,
    /// `UnkillableStepTimeout`.
    pub timeout: Duration,
}

impl KillClock {
    /// The verdict at `now`, with processes `alive` or not.
    pub fn verdict(&self, now: Instant, alive: bool) -> Verdict {
        if !alive {
            Verdict::Gone
        } else if now.saturating_duration_since(self.killed_at) >= self.timeout {
            Verdict::Unkillable
        } else {
            Verdict::Waiting
        }
    }
}

/// The jobs being watched after their kill, so a repeated `Terminate` starts no second watch.
#[derive(Debug, Default)]
pub struct Watching(Mutex<HashSet<u32>>);

impl Watching {
    fn claim(&self, job: u32) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(job)
    }

    fn release(&self, job: u32) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&job);
    }
}

/// Watches `job`'s process groups after its SIGKILL (sent just now) until they are gone, or
/// reports `Kill task failed` once they outlived `UnkillableStepTimeout`.
pub fn watch(node: &Arc<Node>, job: u32) {
    if !node.kill_watch.claim(job) {
        return;
    }
    let clock = KillClock {
        killed_at: Instant::now(),
        timeout: Duration::from_secs(u64::from(node.config.unkillable_secs)),
    };
    // Only the groups killed now: a requeued run of the job launched here meanwhile is not
    // this kill's business.
    let killed: HashSet<i32> = node.jobs.groups(job).into_iter().collect();
    let node = Arc::clone(node);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(POLL).await;
            let groups: Vec<i32> = node
                .jobs
                .groups(job)
                .into_iter()
                .filter(|g| killed.contains(g))
                .collect();
            let alive = any_alive(groups.clone()).await;
            match clock.verdict(Instant::now(), alive) {
                Verdict::Gone => break,
                Verdict::Waiting => {
                    for pgid in groups {
                        signal_group(pgid, Some(Signal::SIGKILL));
                    }
                }
                Verdict::Unkillable => {
                    tracing::error!(
                        job,
                        timeout = node.config.unkillable_secs,
                        "processes of the job survived SIGKILL past UnkillableStepTimeout: Kill task failed"
                    );
                    report(&node, job).await;
                    break;
                }
            }
        }
        node.kill_watch.release(job);
    });
}

/// Whether any process of `groups` lives (a zombie does not).
async fn any_alive(groups: Vec<i32>) -> bool {
    if groups.is_empty() {
        return false;
    }
    tokio::task::spawn_blocking(move || {
        groups
            .iter()
            .any(|&g| crate::adopt::scan_group(std::path::Path::new("/proc"), g))
    })
    .await
    .unwrap_or(false)
}

async fn report(node: &Node, job: u32) {
    let report = ExitReport {
        job_id: job,
        restart: 0,
        exit_code: 0,
        signal: 0,
        at: unix_now(),
        usage: None,
        failed: Some(NodeScript::KillTask),
        whole_job: true,
        prolog_done: false,
    };
    node.outbox.push(report).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_outliving_the_timeout_are_unkillable() {
        let start = Instant::now();
        let clock = KillClock {
            killed_at: start,
            timeout: Duration::from_secs(60),
        };
        let at = |secs| start + Duration::from_secs(secs);
        assert_eq!(clock.verdict(at(1), true), Verdict::Waiting);
        assert_eq!(clock.verdict(at(59), true), Verdict::Waiting);
        assert_eq!(clock.verdict(at(60), true), Verdict::Unkillable);
        assert_eq!(clock.verdict(at(61), false), Verdict::Gone, "gone at last");
        assert_eq!(clock.verdict(at(0), false), Verdict::Gone);
    }

    #[test]
    fn a_job_is_watched_once_at_a_time() {
        let w = Watching::default();
        assert!(w.claim(3));
        assert!(!w.claim(3));
        w.release(3);
        assert!(w.claim(3));
    }
}
