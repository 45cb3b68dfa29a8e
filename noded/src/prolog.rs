//! Running slurm.conf's programs around a job on this node: `Prolog` and `Epilog` as the
//! daemon (root when it is root), `TaskProlog` and `TaskEpilog` as the job's user.
//!
//! Each runs in a process group of its own with only the `SLURM_*` variables Slurm gives it,
//! stdin from `/dev/null`, and is killed (the whole group) once it has run
//! `PrologEpilogTimeout` seconds. A non-zero exit, a signal or the timeout is a failure.

use std::fmt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::Signal;
use sluice_wire::proto::LaunchBatchRequest;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use crate::env::{Env, NodeFacts};
use crate::jobs::signal_group;
use crate::spawn::{self, RunAs};

/// Most of a task prolog's output that is read.
const OUTPUT_LIMIT: u64 = 64 * 1024;

/// Which program runs, as `SLURM_SCRIPT_CONTEXT` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// `Prolog`.
    Prolog,
    /// `Epilog`.
    Epilog,
    /// `TaskProlog`.
    TaskProlog,
    /// `TaskEpilog`.
    TaskEpilog,
}

impl Context {
    /// Slurm's `SLURM_SCRIPT_CONTEXT` value.
    pub fn name(self) -> &'static str {
        match self {
            Context::Prolog => "prolog_slurmd",
            Context::Epilog => "epilog_slurmd",
            Context::TaskProlog => "prolog_task",
            Context::TaskEpilog => "epilog_task",
        }
    }
}

/// Why a program failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It could not be started.
    Spawn(String),
    /// It exited non-zero or was killed by a signal.
    Exit { code: i32, signal: i32 },
    /// It ran longer than `PrologEpilogTimeout`.
    TimedOut,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Spawn(e) => write!(f, "cannot start: {e}"),
            Failure::Exit { code, signal } => write!(f, "status {code}:{signal}"),
            Failure::TimedOut => write!(f, "timed out"),
        }
    }
}

/// The environment of `Prolog` and `Epilog` for a batch job.
pub fn script_env(req: &LaunchBatchRequest, node: NodeFacts<'_>, context: Context) -> Env {
    let cluster = if req.cluster.is_empty() {
        node.cluster
    } else {
        &req.cluster
    };
    let mut env = Env::new();
    let mut set = |name: &str, value: String| {
        env.insert(name.to_string(), value);
    };
    set("SLURM_JOB_ID", req.job_id.to_string());
    set("SLURM_JOBID", req.job_id.to_string());
    set("SLURM_JOB_USER", req.user.clone());
    set("SLURM_JOB_UID", req.uid.to_string());
    set("SLURM_JOB_GID", req.gid.to_string());
    set("SLURM_JOB_NODELIST", req.node_list.clone());
    set("SLURM_JOB_PARTITION", req.partition.clone());
    set("SLURM_JOB_ACCOUNT", req.account.clone());
    set("SLURM_JOB_NAME", req.name.clone());
    set("SLURM_CLUSTER_NAME", cluster.to_string());
    set("SLURMD_NODENAME", node.node_name.to_string());
    set("SLURM_CONF", node.conf_path.display().to_string());
    set("SLURM_SCRIPT_CONTEXT", context.name().to_string());
    if let Some(group) = group_name(req.gid) {
        set("SLURM_JOB_GROUP", group);
    }
    if let Some(task) = req.array_task_id {
        set("SLURM_ARRAY_JOB_ID", req.array_job_id.to_string());
        set("SLURM_ARRAY_TASK_ID", task.to_string());
    }
    env
}

fn group_name(gid: u32) -> Option<String> {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid))
        .ok()
        .flatten()
        .map(|g| g.name)
}

/// Runs `program` with exactly `env` in `dir` (as `run_as`, else as the daemon), killing it
/// after `timeout_secs`; returns its standard output (at most 64 KiB) when it succeeds.
pub async fn run(
    program: &Path,
    env: &Env,
    dir: &Path,
    run_as: Option<RunAs>,
    timeout_secs: Option<u32>,
) -> Result<String, Failure> {
    run_watched(program, env, dir, run_as, timeout_secs, |_| {}).await
}

/// [`run`], telling `started` the program's process group once it runs (so a restarted daemon
/// can find a program it was running).
pub async fn run_watched(
    program: &Path,
    env: &Env,
    dir: &Path,
    run_as: Option<RunAs>,
    timeout_secs: Option<u32>,
    started: impl FnOnce(i32),
) -> Result<String, Failure> {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .envs(env)
        .current_dir(dir)
        .process_group(0)
        .kill_on_drop(false)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(who) = run_as {
        cmd.uid(who.uid).gid(who.gid);
    }
    let mut child = cmd.spawn().map_err(|e| Failure::Spawn(e.to_string()))?;
    let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    started(pgid);
    let stdout = child.stdout.take();
    let read = async {
        let mut text = String::new();
        if let Some(pipe) = stdout {
            let _ = pipe.take(OUTPUT_LIMIT).read_to_string(&mut text).await;
        }
        text
    };
    let ended = async {
        let (status, text) = tokio::join!(child.wait(), read);
        (status, text)
    };
    let limit = Duration::from_secs(timeout_secs.map_or(u64::MAX / 4, u64::from));
    let Ok((status, text)) = tokio::time::timeout(limit, ended).await else {
        signal_group(pgid, Some(Signal::SIGKILL));
        let _ = child.wait().await;
        return Err(Failure::TimedOut);
    };
    // What it left running in its group ends with it.
    signal_group(pgid, Some(Signal::SIGKILL));
    let status = status.map_err(|e| Failure::Spawn(e.to_string()))?;
    match spawn::exit_parts(status) {
        (0, 0) => Ok(text),
        (code, signal) => Err(Failure::Exit { code, signal }),
    }
}

/// Applies a task prolog's output to a task's environment as Slurm does: `export NAME=value`
/// sets, `unset NAME` removes, `print ...` lines are returned to go to the task's output;
/// anything else is ignored.
pub fn apply_task_output(env: &mut Env, output: &str) -> Vec<String> {
    let mut printed = Vec::new();
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("export ") {
            if let Some((name, value)) = rest.trim_start().split_once('=')
                && !name.is_empty()
            {
                env.insert(name.to_string(), value.to_string());
            }
        } else if let Some(name) = line.strip_prefix("unset ") {
            env.remove(name.trim());
        } else if let Some(text) = line.strip_prefix("print ") {
            printed.push(text.to_string());
        }
    }
    printed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_prolog_output_sets_unsets_and_prints() {
        let mut env = Env::new();
        env.insert("GONE".into(), "x".into());
        env.insert("KEPT".into(), "y".into());
        let out = "export A=1=2\nunset GONE\nprint hello world\nnoise\nexport =bad\nexport B=\n";
        let printed = apply_task_output(&mut env, out);
        assert_eq!(printed, ["hello world"]);
        let got: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, [("A", "1=2"), ("B", ""), ("KEPT", "y")]);
    }

    #[tokio::test]
    async fn failures_are_exit_status_signal_or_timeout() {
        let dir = Path::new("/");
        let mut env = Env::new();
        env.insert("X".into(), "v".into());
        let script = |body: &str| {
            let path = std::env::temp_dir().join(format!(
                "sluice-prolog-{}-{}",
                std::process::id(),
                body.len()
            ));
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        };
        let ok = script("echo \"$X\"");
        assert_eq!(run(&ok, &env, dir, None, None).await.unwrap(), "v\n");
        let bad = script("exit 3");
        assert_eq!(
            run(&bad, &env, dir, None, None).await,
            Err(Failure::Exit { code: 3, signal: 0 })
        );
        let slow = script("sleep 30 # a script that hangs");
        assert_eq!(
            run(&slow, &env, dir, None, Some(1)).await,
            Err(Failure::TimedOut)
        );
        let missing = run(Path::new("/nonexistent/prolog"), &env, dir, None, None).await;
        assert!(matches!(missing, Err(Failure::Spawn(_))), "{missing:?}");
        for p in [ok, bad, slow] {
            let _ = std::fs::remove_file(p);
        }
    }
}
