//! Batch jobs that outlive a restart of the node daemon.
//!
//! Every started batch script leaves a launch record in the spool (`launches/<job>`: its process
//! group and launch count) until its exit report is queued. A daemon starting over finds the
//! records of jobs whose processes still run, adopts them (they are listed as running, can be
//! signalled, and are watched until their process group is gone), so a node daemon restart
//! costs no job. An adopted script is no longer this daemon's child, so its exit status cannot
//! be read: its end is reported as exit code [`UNKNOWN_EXIT_CODE`], and logged as unknown.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::jobs::Part;
use crate::node::{Node, unix_now};
use crate::outbox::ExitReport;

/// The exit code reported for an adopted job, whose real status is lost.
pub const UNKNOWN_EXIT_CODE: i32 = 1;
/// How often an adopted job's process group is looked for.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// Records that `job` (launch `restart`) runs as process group `pgid`.
pub async fn record_launch(node: &Node, job: u32, restart: u32, pgid: i32) {
    let dir = node.spool.launches_dir();
    let path = dir.join(job.to_string());
    let write = async {
        tokio::fs::create_dir_all(&dir).await?;
        tokio::fs::write(&path, format!("{pgid} {restart}\n")).await
    };
    if let Err(e) = write.await {
        tracing::warn!(job, "cannot record the launch in {}: {e}", path.display());
    }
}

/// Drops `job`'s launch record once its end is queued.
pub async fn forget_launch(node: &Node, job: u32) {
    let path = node.spool.launches_dir().join(job.to_string());
    if let Err(e) = tokio::fs::remove_file(&path).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(job, "cannot remove {}: {e}", path.display());
    }
}

/// Adopts the still running jobs of an earlier run and reports the ones that ended meanwhile.
pub async fn adopt_orphans(node: &Arc<Node>) {
    let Ok(mut entries) = tokio::fs::read_dir(node.spool.launches_dir()).await else {
        return;
    };
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name().to_string_lossy().into_owned();
        let text = tokio::fs::read_to_string(entry.path())
            .await
            .unwrap_or_default();
        let (Ok(job), Some((pgid, restart))) = (name.parse::<u32>(), parse_record(&text)) else {
            tracing::warn!("{}: not a launch record, removed", entry.path().display());
            let _ = tokio::fs::remove_file(entry.path()).await;
            continue;
        };
        if node.outbox.has(job, restart) {
            forget_launch(node, job).await;
        } else if group_alive(pgid).await {
            tracing::info!(
                job,
                pgid,
                "adopted a job started before this daemon's restart"
            );
            node.jobs.claim_batch(job, restart);
            node.jobs.add_group(job, Part::Batch, pgid);
            tokio::spawn(watch(Arc::clone(node), job, restart, pgid));
        } else {
            ended(node, job, restart).await;
        }
    }
}

fn parse_record(text: &str) -> Option<(i32, u32)> {
    let (pgid, restart) = text.trim().split_once(' ')?;
    Some((pgid.parse().ok()?, restart.parse().ok()?))
}

async fn watch(node: Arc<Node>, job: u32, restart: u32, pgid: i32) {
    while group_alive(pgid).await {
        tokio::time::sleep(WATCH_INTERVAL).await;
    }
    ended(&node, job, restart).await;
    node.jobs.finish_batch(job, restart);
    node.spool.remove_job_dir(job).await;
}

async fn ended(node: &Node, job: u32, restart: u32) {
    tracing::warn!(
        job,
        "ended while the node daemon was restarting; its exit status is unknown, \
         reported as exit code {UNKNOWN_EXIT_CODE}"
    );
    let report = ExitReport {
        job_id: job,
        restart,
        exit_code: UNKNOWN_EXIT_CODE,
        signal: 0,
        at: unix_now(),
        // Its processes were not sampled by this daemon: usage unknown.
        usage: None,
        failed: None,
        whole_job: false,
    };
    match node.outbox.push(report).await {
        Ok(()) => forget_launch(node, job).await,
        Err(e) => tracing::error!(job, "cannot queue the exit report: {e}"),
    }
}

/// Whether any live (not zombie) process is in process group `pgid`, from `/proc`.
async fn group_alive(pgid: i32) -> bool {
    tokio::task::spawn_blocking(move || scan_group(Path::new("/proc"), pgid))
        .await
        .unwrap_or(false)
}

fn scan_group(proc_root: &Path, pgid: i32) -> bool {
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
        assert_eq!(parse_record("123 2\n"), Some((123, 2)));
        assert_eq!(parse_record("123"), None);
    }

    #[test]
    fn this_process_group_is_alive_and_a_free_one_is_not() {
        let own = nix::unistd::getpgrp().as_raw();
        assert!(scan_group(Path::new("/proc"), own));
        assert!(!scan_group(Path::new("/proc"), i32::MAX));
    }
}
