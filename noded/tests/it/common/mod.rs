//! Test harness: a temp cluster directory with a `slurm.conf`, real node daemons served
//! in-process, a fake controller, and bounded waits.
pub mod fake_ctld;

use sluice_testkit::eventually;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sluice_noded::{NodedConfig, NodedError, Prepared};
use sluice_wire::auth::credential::CredentialKey;
use sluice_wire::auth::{Key, Signer};
use sluice_wire::client::NodedClient;
use sluice_wire::proto::node_daemon_client::NodeDaemonClient;
use sluice_wire::proto::{Ack, JobCredentialBody, LaunchBatchRequest, RunStepRequest, StepOutput};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use fake_ctld::{DEADLINE, FakeCtld};

/// A cluster directory: `slurm.conf`, spool and job directories.
pub struct TestCluster {
    pub dir: tempfile::TempDir,
    pub key: Key,
    pub conf: PathBuf,
}

impl TestCluster {
    /// A cluster whose controller is at 127.0.0.1:`ctld_port`, with `node_lines` appended.
    pub fn new(ctld_port: u16, node_lines: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Jobs of other users must reach their scripts in the spool.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let conf = dir.path().join("slurm.conf");
        let text = format!(
            "ClusterName=tc\nSlurmctldHost=ctl(127.0.0.1)\nSlurmctldPort={ctld_port}\n\
             SlurmdSpoolDir={}/spool\n{node_lines}\n",
            dir.path().display()
        );
        std::fs::write(&conf, text).unwrap();
        Self {
            dir,
            key: Key::from_bytes(vec![42; 64]),
            conf,
        }
    }

    /// A path inside the cluster directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A fresh working directory for a job.
    pub fn workdir(&self, name: &str) -> PathBuf {
        let dir = self.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Starts node daemon `name` in-process.
    pub async fn start_noded(&self, name: &str) -> RunningNoded {
        let mut config = NodedConfig::load(&self.conf, Some(name)).unwrap();
        config.stepd = env!("CARGO_BIN_EXE_sluice-stepd").into();
        let spool = config.spool_dir.clone();
        let listener = sluice_noded::bind(&config).unwrap();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let prepared = Prepared::new(config, self.key.clone(), listener).unwrap();
        let port = prepared.port();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(prepared.serve(async {
            let _ = stopped.await;
        }));
        RunningNoded {
            port,
            spool,
            key: self.key.clone(),
            stop: Some(stop),
            task: Some(task),
        }
    }
}

/// A node daemon served by the test's runtime.
pub struct RunningNoded {
    pub port: u16,
    pub spool: PathBuf,
    key: Key,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), NodedError>>>,
}

impl RunningNoded {
    /// A client signed as `uid` that adds the controller's job credential to launches that
    /// have none (as the controller and srun do).
    pub async fn client_as(&self, uid: u32) -> CredClient {
        CredClient::new(self.raw_client_as(uid).await, &self.key)
    }

    /// A client signed as `uid` that sends launches as they are.
    pub async fn raw_client_as(&self, uid: u32) -> NodedClient {
        let signer = Signer::new(self.key.clone(), uid);
        let channel = sluice_wire::client::connect("127.0.0.1", self.port, signer)
            .await
            .unwrap();
        NodeDaemonClient::new(channel)
    }

    /// A client signed as this process's uid (an admin of the daemon).
    pub async fn client(&self) -> CredClient {
        self.client_as(nix::unistd::geteuid().as_raw()).await
    }

    /// Stops the daemon (its jobs' processes go on).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(DEADLINE, task)
                .await
                .expect("the node daemon stops")
                .unwrap()
                .unwrap();
        }
    }
}

/// A node daemon's client whose launches carry the job credential the controller would issue
/// for them; other calls go to the plain client.
pub struct CredClient {
    inner: NodedClient,
    creds: CredentialKey,
}

impl CredClient {
    /// `inner`, adding credentials under the cluster key `key`.
    pub fn new(inner: NodedClient, key: &Key) -> Self {
        Self {
            inner,
            creds: CredentialKey::derive(key),
        }
    }

    /// `LaunchBatch`, with the credential of this batch script unless `req` has one.
    pub async fn launch_batch(
        &mut self,
        mut req: LaunchBatchRequest,
    ) -> Result<tonic::Response<Ack>, tonic::Status> {
        if req.credential.is_none() {
            req.credential = Some(self.creds.issue(&JobCredentialBody {
                job_id: req.job_id,
                step_id: None,
                uid: req.uid,
                gid: req.gid,
                node_list: req.node_list.clone(),
                cpus_per_node: req.cpus_per_node.clone(),
                expires: credential_expiry(),
                restart_count: req.restart_count,
                no_alloc: false,
            }));
        }
        self.inner.launch_batch(req).await
    }

    /// `RunStep`, with the credential of this step unless `req` has one.
    pub async fn run_step(
        &mut self,
        mut req: RunStepRequest,
    ) -> Result<tonic::Response<tonic::Streaming<StepOutput>>, tonic::Status> {
        if req.credential.is_none() {
            req.credential = Some(self.creds.issue(&JobCredentialBody {
                job_id: req.job_id,
                step_id: Some(req.step_id),
                uid: req.uid,
                gid: req.gid,
                node_list: req.node_list.clone(),
                cpus_per_node: Vec::new(),
                expires: credential_expiry(),
                restart_count: 0,
                // The ids of srun -Z steps go with credentials saying so.
                no_alloc: sluice_vocab::ids::is_no_alloc(req.job_id),
            }));
        }
        self.inner.run_step(req).await
    }
}

impl std::ops::Deref for CredClient {
    type Target = NodedClient;
    fn deref(&self) -> &NodedClient {
        &self.inner
    }
}

impl std::ops::DerefMut for CredClient {
    fn deref_mut(&mut self) -> &mut NodedClient {
        &mut self.inner
    }
}

fn credential_expiry() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    now + sluice_wire::auth::credential::CREDENTIAL_LIFETIME
}

/// A launch of `script` as job `job_id` by the current user, running in `workdir`.
pub fn launch_request(job_id: u32, workdir: &Path, script: &str) -> LaunchBatchRequest {
    LaunchBatchRequest {
        job_id,
        name: format!("job{job_id}"),
        uid: nix::unistd::getuid().as_raw(),
        gid: nix::unistd::getgid().as_raw(),
        user: "tester".into(),
        cluster: "tc".into(),
        partition: "debug".into(),
        node_list: "n1".into(),
        node_count: 1,
        ntasks: 1,
        cpus_on_node: 1,
        script: script.to_string(),
        workdir: workdir.display().to_string(),
        submit_dir: workdir.display().to_string(),
        submit_host: "login1".into(),
        account: "acct".into(),
        ..Default::default()
    }
}

/// Waits (bounded) for a file a job writes and returns its content once it ends in a newline.
pub async fn wait_for_file(path: &Path) -> String {
    eventually(
        &format!("{} to end in a newline", path.display()),
        async || {
            std::fs::read_to_string(path)
                .ok()
                .filter(|text| text.ends_with('\n'))
        },
    )
    .await
}

/// Whether process group `pgid` is suspended: it has a stopped process (`T`) and none that runs
/// or sleeps. A shell caught in `vfork` (its child stopped before `exec`) waits in `D`.
pub fn group_stopped(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    let states: Vec<char> = entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| {
            let mut f = stat.rsplit_once(')')?.1.split_whitespace();
            let state = f.next()?.chars().next()?;
            let (_ppid, group) = (f.next()?, f.next()?.parse::<i32>().ok()?);
            (group == pgid).then_some(state)
        })
        .collect();
    states.contains(&'T') && states.iter().all(|s| matches!(s, 'T' | 't' | 'D' | 'Z'))
}

/// The state letter of `/proc/<pid>/stat` (`R`, `S`, `T`, `Z`...), `None` once it is gone.
pub fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Whether `pid` is gone (or a zombie nobody reaped yet).
pub fn is_dead(pid: i32) -> bool {
    matches!(proc_state(pid), None | Some('Z') | Some('X'))
}
