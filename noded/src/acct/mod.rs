//! Job accounting (Slurm's `jobacct_gather/linux`): while a batch script or an srun task runs,
//! its process group is sampled from `/proc` once at the start, 200 ms later, then every
//! `JobAcctGatherFrequency` seconds, and once more when its top process has exited but is not
//! yet reaped, so the CPU time of the script and of every child it waited for is counted.
//!
//! Limits: processes are found by process group (each task runs in a group of its own), so a
//! process that leaves it (`setsid`, `setpgid`) is not measured, and one that joins it from
//! another group is seen up to [`proc::GROUP_FRESH`] later; memory is the largest sum of
//! resident and virtual sizes seen at a sample, so a peak between samples is missed; CPU time
//! of a process that ended between samples without being waited for by a process of the task
//! is lost (Slurm's gatherer has the same limits). A batch job adopted after a restart of this
//! daemon was not sampled by it and is reported without usage.

pub mod gather;
pub mod live;
pub mod proc;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use sluice_vocab::cluster_conf::JobAcctGather;
use sluice_vocab::jobacct::TaskUsage;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;

use gather::{TaskGather, Units};

/// When the second sample of a task is taken (then one every `JobAcctGatherFrequency`).
const EARLY_SAMPLE: Duration = Duration::from_millis(200);

/// The sampling of a step's tasks: the node's (`JobAcctGatherType`,
/// `JobAcctGatherFrequency`), at the step's own `--acctg-freq=task=N` interval when it has one.
pub fn for_step(node: JobAcctGather, task_secs: Option<u32>) -> JobAcctGather {
    JobAcctGather {
        frequency: task_secs.unwrap_or(node.frequency),
        ..node
    }
}

/// Samples one task's process group until [`Tracker::finish`].
#[derive(Debug)]
pub struct Tracker {
    gather: Arc<Mutex<TaskGather>>,
    pgid: i32,
    ticker: Option<JoinHandle<()>>,
}

impl Tracker {
    /// Starts sampling process group `pgid`, task `task` on the step's node `node`; `None`
    /// when gathering is off (`jobacct_gather/none`) or there is no group.
    pub fn start(conf: &JobAcctGather, pgid: i32, task: u32, node: u32) -> Option<Self> {
        if !conf.enabled || pgid <= 1 {
            return None;
        }
        let gather = Arc::new(Mutex::new(TaskGather::new(task, node, Units::host())));
        sample(&gather, pgid);
        let ticker = (conf.frequency > 0).then(|| {
            // Weak, so the tracker alone keeps the usage alive (see `live`).
            let gather = Arc::downgrade(&gather);
            let every = Duration::from_secs(u64::from(conf.frequency));
            tokio::spawn(async move {
                // The sample at the start is taken as the task execs, before its program is
                // mapped; one more soon after sees it running, so a task shorter than the
                // period still has its memory counted.
                let first = EARLY_SAMPLE.min(every);
                let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + first, every);
                loop {
                    tick.tick().await;
                    let Some(gather) = gather.upgrade() else {
                        return;
                    };
                    sample(&gather, pgid);
                }
            })
        });
        Some(Self {
            gather,
            pgid,
            ticker,
        })
    }

    /// A reference to the usage gathered so far that does not keep it alive (see [`live`]).
    pub fn watch(&self) -> Weak<Mutex<TaskGather>> {
        Arc::downgrade(&self.gather)
    }

    /// Stops the periodic samples, takes the last one and returns the task's usage. Call it
    /// after [`exited`] and before reaping the top process.
    pub fn finish(self) -> TaskUsage {
        if let Some(t) = &self.ticker {
            t.abort();
        }
        sample(&self.gather, self.pgid);
        lock(&self.gather).usage()
    }
}

fn lock(g: &Mutex<TaskGather>) -> std::sync::MutexGuard<'_, TaskGather> {
    g.lock().unwrap_or_else(|p| p.into_inner())
}

fn sample(gather: &Mutex<TaskGather>, pgid: i32) {
    let procs = proc::Scanner::host().scan(&HashSet::from([pgid]), std::time::Instant::now());
    lock(gather).sample(&procs);
}

/// Completes once child `pid` has exited, without reaping it, so its final counters can
/// still be read from `/proc` (a zombie keeps its CPU times). Returns at once for a pid that
/// is not this daemon's waitable child. Woken by `SIGCHLD` (no thread blocks per task).
pub async fn exited(pid: i32) {
    if pid <= 1 {
        return;
    }
    let mut sigchld = match signal(SignalKind::child()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(pid, "cannot watch SIGCHLD, final sample skipped: {e}");
            return;
        }
    };
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
    loop {
        // Checked after subscribing, so an exit just before is not missed.
        match waitid(Id::Pid(Pid::from_raw(pid)), flags) {
            Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
            _ => return,
        }
        if sigchld.recv().await.is_none() {
            return;
        }
    }
}

#[cfg(test)]
mod tests;
