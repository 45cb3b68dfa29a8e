//! A batch launch kept in the spool (`launches/<job>_<run>.request`) from the moment it is accepted
//! until its end is queued, so a restart of the node daemon loses neither the launch nor what
//! its end needs:
//! - a daemon killed while the launch's `Prolog` ran (no script started, so no launch record)
//!   finds the request again, kills the interrupted prolog (its process group is kept in
//!   `launches/<job>_<run>.prolog` while it runs) and launches the job again, prolog first;
//! - an adopted job (see [`crate::adopt`]) runs its `Epilog` with the environment of its
//!   launch once it ends, as a job this daemon started does.

use std::path::PathBuf;
use std::sync::Arc;

use nix::sys::signal::Signal;
use prost::Message;
use sluice_wire::proto::LaunchBatchRequest;

use crate::jobs::signal_group;
use crate::node::Node;
use crate::spool::RunId;

/// The suffix of a kept launch request, `launches/<job>_<run>.request`.
pub const REQUEST_SUFFIX: &str = "request";
/// The suffix of a running prolog's process group, `launches/<job>_<run>.prolog`.
pub const PROLOG_SUFFIX: &str = "prolog";

/// Where `job`'s launch request is kept.
pub fn request_path(node: &Node, run: RunId) -> PathBuf {
    node.spool
        .launches_dir()
        .join(format!("{}.{REQUEST_SUFFIX}", run.stem()))
}

/// Where the process group of `job`'s running prolog is kept.
pub fn prolog_path(node: &Node, run: RunId) -> PathBuf {
    node.spool
        .launches_dir()
        .join(format!("{}.{PROLOG_SUFFIX}", run.stem()))
}

/// Keeps `req` in the spool (renamed into place, fsynced first under `SluiceStateSync=full`).
/// A spool that cannot take it is logged: the launch goes on, only a restart of the daemon
/// would not find it.
pub async fn save(node: &Node, req: &LaunchBatchRequest) {
    let path = request_path(node, RunId::new(req.job_id, req.restart_count));
    let bytes = req.encode_to_vec();
    let target = path.clone();
    let sync = node.config.fsync();
    let written = tokio::task::spawn_blocking(move || {
        sluice_wire::daemon::replace_file(&target, bytes, sync).map_err(std::io::Error::other)
    })
    .await;
    if let Err(e) = written.map_err(std::io::Error::other).and_then(|r| r) {
        tracing::warn!(
            job = req.job_id,
            "cannot keep the launch request {}: {e}",
            path.display()
        );
    }
}

/// The launch request kept for `job`, if any (one that does not decode is `None`).
pub fn load(node: &Node, run: RunId) -> Option<LaunchBatchRequest> {
    let job = run.job;
    let bytes = std::fs::read(request_path(node, run)).ok()?;
    match LaunchBatchRequest::decode(bytes.as_slice()) {
        Ok(req) if req.job_id == job && req.restart_count == run.restart => Some(req),
        _ => {
            tracing::warn!(job, "the kept launch request does not decode: ignored");
            None
        }
    }
}

/// Records that `job`'s prolog runs in process group `pgid` (`None`: it ended).
pub fn prolog_running(node: &Node, run: RunId, pgid: Option<i32>) {
    let job = run.job;
    let path = prolog_path(node, run);
    let result = match pgid {
        Some(pgid) => {
            sluice_wire::daemon::replace_file(&path, format!("{pgid}\n"), node.config.fsync())
                .map_err(|e| e.to_string())
        }
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
            _ => Ok(()),
        },
    };
    if let Err(e) = result {
        tracing::warn!(job, "{}: {e}", path.display());
    }
}

/// Launches again the jobs whose launch a restart of this daemon interrupted before their
/// script started (while their prolog ran): kept requests with neither a launch record (no
/// script started) nor a queued end. Called once at start, after adoption.
pub async fn resume_interrupted(node: &Arc<Node>) {
    let Ok(mut entries) = tokio::fs::read_dir(node.spool.launches_dir()).await else {
        return;
    };
    let mut runs = Vec::new();
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(run) = name
            .strip_suffix(&format!(".{REQUEST_SUFFIX}"))
            .and_then(RunId::parse_stem)
        {
            runs.push(run);
        }
    }
    runs.sort_unstable();
    for run in runs {
        let job = run.job;
        let started = crate::adopt::record_path(node, run).exists();
        let Some(req) = load(node, run) else {
            crate::adopt::forget_launch(node, run).await;
            continue;
        };
        if started || node.jobs.has_batch(job) {
            // Adopted, or ended and reported: its request goes with its end.
            continue;
        }
        if node.outbox.has(job, req.restart_count) {
            crate::adopt::forget_launch(node, run).await;
            continue;
        }
        kill_interrupted_prolog(node, run);
        tracing::warn!(
            job,
            restart = req.restart_count,
            "the node daemon restarted before the job's script started: launching it again"
        );
        if let Err(e) = crate::batch::launch(node, req).await {
            tracing::error!(job, "cannot launch the job again: {e}");
        }
    }
}

/// Kills the process group of a prolog a restart interrupted, so it never runs twice at once.
fn kill_interrupted_prolog(node: &Node, run: RunId) {
    let job = run.job;
    let path = prolog_path(node, run);
    let pgid = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok());
    if let Some(pgid) = pgid {
        tracing::info!(job, pgid, "killing the prolog the restart interrupted");
        signal_group(pgid, Some(Signal::SIGKILL));
    }
    prolog_running(node, run, None);
}
