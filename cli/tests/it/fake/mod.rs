//! Fake `Controller` and `AccountingRecords` servers in the test process, so the real
//! squeue/sinfo/scontrol/sacct binaries can be driven against known data. The fake answers the
//! read RPCs from [`FakeState`], records the change requests, and can refuse any call with a
//! chosen status.

use sluice_testkit::fake::BoxStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use sluice_testkit::fake::accounting_records_server::{AccountingRecords, AccountingRecordsServer};
use sluice_testkit::fake::controller_server::{Controller, ControllerServer};
use sluice_wire::auth::{KEY_FILE, Key};
use sluice_wire::proto::*;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// What the fake servers answer and what they were asked.
#[derive(Debug, Default)]
pub struct FakeState {
    pub jobs: Vec<JobInfo>,
    pub nodes: Vec<NodeInfo>,
    pub partitions: Vec<PartitionInfo>,
    pub config: Vec<(String, String)>,
    pub rows: Vec<JobRow>,
    /// Per-job errors ControlJob/UpdateJob reply with.
    pub job_errors: Vec<JobError>,
    /// A status every UpdateNode call fails with.
    pub node_update_error: Option<String>,
    pub list_jobs_requests: Vec<ListJobsRequest>,
    pub control_requests: Vec<ControlJobRequest>,
    pub update_job_requests: Vec<UpdateJobRequest>,
    pub update_node_requests: Vec<UpdateNodeRequest>,
    pub queries: Vec<JobQuery>,
}

/// Shared state of one fake cluster.
pub type Shared = Arc<Mutex<FakeState>>;

#[derive(Clone)]
struct Fake(Shared);

#[tonic::async_trait]
impl Controller for Fake {
    async fn list_jobs(
        &self,
        r: Request<ListJobsRequest>,
    ) -> Result<Response<ListJobsReply>, Status> {
        let mut s = self.0.lock().unwrap();
        let req = r.into_inner();
        let jobs = s
            .jobs
            .iter()
            .filter(|j| {
                req.job_ids.is_empty()
                    || req
                        .job_ids
                        .iter()
                        .any(|id| *id == j.job_id || *id == j.array_job_id)
            })
            .filter(|j| req.uids.is_empty() || req.uids.contains(&j.uid))
            .cloned()
            .collect();
        s.list_jobs_requests.push(req);
        Ok(Response::new(ListJobsReply { jobs }))
    }
    async fn list_nodes(
        &self,
        r: Request<ListNodesRequest>,
    ) -> Result<Response<ListNodesReply>, Status> {
        let names = r.into_inner().names;
        let s = self.0.lock().unwrap();
        let nodes = s
            .nodes
            .iter()
            .filter(|n| names.is_empty() || names.contains(&n.name))
            .cloned()
            .collect();
        Ok(Response::new(ListNodesReply { nodes }))
    }
    async fn list_partitions(
        &self,
        r: Request<ListPartitionsRequest>,
    ) -> Result<Response<ListPartitionsReply>, Status> {
        let names = r.into_inner().names;
        let s = self.0.lock().unwrap();
        let partitions = s
            .partitions
            .iter()
            .filter(|p| names.is_empty() || names.contains(&p.name))
            .cloned()
            .collect();
        Ok(Response::new(ListPartitionsReply { partitions }))
    }
    async fn get_config(
        &self,
        _: Request<GetConfigRequest>,
    ) -> Result<Response<ConfigReply>, Status> {
        let s = self.0.lock().unwrap();
        let entries = s
            .config
            .iter()
            .map(|(k, v)| EnvVar {
                name: k.clone(),
                value: v.clone(),
            })
            .collect();
        Ok(Response::new(ConfigReply {
            entries,
            now: 1_795_255_200,
        }))
    }
    async fn control_job(
        &self,
        r: Request<ControlJobRequest>,
    ) -> Result<Response<ControlJobReply>, Status> {
        let mut s = self.0.lock().unwrap();
        s.control_requests.push(r.into_inner());
        Ok(Response::new(ControlJobReply {
            errors: s.job_errors.clone(),
        }))
    }
    async fn update_job(
        &self,
        r: Request<UpdateJobRequest>,
    ) -> Result<Response<ControlJobReply>, Status> {
        let mut s = self.0.lock().unwrap();
        s.update_job_requests.push(r.into_inner());
        Ok(Response::new(ControlJobReply {
            errors: s.job_errors.clone(),
        }))
    }
    async fn update_partition(
        &self,
        _r: Request<UpdatePartitionRequest>,
    ) -> Result<Response<Ack>, Status> {
        Err(Status::unimplemented("not faked"))
    }
    async fn update_node(&self, r: Request<UpdateNodeRequest>) -> Result<Response<Ack>, Status> {
        let mut s = self.0.lock().unwrap();
        s.update_node_requests.push(r.into_inner());
        match &s.node_update_error {
            Some(text) => Err(Status::invalid_argument(text.clone())),
            None => Ok(Response::new(Ack {})),
        }
    }
}

#[tonic::async_trait]
impl AccountingRecords for Fake {
    async fn list_jobs(
        &self,
        r: Request<JobQuery>,
    ) -> Result<Response<BoxStream<JobRows>>, Status> {
        let mut s = self.0.lock().unwrap();
        let q = r.into_inner();
        let rows: Vec<JobRow> = s
            .rows
            .iter()
            .filter(|j| q.job_ids.is_empty() || q.job_ids.contains(&j.job_id))
            .filter(|j| q.uids.is_empty() || q.uids.contains(&j.uid))
            .cloned()
            .collect();
        s.queries.push(q);
        // One row per chunk, as a dbd's first small chunks could be.
        let chunks: Vec<Result<JobRows, Status>> = rows
            .into_iter()
            .map(|row| Ok(JobRows { rows: vec![row] }))
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }
}

/// A running fake cluster: its state, and a `slurm.conf` (with key) pointing at it.
pub struct FakeCluster {
    pub state: Shared,
    pub conf: PathBuf,
    _dir: tempfile::TempDir,
}

impl FakeCluster {
    /// Starts both fake services on one loopback port, on a runtime of their own.
    pub fn start(state: FakeState) -> Self {
        let shared: Shared = Arc::new(Mutex::new(state));
        let fake = Fake(shared.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                tx.send(listener.local_addr().expect("addr").port())
                    .expect("port");
                let _ = tonic::transport::Server::builder()
                    .add_service(ControllerServer::new(fake.clone()))
                    .add_service(AccountingRecordsServer::new(fake))
                    .serve_with_incoming(TcpListenerStream::new(listener))
                    .await;
            });
        });
        let port = rx.recv().expect("fake server port");
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = write_conf(dir.path(), port);
        Self {
            state: shared,
            conf,
            _dir: dir,
        }
    }

    /// Runs a command binary against this cluster (UTC, so timestamps are fixed).
    pub fn run(&self, bin: &str, args: &[&str]) -> Output {
        run_bin(bin, &self.conf, args)
    }
}

/// Writes `slurm.conf` and `slurm.key` in `dir` for a controller and dbd at `port`.
pub fn write_conf(dir: &Path, port: u16) -> PathBuf {
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!(
            "ClusterName=c1\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={port}\n\
             AccountingStorageHost=127.0.0.1\nAccountingStoragePort={port}\n"
        ),
    )
    .expect("write slurm.conf");
    Key::create_if_missing(&dir.join(KEY_FILE)).expect("key");
    conf
}

/// What a command printed and returned.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `bin` (a path from `env!("CARGO_BIN_EXE_...")`) with `SLURM_CONF=conf` and `TZ=UTC`.
pub fn run_bin(bin: &str, conf: &Path, args: &[&str]) -> Output {
    let out = Command::new(bin)
        .args(args)
        .env("SLURM_CONF", conf)
        .env("TZ", "UTC")
        .env_remove("SQUEUE_FORMAT")
        .env_remove("SQUEUE_FORMAT2")
        .env_remove("SQUEUE_SORT")
        .env_remove("SINFO_FORMAT")
        .env_remove("SACCT_FORMAT")
        .output()
        .expect("command runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A configuration whose daemons are not running (a port nothing listens on).
pub fn dead_conf(dir: &Path) -> PathBuf {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    write_conf(dir, port)
}
