//! Runs the controller programs the core asks for ([`ScriptRun`]) on tokio tasks, with exactly
//! the environment the core built, stdin from `/dev/null`, in a process group of their own that
//! is killed after `PrologEpilogTimeout`. The exit status is logged; the end of
//! `PrologSlurmctld` goes back to the core (a failing `EpilogSlurmctld` changes nothing, as in
//! Slurm).

use super::CoreHandle;
use crate::core::{ScriptContext, ScriptRun, on_prolog_slurmctld_done};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::process::Stdio;
use std::time::Duration;

/// Runs `run` to its end (or its timeout) and reports a prolog's end to the core.
pub async fn execute(run: ScriptRun, core: CoreHandle) {
    let (job, job_run) = (run.job, run.run);
    let ok = run_program(&run).await;
    if run.context == ScriptContext::PrologSlurmctld {
        // Its end must reach the core even while the store refuses writes, or the job would
        // wait for it forever.
        let report = core
            .call_until_saved(
                move |cx| on_prolog_slurmctld_done(cx.core, cx.out, cx.now, job, job_run, ok),
                Duration::from_secs(1),
            )
            .await;
        if report.is_err() {
            tracing::warn!(%job, "PrologSlurmctld ended while the controller stops");
        }
    }
}

/// Runs the program; `true` when it exited 0.
async fn run_program(run: &ScriptRun) -> bool {
    let (what, job) = (run.context.name(), run.job);
    let mut cmd = tokio::process::Command::new(&run.program);
    cmd.args(&run.args)
        .env_clear()
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        .current_dir("/")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(%job, "{what} {}: {e}", run.program.display());
            return false;
        }
    };
    let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    let limit = Duration::from_secs(run.timeout_secs.map_or(u64::MAX / 4, u64::from));
    let status = tokio::time::timeout(limit, child.wait()).await;
    if pgid > 1 {
        // What it left running in its group, or all of it on a timeout, ends now.
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    let program = run.program.display();
    match status {
        Ok(Ok(s)) if s.success() => {
            tracing::info!(%job, "{what}: exit 0");
            return true;
        }
        Ok(Ok(s)) => tracing::error!(%job, "{what} {program}: {s}"),
        Ok(Err(e)) => tracing::error!(%job, "{what} {program}: {e}"),
        Err(_) => {
            let _ = child.wait().await;
            let secs = limit.as_secs();
            tracing::error!(%job, "{what} {program}: killed after {secs} s");
        }
    }
    false
}
