//! `LaunchBatch`: a job's batch script runs as a process of its own, and its end becomes an
//! exit report for the controller.
//!
//! The script runs under its supervisor (`sluice-stepd`, see [`crate::supervise`]), which reaps
//! it and keeps its status across restarts of this daemon. The launch answers once the script
//! runs (or, with a prolog, at once); a waiter task then follows the supervisor to the script's
//! end, kills what the script left running in its process group (as Slurm's step daemon does
//! when a step ends), runs the epilogs, queues the exit report and removes the job's spool
//! directory. While
//! the script runs its process group is sampled (see [`crate::acct`]); the batch step's usage
//! goes with the exit report.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::sys::signal::Signal;
use sluice_vocab::jobacct::{StepUsage, TaskUsage};
use sluice_wire::proto::LaunchBatchRequest;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdout};

use crate::acct::{Tracker, live};
use crate::env::Env;
use crate::error::NodedError;
use crate::jobs::{Part, signal_group};
use crate::node::{Node, unix_now};
use crate::outbox::{ExitReport, NodeScript};
use crate::pattern::{self, PatternVars, StepKind};
use crate::spawn::{self, RunAs};
use crate::spool::RunId;
use crate::supervise::Ended;
use crate::user_env;
use crate::{adopt, env, job_scripts, launch_request};

/// SIGKILL's number, reported for a script killed before it started.
const SIGKILL: i32 = 9;
/// How much of the wrapper shell's own error output is logged.
const WRAPPER_ERR_LIMIT: u64 = 4096;

/// Starts `req`'s batch script unless this launch already runs or ran here.
pub async fn launch(node: &Arc<Node>, req: LaunchBatchRequest) -> Result<(), NodedError> {
    let (job, restart) = (req.job_id, req.restart_count);
    if req.script.is_empty() {
        return Err(NodedError::BadRequest {
            why: format!("job {job} has no batch script"),
        });
    }
    if node.outbox.has(job, restart) || !node.jobs.claim_batch(job, restart) {
        tracing::info!(
            job,
            "launch of a job that already runs or ran here: ignored"
        );
        return Ok(());
    }
    // Kept until the run's end is queued: a restart of this daemon neither loses the launch
    // (while its prolog runs) nor the epilog of an adopted script.
    launch_request::save(node, &req).await;
    // Steps of the job here run no prolog of their own; the script's end runs the epilog.
    let here_env = crate::prolog::script_env(&req, node.facts(), crate::prolog::Context::Prolog);
    node.here.first(job, restart, here_env);
    if job_scripts::has_prolog(node) {
        // The prolog may run longer than the controller waits for an answer.
        let node = Arc::clone(node);
        tokio::spawn(async move {
            if !job_scripts::run_prolog(&node, &req).await {
                job_scripts::report_prolog_failure(&node, job, restart).await;
            } else if node.jobs.killed(job) {
                tracing::info!(
                    job,
                    "killed while its prolog ran: the script does not start"
                );
                report_not_started(&node, job, restart, (0, SIGKILL)).await;
            } else if let Err(e) = begin(&node, &req).await {
                tracing::error!(job, "{e}");
                report_not_started(&node, job, restart, (1, 0)).await;
            }
        });
        return Ok(());
    }
    begin(node, &req).await
}

/// Starts the script of a claimed launch and the task that waits for it.
async fn begin(node: &Arc<Node>, req: &LaunchBatchRequest) -> Result<(), NodedError> {
    let (job, restart) = (req.job_id, req.restart_count);
    match start(node, req).await {
        Ok((started, after)) => {
            let tracker = Tracker::start(&node.config.jobacct, started.pid, 0, 0);
            if let Some(t) = &tracker {
                let name = &node.config.node_name;
                node.live.add(job, live::BATCH_STEP, req.uid, name, t);
            }
            let run = Run {
                job,
                restart,
                after,
            };
            tokio::spawn(wait(Arc::clone(node), run, started, tracker));
            Ok(())
        }
        Err(e) => {
            let run = RunId::new(job, restart);
            node.jobs.finish_batch(job, restart);
            node.spool.remove_job_dir(run).await;
            // Nothing started that a restarted daemon should find.
            adopt::forget_launch(node, run).await;
            Err(e)
        }
    }
}

/// A launch whose script did not start after its prolog ran (killed meanwhile, or it could
/// not start): reported as a run that ended with `(exit code, signal)`, and forgotten.
async fn report_not_started(node: &Arc<Node>, job: u32, restart: u32, (code, signal): (i32, i32)) {
    let report = ExitReport {
        job_id: job,
        restart,
        exit_code: code,
        signal,
        at: unix_now(),
        usage: None,
        failed: None,
        whole_job: false,
        prolog_done: false,
    };
    adopt::report_end(node, report).await;
    // No script ran: nothing a restarted daemon should find.
    let run = RunId::new(job, restart);
    adopt::forget_launch(node, run).await;
    node.jobs.finish_batch(job, restart);
    node.spool.remove_job_dir(run).await;
}

/// What runs once the script has ended: `TaskEpilog` (with the script's environment, as the
/// user) and `Epilog` (with its own environment).
struct After {
    task: Option<(Env, PathBuf, Option<RunAs>)>,
    epilog: Option<Env>,
}

/// One run of a batch script being waited for.
struct Run {
    job: u32,
    restart: u32,
    after: After,
}

/// The file a batch script reads as its stdin: the `-i` pattern expanded (relative to the
/// working directory), else `/dev/null`.
pub fn input_path(req: &LaunchBatchRequest, node: &str, dir: &Path) -> PathBuf {
    if req.stdin.is_empty() {
        return PathBuf::from("/dev/null");
    }
    dir.join(pattern::expand(&req.stdin, &pattern_vars(req, node)))
}

/// What a batch job's file patterns expand with.
fn pattern_vars<'a>(req: &'a LaunchBatchRequest, node: &'a str) -> PatternVars<'a> {
    PatternVars {
        job_id: req.job_id,
        step: StepKind::Batch,
        array_job_id: if req.array_task_id.is_some() {
            req.array_job_id
        } else {
            req.job_id
        },
        array_task_id: req.array_task_id,
        job_name: &req.name,
        user: &req.user,
        node,
        node_index: 0,
        task: 0,
    }
}

/// The output files of a batch job: stdout, and stderr when it goes elsewhere.
pub fn output_paths(
    req: &LaunchBatchRequest,
    node: &str,
    dir: &Path,
) -> (PathBuf, Option<PathBuf>) {
    let vars = pattern_vars(req, node);
    let out_pattern = if req.stdout.is_empty() {
        pattern::default_batch_output(req.array_task_id.is_some())
    } else {
        &req.stdout
    };
    let out = dir.join(pattern::expand(out_pattern, &vars));
    let err = (!req.stderr.is_empty())
        .then(|| dir.join(pattern::expand(&req.stderr, &vars)))
        .filter(|err| *err != out);
    (out, err)
}

/// A running batch script: its supervisor, the supervisor's lines, and the script's pid (also
/// its process group).
struct Started {
    stepd: Child,
    lines: Lines<BufReader<ChildStdout>>,
    pid: i32,
}

async fn start(node: &Node, req: &LaunchBatchRequest) -> Result<(Started, After), NodedError> {
    let job_id = req.job_id;
    let run_as = RunAs::for_job(req.uid, req.gid);
    let script = node
        .spool
        .write_script(
            RunId::new(job_id, req.restart_count),
            req.script.clone(),
            run_as,
        )
        .await?;
    let dir = spawn::working_dir(&req.workdir);
    let (out, err) = output_paths(req, &node.config.node_name, &dir);
    let input = input_path(req, &node.config.node_name, &dir);
    let mut env = env::batch_env(req, node.facts());
    if user_env::asked(&env) {
        user_env::add_login_env(&mut env, &req.user)
            .await
            .map_err(|why| NodedError::BadRequest { why })?;
    }
    let printed = job_scripts::run_task_prolog(node, &mut env, &dir, run_as)
        .await
        .map_err(|why| NodedError::BadRequest { why })?;
    for line in printed {
        tracing::info!(job = job_id, "task prolog: {line}");
    }
    let io = spawn::BatchIo {
        script: &script,
        input: &input,
        args: &req.script_args,
        out: &out,
        err: err.as_deref(),
        append: req.open_append,
    };
    let launch = (job_id, req.restart_count);
    let started = supervised(node, launch, run_as, &dir, &env, io).await?;
    node.jobs.add_group(job_id, Part::Batch, started.pid);
    tracing::info!(job = job_id, pid = started.pid, user = %req.user, "batch script started");
    let after = After {
        task: node
            .config
            .prolog
            .task_epilog
            .is_some()
            .then_some((env, dir, run_as)),
        epilog: job_scripts::epilog_env(node, req),
    };
    Ok((started, after))
}

/// Starts the script under its supervisor and waits for the supervisor's `started <pid>`.
async fn supervised(
    node: &Node,
    (job_id, restart): (u32, u32),
    run_as: Option<RunAs>,
    dir: &Path,
    env: &Env,
    io: spawn::BatchIo<'_>,
) -> Result<Started, NodedError> {
    let run = RunId::new(job_id, restart);
    let status = adopt::status_path(node, run);
    // A status left by an earlier launch of this very run is not this launch's.
    let _ = tokio::fs::remove_file(&status).await;
    let supervisor = spawn::Supervisor {
        program: &node.config.stepd,
        sync: node.config.fsync(),
        status: &status,
        record: &adopt::record_path(node, run),
        restart,
    };
    let mut stepd = spawn::batch_command(supervisor, run_as, dir, env, io)
        .spawn()
        .map_err(|source| NodedError::Spawn { job_id, source })?;
    let mut lines = stepd.stdout.take().map(|out| BufReader::new(out).lines());
    let first = match lines.as_mut() {
        Some(lines) => lines.next_line().await.ok().flatten(),
        None => None,
    };
    let pid = first
        .as_deref()
        .and_then(|l| l.strip_prefix("started "))
        .and_then(|p| p.parse::<i32>().ok());
    let (Some(pid), Some(lines)) = (pid, lines) else {
        // The supervisor could not start the script: its stderr says why.
        let why = read_limited(stepd.stderr.take()).await;
        let _ = stepd.wait().await;
        return Err(NodedError::Supervisor {
            job_id,
            why: why.trim().to_string(),
        });
    };
    Ok(Started { stepd, lines, pid })
}

/// Up to [`WRAPPER_ERR_LIMIT`] bytes of `pipe`.
async fn read_limited(pipe: Option<ChildStderr>) -> String {
    let mut text = String::new();
    if let Some(pipe) = pipe {
        let _ = pipe.take(WRAPPER_ERR_LIMIT).read_to_string(&mut text).await;
    }
    text
}

/// Follows the supervisor to the script's end: the last usage sample is taken while the
/// script is a zombie, then the supervisor reaps it and tells its status.
async fn script_end(
    started: &mut Started,
    tracker: Option<Tracker>,
) -> (Option<Ended>, Option<TaskUsage>) {
    // `exited` (or the end of the supervisor's output, should it die).
    let _ = started.lines.next_line().await;
    let usage = tracker.map(Tracker::finish);
    if let Some(mut stdin) = started.stepd.stdin.take() {
        let _ = stdin.write_all(b"sampled\n").await;
    }
    let mut status = None;
    while let Ok(Some(line)) = started.lines.next_line().await {
        status = status.or_else(|| line.strip_prefix("status ").and_then(Ended::parse));
    }
    let _ = started.stepd.wait().await;
    (status, usage)
}

async fn wait(node: Arc<Node>, run: Run, mut started: Started, tracker: Option<Tracker>) {
    let Run {
        job,
        restart,
        after,
    } = run;
    let pid = started.pid;
    let read_err = read_limited(started.stepd.stderr.take());
    let ((status, usage), wrapper_text) = tokio::join!(script_end(&mut started, tracker), read_err);
    if !wrapper_text.trim().is_empty() {
        tracing::warn!(job, "{}", wrapper_text.trim());
    }
    let run_id = RunId::new(job, restart);
    let status = status.or_else(|| Ended::read(&adopt::status_path(&node, run_id)));
    let Ended { exit_code, signal } = status.unwrap_or_else(|| {
        tracing::error!(
            job,
            "the supervisor ended without the script's status; reported as exit code {}",
            adopt::UNKNOWN_EXIT_CODE
        );
        Ended {
            exit_code: adopt::UNKNOWN_EXIT_CODE,
            signal: 0,
        }
    });
    // What the script left behind ends with it.
    signal_group(pid, Some(Signal::SIGKILL));
    tracing::info!(job, exit_code, signal, "batch script ended");
    node.here.forget(job);
    if let Some((env, dir, run_as)) = &after.task {
        job_scripts::run_task_epilog(&node, job, env, dir, *run_as).await;
    }
    let epilog_ok = match &after.epilog {
        Some(env) => job_scripts::run_epilog(&node, job, env).await,
        None => true,
    };
    node.spool.remove_job_dir(run_id).await;
    let report = ExitReport {
        job_id: job,
        restart,
        exit_code,
        signal,
        at: unix_now(),
        usage: usage.and_then(|u| StepUsage::from_tasks(&[u])),
        failed: (!epilog_ok).then_some(NodeScript::Epilog),
        whole_job: false,
        prolog_done: false,
    };
    adopt::report_end(&node, report).await;
    node.jobs.finish_batch(job, restart);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_dev_null_unless_a_pattern_is_given() {
        let mut req = LaunchBatchRequest {
            job_id: 8,
            name: "x".into(),
            ..Default::default()
        };
        let dir = Path::new("/w");
        assert_eq!(input_path(&req, "n1", dir), PathBuf::from("/dev/null"));
        req.stdin = "in-%j-%x.txt".into();
        assert_eq!(input_path(&req, "n1", dir), PathBuf::from("/w/in-8-x.txt"));
        req.stdin = "/abs/in".into();
        assert_eq!(input_path(&req, "n1", dir), PathBuf::from("/abs/in"));
    }

    #[test]
    fn outputs_default_to_slurm_names_in_the_working_dir() {
        let mut req = LaunchBatchRequest {
            job_id: 8,
            name: "x".into(),
            ..Default::default()
        };
        let dir = Path::new("/w");
        assert_eq!(
            output_paths(&req, "n1", dir),
            (PathBuf::from("/w/slurm-8.out"), None)
        );
        req.array_job_id = 5;
        req.array_task_id = Some(2);
        assert_eq!(
            output_paths(&req, "n1", dir).0,
            PathBuf::from("/w/slurm-5_2.out")
        );
        req.stdout = "/abs/%x-%N.out".into();
        req.stderr = "e%a".into();
        let (out, err) = output_paths(&req, "n1", dir);
        assert_eq!(out, PathBuf::from("/abs/x-n1.out"));
        assert_eq!(err, Some(PathBuf::from("/w/e2")));
        req.stderr = "/abs/%x-%N.out".into();
        assert_eq!(output_paths(&req, "n1", dir).1, None, "same file: joined");
    }
}
