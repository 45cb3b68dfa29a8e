//! `LaunchBatch`: a job's batch script runs as a process of its own, and its end becomes an
//! exit report for the controller.
//!
//! The launch answers once the script runs; a waiter task then reaps it (without blocking the
//! runtime), kills what the script left running in its process group (as Slurm's step daemon
//! does when a step ends), queues the exit report and removes the job's spool directory. While
//! the script runs its process group is sampled (see [`crate::acct`]); the batch step's usage
//! goes with the exit report.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::sys::signal::Signal;
use sluice_vocab::jobacct::StepUsage;
use sluice_wire::proto::LaunchBatchRequest;
use tokio::io::AsyncReadExt;
use tokio::process::Child;

use crate::acct::{self, Tracker};
use crate::error::NodedError;
use crate::jobs::{Part, signal_group};
use crate::node::{Node, unix_now};
use crate::outbox::ExitReport;
use crate::pattern::{self, PatternVars, StepKind};
use crate::spawn::{self, RunAs};
use crate::{adopt, env};

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
    match start(node, &req).await {
        Ok(child) => {
            let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
            let tracker = Tracker::start(&node.config.jobacct, pgid, 0, 0);
            adopt::record_launch(node, job, restart, pgid).await;
            tokio::spawn(wait(Arc::clone(node), job, restart, child, tracker));
            Ok(())
        }
        Err(e) => {
            node.jobs.finish_batch(job, restart);
            node.spool.remove_job_dir(job).await;
            Err(e)
        }
    }
}

/// The output files of a batch job: stdout, and stderr when it goes elsewhere.
pub fn output_paths(
    req: &LaunchBatchRequest,
    node: &str,
    dir: &Path,
) -> (PathBuf, Option<PathBuf>) {
    let vars = PatternVars {
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
    };
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

async fn start(node: &Node, req: &LaunchBatchRequest) -> Result<Child, NodedError> {
    let job_id = req.job_id;
    let run_as = RunAs::for_job(req.uid, req.gid);
    let script = node
        .spool
        .write_script(job_id, req.script.clone(), run_as)
        .await?;
    let dir = spawn::working_dir(&req.workdir);
    let (out, err) = output_paths(req, &node.config.node_name, &dir);
    let env = env::batch_env(req, node.facts());
    let io = spawn::BatchIo {
        script: &script,
        args: &req.script_args,
        out: &out,
        err: err.as_deref(),
        append: req.open_append,
    };
    let child = spawn::batch_command(run_as, &dir, &env, io)
        .spawn()
        .map_err(|source| NodedError::Spawn { job_id, source })?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    node.jobs.add_group(job_id, Part::Batch, pid);
    tracing::info!(job = job_id, pid, user = %req.user, "batch script started");
    Ok(child)
}

async fn wait(node: Arc<Node>, job: u32, restart: u32, mut child: Child, tracker: Option<Tracker>) {
    let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    let wrapper_err = child.stderr.take();
    let read_err = async {
        let mut text = String::new();
        if let Some(pipe) = wrapper_err {
            let _ = pipe.take(WRAPPER_ERR_LIMIT).read_to_string(&mut text).await;
        }
        text
    };
    let ended = async {
        // The last sample sees the exited script before it is reaped.
        acct::exited(pid).await;
        let usage = tracker.map(Tracker::finish);
        (child.wait().await, usage)
    };
    let ((status, usage), wrapper_text) = tokio::join!(ended, read_err);
    if !wrapper_text.trim().is_empty() {
        tracing::warn!(job, "{}", wrapper_text.trim());
    }
    let (exit_code, signal) = match status {
        Ok(status) => spawn::exit_parts(status),
        Err(e) => {
            tracing::error!(job, "cannot wait for the batch script: {e}");
            (1, 0)
        }
    };
    // What the script left behind ends with it.
    signal_group(pid, Some(Signal::SIGKILL));
    tracing::info!(job, exit_code, signal, "batch script ended");
    node.spool.remove_job_dir(job).await;
    let report = ExitReport {
        job_id: job,
        restart,
        exit_code,
        signal,
        at: unix_now(),
        usage: usage.and_then(|u| StepUsage::from_tasks(&[u])),
    };
    match node.outbox.push(report).await {
        Ok(()) => adopt::forget_launch(&node, job).await,
        Err(e) => tracing::error!(job, "cannot queue the exit report: {e}"),
    }
    node.jobs.finish_batch(job, restart);
}

#[cfg(test)]
mod tests {
    use super::*;

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
