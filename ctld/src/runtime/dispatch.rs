//! Node commands to node daemons. Each node has one worker task with its own lazily
//! connected, signed client and an ordered queue, so a launch and a later signal for the same
//! job arrive in order, and a dead node delays only its own commands, never the core.
//!
//! A request is retried a few times with a growing pause; a batch launch that still cannot be
//! delivered is reported back to the core ([`Msg::LaunchFailed`]), which requeues the job and
//! sets the node DOWN. Other commands are dropped after the retries: a node that does not
//! answer is set DOWN by the core's timeout, and on its next registration the core tells it
//! to kill whatever it should not run.
//!
//! Step launches are not sent from here: `srun` runs its steps on the nodes itself. With
//! `PrologFlags=Alloc` every node of an allocation is told to run its prolog at once (the batch
//! host within the launch).

use super::{CoreHandle, Msg, NodeAddrs};
use crate::core::{Core, JobPart, NodeCommand, PowerStatus};
use sluice_wire::auth::Signer;
use sluice_wire::auth::credential::{CREDENTIAL_LIFETIME, CredentialKey};
use sluice_wire::client::{NodedClient, connect_lazy};
use sluice_wire::proto::node_daemon_client::NodeDaemonClient;
use sluice_wire::proto::{
    EnvVar, JobCredentialBody, LaunchBatchRequest, RegistrationRequest, SignalJobRequest,
    SignalKind,
};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::mpsc;

/// How many times a request is tried before giving up.
const ATTEMPTS: u32 = 4;
/// The pause after the first failed try; doubled after each further one.
const FIRST_PAUSE: Duration = Duration::from_millis(100);

enum NodeOp {
    Launch(Box<LaunchBatchRequest>),
    /// `PrologFlags=Alloc`: the prolog of a job on a node running no batch script of it.
    Prolog(Box<LaunchBatchRequest>),
    Signal(SignalJobRequest),
    /// A controller that (re)started asks the node daemon to register now.
    Register,
}

/// Sends node commands, one worker per node.
pub struct Dispatcher {
    signer: Signer,
    /// Signs the job credential of each batch launch.
    creds: CredentialKey,
    addrs: NodeAddrs,
    core: CoreHandle,
    cluster: String,
    ctld_addr: String,
    /// How long one request may take (`MessageTimeout`).
    rpc_timeout: Duration,
    workers: HashMap<String, mpsc::UnboundedSender<NodeOp>>,
}

impl Dispatcher {
    /// A dispatcher signing as `signer` and issuing job credentials with `creds`; launch
    /// failures are reported through `core`.
    pub(crate) fn new(
        signer: Signer,
        creds: CredentialKey,
        addrs: NodeAddrs,
        core: CoreHandle,
        cluster: String,
        ctld_addr: String,
        rpc_timeout: Duration,
    ) -> Self {
        Self {
            signer,
            creds,
            addrs,
            core,
            cluster,
            ctld_addr,
            rpc_timeout,
            workers: HashMap::new(),
        }
    }

    /// Sends `cmd` (called on the core's thread, inside the tokio runtime context).
    pub fn dispatch(&mut self, core: &Core, cmd: NodeCommand) {
        let name =
            |n: &sluice_vocab::NodeIdx| core.nodes().get(n.get() as usize).map(|n| n.name.clone());
        let (targets, op) = match cmd {
            NodeCommand::LaunchBatch { .. } => {
                let Some((node, mut req)) =
                    launch_request(core, &self.cluster, &self.ctld_addr, &cmd)
                else {
                    return;
                };
                // Issued as the launch leaves: the credential's lifetime covers its retries.
                let now = chrono::Utc::now().timestamp();
                req.credential = Some(self.creds.issue(&batch_credential(&req, now)));
                // With PrologFlags=Alloc the other nodes ran their prologs already (the core
                // held this launch for them); the batch host runs its own within the launch.
                (vec![node], Some(NodeOp::Launch(Box::new(req))))
            }
            NodeCommand::AllocProlog { job, nodes } => {
                let Some(req) = alloc_request(core, &self.cluster, &self.ctld_addr, job, &nodes)
                else {
                    return;
                };
                for n in nodes.iter().filter_map(name) {
                    self.send(&n, NodeOp::Prolog(Box::new(req.clone())));
                }
                return;
            }
            NodeCommand::LaunchStep { .. } => (Vec::new(), None),
            NodeCommand::Signal { job, nodes, signal } => {
                (nodes, Some(signal_op(job, SignalKind::Signal, signal)))
            }
            NodeCommand::SignalPart {
                job,
                nodes,
                part,
                signal,
            } => {
                let mut req = signal_req(job, SignalKind::Signal, signal);
                match part {
                    JobPart::Step(step) => req.step_id = Some(step),
                    JobPart::Batch => req.batch_only = true,
                }
                (nodes, Some(NodeOp::Signal(req)))
            }
            NodeCommand::Terminate { job, nodes } => {
                (nodes, Some(signal_op(job, SignalKind::Terminate, 9)))
            }
            NodeCommand::Suspend { job, nodes } => {
                (nodes, Some(signal_op(job, SignalKind::Suspend, 19)))
            }
            NodeCommand::Resume { job, nodes } => {
                (nodes, Some(signal_op(job, SignalKind::Resume, 18)))
            }
        };
        let Some(op) = op else { return };
        let names: Vec<String> = targets.iter().filter_map(name).collect();
        match op {
            NodeOp::Launch(req) => {
                if let Some(n) = names.first() {
                    self.send(n, NodeOp::Launch(req));
                }
            }
            NodeOp::Prolog(_) | NodeOp::Register => {}
            NodeOp::Signal(req) => {
                for n in &names {
                    self.send(n, NodeOp::Signal(req));
                }
            }
        }
    }

    /// Asks every node daemon that should be running (not powered down or off) to register
    /// now, as a controller that (re)started does, so its nodes' states and jobs are known
    /// within a moment instead of at their next heartbeats.
    pub fn request_registrations(&mut self, core: &Core) {
        let names: Vec<String> = core
            .nodes()
            .iter()
            .filter(|n| matches!(n.power.status, PowerStatus::On))
            .map(|n| n.name.clone())
            .collect();
        for name in names {
            self.send(&name, NodeOp::Register);
        }
    }

    fn send(&mut self, node: &str, op: NodeOp) {
        let tx = self.workers.entry(node.to_string()).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let w = Worker {
                node: node.to_string(),
                signer: self.signer.clone(),
                addrs: self.addrs.clone(),
                core: self.core.clone(),
                rpc_timeout: self.rpc_timeout,
                client: None,
            };
            tokio::spawn(w.run(rx));
            tx
        });
        let _ = tx.send(op);
    }
}

fn signal_op(job: sluice_vocab::FedJobId, kind: SignalKind, signal: i32) -> NodeOp {
    NodeOp::Signal(signal_req(job, kind, signal))
}

fn signal_req(job: sluice_vocab::FedJobId, kind: SignalKind, signal: i32) -> SignalJobRequest {
    SignalJobRequest {
        job_id: job.get(),
        kind: kind as i32,
        signal,
        step_id: None,
        batch_only: false,
    }
}

/// What the job credential of the batch launch `req` says: that job's script, as its user, on
/// its nodes, until [`CREDENTIAL_LIFETIME`] after `now`.
fn batch_credential(req: &LaunchBatchRequest, now: i64) -> JobCredentialBody {
    JobCredentialBody {
        job_id: req.job_id,
        step_id: None,
        uid: req.uid,
        gid: req.gid,
        node_list: req.node_list.clone(),
        cpus_per_node: req.cpus_per_node.clone(),
        expires: now + CREDENTIAL_LIFETIME,
        restart_count: req.restart_count,
        no_alloc: false,
    }
}

/// The launch request for a `LaunchBatch` command and the node it goes to (its first node).
fn launch_request(
    core: &Core,
    cluster: &str,
    ctld_addr: &str,
    cmd: &NodeCommand,
) -> Option<(sluice_vocab::NodeIdx, LaunchBatchRequest)> {
    let NodeCommand::LaunchBatch {
        job,
        array,
        uid,
        gid,
        nodes,
        node_list,
        ntasks,
        cpus_per_task,
        mem_per_node_mb,
        time_limit,
        launch,
    } = cmd
    else {
        return None;
    };
    let first = *nodes.first()?;
    let record = core.job(*job)?;
    // The CPUs the job holds on each node, as squeue and accounting count them.
    let cpus_per_node = core.cpus_held(*job, nodes);
    let partition = core
        .partitions()
        .get(record.partition.get())
        .map(|p| p.name.clone())
        .unwrap_or_default();
    let (count, min, max) = array
        .map(|a| {
            let tasks: Vec<u32> = core
                .array_task_indexes(a.job)
                .unwrap_or_else(|| vec![a.task]);
            let min = tasks.iter().copied().min().unwrap_or(a.task);
            let max = tasks.iter().copied().max().unwrap_or(a.task);
            (tasks.len() as u32, min, max)
        })
        .unwrap_or((0, 0, 0));
    let req = LaunchBatchRequest {
        job_id: job.get(),
        array_job_id: array.map_or(0, |a| a.job.get()),
        array_task_id: array.map(|a| a.task),
        name: record.name.clone(),
        uid: *uid,
        gid: *gid,
        // The submitter's login name as the controller looked it up; the worker falls back to
        // this host's name for the uid when the submission had none.
        user: launch.user.clone(),
        cluster: cluster.to_string(),
        partition,
        node_list: node_list.clone(),
        node_count: nodes.len() as u32,
        ntasks: *ntasks,
        // 0 unless `-c` was given, so SLURM_CPUS_PER_TASK stays unset as in Slurm.
        cpus_per_task: if launch.cpus_per_task_given {
            *cpus_per_task
        } else {
            0
        },
        cpus_on_node: cpus_per_node.first().copied().unwrap_or(0),
        mem_mb: mem_per_node_mb.unwrap_or(0),
        script: launch.script.clone(),
        workdir: launch.workdir.clone(),
        env: launch
            .env
            .iter()
            .chain(core.het_env(*job).iter())
            .map(|(name, value)| EnvVar {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        stdout: launch.stdout.clone().unwrap_or_default(),
        stderr: launch.stderr.clone().unwrap_or_default(),
        stdin: launch.stdin.clone().unwrap_or_default(),
        container: launch.container.clone(),
        submit_dir: launch.workdir.clone(),
        submit_host: launch.submit_host.clone(),
        time_limit_min: time_limit
            .as_secs()
            .map_or(-1, |s| i64::try_from(s / 60).unwrap_or(i64::MAX)),
        account: launch.account.clone(),
        array_task_count: count,
        array_task_min: min,
        array_task_max: max,
        ctld_addr: ctld_addr.to_string(),
        restart_count: record.restarts,
        cpus_per_node,
        script_args: launch.script_args.clone(),
        ntasks_per_node: record.req.place.ntasks_per_node.unwrap_or(0),
        open_append: launch.open_append == Some(true),
        credential: None,
        mem_per_cpu_mb: record.req.place.mem_per_cpu_mb.unwrap_or(0),
    };
    Some((first, req))
}

/// The prolog request of a job's allocation on `nodes` (`PrologFlags=Alloc`): every node of
/// an `srun`/`salloc` allocation, a batch job's nodes but its batch host.
fn alloc_request(
    core: &Core,
    cluster: &str,
    ctld_addr: &str,
    job: sluice_vocab::FedJobId,
    nodes: &[sluice_vocab::NodeIdx],
) -> Option<LaunchBatchRequest> {
    let record = core.job(job)?;
    let all = if record.nodes.is_empty() {
        nodes
    } else {
        &record.nodes[..]
    };
    let partition = core
        .partitions()
        .get(record.partition.get())
        .map(|p| p.name.clone())
        .unwrap_or_default();
    Some(LaunchBatchRequest {
        job_id: job.get(),
        name: record.name.clone(),
        uid: record.uid,
        gid: record.gid,
        user: record.launch.user.clone(),
        cluster: cluster.to_string(),
        partition,
        // The job's whole allocation (SLURM_JOB_NODELIST), not only the nodes asked here.
        node_list: core.nodes.hostlist(all),
        node_count: all.len() as u32,
        ntasks: record.req.ntasks,
        workdir: record.launch.workdir.clone(),
        account: record.launch.account.clone(),
        ctld_addr: ctld_addr.to_string(),
        restart_count: record.restarts,
        array_job_id: record.array.map_or(0, |a| a.job.get()),
        array_task_id: record.array.map(|a| a.task),
        ..Default::default()
    })
}

struct Worker {
    node: String,
    signer: Signer,
    addrs: NodeAddrs,
    core: CoreHandle,
    rpc_timeout: Duration,
    client: Option<((String, u16), NodedClient)>,
}

impl Worker {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<NodeOp>) {
        while let Some(mut op) = rx.recv().await {
            if let NodeOp::Launch(req) | NodeOp::Prolog(req) = &mut op
                && req.user.is_empty()
            {
                req.user = user_name(req.uid);
            }
            let mut pause = FIRST_PAUSE;
            let mut result = Err(String::new());
            for attempt in 1..=ATTEMPTS {
                result = self.try_once(&op).await;
                match &result {
                    Ok(()) => break,
                    Err(e) if attempt < ATTEMPTS => {
                        tracing::debug!(node = %self.node, attempt, "node command failed: {e}");
                        tokio::time::sleep(pause).await;
                        pause *= 2;
                    }
                    Err(_) => {}
                }
            }
            let Err(e) = result else { continue };
            match op {
                NodeOp::Launch(req) => {
                    tracing::error!(node = %self.node, job = req.job_id, "batch launch failed: {e}");
                    if let Ok(job) = sluice_vocab::FedJobId::from_raw(req.job_id) {
                        self.core.post(Msg::LaunchFailed {
                            job,
                            node: self.node.clone(),
                            run: req.restart_count,
                        });
                    }
                }
                NodeOp::Prolog(req) => {
                    // A node that does not answer is set DOWN by the core's timeout, which
                    // ends or requeues the job as for any node failure.
                    tracing::error!(node = %self.node, job = req.job_id, "prolog request not delivered: {e}");
                }
                NodeOp::Signal(req) => {
                    tracing::warn!(node = %self.node, job = req.job_id, kind = req.kind, "signal not delivered: {e}");
                }
                NodeOp::Register => {
                    // Its node daemon registers when it starts, or at its next heartbeat.
                    tracing::info!(node = %self.node, "registration request not delivered: {e}");
                }
            }
        }
    }

    async fn try_once(&mut self, op: &NodeOp) -> Result<(), String> {
        let target = self
            .addrs
            .read()
            .ok()
            .and_then(|m| m.get(&self.node).cloned())
            .ok_or_else(|| format!("no address for node {}", self.node))?;
        let client = match &mut self.client {
            Some((at, c)) if *at == target => c,
            slot => {
                let channel = connect_lazy(&target.0, target.1, self.signer.clone())
                    .map_err(|e| e.to_string())?;
                &mut slot.insert((target, NodeDaemonClient::new(channel))).1
            }
        };
        let status = match op {
            NodeOp::Launch(req) => {
                let mut r = tonic::Request::new((**req).clone());
                r.set_timeout(self.rpc_timeout);
                client.launch_batch(r).await.err()
            }
            NodeOp::Prolog(req) => {
                let mut r = tonic::Request::new((**req).clone());
                r.set_timeout(self.rpc_timeout);
                client.run_prolog(r).await.err()
            }
            NodeOp::Signal(req) => {
                let mut r = tonic::Request::new(*req);
                r.set_timeout(self.rpc_timeout);
                client.signal_job(r).await.err()
            }
            NodeOp::Register => {
                let mut r = tonic::Request::new(RegistrationRequest {});
                r.set_timeout(self.rpc_timeout);
                client.request_registration(r).await.err()
            }
        };
        match status {
            None => Ok(()),
            Some(s) => Err(format!("{}: {}", s.code(), s.message())),
        }
    }
}

/// The login name of `uid` on this host (its number when it has none).
pub fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |u| u.name)
}
