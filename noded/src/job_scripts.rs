//! slurm.conf's programs around a batch job on its batch host: `Prolog` before the script
//! (its processes start only after a successful prolog), `TaskProlog` as the user just before
//! the script (its output adjusts the script's environment), `TaskEpilog` as the user and then
//! `Epilog` once the script has ended.
//!
//! A failed prolog is reported instead of an exit (the controller drains the node and requeues
//! the job held); a failed epilog goes with the exit report (the controller drains the node).

use std::path::Path;
use std::sync::Arc;

use sluice_wire::proto::LaunchBatchRequest;

use crate::adopt;
use crate::env::Env;
use crate::launch_request;
use crate::node::{Node, unix_now};
use crate::outbox::{ExitReport, NodeScript};
use crate::prolog::{self, Context};
use crate::spawn::RunAs;
use crate::spool::RunId;

/// Where the node's own programs run.
const ROOT_DIR: &str = "/";

/// Whether a batch launch must run a program before the script (and so starts in the
/// background rather than within the launch request).
pub fn has_prolog(node: &Node) -> bool {
    node.config.prolog.prolog.is_some()
}

/// Runs `Prolog` for `req`, if configured; `false` when it failed.
pub async fn run_prolog(node: &Node, req: &LaunchBatchRequest) -> bool {
    let Some(program) = &node.config.prolog.prolog else {
        return true;
    };
    let env = prolog::script_env(req, node.facts(), Context::Prolog);
    let timeout = node.config.prolog.timeout_secs;
    let job = req.job_id;
    let run = RunId::new(job, req.restart_count);
    // Its process group is kept while it runs: a restarted daemon kills it before it launches
    // the job again (see `launch_request`).
    let recorded = |pgid| launch_request::prolog_running(node, run, Some(pgid));
    let result =
        prolog::run_watched(program, &env, Path::new(ROOT_DIR), None, timeout, recorded).await;
    launch_request::prolog_running(node, run, None);
    match result {
        Ok(_) => true,
        Err(why) => {
            tracing::error!(job, "prolog failed: {why}");
            false
        }
    }
}

/// The environment `Epilog` will run with, when one is configured.
pub fn epilog_env(node: &Node, req: &LaunchBatchRequest) -> Option<Env> {
    node.config.prolog.epilog.as_ref()?;
    Some(prolog::script_env(req, node.facts(), Context::Epilog))
}

/// Runs `Epilog` with `env`; `false` when it failed.
pub async fn run_epilog(node: &Node, job: u32, env: &Env) -> bool {
    let Some(program) = &node.config.prolog.epilog else {
        return true;
    };
    let timeout = node.config.prolog.timeout_secs;
    match prolog::run(program, env, Path::new(ROOT_DIR), None, timeout).await {
        Ok(_) => true,
        Err(why) => {
            tracing::error!(job, "epilog failed: {why}");
            false
        }
    }
}

/// Runs `TaskProlog` (as the job's user, with the task's environment) and applies its output
/// to `env`; returns its `print` lines (for the task's output), or `Err` with the reason when it
/// failed (the task does not start).
pub async fn run_task_prolog(
    node: &Node,
    env: &mut Env,
    dir: &Path,
    run_as: Option<RunAs>,
) -> Result<Vec<String>, String> {
    let Some(program) = &node.config.prolog.task_prolog else {
        return Ok(Vec::new());
    };
    let mut with_context = env.clone();
    with_context.insert(
        "SLURM_SCRIPT_CONTEXT".into(),
        Context::TaskProlog.name().into(),
    );
    let timeout = node.config.prolog.timeout_secs;
    let out = prolog::run(program, &with_context, dir, run_as, timeout)
        .await
        .map_err(|why| format!("TaskProlog failed: {why}"))?;
    Ok(prolog::apply_task_output(env, &out))
}

/// A step task's programs before it: `TaskProlog`, then srun's `--task-prolog` (`own`), each
/// seeing what the one before exported; their `print` lines, or `Err` when one failed (the
/// task does not start).
pub async fn run_step_task_prolog(
    node: &Node,
    own: Option<&Path>,
    env: &mut Env,
    dir: &Path,
    run_as: Option<RunAs>,
) -> Result<Vec<String>, String> {
    let mut printed = run_task_prolog(node, env, dir, run_as).await?;
    if let Some(program) = own {
        let mut with_context = env.clone();
        with_context.insert(
            "SLURM_SCRIPT_CONTEXT".into(),
            Context::TaskProlog.name().into(),
        );
        let timeout = node.config.prolog.timeout_secs;
        let out = prolog::run(&dir.join(program), &with_context, dir, run_as, timeout)
            .await
            .map_err(|why| format!("--task-prolog failed: {why}"))?;
        printed.extend(prolog::apply_task_output(env, &out));
    }
    Ok(printed)
}

/// A step task's programs after it: srun's `--task-epilog` (`own`), then `TaskEpilog`;
/// failures are logged.
pub async fn run_step_task_epilog(
    node: &Node,
    own: Option<&Path>,
    job: u32,
    env: &Env,
    (dir, run_as): (&Path, Option<RunAs>),
) {
    if let Some(program) = own {
        let mut env = env.clone();
        env.insert(
            "SLURM_SCRIPT_CONTEXT".into(),
            Context::TaskEpilog.name().into(),
        );
        let timeout = node.config.prolog.timeout_secs;
        if let Err(why) = prolog::run(&dir.join(program), &env, dir, run_as, timeout).await {
            tracing::warn!(job, "--task-epilog failed: {why}");
        }
    }
    run_task_epilog(node, job, env, dir, run_as).await;
}

/// Runs `TaskEpilog` (as the job's user, with the task's environment); a failure is logged.
pub async fn run_task_epilog(node: &Node, job: u32, env: &Env, dir: &Path, run_as: Option<RunAs>) {
    let Some(program) = &node.config.prolog.task_epilog else {
        return;
    };
    let mut env = env.clone();
    env.insert(
        "SLURM_SCRIPT_CONTEXT".into(),
        Context::TaskEpilog.name().into(),
    );
    let timeout = node.config.prolog.timeout_secs;
    if let Err(why) = prolog::run(program, &env, dir, run_as, timeout).await {
        tracing::warn!(job, "TaskEpilog failed: {why}");
    }
}

/// Reports that `job`'s launch `restart` did not run because the prolog failed, and forgets it.
pub async fn report_prolog_failure(node: &Arc<Node>, job: u32, restart: u32) {
    let report = ExitReport {
        job_id: job,
        restart,
        exit_code: 0,
        signal: 0,
        at: unix_now(),
        usage: None,
        failed: Some(NodeScript::Prolog),
        whole_job: false,
        prolog_done: false,
    };
    node.outbox.push(report).await;
    // No script ran: nothing a restarted daemon should find (not even when the report is
    // kept in memory only, which would launch the job again).
    let run = RunId::new(job, restart);
    adopt::forget_launch(node, run).await;
    node.jobs.finish_batch(job, restart);
    node.spool.remove_job_dir(run).await;
}
