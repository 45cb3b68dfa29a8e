//! A fake `Controller` and fake `NodeDaemon`s in the test process, so srun's allocation,
//! step creation, output streaming, labels, exit codes and Ctrl-C can be checked without real
//! daemons. Each fake node plays a script of output chunks, waits where told to, and ends with
//! the task exits it was given; it records what it was asked.

use sluice_testkit::fake::BoxStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sluice_testkit::fake::controller_server::{Controller, ControllerServer};
use sluice_testkit::fake::node_daemon_server::{NodeDaemon, NodeDaemonServer};
use sluice_wire::auth::KEY_FILE;
use sluice_wire::proto::*;
use tokio::sync::Notify;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// One step of a fake node's script.
#[derive(Clone)]
pub enum Play {
    /// Send this chunk.
    Out {
        task: u32,
        stderr: bool,
        data: &'static str,
    },
    /// Wait until the test opens the gate.
    Wait(Arc<Notify>),
    /// Wait until srun signals the step (SignalJob).
    WaitForSignal,
    /// End with these exits: (task, exit code, signal).
    Exit(Vec<(u32, i32, i32)>),
}

/// What a fake node was asked.
#[derive(Debug, Default)]
pub struct NodeLog {
    pub run_requests: Vec<RunStepRequest>,
    pub signals: Vec<SignalJobRequest>,
}

#[derive(Clone)]
struct FakeNode {
    script: Vec<Play>,
    log: Arc<Mutex<NodeLog>>,
    signalled: Arc<Notify>,
}

#[tonic::async_trait]
impl NodeDaemon for FakeNode {
    async fn step_input(
        &self,
        _: Request<tonic::Streaming<sluice_wire::proto::StepStdin>>,
    ) -> Result<Response<sluice_wire::proto::Ack>, Status> {
        Ok(Response::new(sluice_wire::proto::Ack {}))
    }

    async fn run_step(
        &self,
        req: Request<RunStepRequest>,
    ) -> Result<Response<BoxStream<StepOutput>>, Status> {
        self.log.lock().unwrap().run_requests.push(req.into_inner());
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let script = self.script.clone();
        let signalled = self.signalled.clone();
        tokio::spawn(async move {
            for play in script {
                let msg = match play {
                    Play::Out { task, stderr, data } => StepOutput {
                        task,
                        data: data.as_bytes().to_vec(),
                        stderr,
                        ..Default::default()
                    },
                    Play::Wait(gate) => {
                        gate.notified().await;
                        continue;
                    }
                    Play::WaitForSignal => {
                        signalled.notified().await;
                        continue;
                    }
                    Play::Exit(exits) => StepOutput {
                        exits: exits
                            .into_iter()
                            .map(|(task, exit_code, signal)| TaskExit {
                                task,
                                exit_code,
                                signal,
                            })
                            .collect(),
                        ..Default::default()
                    },
                };
                if tx.send(Ok(msg)).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }
    async fn signal_job(&self, req: Request<SignalJobRequest>) -> Result<Response<Ack>, Status> {
        self.log.lock().unwrap().signals.push(req.into_inner());
        self.signalled.notify_one();
        Ok(Response::new(Ack {}))
    }
}

/// Starts a fake node daemon playing `script`; returns its port and its log.
pub async fn start_node(script: Vec<Play>) -> (u16, Arc<Mutex<NodeLog>>) {
    let log = Arc::new(Mutex::new(NodeLog::default()));
    let node = FakeNode {
        script,
        log: log.clone(),
        signalled: Arc::new(Notify::new()),
    };
    let port = serve(move |incoming| {
        tonic::transport::Server::builder()
            .add_service(NodeDaemonServer::new(node))
            .serve_with_incoming(incoming)
    })
    .await;
    (port, log)
}

/// What the fake controller answers and what it was asked.
#[derive(Debug, Default)]
pub struct CtldLog {
    /// Events the Allocate stream sends.
    pub allocate_events: Vec<AllocationEvent>,
    /// How many Allocate calls are refused first with EAGAIN ("try again later").
    pub busy_allocations: u32,
    /// The step CreateStep returns.
    pub step: CreateStepReply,
    pub allocate_requests: Vec<SubmitJobRequest>,
    pub step_requests: Vec<CreateStepRequest>,
    pub done: Vec<StepDoneRequest>,
    pub cancels: Vec<CancelRequest>,
}

#[derive(Clone)]
struct FakeCtld(Arc<Mutex<CtldLog>>);

#[tonic::async_trait]
impl Controller for FakeCtld {
    async fn allocate(
        &self,
        r: Request<SubmitJobRequest>,
    ) -> Result<Response<BoxStream<AllocationEvent>>, Status> {
        let mut s = self.0.lock().unwrap();
        s.allocate_requests.push(r.into_inner());
        if s.busy_allocations > 0 {
            s.busy_allocations -= 1;
            return Err(Status::unavailable("Resource temporarily unavailable"));
        }
        let events: Vec<Result<AllocationEvent, Status>> =
            s.allocate_events.iter().cloned().map(Ok).collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(events))))
    }
    async fn create_step(
        &self,
        r: Request<CreateStepRequest>,
    ) -> Result<Response<CreateStepReply>, Status> {
        let mut s = self.0.lock().unwrap();
        s.step_requests.push(r.into_inner());
        Ok(Response::new(s.step.clone()))
    }
    async fn step_done(&self, r: Request<StepDoneRequest>) -> Result<Response<Ack>, Status> {
        self.0.lock().unwrap().done.push(r.into_inner());
        Ok(Response::new(Ack {}))
    }
    async fn cancel(&self, r: Request<CancelRequest>) -> Result<Response<CancelReply>, Status> {
        self.0.lock().unwrap().cancels.push(r.into_inner());
        Ok(Response::new(CancelReply::default()))
    }
}

/// Starts the fake controller; returns its port and its log.
pub async fn start_ctld(log: CtldLog) -> (u16, Arc<Mutex<CtldLog>>) {
    let log = Arc::new(Mutex::new(log));
    let ctld = FakeCtld(log.clone());
    let port = serve(move |incoming| {
        tonic::transport::Server::builder()
            .add_service(ControllerServer::new(ctld))
            .serve_with_incoming(incoming)
    })
    .await;
    (port, log)
}

async fn serve<F, Fut>(make: F) -> u16
where
    F: FnOnce(TcpListenerStream) -> Fut,
    Fut: std::future::Future<Output = Result<(), tonic::transport::Error>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(make(TcpListenerStream::new(listener)));
    port
}

/// The allocation of `nodes` fake node daemons (names n0, n1, ...).
pub fn allocation(job_id: u32, ports: &[u16], ntasks: u32) -> Allocation {
    Allocation {
        job_id,
        node_list: format!("n[0-{}]", ports.len().saturating_sub(1)),
        nodes: ports
            .iter()
            .enumerate()
            .map(|(i, p)| NodeAddr {
                name: format!("n{i}"),
                addr: "127.0.0.1".into(),
                port: u32::from(*p),
            })
            .collect(),
        ntasks,
        cpus_per_task: 1,
        cpus_per_node: vec![1; ports.len()],
        tasks_per_node: Vec::new(),
        het_env: Vec::new(),
    }
}

/// Writes `slurm.conf` (pointing at the fake controller) and `slurm.key` into `dir`.
pub fn write_conf(dir: &Path, ctld_port: u16) -> PathBuf {
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!("ClusterName=c1\nSlurmctldHost=127.0.0.1\nSlurmctldPort={ctld_port}\n"),
    )
    .unwrap();
    let key = dir.join(KEY_FILE);
    std::fs::write(&key, [7u8; 64]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    conf
}

/// The chunks a [`Tap`] saw, as they arrive.
pub type Chunks = tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>;
/// Everything a [`Tap`] saw.
pub type Seen = Arc<Mutex<Vec<u8>>>;

/// A writer that keeps everything and also hands each chunk to a channel, so a test can see
/// output while srun is still running.
pub struct Tap {
    pub seen: Arc<Mutex<Vec<u8>>>,
    tx: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
}

impl Tap {
    /// A tap and the receiving end of its chunks.
    pub fn new() -> (Self, Chunks, Seen) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let seen = Arc::new(Mutex::new(Vec::new()));
        (
            Self {
                seen: seen.clone(),
                tx,
            },
            rx,
            seen,
        )
    }
}

impl std::io::Write for Tap {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.seen.lock().unwrap().extend_from_slice(buf);
        let _ = self.tx.send(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The text a shared buffer holds.
pub fn text(buf: &Arc<Mutex<Vec<u8>>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap()).into_owned()
}
