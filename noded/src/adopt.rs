//! Batch jobs that outlive a restart of the node daemon.
//!
//! Every started batch script leaves a launch record in the spool (`launches/<job>_<run>`, see
//! [`RunId`]: its process
//! group, launch count and supervisor's pid, written by the supervisor as soon as the script
//! runs) until its exit report is queued. A daemon starting
//! over finds the records of jobs whose processes still run, adopts them (they are listed as
//! running, can be signalled, and are watched until their process group is gone), so a node
//! daemon restart costs no job. The script's supervisor outlived the daemon too and leaves the
//! script's status in `launches/<job>_<run>.status`: that is the exit code reported. Only when the
//! supervisor itself was killed is the status lost; the end is then reported as exit code
//! [`UNKNOWN_EXIT_CODE`], and logged as unknown.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::jobs::Part;
use crate::node::{Node, unix_now};
use crate::outbox::{ExitReport, NodeScript};
use crate::spool::RunId;
use crate::supervise::Ended;
use crate::{job_scripts, launch_request, prolog};

/// The exit code reported for a job whose real status is lost (its supervisor was killed).
pub const UNKNOWN_EXIT_CODE: i32 = 1;
/// The suffix of a supervisor's status file, `launches/<job>_<run>.status`.
const STATUS_SUFFIX: &str = "status";
/// How often a gone script's status is looked for while its supervisor still runs.
const STATUS_POLL: Duration = Duration::from_millis(50);
/// How often an adopted job's process group is looked for.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// Where `run`'s launch record is (written by its supervisor once the script runs).
pub fn record_path(node: &Node, run: RunId) -> PathBuf {
    node.spool.launches_dir().join(run.stem())
}

/// Where `run`'s supervisor leaves the script's status.
pub fn status_path(node: &Node, run: RunId) -> PathBuf {
    node.spool
        .launches_dir()
        .join(format!("{}.{STATUS_SUFFIX}", run.stem()))
}

/// Drops `run`'s launch record (and its status, kept request and prolog mark) once its end
/// is queued; a newer run of the same job keeps its own.
pub async fn forget_launch(node: &Node, run: RunId) {
    let job = run.job;
    let kept = [
        record_path(node, run),
        status_path(node, run),
        launch_request::request_path(node, run),
        launch_request::prolog_path(node, run),
    ];
    for path in kept {
        if let Err(e) = tokio::fs::remove_file(&path).await
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(job, "cannot remove {}: {e}", path.display());
        }
    }
}

/// Adopts the still running jobs of an earlier run and reports the ones that ended meanwhile.
pub async fn adopt_orphans(node: &Arc<Node>) {
    let Ok(mut entries) = tokio::fs::read_dir(node.spool.launches_dir()).await else {
        return;
    };
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.contains('.') {
            // A status, kept request or prolog mark is read with its record (or, without one,
            // by `launch_request::resume_interrupted`); `.tmp` files are half written.
            continue;
        }
        let text = tokio::fs::read_to_string(entry.path())
            .await
            .unwrap_or_default();
        let (
            Some(run),
            Some(Record {
                pgid,
                restart,
                stepd,
            }),
        ) = (RunId::parse_stem(&name), parse_record(&text))
        else {
            tracing::warn!("{}: not a launch record, removed", entry.path().display());
            let _ = tokio::fs::remove_file(entry.path()).await;
            continue;
        };
        let job = run.job;
        if restart != run.restart {
            tracing::warn!(
                "{}: names run {} but holds run {restart}: removed",
                entry.path().display(),
                run.restart
            );
            let _ = tokio::fs::remove_file(entry.path()).await;
            continue;
        }
        if node.outbox.has(job, restart) {
            forget_launch(node, run).await;
        } else if group_alive(pgid).await {
            tracing::info!(
                job,
                pgid,
                "adopted a job started before this daemon's restart"
            );
            node.jobs.claim_batch(job, restart);
            node.jobs.add_group(job, Part::Batch, pgid);
            // Its steps here run no prolog of their own; its end runs the epilog.
            if let Some(req) = launch_request::load(node, run) {
                let env = prolog::script_env(&req, node.facts(), prolog::Context::Prolog);
                node.here.first(job, restart, env);
            }
            tokio::spawn(watch(Arc::clone(node), run, pgid, stepd));
        } else {
            // Listed as running until its end (after its epilog) is queued.
            node.jobs.claim_batch(job, restart);
            let node = Arc::clone(node);
            tokio::spawn(async move {
                let status = final_status(&node, run, stepd).await;
                ended(&node, run, status).await;
                node.jobs.finish_batch(job, restart);
                node.spool.remove_job_dir(run).await;
            });
        }
    }
}

/// A launch record: the script's process group, its launch count and its supervisor's pid
/// (0 in records written before supervisors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    pgid: i32,
    restart: u32,
    stepd: u32,
}

fn parse_record(text: &str) -> Option<Record> {
    let mut fields = text.split_whitespace();
    let pgid = fields.next()?.parse().ok()?;
    let restart = fields.next()?.parse().ok()?;
    let stepd = fields.next().map_or(Some(0), |s| s.parse().ok())?;
    fields.next().is_none().then_some(Record {
        pgid,
        restart,
        stepd,
    })
}

async fn watch(node: Arc<Node>, run: RunId, pgid: i32, stepd: u32) {
    while group_alive(pgid).await {
        tokio::time::sleep(WATCH_INTERVAL).await;
    }
    let status = final_status(&node, run, stepd).await;
    node.here.forget(run.job);
    ended(&node, run, status).await;
    node.jobs.finish_batch(run.job, run.restart);
    node.spool.remove_job_dir(run).await;
}

/// The status `job`'s supervisor leaves once it has reaped the script; `None` when the
/// supervisor is gone without leaving one.
async fn final_status(node: &Node, run: RunId, stepd: u32) -> Option<Ended> {
    let path = status_path(node, run);
    loop {
        // Looked for before the liveness check: a supervisor writes its status, then exits.
        let alive = stepd_alive(stepd);
        if let Some(status) = Ended::read(&path) {
            return Some(status);
        }
        if !alive {
            return None;
        }
        tokio::time::sleep(STATUS_POLL).await;
    }
}

/// Whether supervisor `pid` still runs (a zombie does not: it wrote all it will).
fn stepd_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    pid > 0 && stat_group(&stat).is_some_and(|(state, _)| !matches!(state, 'Z' | 'X'))
}

async fn ended(node: &Node, run: RunId, status: Option<Ended>) {
    let RunId { job, restart } = run;
    let Ended { exit_code, signal } = match status {
        Some(status) => {
            tracing::info!(
                job,
                exit_code = status.exit_code,
                signal = status.signal,
                "ended while the node daemon was restarting"
            );
            status
        }
        None => {
            tracing::warn!(
                job,
                "ended while the node daemon was restarting and its supervisor is gone; its \
                 exit status is unknown, reported as exit code {UNKNOWN_EXIT_CODE}"
            );
            Ended {
                exit_code: UNKNOWN_EXIT_CODE,
                signal: 0,
            }
        }
    };
    let epilog_ok = run_epilog(node, run).await;
    let report = ExitReport {
        job_id: job,
        restart,
        exit_code,
        signal,
        at: unix_now(),
        // Its processes were not sampled by this daemon: usage unknown.
        usage: None,
        failed: (!epilog_ok).then_some(NodeScript::Epilog),
        whole_job: false,
        prolog_done: false,
    };
    report_end(node, report).await;
}

/// Runs `Epilog` for an adopted job with the environment of its kept launch request, as the
/// daemon that started it would have; `false` when it failed. A job launched before requests
/// were kept runs none (logged).
async fn run_epilog(node: &Node, run: RunId) -> bool {
    let job = run.job;
    if node.config.prolog.epilog.is_none() {
        return true;
    }
    let Some(req) = launch_request::load(node, run) else {
        tracing::warn!(
            job,
            "no launch request kept for this job: its epilog cannot run"
        );
        return true;
    };
    let Some(env) = job_scripts::epilog_env(node, &req) else {
        return true;
    };
    job_scripts::run_epilog(node, job, &env).await
}

/// Queues `report`, the end of a batch run, forgets the run, and once the report is kept drops
/// the run's launch record.
pub async fn report_end(node: &Node, report: ExitReport) {
    let (job, restart) = (report.job_id, report.restart);
    let kept = node.outbox.push(report).await;
    // Listed as running no more: its end is queued (and so still told at registration).
    node.jobs.finish_batch(job, restart);
    // A report kept in memory only (the spool is full) leaves the launch record, so a
    // restarted daemon still finds the run and reports it.
    if kept {
        forget_launch(node, RunId::new(job, restart)).await;
    }
}

/// Whether any live (not zombie) process is in process group `pgid`, from `/proc`.
async fn group_alive(pgid: i32) -> bool {
    tokio::task::spawn_blocking(move || scan_group(Path::new("/proc"), pgid))
        .await
        .unwrap_or(false)
}

/// Whether any live (not zombie) process under `proc_root` is in process group `pgid`.
pub fn scan_group(proc_root: &Path, pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.file_name().to_string_lossy().parse::<u32>().is_ok()
            && std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|stat| stat_group(&stat))
                .is_some_and(|(state, group)| group == pgid && !matches!(state, 'Z' | 'X'))
    })
}

/// State and process group of a `/proc/<pid>/stat` line (the name may hold spaces and `)`).
fn stat_group(stat: &str) -> Option<(char, i32)> {
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    Some((state, fields.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_state_and_group() {
        assert_eq!(stat_group("12 (a) b)) S 1 77 77 0"), Some(('S', 77)));
        assert_eq!(stat_group("12 (x) Z 1 5 5"), Some(('Z', 5)));
        assert_eq!(stat_group("garbage"), None);
        let record = |pgid, restart, stepd| Record {
            pgid,
            restart,
            stepd,
        };
        assert_eq!(parse_record("123 2 99\n"), Some(record(123, 2, 99)));
        assert_eq!(
            parse_record("123 2\n"),
            Some(record(123, 2, 0)),
            "before supervisors"
        );
        assert_eq!(parse_record("123"), None);
        assert_eq!(parse_record("123 2 x"), None);
        assert_eq!(parse_record("1 2 3 4"), None);
    }

    #[test]
    fn this_process_group_is_alive_and_a_free_one_is_not() {
        let own = nix::unistd::getpgrp().as_raw();
        assert!(scan_group(Path::new("/proc"), own));
        assert!(!scan_group(Path::new("/proc"), i32::MAX));
    }
}
