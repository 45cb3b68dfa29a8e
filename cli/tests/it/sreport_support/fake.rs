//! A fake accounting daemon for sreport: its `Reports` service answers from [`FakeState`] and
//! records the queries; `Accounting` answers the federation list.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sluice_testkit::fake::accounting_server::{Accounting, AccountingServer};
use sluice_testkit::fake::reports_server::{Reports, ReportsServer};
use sluice_wire::proto::*;
use tonic::{Request, Response, Status};

use super::{Output, run_bin, write_conf};

/// What the fake answers, and the queries it was sent.
#[derive(Debug, Default)]
pub struct FakeState {
    pub clusters: Vec<ClusterUsage>,
    pub assocs: Vec<AssocUsage>,
    pub sizes: Vec<JobSizesRow>,
    pub federations: Vec<Federation>,
    pub usage_queries: Vec<UsageQuery>,
    pub size_queries: Vec<JobSizesQuery>,
}

#[derive(Clone)]
struct Fake(Arc<Mutex<FakeState>>);

fn in_scope(clusters: &[String], c: &str) -> bool {
    clusters.is_empty() || clusters.iter().any(|x| x == c)
}

#[tonic::async_trait]
impl Reports for Fake {
    async fn cluster_utilization(
        &self,
        r: Request<UsageQuery>,
    ) -> Result<Response<ClusterUsageReply>, Status> {
        let q = r.into_inner();
        let mut s = self.0.lock().unwrap();
        let rows = s
            .clusters
            .iter()
            .filter(|u| in_scope(&q.clusters, &u.cluster) && q.tres.contains(&u.tres))
            .cloned()
            .collect();
        s.usage_queries.push(q);
        Ok(Response::new(ClusterUsageReply {
            rows,
            table: "day".into(),
        }))
    }
    async fn assoc_utilization(
        &self,
        r: Request<UsageQuery>,
    ) -> Result<Response<AssocUsageReply>, Status> {
        let q = r.into_inner();
        let mut s = self.0.lock().unwrap();
        let rows = s
            .assocs
            .iter()
            .filter(|u| in_scope(&q.clusters, &u.cluster) && q.tres.contains(&u.tres))
            .filter(|u| q.users.is_empty() || q.users.contains(&u.user))
            .cloned()
            .collect();
        let clusters = s
            .clusters
            .iter()
            .filter(|u| in_scope(&q.clusters, &u.cluster))
            .cloned()
            .collect();
        s.usage_queries.push(q);
        Ok(Response::new(AssocUsageReply {
            rows,
            clusters,
            table: "day".into(),
        }))
    }
    async fn job_sizes(
        &self,
        r: Request<JobSizesQuery>,
    ) -> Result<Response<JobSizesReply>, Status> {
        let q = r.into_inner();
        let mut s = self.0.lock().unwrap();
        let rows = s
            .sizes
            .iter()
            .filter(|u| in_scope(&q.clusters, &u.cluster))
            .cloned()
            .collect();
        s.size_queries.push(q);
        Ok(Response::new(JobSizesReply {
            rows,
            clusters: Vec::new(),
            sizes: Vec::new(),
        }))
    }
}

#[tonic::async_trait]
impl Accounting for Fake {
    async fn list_federations(
        &self,
        r: Request<ListFederationsRequest>,
    ) -> Result<Response<ListFederationsReply>, Status> {
        let q = r.into_inner();
        let s = self.0.lock().unwrap();
        let federations = s
            .federations
            .iter()
            .filter(|f| {
                q.clusters
                    .iter()
                    .all(|c| f.clusters.iter().any(|m| &m.name == c))
            })
            .cloned()
            .collect();
        Ok(Response::new(ListFederationsReply { federations }))
    }
}

/// A running fake dbd and a `slurm.conf` (cluster c1) pointing at it.
pub struct FakeDbd {
    pub state: Arc<Mutex<FakeState>>,
    pub conf: PathBuf,
    _dir: tempfile::TempDir,
}

impl FakeDbd {
    /// Serves `state` on a loopback port, on a runtime of its own.
    pub fn start(state: FakeState) -> Self {
        let state = Arc::new(Mutex::new(state));
        let fake = Fake(state.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                tx.send(listener.local_addr().expect("addr").port())
                    .expect("port");
                let incoming =
                    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
                let _ = tonic::transport::Server::builder()
                    .add_service(ReportsServer::new(fake.clone()))
                    .add_service(AccountingServer::new(fake))
                    .serve_with_incoming(incoming)
                    .await;
            });
        });
        let port = rx.recv().expect("fake port");
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = write_conf(dir.path(), port);
        Self {
            state,
            conf,
            _dir: dir,
        }
    }

    /// Runs sreport against this dbd.
    pub fn run(&self, args: &[&str]) -> Output {
        run_bin(&self.conf, args, None)
    }

    /// The usage queries received so far.
    pub fn queries(&self) -> Vec<UsageQuery> {
        self.state.lock().unwrap().usage_queries.clone()
    }
}
