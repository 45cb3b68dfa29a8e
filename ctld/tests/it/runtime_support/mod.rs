//! Shared by the runtime tests: a controller (in-process, or the real binary) on loopback in a
//! temp StateSaveLocation, FAKE node daemons that record what the controller asks of them, and
//! signed clients. Waits are bounded; nothing sleeps to wait for a state.

pub mod fake_dbd;

use sluice_ctld::conf::CtldConf;
use sluice_ctld::runtime::{self, RuntimeConfig, persist::StateSink};
use sluice_ctld::service::server;
use sluice_ctld::store::StateStore;
use sluice_testkit::fake::node_daemon_server::{NodeDaemon, NodeDaemonServer};
use sluice_wire::auth::{Key, Signer, Verifier};
use sluice_wire::client::{CtldClient, connect};
use sluice_wire::proto::allocation_event::Event;
use sluice_wire::proto::controller_client::ControllerClient;
use sluice_wire::proto::{
    Ack, Allocation, AllocationEvent, JobExitedRequest, LaunchBatchRequest, NodePingReply, NodeRun,
    PingRequest, RegisterNodeRequest, SignalJobRequest, SubmitJobRequest,
};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// How long a test waits for anything.
pub const WAIT: Duration = Duration::from_secs(20);

/// The key every party shares.
pub fn key() -> Key {
    Key::from_bytes(vec![42; 64])
}

/// What a fake node daemon was asked to do.
#[derive(Debug, Clone)]
pub enum NodeEvent {
    Launch {
        node: String,
        req: Box<LaunchBatchRequest>,
    },
    Signal {
        req: SignalJobRequest,
    },
}

struct FakeNode {
    name: String,
    events: mpsc::UnboundedSender<NodeEvent>,
}

#[tonic::async_trait]
impl NodeDaemon for FakeNode {
    async fn step_input(
        &self,
        _: Request<tonic::Streaming<sluice_wire::proto::StepStdin>>,
    ) -> Result<Response<sluice_wire::proto::Ack>, Status> {
        Ok(Response::new(sluice_wire::proto::Ack {}))
    }

    async fn ping(&self, _: Request<PingRequest>) -> Result<Response<NodePingReply>, Status> {
        Ok(Response::new(NodePingReply::default()))
    }

    async fn launch_batch(
        &self,
        req: Request<LaunchBatchRequest>,
    ) -> Result<Response<Ack>, Status> {
        let _ = self.events.send(NodeEvent::Launch {
            node: self.name.clone(),
            req: Box::new(req.into_inner()),
        });
        Ok(Response::new(Ack {}))
    }

    async fn signal_job(&self, req: Request<SignalJobRequest>) -> Result<Response<Ack>, Status> {
        let _ = self.events.send(NodeEvent::Signal {
            req: req.into_inner(),
        });
        Ok(Response::new(Ack {}))
    }
}

/// Fake node daemons for `names`, all reporting to one channel; returns their ports.
pub async fn fake_nodes(names: &[&str]) -> (Vec<u16>, mpsc::UnboundedReceiver<NodeEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut ports = Vec::new();
    for name in names {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        ports.push(listener.local_addr().unwrap().port());
        let svc = FakeNode {
            name: name.to_string(),
            events: tx.clone(),
        };
        let svc = Verifier::new(key()).guard(NodeDaemonServer::new(svc));
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming(TcpListenerStream::new(listener)),
        );
    }
    (ports, rx)
}

/// The next event from the fake nodes (panics after [`WAIT`]).
pub async fn next_event(rx: &mut mpsc::UnboundedReceiver<NodeEvent>) -> NodeEvent {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("no node event in time")
        .expect("fake nodes gone")
}

/// `slurm.conf` for cluster `test` with nodes `n1..=n{nodes}` (2 CPUs each) in `debug`.
pub fn conf_text(state: &Path, nodes: u32, extra: &str) -> String {
    let node_lines: String = (1..=nodes)
        .map(|i| format!("NodeName=n{i} CPUs=2 RealMemory=1000 NodeAddr=127.0.0.1 Port=1\n"))
        .collect();
    format!(
        "ClusterName=test\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=0\n\
         StateSaveLocation={}\nSlurmdTimeout=0\nKillWait=0\nMinJobAge=300\n{node_lines}\
         PartitionName=debug Nodes=ALL Default=YES MaxTime=1:00:00\n{extra}",
        state.display()
    )
}

/// Parses `text` as the cluster's slurm.conf at `dir/slurm.conf` (written there too).
pub fn conf(dir: &Path, text: &str) -> CtldConf {
    let path = dir.join("slurm.conf");
    std::fs::write(&path, text).unwrap();
    CtldConf::parse(&path, text).unwrap().0
}

/// An in-process controller; dropped (or [`Ctld::stop`]) stops it.
pub struct Ctld {
    pub port: u16,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Ctld {
    /// Starts the controller for `conf` over `sink` (the real store when `None`).
    pub async fn start(conf: CtldConf, sink: Option<Box<dyn StateSink>>) -> Ctld {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cfg = RuntimeConfig {
            conf: conf.clone(),
            key: key(),
            ctld_addr: format!("127.0.0.1:{port}"),
        };
        let rt = match sink {
            None => runtime::start(cfg).unwrap(),
            Some(sink) => {
                let store = StateStore::open(&conf.state_save_location).unwrap();
                let snap = store.load().unwrap();
                runtime::start_with(cfg, sink, snap, None).unwrap()
            }
        };
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = rx.await;
            };
            server::serve_runtime(rt, conf, key(), listener, shutdown)
                .await
                .unwrap();
        });
        Ctld {
            port,
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// Stops it and waits until its core committed and stopped.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            t.await.unwrap();
        }
    }
}

/// A client of the controller on `port`, signed as `uid`.
pub async fn client(port: u16, uid: u32) -> CtldClient {
    let ch = connect("127.0.0.1", port, Signer::new(key(), uid))
        .await
        .unwrap();
    ControllerClient::new(ch)
}

/// A one-node job script submission named `name`.
pub fn job(name: &str) -> SubmitJobRequest {
    SubmitJobRequest {
        name: name.into(),
        script: "#!/bin/sh\ntrue\n".into(),
        workdir: "/tmp".into(),
        ..SubmitJobRequest::default()
    }
}

/// Registers node `name` as listening on `port` with its configured resources and the first
/// run of each of `jobs` (their batch scripts); returns the jobs whose runs it must kill.
pub async fn register(c: &mut CtldClient, name: &str, port: u16, jobs: Vec<u32>) -> Vec<u32> {
    let runs = jobs
        .iter()
        .map(|&job_id| NodeRun {
            job_id,
            restart_count: 0,
            batch: true,
            steps: Vec::new(),
        })
        .collect();
    c.register_node(RegisterNodeRequest {
        name: name.into(),
        cpus: 2,
        real_memory_mb: 1000,
        tmp_disk_mb: 0,
        boot_time: 1,
        running_jobs: jobs,
        addr: "127.0.0.1".into(),
        port: u32::from(port),
        pid: 0,
        running_runs: runs,
        again: false,
    })
    .await
    .unwrap()
    .into_inner()
    .kill_runs
    .into_iter()
    .map(|r| r.job_id)
    .collect()
}

/// Reports the exit of job `id`'s first run (its batch step) from `node`.
pub async fn exited(c: &mut CtldClient, node: &str, id: u32, code: i32) {
    c.job_exited(JobExitedRequest {
        node: node.into(),
        job_id: id,
        exit_code: code,
        signal: 0,
        at: 0,
        usage: None,
        restart_count: 0,
        step_id: -4,
        failed: 0,
        prolog_done: false,
    })
    .await
    .unwrap();
}

/// A controller whose one node `n1` (a fake) has registered, with an admin's client.
pub struct OneNode {
    /// The temporary directory everything lives in (kept for the test's length).
    pub _dir: tempfile::TempDir,
    pub ctld: Ctld,
    /// A client signed as root.
    pub admin: CtldClient,
    /// The port the fake node listens on.
    pub node_port: u16,
    /// What the fake node is asked to do.
    pub events: mpsc::UnboundedReceiver<NodeEvent>,
}

/// Starts a controller of one fake node `n1` with the default test configuration and registers
/// the node.
pub async fn one_node() -> OneNode {
    let (dir, state) = temp();
    let (ports, events) = fake_nodes(&["n1"]).await;
    let ctld = Ctld::start(conf(dir.path(), &conf_text(&state, 1, "")), None).await;
    let mut admin = client(ctld.port, 0).await;
    register(&mut admin, "n1", ports[0], vec![]).await;
    OneNode {
        _dir: dir,
        ctld,
        admin,
        node_port: ports[0],
        events,
    }
}

/// A temp dir with `state/` inside.
pub fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    (dir, state)
}

/// The allocation an `Allocate` stream grants, skipping what comes before it (queued reasons).
pub async fn granted(stream: &mut tonic::Streaming<AllocationEvent>) -> Allocation {
    loop {
        let ev = stream.message().await.unwrap().unwrap();
        if let Some(Event::Granted(a)) = ev.event {
            return a;
        }
    }
}
