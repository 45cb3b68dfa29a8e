//! `Prolog` and `Epilog` on the nodes of a job that run no batch script of it (the other nodes
//! of a batch job, every node of an `srun` allocation): the prolog runs before the job's first
//! step here, or with `PrologFlags=Alloc` when the controller allocates the job (a step that
//! comes meanwhile waits for it); the epilog once the controller ends the job here
//! (`Terminate`) and its processes are gone. The batch host runs both around the script
//! ([`crate::job_scripts`]).
//!
//! A failure goes to the controller as a report about the job on this node (not about a
//! step): a failed prolog also refuses the step.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_wire::proto::{LaunchBatchRequest, RunStepRequest};
use tokio::sync::watch;

use crate::env::Env;
use crate::here_file;
use crate::node::{Node, unix_now};
use crate::outbox::{ExitReport, NodeScript};
use crate::prolog::{self, Context};

/// How often a terminated job is checked for processes left before its epilog runs.
const GONE_POLL: Duration = Duration::from_millis(100);
/// Most polls before the epilog runs anyway.
const GONE_POLLS: u32 = 600;

/// Jobs that ran here (a prolog, a script or a step) and whose epilog is still due, with their
/// run, the prolog's environment (the epilog's, but for its context) and how their prolog
/// went. Those of nodes running only their steps are also saved in the spool
/// ([`crate::here_file`]) and loaded again by a restarted daemon; a batch script's launch
/// record serves for its node.
#[derive(Debug)]
pub struct JobsHere {
    map: Mutex<HashMap<u32, Here>>,
    dir: PathBuf,
}

#[derive(Debug)]
struct Here {
    run: u32,
    env: Env,
    /// `None` while the prolog runs, then whether it succeeded.
    prolog: watch::Receiver<Option<bool>>,
}

impl JobsHere {
    /// The jobs recorded in `dir` (the spool's `here/`) by an earlier run of this daemon,
    /// their prologs done.
    pub fn open(dir: PathBuf) -> Self {
        let map = here_file::load(&dir)
            .into_iter()
            .map(|r| {
                let (_, prolog) = watch::channel(Some(true));
                let here = Here {
                    run: r.run,
                    env: r.env,
                    prolog,
                };
                (r.job, here)
            })
            .collect();
        Self {
            map: Mutex::new(map),
            dir,
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<u32, Here>) -> R) -> R {
        f(&mut self.map.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Records run `run` of `job` (its batch script runs here) with `env`, its prolog done;
    /// `false` when it was recorded already.
    pub fn first(&self, job: u32, run: u32, env: Env) -> bool {
        self.insert(job, run, env).is_some()
    }

    /// Records run `run` of `job` with `env` and its prolog as running, saved in the spool;
    /// the sender tells how it went. `None` when the job was recorded already.
    fn starting(&self, job: u32, run: u32, env: Env) -> Option<watch::Sender<Option<bool>>> {
        let saved = env.clone();
        let tx = self.insert(job, run, env)?;
        here_file::save(&self.dir, job, run, &saved);
        Some(tx)
    }

    fn insert(&self, job: u32, run: u32, env: Env) -> Option<watch::Sender<Option<bool>>> {
        self.with(|map| {
            if map.contains_key(&job) {
                return None;
            }
            let (tx, prolog) = watch::channel(None);
            map.insert(job, Here { run, env, prolog });
            Some(tx)
        })
    }

    /// The jobs recorded, with their runs, sorted by job.
    pub fn runs(&self) -> Vec<(u32, u32)> {
        let mut runs: Vec<(u32, u32)> =
            self.with(|map| map.iter().map(|(&job, h)| (job, h.run)).collect());
        runs.sort_unstable();
        runs
    }

    /// The run of `job` recorded here.
    pub fn run_of(&self, job: u32) -> Option<u32> {
        self.with(|map| map.get(&job).map(|h| h.run))
    }

    /// Waits for `job`'s prolog here, if one runs; whether it succeeded (`true` when none
    /// ran or the job is not recorded).
    async fn prolog_done(&self, job: u32) -> bool {
        let Some(mut rx) = self.with(|map| map.get(&job).map(|h| h.prolog.clone())) else {
            return true;
        };
        let ended = rx.wait_for(Option::is_some).await.map(|r| *r);
        // A dropped sender (not a failure reported through it) counts as done.
        ended.map_or(true, |r| r != Some(false))
    }

    /// Forgets `job` (here and in the spool); its environment when it was recorded.
    pub fn forget(&self, job: u32) -> Option<Env> {
        let env = self.with(|map| map.remove(&job).map(|h| h.env));
        if env.is_some() {
            here_file::remove(&self.dir, job);
        }
        env
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

/// Before a step: runs `Prolog` if this is the job's first here, or waits for the one running
/// (started at allocation); `false` when it failed (the failure is reported and the step must
/// not run).
pub async fn before_step(node: &Arc<Node>, req: &RunStepRequest) -> bool {
    let env = step_env(node, req);
    let run = req
        .credential
        .as_ref()
        .and_then(sluice_wire::auth::credential::read_unchecked)
        .map_or(0, |body| body.restart_count);
    match node.here.starting(req.job_id, run, env.clone()) {
        Some(done) => run_prolog(node, req.job_id, &env, done).await,
        None => node.here.prolog_done(req.job_id).await,
    }
}

/// `PrologFlags=Alloc`: runs `Prolog` for `req`'s job at its allocation, in the background,
/// and reports its success to the controller (a batch job's script waits for it). Steps that
/// come meanwhile wait for it. Asked again for the same run (a restarted controller that
/// still waits), it does not run the prolog twice: it reports the success of the one that ran
/// (or runs) here; a failure was reported when it happened.
pub fn at_allocation(node: &Arc<Node>, req: &LaunchBatchRequest) {
    let env = prolog::script_env(req, node.facts(), Context::Prolog);
    let (job, run) = (req.job_id, req.restart_count);
    let started = node.here.starting(job, run, env.clone());
    if started.is_none() && node.here.run_of(job) != Some(run) {
        tracing::info!(
            job,
            run,
            "prolog at allocation: another run is recorded here"
        );
        return;
    }
    let node = Arc::clone(node);
    tokio::spawn(async move {
        let ok = match started {
            Some(done) => run_prolog(&node, job, &env, done).await,
            None => {
                tracing::info!(
                    job,
                    "prolog at allocation asked again: reporting the one here"
                );
                node.here.prolog_done(job).await
            }
        };
        if ok {
            tracing::info!(job, "prolog at allocation done");
            // A batch job's script waits for every node's (the controller holds its launch).
            let report = ExitReport {
                job_id: job,
                restart: run,
                exit_code: 0,
                signal: 0,
                at: unix_now(),
                usage: None,
                failed: None,
                whole_job: true,
                prolog_done: true,
            };
            node.outbox.push(report).await;
        }
    });
}

/// Runs `Prolog` with `env` and tells `done` how it went; a failure is reported.
async fn run_prolog(
    node: &Arc<Node>,
    job: u32,
    env: &Env,
    done: watch::Sender<Option<bool>>,
) -> bool {
    let ok = match &node.config.prolog.prolog {
        None => true,
        Some(program) => {
            let timeout = node.config.prolog.timeout_secs;
            match prolog::run(program, env, Path::new("/"), None, timeout).await {
                Ok(_) => true,
                Err(why) => {
                    tracing::error!(job, "prolog failed: {why}");
                    report(node, job, NodeScript::Prolog).await;
                    false
                }
            }
        }
    };
    done.send_replace(Some(ok));
    ok
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
        prolog_done: false,
    };
    // Sent from memory when the spool cannot take it (logged by the outbox).
    node.outbox.push(report).await;
}
