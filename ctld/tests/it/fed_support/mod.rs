//! Shared by the federation runtime tests: a REAL accounting daemon (the `sluice_dbd` store and
//! services, in-process, on a temp SQLite database) holding a federation, and member clusters:
//! in-process controllers registered with it, each with one fake node daemon. Every wait is
//! bounded; nothing sleeps to wait for a state.

pub mod lossy;

use super::runtime_support::{self as rs, Ctld, NodeEvent};
use sluice_ctld::core::LaunchSpec;
use sluice_ctld::core::federation::FedDesc;
use sluice_ctld::runtime::persist::StateSink;
use sluice_dbd::service::{AccountingService, FederationService, RecordsService};
use sluice_dbd::store::{AddClusters, AddFederations, Apply, ModifyClusters, Store};
use sluice_testkit::{eventually, eventually_seen};
use sluice_wire::auth::{Signer, Verifier};
use sluice_wire::client::{CtldClient, FedArbiterClient, connect};
use sluice_wire::proto::controller_federation_client::ControllerFederationClient;
use sluice_wire::proto::fed_arbiter_client;
use sluice_wire::proto::{
    FedJobInfo, FedJobRequest, FederationView, GetFederationRequest, JobInfo, ListJobsRequest,
    SubmitJobRequest,
};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tonic::transport::server::TcpIncoming;

/// The dbd clock for admin changes made directly in the store.
fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A real dbd serving the accounting, records and federation services.
pub struct Dbd {
    pub port: u16,
    names: Vec<String>,
    pub store: Arc<Store>,
    task: tokio::task::JoinHandle<()>,
    settler: tokio::task::JoinHandle<()>,
}

impl Drop for Dbd {
    fn drop(&mut self) {
        self.task.abort();
        self.settler.abort();
    }
}

impl Dbd {
    /// A dbd on a new SQLite file in `dir` with clusters `names` in federation `fed` (fed ids
    /// in the order given).
    pub async fn start(dir: &Path, names: &[&str]) -> Dbd {
        Self::start_losing(dir, names, lossy::Loss::default()).await
    }

    /// Like [`Dbd::start`], with the federation service losing the answers `loss` names.
    pub async fn start_losing(dir: &Path, names: &[&str], loss: lossy::Loss) -> Dbd {
        let url = format!("sqlite://{}", dir.join("acct.db").display());
        let now = unix_now();
        let store = Arc::new(Store::connect_at(&url, now).unwrap());
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let add = AddClusters {
            names: names.clone(),
            ..Default::default()
        };
        store.add_clusters(&add, Apply::Commit, now).unwrap();
        let fed = AddFederations {
            names: vec!["fed".into()],
            clusters: names.clone(),
        };
        store.add_federations(&fed, Apply::Commit, now).unwrap();
        // The controllers sign as the user running the tests: an administrator here.
        let admins = vec![0, nix::unistd::getuid().as_raw()];
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let verifier = Verifier::new(rs::key());
        let federation = FederationService::new(Arc::clone(&store), admins.clone());
        let settler = federation.spawn_settler(Duration::from_millis(300));
        let federation = lossy::LoseAnswers::new(federation.into_server(), loss);
        let federation = verifier.guard(federation);
        let records = RecordsService::new(Arc::clone(&store), admins.clone());
        let records = verifier.guard(records.into_server());
        let accounting = AccountingService::new(Arc::clone(&store), admins).into_server();
        let accounting = verifier.guard(accounting);
        let task = tokio::spawn(async move {
            let _ = tonic::transport::Server::builder()
                .add_service(accounting)
                .add_service(records)
                .add_service(federation)
                .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
                .await;
        });
        Dbd {
            port,
            names,
            store,
            task,
            settler,
        }
    }

    /// Sets `cluster`'s fedstate (stored value), as `sacctmgr modify cluster` would.
    pub fn set_fed_state(&self, cluster: &str, state: u32) {
        let req = ModifyClusters {
            names: vec![cluster.into()],
            fed_state: Some(state),
            ..Default::default()
        };
        self.store
            .modify_clusters(&req, Apply::Commit, unix_now())
            .unwrap();
    }

    /// A client of the federation arbiter (signed as an administrator), for acting as a
    /// cluster whose controller is not running.
    pub async fn arbiter(&self) -> FedArbiterClient {
        let ch = connect("127.0.0.1", self.port, Signer::new(rs::key(), 0))
            .await
            .unwrap();
        fed_arbiter_client::FedArbiterClient::new(ch)
    }

    /// The dbd's record of `job`.
    pub async fn job(&self, job: u32) -> FedJobInfo {
        let mut c = self.arbiter().await;
        c.get_fed_job(FedJobRequest {
            cluster: self.names[0].clone(),
            job_id: job,
        })
        .await
        .unwrap()
        .into_inner()
    }

    /// Waits until `f` holds for the dbd's record of `job`.
    pub async fn wait_job(
        &self,
        job: u32,
        what: &str,
        f: impl Fn(&FedJobInfo) -> bool,
    ) -> FedJobInfo {
        eventually_seen(&format!("dbd: {what}"), async || {
            let info = self.job(job).await;
            if f(&info) { Ok(info) } else { Err(info) }
        })
        .await
    }
}

/// A member cluster: its controller and its one fake node `n1` (2 CPUs).
pub struct Member {
    pub name: String,
    pub ctld: Option<Ctld>,
    pub port: u16,
    pub node_port: u16,
    pub events: mpsc::UnboundedReceiver<NodeEvent>,
    conf: String,
}

/// `slurm.conf` of member `name` whose node listens on `node_port`.
fn conf_text(name: &str, state: &Path, node_port: u16, dbd_port: u16) -> String {
    format!(
        "ClusterName={name}\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=0\n\
         StateSaveLocation={}\nSlurmdTimeout=0\nKillWait=0\nMinJobAge=300\n\
         AccountingStorageHost=127.0.0.1\nAccountingStoragePort={dbd_port}\n\
         NodeName=n1 CPUs=2 RealMemory=1000 NodeAddr=127.0.0.1 Port={node_port}\n\
         PartitionName=debug Nodes=ALL Default=YES MaxTime=1:00:00\n",
        state.display()
    )
}

/// A member's real state store whose commits fail while the flag is set (a full disk).
struct Gate {
    inner: sluice_ctld::store::StateStore,
    full: Arc<AtomicBool>,
}

impl StateSink for Gate {
    fn commit(
        &mut self,
        core: &sluice_ctld::core::Core,
        saves: &[sluice_ctld::core::SaveHint],
        acct: &[sluice_ctld::core::AcctRecord],
    ) -> Result<(), String> {
        if self.full.load(Ordering::SeqCst) {
            return Err("database or disk is full (test)".into());
        }
        StateSink::commit(&mut self.inner, core, saves, acct)
    }

    fn load(&self) -> Result<sluice_ctld::store::Snapshot, String> {
        StateSink::load(&self.inner)
    }
}

impl Member {
    /// [`Member::start`] over a state store whose commits fail while the returned flag is
    /// set.
    pub async fn start_gated(
        dir: &Path,
        name: &str,
        dbd_port: u16,
        node_up: bool,
    ) -> (Member, Arc<AtomicBool>) {
        let cdir = dir.join(name);
        std::fs::create_dir_all(&cdir).unwrap();
        let state = cdir.join("state");
        std::fs::create_dir_all(&state).unwrap();
        let (ports, events) = rs::fake_nodes(&["n1"]).await;
        let text = conf_text(name, &state, ports[0], dbd_port);
        let full = Arc::new(AtomicBool::new(false));
        let gate = Gate {
            inner: sluice_ctld::store::StateStore::open(&state).unwrap(),
            full: full.clone(),
        };
        let ctld = Ctld::start(rs::conf(&cdir, &text), Some(Box::new(gate))).await;
        let m = Member {
            name: name.to_string(),
            port: ctld.port,
            ctld: Some(ctld),
            node_port: ports[0],
            events,
            conf: text,
        };
        if node_up {
            m.node_up().await;
        }
        m.wait_view("registered", |v| v.federation == "fed").await;
        (m, full)
    }

    /// Starts member `name` under `dir`, registered with the dbd on `dbd_port`; its node
    /// registers too unless `node_up` is false.
    pub async fn start(dir: &Path, name: &str, dbd_port: u16, node_up: bool) -> Member {
        let cdir = dir.join(name);
        std::fs::create_dir_all(&cdir).unwrap();
        let state = cdir.join("state");
        let (ports, events) = rs::fake_nodes(&["n1"]).await;
        let text = conf_text(name, &state, ports[0], dbd_port);
        let mut m = Member {
            name: name.to_string(),
            ctld: None,
            port: 0,
            node_port: ports[0],
            events,
            conf: text,
        };
        m.restart(&cdir, node_up).await;
        m
    }

    /// (Re)starts the controller over its saved state.
    pub async fn restart(&mut self, cdir: &Path, node_up: bool) {
        let conf = rs::conf(cdir, &self.conf);
        let ctld = Ctld::start(conf, None).await;
        self.port = ctld.port;
        self.ctld = Some(ctld);
        if node_up {
            self.node_up().await;
        }
        self.wait_view("registered", |v| v.federation == "fed")
            .await;
    }

    /// Registers its node with the controller.
    pub async fn node_up(&self) {
        let mut c = self.client(0).await;
        rs::register(&mut c, "n1", self.node_port, vec![]).await;
    }

    /// Stops the controller (its state stays).
    pub async fn stop(&mut self) {
        if let Some(c) = self.ctld.take() {
            c.stop().await;
        }
    }

    /// A client of its controller, signed as `uid`.
    pub async fn client(&self, uid: u32) -> CtldClient {
        rs::client(self.port, uid).await
    }

    /// sbatch as this process's user: retried while the controller waits for its first job
    /// ids (EAGAIN), as sbatch does; the new job's id or the refusal.
    pub async fn try_submit(&self, req: SubmitJobRequest) -> Result<u32, tonic::Status> {
        let mut c = self.client(nix::unistd::getuid().as_raw()).await;
        eventually_seen("job ids", async || match c.submit(req.clone()).await {
            Err(s) if s.code() == tonic::Code::ResourceExhausted => Err(s),
            other => Ok(other.map(|r| r.into_inner().job_id)),
        })
        .await
    }

    /// Like [`Member::try_submit`], for a job that must be accepted.
    pub async fn submit(&self, req: SubmitJobRequest) -> u32 {
        self.try_submit(req).await.expect("submit")
    }

    /// `scontrol show federation`'s data.
    pub async fn view(&self) -> FederationView {
        let ch = connect("127.0.0.1", self.port, Signer::new(rs::key(), 0))
            .await
            .unwrap();
        ControllerFederationClient::new(ch)
            .get_federation(GetFederationRequest {})
            .await
            .unwrap()
            .into_inner()
    }

    /// Waits until its view satisfies `f`.
    pub async fn wait_view(
        &self,
        what: &str,
        f: impl Fn(&FederationView) -> bool,
    ) -> FederationView {
        eventually_seen(&format!("{}: {what}", self.name), async || {
            let v = self.view().await;
            if f(&v) { Ok(v) } else { Err(v) }
        })
        .await
    }

    /// Its jobs (finished ones too) with id `job`.
    pub async fn jobs(&self, job: u32) -> Vec<JobInfo> {
        let mut c = self.client(0).await;
        c.list_jobs(ListJobsRequest {
            job_ids: vec![job],
            include_finished: true,
            ..ListJobsRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .jobs
    }

    /// Waits until its copy of `job` satisfies `f` (`None`: no copy).
    pub async fn wait_job(&self, job: u32, what: &str, f: impl Fn(Option<&JobInfo>) -> bool) {
        eventually_seen(&format!("{}: job {job}: {what}", self.name), async || {
            let jobs = self.jobs(job).await;
            if f(jobs.first()) { Ok(()) } else { Err(jobs) }
        })
        .await
    }

    /// Launches its node was asked for so far (without waiting).
    pub fn launched_now(&mut self) -> Vec<u32> {
        let mut ids = Vec::new();
        while let Ok(ev) = self.events.try_recv() {
            if let NodeEvent::Launch { req, .. } = ev {
                ids.push(req.job_id);
            }
        }
        ids
    }
}

/// A job description as an origin sends it (for submissions made directly at the dbd).
pub fn desc(name: &str) -> Vec<u8> {
    FedDesc {
        uid: nix::unistd::getuid().as_raw(),
        gid: nix::unistd::getgid().as_raw(),
        groups: vec![nix::unistd::getgid().as_raw()],
        name: name.into(),
        min_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        requeue: true,
        submit_time: 1_700_000_000,
        launch: LaunchSpec {
            script: "#!/bin/sh\ntrue\n".into(),
            workdir: "/tmp".into(),
            ..LaunchSpec::default()
        },
        ..FedDesc::default()
    }
    .encode()
}

/// The next launch any of `members`' nodes is asked for: (member index, job id).
pub async fn next_launch(members: &mut [&mut Member]) -> (usize, u32) {
    eventually("a launch", async || {
        members
            .iter_mut()
            .enumerate()
            .find_map(|(i, m)| match m.events.try_recv() {
                Ok(NodeEvent::Launch { req, .. }) => Some((i, req.job_id)),
                _ => None,
            })
    })
    .await
}
