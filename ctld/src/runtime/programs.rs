//! Power save programs (`ResumeProgram`, `SuspendProgram`, `ResumeFailProgram`), run for the
//! core's [`PowerCommand`]s on tokio tasks so the core's thread never waits for them.
//!
//! Each program gets one argument, the compressed hostlist (`cloud[1-3,7-8]`). ResumeProgram
//! also gets `SLURM_RESUME_FILE`, the path of a JSON file describing the jobs the nodes are
//! resumed for; the file is removed once the program exits. A program running longer than
//! the larger of SuspendTimeout and ResumeTimeout is killed, as Slurm does. Exit statuses are
//! logged; the core's timers decide what a failure means.

use crate::conf::PowerConf;
use crate::core::PowerCommand;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The environment variable naming the resume file.
pub const RESUME_FILE_ENV: &str = "SLURM_RESUME_FILE";

/// Runs the configured power save programs.
#[derive(Debug)]
pub struct Programs {
    resume: Option<PathBuf>,
    suspend: Option<PathBuf>,
    resume_fail: Option<PathBuf>,
    dir: PathBuf,
    limit: Duration,
    seq: AtomicU64,
}

/// One program run: which program, its argument, and the resume file's content.
struct Run {
    what: &'static str,
    program: PathBuf,
    hostlist: String,
    resume_json: Option<String>,
}

impl Programs {
    /// The programs of `conf`; resume files are written under `dir`.
    pub fn new(conf: &PowerConf, dir: &Path) -> Self {
        let mut programs = Self {
            resume: None,
            suspend: None,
            resume_fail: None,
            dir: dir.to_path_buf(),
            limit: Duration::ZERO,
            seq: AtomicU64::new(0),
        };
        programs.reconfigure(conf);
        programs
    }

    /// Takes the programs and time limit of `conf` (after `scontrol reconfigure`); programs
    /// already running go on.
    pub fn reconfigure(&mut self, conf: &PowerConf) {
        for p in [
            &conf.suspend_program,
            &conf.resume_program,
            &conf.resume_fail_program,
        ]
        .into_iter()
        .flatten()
        {
            if !p.is_absolute() {
                tracing::error!("power_save program {} not absolute pathname", p.display());
            }
        }
        self.resume = conf.resume_program.clone();
        self.suspend = conf.suspend_program.clone();
        self.resume_fail = conf.resume_fail_program.clone();
        self.limit = Duration::from_secs(u64::from(conf.suspend_timeout.max(conf.resume_timeout)));
    }

    /// Starts the program `cmd` asks for and returns at once (call inside a tokio runtime).
    pub fn run(&self, cmd: PowerCommand) {
        let run = match cmd {
            PowerCommand::Resume { hostlist, file, .. } => {
                tracing::info!("power_save: waking nodes {hostlist}");
                self.resume.clone().map(|program| Run {
                    what: "ResumeProgram",
                    program,
                    hostlist,
                    resume_json: Some(file.to_json()),
                })
            }
            PowerCommand::Suspend { hostlist, .. } => {
                tracing::info!("power_save: suspending nodes {hostlist}");
                self.suspend.clone().map(|program| Run {
                    what: "SuspendProgram",
                    program,
                    hostlist,
                    resume_json: None,
                })
            }
            PowerCommand::ResumeFailed { hostlist, .. } => {
                tracing::warn!(
                    "nodes {hostlist} not resumed by ResumeTimeout, setting DOWN and POWERED_DOWN"
                );
                self.resume_fail.clone().map(|program| Run {
                    what: "ResumeFailProgram",
                    program,
                    hostlist,
                    resume_json: None,
                })
            }
        };
        let Some(run) = run else {
            return;
        };
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let file = self
            .dir
            .join(format!("resume.{}.{n}.json", std::process::id()));
        tokio::spawn(execute(run, file, self.limit));
    }
}

async fn execute(run: Run, file: PathBuf, limit: Duration) {
    let mut cmd = tokio::process::Command::new(&run.program);
    cmd.arg(&run.hostlist)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let resume_file = match &run.resume_json {
        Some(json) => match tokio::fs::write(&file, json).await {
            Ok(()) => {
                cmd.env(RESUME_FILE_ENV, &file);
                Some(&file)
            }
            Err(e) => {
                tracing::error!("{}: cannot write {}: {e}", run.what, file.display());
                None
            }
        },
        None => None,
    };
    let result = match cmd.spawn() {
        Ok(mut child) => match tokio::time::timeout(limit, child.wait()).await {
            Ok(status) => status.map_err(|e| e.to_string()),
            Err(_) => {
                let _ = child.kill().await;
                Err(format!("killed after {} s", limit.as_secs()))
            }
        },
        Err(e) => Err(e.to_string()),
    };
    match result {
        Ok(status) if status.success() => tracing::info!(
            "{} {} {}: exit 0",
            run.what,
            run.program.display(),
            run.hostlist
        ),
        Ok(status) => tracing::error!(
            "{} {} {}: {status}",
            run.what,
            run.program.display(),
            run.hostlist
        ),
        Err(e) => tracing::error!(
            "{} {} {}: {e}",
            run.what,
            run.program.display(),
            run.hostlist
        ),
    }
    if let Some(f) = resume_file {
        let _ = tokio::fs::remove_file(f).await;
    }
}
