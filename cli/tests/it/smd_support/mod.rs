//! A fake controller's `Nonstop` service for smd's tests: one job's allocation, a pool of
//! spares, a record of every request, and an event stream the test feeds while smd watches.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use sluice_testkit::fake::BoxStream;
use sluice_testkit::fake::nonstop_server::{Nonstop, NonstopServer};
use sluice_wire::auth::{KEY_FILE, Key};
use sluice_wire::proto::*;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::{TcpListenerStream, UnboundedReceiverStream};
use tonic::transport::Server;
use tonic::transport::server::Router;
use tonic::{Request, Response, Status};

/// What the fake knows and what it was asked.
#[derive(Debug, Default)]
pub struct NonstopState {
    pub alloc: NonstopAllocation,
    pub spares: Vec<String>,
    /// Every request, as `op job node/minutes`.
    pub calls: Vec<String>,
    /// The events a watcher gets first.
    pub events: Vec<NonstopEvent>,
    /// Where the test's later events come from (taken by the first watcher).
    pub later: Option<UnboundedReceiver<NonstopEvent>>,
}

pub type Shared = Arc<Mutex<NonstopState>>;

#[derive(Clone)]
struct Fake(Shared);

pub fn node(name: &str, state: NonstopNodeState) -> NonstopNode {
    NonstopNode {
        name: name.into(),
        cpus: 2,
        state: state as i32,
    }
}

fn relist(a: &mut NonstopAllocation) {
    let names: Vec<&str> = a.nodes.iter().map(|n| n.name.as_str()).collect();
    a.node_list = names.join(",");
    a.cpus_per_node = format!("2(x{})", names.len());
}

impl Fake {
    /// The job's allocation for `job`, or Slurm's refusal for someone else's.
    fn check(
        &self,
        job: u32,
        call: String,
    ) -> Result<std::sync::MutexGuard<'_, NonstopState>, Status> {
        let mut s = self.0.lock().unwrap();
        s.calls.push(call);
        if job != s.alloc.job_id {
            return Err(Status::permission_denied("Access/permission denied"));
        }
        Ok(s)
    }
}

#[tonic::async_trait]
impl Nonstop for Fake {
    async fn job_nodes(
        &self,
        r: Request<NonstopJobRequest>,
    ) -> Result<Response<NonstopAllocation>, Status> {
        let job = r.into_inner().job_id;
        let s = self.check(job, format!("nodes {job}"))?;
        Ok(Response::new(s.alloc.clone()))
    }
    async fn replace_node(
        &self,
        r: Request<NodeChangeRequest>,
    ) -> Result<Response<NonstopAllocation>, Status> {
        let r = r.into_inner();
        let mut s = self.check(r.job_id, format!("replace {} {}", r.job_id, r.node))?;
        if s.spares.is_empty() {
            return Err(Status::failed_precondition("Failed to replace the node"));
        }
        let spare = s.spares.remove(0);
        let Some(n) = s.alloc.nodes.iter_mut().find(|n| n.name == r.node) else {
            return Err(Status::not_found(format!(
                "Node {} is not in job {}",
                r.node, r.job_id
            )));
        };
        *n = node(&spare, NonstopNodeState::Ok);
        relist(&mut s.alloc);
        s.alloc.spares_used += 1;
        Ok(Response::new(s.alloc.clone()))
    }
    async fn drop_node(
        &self,
        r: Request<NodeChangeRequest>,
    ) -> Result<Response<NonstopAllocation>, Status> {
        let r = r.into_inner();
        let mut s = self.check(r.job_id, format!("drop {} {}", r.job_id, r.node))?;
        s.alloc.nodes.retain(|n| n.name != r.node);
        relist(&mut s.alloc);
        Ok(Response::new(s.alloc.clone()))
    }
    async fn drain_node(
        &self,
        r: Request<DrainNodeRequest>,
    ) -> Result<Response<NonstopAllocation>, Status> {
        let r = r.into_inner();
        let mut s = self.check(
            r.job_id,
            format!("drain {} {} {}", r.job_id, r.node, r.reason),
        )?;
        for n in s.alloc.nodes.iter_mut().filter(|n| n.name == r.node) {
            n.state = NonstopNodeState::Failing as i32;
        }
        Ok(Response::new(s.alloc.clone()))
    }
    async fn extend_time(
        &self,
        r: Request<ExtendTimeRequest>,
    ) -> Result<Response<NonstopAllocation>, Status> {
        let r = r.into_inner();
        let mut s = self.check(r.job_id, format!("extend {} {}", r.job_id, r.minutes))?;
        if r.minutes > s.alloc.extend_available_minutes {
            return Err(Status::failed_precondition(format!(
                "Job {} may extend its time limit by {} minutes at most",
                r.job_id, s.alloc.extend_available_minutes
            )));
        }
        s.alloc.time_limit_minutes += r.minutes;
        s.alloc.extend_available_minutes -= r.minutes;
        Ok(Response::new(s.alloc.clone()))
    }
    async fn watch_job(
        &self,
        r: Request<NonstopJobRequest>,
    ) -> Result<Response<BoxStream<NonstopEvent>>, Status> {
        let job = r.into_inner().job_id;
        let mut s = self.check(job, format!("watch {job}"))?;
        let first = tokio_stream::iter(s.events.clone());
        let later = s.later.take().unwrap_or_else(|| unbounded_channel().1);
        let stream = first.chain(UnboundedReceiverStream::new(later)).map(Ok);
        Ok(Response::new(Box::pin(stream)))
    }
}

/// A fake cluster: the Nonstop service on a loopback port, and a slurm.conf naming it.
pub struct FakeNonstop {
    pub state: Shared,
    pub port: u16,
    pub conf: PathBuf,
    /// Sends events to the stream of the first watcher.
    pub events: UnboundedSender<NonstopEvent>,
    pub dir: tempfile::TempDir,
}

impl FakeNonstop {
    /// Serves `alloc` with `spares`.
    pub fn start(alloc: NonstopAllocation, spares: &[&str]) -> Self {
        let (tx, rx) = unbounded_channel();
        let mut alloc = alloc;
        relist(&mut alloc);
        let state = Arc::new(Mutex::new(NonstopState {
            alloc,
            spares: spares.iter().map(|s| s.to_string()).collect(),
            later: Some(rx),
            ..NonstopState::default()
        }));
        let fake = Fake(state.clone());
        let port = serve(move || Server::builder().add_service(NonstopServer::new(fake)));
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = write_conf(dir.path(), port);
        Self {
            state,
            port,
            conf,
            events: tx,
            dir,
        }
    }

    /// The requests made so far.
    pub fn calls(&self) -> Vec<String> {
        self.state.lock().unwrap().calls.clone()
    }
}

/// Serves the router `make` builds on a loopback port from its own thread; returns the port.
pub fn serve(make: impl FnOnce() -> Router + Send + 'static) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr").port())
                .expect("port");
            let _ = make()
                .serve_with_incoming(TcpListenerStream::new(listener))
                .await;
        });
    });
    rx.recv().expect("fake server port")
}

/// slurm.conf and slurm.key in `dir` for a controller at `port`.
pub fn write_conf(dir: &Path, port: u16) -> PathBuf {
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!("ClusterName=c1\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={port}\nMessageTimeout=5\n"),
    )
    .expect("write slurm.conf");
    Key::create_if_missing(&dir.join(KEY_FILE)).expect("key");
    conf
}

/// A running job's allocation of `nodes` (2 CPUs each), 60 minutes, 30 more available.
pub fn alloc(job: u32, nodes: &[(&str, NonstopNodeState)]) -> NonstopAllocation {
    NonstopAllocation {
        job_id: job,
        nodes: nodes.iter().map(|(n, s)| node(n, *s)).collect(),
        time_limit_minutes: 60,
        extend_available_minutes: 30,
        spares_free: 1,
        ..Default::default()
    }
}

/// A job id no other test uses, so node files in /tmp do not collide.
pub fn unique_job(n: u32) -> u32 {
    900_000 + (std::process::id() % 5_000) * 16 + n
}

/// The smd binary.
pub const SMD: &str = env!("CARGO_BIN_EXE_smd");

/// Runs smd with `SLURM_CONF=conf`, `TZ=UTC`, no smd variables but `env`.
pub fn smd(conf: &Path, args: &[&str], env: &[(&str, &str)]) -> crate::fake::Output {
    let mut cmd = Command::new(SMD);
    cmd.args(args)
        .env("SLURM_CONF", conf)
        .env("TZ", "UTC")
        .env_remove("SLURM_JOB_ID")
        .env_remove("SMD_NONSTOP_FAILED")
        .env_remove("SMD_NONSTOP_FAILING")
        .env_remove("SMD_RETRY_INTERVAL")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("smd runs");
    crate::fake::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
