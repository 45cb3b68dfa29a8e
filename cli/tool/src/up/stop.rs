//! Stopping: `sluice down`, and what a foreground `sluice up` does on Ctrl-C. Node daemons go
//! first, then the controllers, then the dbd, each group signalled together and waited for.

use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::Child;

use super::daemons::{Daemon, Kind};
use super::layout::Layout;
use super::process::{self, STOP_TIMEOUT};
use super::{DownArgs, UpError};

/// A daemon this run of `up` started.
#[derive(Debug)]
pub struct Started {
    /// What it runs.
    pub daemon: Daemon,
    /// Its process.
    pub child: Child,
    /// Its process id.
    pub pid: i32,
    /// Its log file.
    pub log: PathBuf,
    /// Its pid file, removed once it stopped.
    pub pid_file: PathBuf,
}

impl Started {
    /// An error carrying the end of its log, if it exited.
    pub fn exited(&mut self) -> Option<UpError> {
        let status = self.child.try_wait().ok()??;
        Some(UpError::Exited {
            program: self.daemon.kind.program().to_string(),
            status: status.to_string(),
            log: self.log.clone(),
            tail: process::tail(&self.log, process::LOG_TAIL_LINES),
        })
    }
}

/// Stops what this run started, in stop order; SIGKILL for a daemon that outlasts the timeout.
pub async fn stop_started(started: &mut [Started]) {
    started.sort_by_key(|s| s.daemon.kind);
    for kind in [Kind::Noded, Kind::Ctld, Kind::Dbd] {
        let group: Vec<&mut Started> = started
            .iter_mut()
            .filter(|s| s.daemon.kind == kind)
            .collect();
        for s in &group {
            let _ = kill(Pid::from_raw(s.pid), Signal::SIGTERM);
        }
        for s in group {
            if tokio::time::timeout(STOP_TIMEOUT, s.child.wait())
                .await
                .is_err()
            {
                let _ = s.child.kill().await;
            }
            let _ = std::fs::remove_file(&s.pid_file);
        }
    }
}

/// Watches the daemons of a foreground `up` until `shutdown` (Ctrl-C, SIGTERM) or until one of
/// them exits, then stops the others. A daemon stopped from outside (`sluice down`) ends the
/// run quietly; one that failed is an error.
pub async fn foreground(
    mut started: Vec<Started>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), UpError> {
    tokio::pin!(shutdown);
    let exited = loop {
        tokio::select! {
            () = &mut shutdown => break None,
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        let gone = started
            .iter_mut()
            .find_map(|s| Some((s.daemon.id.clone(), s.child.try_wait().ok()??)));
        if gone.is_some() {
            break gone;
        }
    };
    let Some((id, status)) = exited else {
        println!("Stopping...");
        stop_started(&mut started).await;
        println!("Stopped.");
        return Ok(());
    };
    let failed = started
        .iter_mut()
        .find(|s| s.daemon.id == id)
        .and_then(Started::exited);
    println!("{id} stopped ({status}); stopping the others...");
    stop_started(&mut started).await;
    match failed {
        Some(e) if !status.success() => Err(e),
        _ => Ok(()),
    }
}

/// `sluice down`: SIGTERM to every daemon named in `DIR/run`, node daemons first, waiting
/// for each group to exit.
pub async fn down(args: &DownArgs) -> Result<(), UpError> {
    let layout = Layout::new(&args.dir)?;
    let mut running: Vec<(Kind, String, i32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(layout.run_dir()) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(".pid") else {
                continue;
            };
            let Some(kind) = Kind::of_id(id) else {
                continue;
            };
            match process::live_pid(&entry.path(), kind.program()) {
                Some(pid) => running.push((kind, id.to_string(), pid)),
                // A stale file: its daemon is gone.
                None => {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }
    running.sort();
    if running.is_empty() {
        println!("Nothing is running in {}.", layout.dir.display());
        return Ok(());
    }
    for kind in [Kind::Noded, Kind::Ctld, Kind::Dbd] {
        let group: Vec<&(Kind, String, i32)> = running.iter().filter(|r| r.0 == kind).collect();
        for (_, _, pid) in &group {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGTERM);
        }
        for (kind, id, pid) in group {
            process::stop(*pid, kind.program(), STOP_TIMEOUT).await?;
            let _ = std::fs::remove_file(layout.pid_file(id));
            println!("Stopped {} (pid {pid}).", label(*kind, id));
        }
    }
    Ok(())
}

/// How `down` names a daemon: `sluice-dbd`, `sluice-ctld [cluster]`, `sluice-noded [cluster-node]`.
pub fn label(kind: Kind, id: &str) -> String {
    match id.split_once('-') {
        Some((_, rest)) if kind != Kind::Dbd => format!("{} [{rest}]", kind.program()),
        _ => kind.program().to_string(),
    }
}
