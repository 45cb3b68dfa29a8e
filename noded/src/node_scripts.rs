//! `Prolog` and `Epilog` on the nodes of a job that run no batch script of it (the other nodes
//! of a batch job, every node of an `srun` allocation): the prolog runs before the job's first
//! step here, the epilog once the controller ends the job here (`Terminate`) and its processes
//! are gone. The batch host runs both around the script ([`crate::job_scripts`]).
//!
//! A failure goes to the controller as a report about the job on this node (not about a
//! step): a failed prolog also refuses the step.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_wire::proto::RunStepRequest;

use crate::env::Env;
use crate::node::{Node, unix_now};
use crate::outbox::{ExitReport, NodeScript};
use crate::prolog::{self, Context};

/// How often a terminated job is checked for processes left before its epilog runs.
const GONE_POLL: Duration = Duration::from_millis(100);
/// Most polls before the epilog runs anyway.
const GONE_POLLS: u32 = 600;

/// Jobs that ran here (a prolog, a script or a step) and whose epilog is still due, with the
/// prolog's environment (the epilog's, but for its context).
#[derive(Debug, Default)]
pub struct JobsHere(Mutex<HashMap<u32, Env>>);

impl JobsHere {
    /// Records `job` with `env`; `false` when it was recorded already.
    pub fn first(&self, job: u32, env: Env) -> bool {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.contains_key(&job) {
            return false;
        }
        map.insert(job, env);
        true
    }

    /// Forgets `job`; its environment when it was recorded.
    pub fn forget(&self, job: u32) -> Option<Env> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(&job)
    }
}

/// The `Prolog`/`Epilog` environment of a job known from one of its steps.
pub fn step_env(node: &Node, req: &RunStepRequest) -> Env {
    let user = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(req.uid))
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_default();
    let mut env = Env::new();
    for (name, value) in [
        ("SLURM_JOB_ID", req.job_id.to_string()),
        ("SLURM_JOBID", req.job_id.to_string()),
        ("SLURM_JOB_USER", user),
        ("SLURM_JOB_UID", req.uid.to_string()),
        ("SLURM_JOB_GID", req.gid.to_string()),
        ("SLURM_JOB_NODELIST", req.node_list.clone()),
        ("SLURM_CLUSTER_NAME", node.config.cluster_name.clone()),
        ("SLURMD_NODENAME", node.config.node_name.clone()),
        ("SLURM_CONF", node.config.conf_path.display().to_string()),
        ("SLURM_SCRIPT_CONTEXT", Context::Prolog.name().to_string()),
    ] {
        env.insert(name.to_string(), value);
    }
    env
}

/// Before a step: runs `Prolog` if this is the job's first here; `false` when it failed (the
/// failure is reported and the step must not run).
pub async fn before_step(node: &Arc<Node>, req: &RunStepRequest) -> bool {
    let env = step_env(node, req);
    if !node.here.first(req.job_id, env.clone()) {
        return true;
    }
    let Some(program) = &node.config.prolog.prolog else {
        return true;
    };
    let timeout = node.config.prolog.timeout_secs;
    match prolog::run(program, &env, Path::new("/"), None, timeout).await {
        Ok(_) => true,
        Err(why) => {
            tracing::error!(job = req.job_id, "prolog failed: {why}");
            report(node, req.job_id, NodeScript::Prolog).await;
            false
        }
    }
}

/// The controller ended `job` here: unless its batch script runs here (whose end runs the
/// epilog), runs `Epilog` once its processes are gone.
pub fn on_terminate(node: &Arc<Node>, job: u32) {
    if node.jobs.has_batch(job) {
        return;
    }
    let Some(mut env) = node.here.forget(job) else {
        return;
    };
    if node.config.prolog.epilog.is_none() {
        return;
    }
    env.insert(
        "SLURM_SCRIPT_CONTEXT".into(),
        Context::Epilog.name().to_string(),
    );
    let node = Arc::clone(node);
    tokio::spawn(async move {
        for _ in 0..GONE_POLLS {
            if !node.jobs.contains(job) {
                break;
            }
            tokio::time::sleep(GONE_POLL).await;
        }
        if !crate::job_scripts::run_epilog(&node, job, &env).await {
            report(&node, job, NodeScript::Epilog).await;
        }
    });
}

/// Reports `failed` for `job` on this node (not about a step or a run).
async fn report(node: &Node, job: u32, failed: NodeScript) {
    let report = ExitReport {
        job_id: job,
        restart: 0,
        exit_code: 0,
        signal: 0,
        at: unix_now(),
        usage: None,
        failed: Some(failed),
        whole_job: true,
    };
    // Sent from memory when the spool cannot take it (logged by the outbox).
    node.outbox.push(report).await;
}
