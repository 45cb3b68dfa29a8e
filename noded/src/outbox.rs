//! Exit reports the controller has not acknowledged yet. Each is a small file in the spool's
//! `exits/` directory, written (through a rename) before the job is forgotten and removed only
//! after the controller's `Ack`, so neither a controller outage nor a restart of this daemon
//! loses one. The controller must treat a repeated report as already applied.
//!
//! A report is one line `job restart exit_code signal at`, followed by a `usage` line with the
//! batch step's usage when it was measured (see [`crate::acct`]), and a `failed prolog` or
//! `failed epilog` line when this node's prolog or epilog failed; `whole_job` marks a report
//! about the job on this node rather than a run of its script, and `prolog_done` one telling
//! that this node's allocation prolog succeeded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sluice_vocab::jobacct::{StepUsage, TresMap, UsageSide};
use tokio::sync::Notify;

use crate::error::NodedError;
use sluice_wire::daemon::fault::FaultEpisodes;

/// How a batch job ended on this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitReport {
    /// The job.
    pub job_id: u32,
    /// Which launch of it ended (its requeue count).
    pub restart: u32,
    /// The script's exit code (0 when a signal ended it).
    pub exit_code: i32,
    /// The signal that ended it, 0 if none.
    pub signal: i32,
    /// When it ended, unix seconds.
    pub at: i64,
    /// What the batch step used, when measured.
    pub usage: Option<StepUsage>,
    /// This node's `Prolog` (the script never ran) or `Epilog` failed.
    pub failed: Option<NodeScript>,
    /// About the job on this node as a whole, not a run of its batch script (a failed prolog
    /// or epilog on a node that runs only its steps).
    pub whole_job: bool,
    /// With `whole_job`: not an end but this node's allocation prolog's success
    /// (`PrologFlags=Alloc`), which the batch script waits for.
    pub prolog_done: bool,
}

/// A node program whose failure goes with an exit report (or a kill that failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeScript {
    /// `Prolog`.
    Prolog,
    /// `Epilog`.
    Epilog,
    /// The job's processes outlived their SIGKILL (`UnkillableStepTimeout`).
    KillTask,
}

impl NodeScript {
    fn name(self) -> &'static str {
        match self {
            NodeScript::Prolog => "prolog",
            NodeScript::Epilog => "epilog",
            NodeScript::KillTask => "killtask",
        }
    }
}

impl ExitReport {
    fn encode(&self) -> String {
        let mut text = format!(
            "{} {} {} {} {}\n",
            self.job_id, self.restart, self.exit_code, self.signal, self.at
        );
        if let Some(u) = &self.usage {
            text.push_str(&encode_usage(u));
        }
        if let Some(script) = self.failed {
            text.push_str(&format!("failed {}\n", script.name()));
        }
        if self.whole_job {
            text.push_str("whole_job\n");
        }
        if self.prolog_done {
            text.push_str("prolog_done\n");
        }
        text
    }

    fn decode(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        let mut f = lines.next()?.split_whitespace();
        let mut report = Self {
            job_id: f.next()?.parse().ok()?,
            restart: f.next()?.parse().ok()?,
            exit_code: f.next()?.parse().ok()?,
            signal: f.next()?.parse().ok()?,
            at: f.next()?.parse().ok()?,
            usage: None,
            failed: None,
            whole_job: false,
            prolog_done: false,
        };
        if f.next().is_some() {
            return None;
        }
        for line in lines {
            if line == "whole_job" && !report.whole_job {
                report.whole_job = true;
                continue;
            }
            if line == "prolog_done" && !report.prolog_done {
                report.prolog_done = true;
                continue;
            }
            match line.strip_prefix("failed ") {
                Some("prolog") if report.failed.is_none() => {
                    report.failed = Some(NodeScript::Prolog)
                }
                Some("epilog") if report.failed.is_none() => {
                    report.failed = Some(NodeScript::Epilog)
                }
                Some("killtask") if report.failed.is_none() => {
                    report.failed = Some(NodeScript::KillTask)
                }
                Some(_) => return None,
                None if report.usage.is_none() && report.failed.is_none() => {
                    report.usage = Some(decode_usage(line)?)
                }
                None => return None,
            }
        }
        Some(report)
    }
}

/// `usage tasks user_ms sys_ms` and the twelve TRES maps (in, then out: tot max max_task
/// max_node min ave), `-` for an empty one.
fn encode_usage(u: &StepUsage) -> String {
    let mut text = format!("usage {} {} {}", u.tasks, u.user_cpu_ms, u.sys_cpu_ms);
    for side in [&u.usage_in, &u.usage_out] {
        for map in [
            &side.tot,
            &side.max,
            &side.max_task,
            &side.max_node,
            &side.min,
            &side.ave,
        ] {
            let m = map.to_string();
            text.push(' ');
            text.push_str(if m.is_empty() { "-" } else { &m });
        }
    }
    text.push('\n');
    text
}

fn decode_usage(line: &str) -> Option<StepUsage> {
    let mut f = line.split_whitespace();
    (f.next()? == "usage").then_some(())?;
    let (tasks, user_cpu_ms, sys_cpu_ms) = (
        f.next()?.parse().ok()?,
        f.next()?.parse().ok()?,
        f.next()?.parse().ok()?,
    );
    let mut map = || match f.next()? {
        "-" => Some(TresMap::default()),
        m => TresMap::parse(m),
    };
    let mut side = || {
        Some(UsageSide {
            tot: map()?,
            max: map()?,
            max_task: map()?,
            max_node: map()?,
            min: map()?,
            ave: map()?,
            // Which task and node had the least: live only (sstat), not shipped.
            min_task: TresMap::default(),
            min_node: TresMap::default(),
        })
    };
    let (usage_in, usage_out) = (side()?, side()?);
    f.next().is_none().then_some(StepUsage {
        tasks,
        user_cpu_ms,
        sys_cpu_ms,
        usage_in,
        usage_out,
    })
}

/// The persisted queue of unacknowledged exit reports, oldest first.
#[derive(Debug)]
pub struct ExitOutbox {
    dir: PathBuf,
    pending: Mutex<BTreeMap<String, ExitReport>>,
    seq: AtomicU64,
    notify: Notify,
    /// Reports the spool could not take, logged once per episode.
    faults: Mutex<FaultEpisodes>,
    /// Whether a report is fsynced before its rename (`SluiceStateSync=full`).
    sync: bool,
}

impl ExitOutbox {
    /// Opens `dir` (creating it) and loads the reports left by an earlier run.
    pub fn open(dir: &Path) -> Result<Self, NodedError> {
        let err = |e| NodedError::file(dir, e);
        std::fs::create_dir_all(dir).map_err(err)?;
        let mut pending = BTreeMap::new();
        for entry in std::fs::read_dir(dir).map_err(err)? {
            let entry = entry.map_err(err)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                let _ = std::fs::remove_file(entry.path());
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            match ExitReport::decode(&text) {
                Some(report) => {
                    pending.insert(name, report);
                }
                None => tracing::warn!("{}: not an exit report, ignored", entry.path().display()),
            }
        }
        let next = pending
            .keys()
            .filter_map(|k| k.split('-').next()?.parse::<u64>().ok())
            .max()
            .map_or(0, |m| m + 1);
        Ok(Self {
            dir: dir.to_path_buf(),
            pending: Mutex::new(pending),
            seq: AtomicU64::new(next),
            notify: Notify::new(),
            faults: Mutex::new(FaultEpisodes::new("exit report spool")),
            sync: false,
        })
    }

    /// Fsyncs each report before renaming it into place (`SluiceStateSync=full`), so it
    /// survives power loss, not only a crash of this daemon.
    pub fn synced(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    fn with<R>(&self, f: impl FnOnce(&mut BTreeMap<String, ExitReport>) -> R) -> R {
        f(&mut self.pending.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Queues `report` for sending, persisted first. Returns whether it was persisted: a
    /// report the spool cannot take now (disk full, read-only) is kept in memory and sent all
    /// the same, and the caller keeps what would let a restarted daemon report it again (the
    /// run's launch record). Failures are logged once per episode.
    pub async fn push(&self, report: ExitReport) -> bool {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let name = format!("{seq:012}-{}", report.job_id);
        let saved = self.persist(&name, &report).await;
        let now = std::time::Instant::now();
        let mut faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        match &saved {
            Ok(()) => {
                if let Some(line) = faults.succeeded(now) {
                    tracing::info!("{line}");
                }
            }
            Err(e) => {
                if let Some(line) = faults.failed(&e.to_string(), now) {
                    tracing::error!("{line}; exit reports are kept in memory meanwhile");
                }
            }
        }
        drop(faults);
        self.with(|p| p.insert(name, report));
        self.notify.notify_one();
        saved.is_ok()
    }

    async fn persist(&self, name: &str, report: &ExitReport) -> Result<(), NodedError> {
        let path = self.dir.join(name);
        let tmp = self.dir.join(format!("{name}.tmp"));
        if let Err(e) = write_file(&tmp, report.encode().as_bytes(), self.sync).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(NodedError::file(&tmp, e));
        }
        tokio::fs::rename(&tmp, &path)
            .await
            .map_err(|e| NodedError::file(&path, e))
    }

    /// The queued reports with their keys, oldest first.
    pub fn pending(&self) -> Vec<(String, ExitReport)> {
        self.with(|p| p.iter().map(|(k, r)| (k.clone(), r.clone())).collect())
    }

    /// Whether a report for this launch of `job` waits.
    pub fn has(&self, job: u32, restart: u32) -> bool {
        self.with(|p| {
            p.values()
                .any(|r| r.job_id == job && r.restart == restart && !r.whole_job)
        })
    }

    /// The runs (job, run) with a report of their batch script waiting.
    pub fn pending_runs(&self) -> Vec<(u32, u32)> {
        self.with(|p| {
            p.values()
                .filter(|r| !r.whole_job)
                .map(|r| (r.job_id, r.restart))
                .collect()
        })
    }

    /// The jobs with a report of a batch run waiting.
    pub fn pending_jobs(&self) -> Vec<u32> {
        self.with(|p| {
            p.values()
                .filter(|r| !r.whole_job)
                .map(|r| r.job_id)
                .collect()
        })
    }

    /// Drops the report `key` once the controller acknowledged it.
    pub async fn ack(&self, key: &str) {
        let path = self.dir.join(key);
        if let Err(e) = tokio::fs::remove_file(&path).await
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove {}: {e}", path.display());
        }
        self.with(|p| p.remove(key));
    }

    /// Wakes the sender, e.g. when the controller is back and waiting reports may go now.
    pub fn kick(&self) {
        self.notify.notify_one();
    }

    /// Completes when a report was queued since the last call (or is queued now).
    pub async fn queued(&self) {
        self.notify.notified().await;
    }
}

/// Writes `bytes` to a new file at `path`, fsynced when `sync`.
async fn write_file(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::File::create(path).await?;
    file.write_all(bytes).await?;
    if sync {
        file.sync_all().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(job_id: u32, exit_code: i32) -> ExitReport {
        ExitReport {
            job_id,
            restart: 0,
            exit_code,
            signal: 0,
            at: 1_700_000_000,
            usage: None,
            failed: None,
            whole_job: false,
            prolog_done: false,
        }
    }

    #[tokio::test]
    async fn a_report_the_spool_cannot_take_is_sent_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let exits = dir.path().join("exits");
        let outbox = ExitOutbox::open(&exits).unwrap();
        // The spool fails (as on a full or read-only disk): its directory is gone.
        std::fs::remove_dir(&exits).unwrap();
        assert!(!outbox.push(report(7, 3)).await, "not persisted");
        assert!(outbox.has(7, 0), "kept for sending");
        let pending = outbox.pending();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].1.exit_code, 3);
        outbox.ack(&pending[0].0).await;
        assert!(outbox.pending().is_empty());
        // The spool is back: reports are persisted again.
        std::fs::create_dir(&exits).unwrap();
        assert!(outbox.push(report(8, 0)).await);
        assert_eq!(std::fs::read_dir(&exits).unwrap().count(), 1);
    }

    #[tokio::test]
    async fn reports_survive_a_reopen_in_order_until_acknowledged() {
        // Fsynced (`SluiceStateSync=full`) or only renamed into place (`normal`).
        for sync in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let outbox = ExitOutbox::open(dir.path()).unwrap().synced(sync);
            assert!(outbox.push(report(9, 1)).await);
            assert!(outbox.push(report(3, 0)).await);
            assert!(outbox.has(9, 0) && !outbox.has(9, 1));
            drop(outbox);
            let outbox = ExitOutbox::open(dir.path()).unwrap().synced(sync);
            let pending = outbox.pending();
            let jobs: Vec<u32> = pending.iter().map(|(_, r)| r.job_id).collect();
            assert_eq!(jobs, vec![9, 3], "oldest first (sync {sync})");
            assert_eq!(pending[0].1, report(9, 1));
            outbox.ack(&pending[0].0).await;
            assert!(outbox.push(report(4, 2)).await);
            let outbox = ExitOutbox::open(dir.path()).unwrap();
            assert_eq!(outbox.pending_jobs(), vec![3, 4]);
            let names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
        }
    }

    #[test]
    fn malformed_reports_do_not_decode() {
        assert_eq!(
            ExitReport::decode("1 0 2 0 5\n"),
            Some(ExitReport {
                job_id: 1,
                restart: 0,
                exit_code: 2,
                signal: 0,
                at: 5,
                usage: None,
                failed: None,
                whole_job: false,
                prolog_done: false,
            })
        );
        assert_eq!(
            ExitReport::decode("1 0 2 0 5\nfailed epilog\nwhole_job\n").map(|r| r.whole_job),
            Some(true)
        );
        assert_eq!(
            ExitReport::decode("1 0 2 0 5\nfailed prolog\n").and_then(|r| r.failed),
            Some(NodeScript::Prolog)
        );
        let killed = ExitReport {
            failed: Some(NodeScript::KillTask),
            whole_job: true,
            prolog_done: false,
            ..ExitReport::decode("1 0 0 0 5\n").unwrap()
        };
        assert_eq!(ExitReport::decode(&killed.encode()), Some(killed));
        assert_eq!(ExitReport::decode("1 0 2 0 5\nfailed lunch"), None);
        assert_eq!(
            ExitReport::decode("1 0 2 0 5\nfailed epilog\nfailed prolog"),
            None
        );
        assert_eq!(ExitReport::decode("1 0 2 0"), None);
        assert_eq!(ExitReport::decode("1 0 2 0 5 6"), None);
        assert_eq!(ExitReport::decode("x 0 2 0 5"), None);
        assert_eq!(ExitReport::decode("1 0 2 0 5\nusage 1 2"), None);
    }

    #[tokio::test]
    async fn the_batch_steps_usage_is_kept_with_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = ExitOutbox::open(dir.path()).unwrap();
        let task = sluice_vocab::jobacct::TaskUsage {
            user_ms: 1234,
            sys_ms: 5,
            rss: 4096,
            ..Default::default()
        };
        let with_usage = ExitReport {
            usage: StepUsage::from_tasks(&[task]),
            failed: Some(NodeScript::Epilog),
            ..report(5, 0)
        };
        assert!(outbox.push(with_usage.clone()).await);
        let outbox = ExitOutbox::open(dir.path()).unwrap();
        // Where the smallest values were is for sstat's live view only: not kept.
        let mut kept = with_usage;
        if let Some(u) = &mut kept.usage {
            for side in [&mut u.usage_in, &mut u.usage_out] {
                side.min_task = Default::default();
                side.min_node = Default::default();
            }
        }
        assert_eq!(outbox.pending()[0].1, kept);
    }
}
