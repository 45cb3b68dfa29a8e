//! A federation for driving the real commands: a real accounting daemon in the test process
//! (SQLite in a temp dir, ephemeral port) holding the clusters and the federation, and one fake
//! controller per cluster (a tonic server answering from [`FakeCtld`]), registered in the dbd
//! with its address as a real controller registers. `slurm.conf` names `c1` as the local
//! cluster.

use sluice_testkit::dbd::{Backend, TestDbd};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

use sluice_testkit::fake::controller_server::{Controller, ControllerServer};
use sluice_wire::auth::Signer;
use sluice_wire::client::{DbdClient, connect_dbd};
use sluice_wire::proto::*;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// What one fake controller answers and what it was asked.
#[derive(Debug, Default)]
pub struct FakeCtld {
    pub name: String,
    pub jobs: Vec<JobInfo>,
    pub nodes: Vec<NodeInfo>,
    pub partitions: Vec<PartitionInfo>,
    /// `--test-only` answer: when the job would start (None: it cannot run here).
    pub will_run: Option<i64>,
    /// The id the next accepted job gets.
    pub next_id: u32,
    pub submitted: Vec<SubmitJobRequest>,
    pub cancels: Vec<CancelRequest>,
    pub list_calls: usize,
}

/// One fake controller's shared state.
pub type Shared = Arc<Mutex<FakeCtld>>;

#[derive(Clone)]
struct Fake(Shared);

#[tonic::async_trait]
impl Controller for Fake {
    async fn submit(
        &self,
        r: Request<SubmitJobRequest>,
    ) -> Result<Response<SubmitJobReply>, Status> {
        let mut s = self.0.lock().unwrap();
        let req = r.into_inner();
        let cluster = s.name.clone();
        if req.test_only {
            let Some(start) = s.will_run else {
                return Err(Status::invalid_argument(
                    "Requested node configuration is not available",
                ));
            };
            s.submitted.push(req);
            return Ok(Response::new(SubmitJobReply {
                job_id: s.next_id,
                cluster,
                test_start: start,
                ..Default::default()
            }));
        }
        s.submitted.push(req);
        let job_id = s.next_id;
        s.next_id += 1;
        Ok(Response::new(SubmitJobReply {
            job_id,
            cluster,
            ..Default::default()
        }))
    }
    async fn list_jobs(
        &self,
        r: Request<ListJobsRequest>,
    ) -> Result<Response<ListJobsReply>, Status> {
        let mut s = self.0.lock().unwrap();
        let req = r.into_inner();
        s.list_calls += 1;
        let jobs = s
            .jobs
            .iter()
            .filter(|j| req.job_ids.is_empty() || req.job_ids.contains(&j.job_id))
            .cloned()
            .collect();
        Ok(Response::new(ListJobsReply { jobs }))
    }
    async fn list_nodes(
        &self,
        _: Request<ListNodesRequest>,
    ) -> Result<Response<ListNodesReply>, Status> {
        let nodes = self.0.lock().unwrap().nodes.clone();
        Ok(Response::new(ListNodesReply { nodes }))
    }
    async fn list_partitions(
        &self,
        _: Request<ListPartitionsRequest>,
    ) -> Result<Response<ListPartitionsReply>, Status> {
        let partitions = self.0.lock().unwrap().partitions.clone();
        Ok(Response::new(ListPartitionsReply { partitions }))
    }
    async fn cancel(&self, r: Request<CancelRequest>) -> Result<Response<CancelReply>, Status> {
        let mut s = self.0.lock().unwrap();
        let req = r.into_inner();
        // A sibling withdrawal of a started job is refused, as the dbd refuses it.
        let errors = if req.sibling.is_empty() {
            Vec::new()
        } else {
            req.job_ids
                .iter()
                .filter(|id| {
                    s.jobs.iter().any(|j| {
                        j.job_id == **id && j.state == sluice_vocab::JobState::Running.stored()
                    })
                })
                .map(|id| JobError {
                    job_id: *id,
                    job: String::new(),
                    message: "Job is no longer pending execution".into(),
                })
                .collect()
        };
        let cancelled = req
            .job_ids
            .iter()
            .filter(|id| !errors.iter().any(|e| e.job_id == **id))
            .copied()
            .collect();
        s.cancels.push(req);
        Ok(Response::new(CancelReply { cancelled, errors }))
    }
}

/// Starts a fake controller on a loopback port of its own; returns its state and port.
fn start_fake(state: FakeCtld) -> (Shared, u16) {
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
                .add_service(ControllerServer::new(fake))
                .serve_with_incoming(TcpListenerStream::new(listener))
                .await;
        });
    });
    let port = rx.recv().expect("fake controller port");
    (shared, port)
}

/// What a command did.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A dbd with clusters, a federation and a fake controller per registered cluster.
pub struct Fed {
    dbd: TestDbd,
    pub dbd_port: u16,
    /// The fake controllers by cluster name.
    pub ctlds: Vec<(String, Shared)>,
    /// Their ports by cluster name.
    pub ports: Vec<(String, u16)>,
    rt: tokio::runtime::Runtime,
}

impl Fed {
    /// Starts the dbd with `clusters`, puts `members` in federation `fed1` (in that order, so
    /// their fed ids are 1, 2, ...), and starts and registers a fake controller for every
    /// cluster in `registered`.
    pub fn start(clusters: &[&str], members: &[&str], registered: &[&str]) -> Fed {
        let dbd = TestDbd::start(Backend::Sqlite);
        let dbd_port = dbd.port();
        let mut ctlds = Vec::new();
        let mut ports = Vec::new();
        for name in registered {
            let (shared, port) = start_fake(FakeCtld {
                name: name.to_string(),
                next_id: 1,
                ..Default::default()
            });
            ctlds.push((name.to_string(), shared));
            ports.push((name.to_string(), port));
        }
        let local_port = ports.iter().find(|(n, _)| n == "c1").map_or(1, |(_, p)| *p);
        std::fs::write(
            dbd.dir().join("slurm.conf"),
            format!(
                "ClusterName=c1\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={local_port}\n\
                 AccountingStorageHost=127.0.0.1\nAccountingStoragePort={dbd_port}\n"
            ),
        )
        .expect("write slurm.conf");
        let fed = Fed {
            dbd,
            dbd_port,
            ctlds,
            ports: ports.clone(),
            rt: tokio::runtime::Runtime::new().expect("runtime"),
        };
        let clusters: Vec<String> = clusters.iter().map(|s| s.to_string()).collect();
        let members: Vec<String> = members.iter().map(|s| s.to_string()).collect();
        fed.admin(|mut c| async move {
            c.add_clusters(AddClustersRequest {
                names: clusters,
                commit: true,
                ..Default::default()
            })
            .await?;
            if !members.is_empty() {
                c.add_federations(AddFederationsRequest {
                    names: vec!["fed1".into()],
                    clusters: Vec::new(),
                    commit: true,
                })
                .await?;
                // One at a time: fed ids follow the order of joining.
                for m in members {
                    c.modify_clusters(ModifyClustersRequest {
                        names: vec![m],
                        federation: Some("fed1".into()),
                        commit: true,
                        ..Default::default()
                    })
                    .await?;
                }
            }
            for (name, port) in ports {
                c.modify_clusters(ModifyClustersRequest {
                    names: vec![name],
                    control_host: Some("127.0.0.1".into()),
                    control_port: Some(u32::from(port)),
                    commit: true,
                    ..Default::default()
                })
                .await?;
            }
            Ok(())
        });
        fed
    }

    fn signer(&self) -> Signer {
        self.dbd.signer()
    }

    /// Runs `f` with an admin client of the dbd.
    pub fn admin<F, Fut>(&self, f: F)
    where
        F: FnOnce(DbdClient) -> Fut,
        Fut: std::future::Future<Output = Result<(), Status>>,
    {
        let signer = self.signer();
        let port = self.dbd_port;
        self.rt.block_on(async move {
            let client = connect_dbd("127.0.0.1", port, signer).await.expect("dbd");
            f(client).await.expect("admin request");
        });
    }

    /// Sends `records` of `cluster` (numbered from 1) in one `RecordBatch`, as its controller
    /// would.
    pub fn send(&self, cluster: &str, records: Vec<acct_record::Kind>) {
        let signer = self.signer();
        let port = self.dbd_port;
        let records: Vec<AcctRecord> = records
            .into_iter()
            .enumerate()
            .map(|(i, kind)| AcctRecord {
                seq: i as u64 + 1,
                kind: Some(kind),
            })
            .collect();
        self.rt.block_on(async move {
            let channel = sluice_wire::client::connect("127.0.0.1", port, signer)
                .await
                .expect("dbd");
            accounting_records_client::AccountingRecordsClient::new(channel)
                .record_batch(RecordBatchRequest {
                    cluster: cluster.into(),
                    records,
                    stream_id: 1,
                })
                .await
                .expect("record batch");
        });
    }

    /// The port of `cluster`'s fake controller.
    pub fn port(&self, cluster: &str) -> u16 {
        self.ports
            .iter()
            .find(|(n, _)| n == cluster)
            .map(|(_, p)| *p)
            .expect("a registered cluster")
    }

    /// The fake controller of `cluster`.
    pub fn ctld(&self, cluster: &str) -> Shared {
        self.ctlds
            .iter()
            .find(|(n, _)| n == cluster)
            .map(|(_, s)| s.clone())
            .expect("a fake controller for the cluster")
    }

    /// The `slurm.conf` the commands read.
    pub fn conf(&self) -> PathBuf {
        self.dbd.dir().join("slurm.conf")
    }

    /// Runs `bin` with `args` in UTC against this federation (local cluster c1).
    pub fn run(&self, bin: &str, args: &[&str]) -> Output {
        let out = Command::new(bin)
            .args(args)
            .env("SLURM_CONF", self.conf())
            .env("TZ", "UTC")
            .current_dir(self.dbd.dir())
            .env_remove("SQUEUE_FORMAT")
            .env_remove("SQUEUE_FORMAT2")
            .env_remove("SQUEUE_SORT")
            .env_remove("SINFO_FORMAT")
            .env_remove("SLURM_CLUSTERS")
            .env_remove("SBATCH_CLUSTERS")
            .env_remove("SQUEUE_CLUSTERS")
            .env_remove("SINFO_CLUSTERS")
            .output()
            .expect("run command");
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}
