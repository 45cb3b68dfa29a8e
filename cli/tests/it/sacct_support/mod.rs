//! A real accounting daemon in the test process (SQLite in a temp dir, ephemeral port), loaded
//! with job records through `RecordBatch` as a controller sends them, for driving the real
//! `sacct` binary.

use std::path::PathBuf;
use std::process::Command;

use sluice_wire::auth::{KEY_FILE, Key, Signer};
use sluice_wire::client::{connect, connect_dbd};
use sluice_wire::proto::accounting_records_client::AccountingRecordsClient;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::*;
use tokio::sync::oneshot;

/// What a command did.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A running dbd with a `slurm.conf` (cluster `c1`) pointing at it; stopped on drop.
pub struct Dbd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    rt: tokio::runtime::Runtime,
    stop: Option<oneshot::Sender<()>>,
    server: Option<std::thread::JoinHandle<()>>,
}

impl Dbd {
    /// Starts the daemon with clusters `clusters` registered.
    pub fn start(clusters: &[&str]) -> Dbd {
        let dir = tempfile::tempdir().expect("temp dir");
        let user = nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map_or_else(|| "root".to_string(), |u| u.name);
        let conf = format!(
            "DbdHost=127.0.0.1\nDbdPort=0\nSlurmUser={user}\n\
             StorageType=accounting_storage/sqlite\nStorageLoc={}\n",
            dir.path().join("acct.db").display()
        );
        std::fs::write(dir.path().join("slurmdbd.conf"), conf).expect("write slurmdbd.conf");
        Key::create_if_missing(&dir.path().join(KEY_FILE)).expect("key");
        let config = sluice_dbd::config::DbdConfig::load(&dir.path().join("slurmdbd.conf"))
            .expect("slurmdbd.conf");
        let listener = sluice_dbd::daemon::bind(&config).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stopped) = oneshot::channel::<()>();
        let server = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let shutdown = async {
                    let _ = stopped.await;
                };
                sluice_dbd::daemon::serve(config, listener, shutdown)
                    .await
                    .expect("dbd serves");
            });
        });
        std::fs::write(
            dir.path().join("slurm.conf"),
            format!(
                "ClusterName=c1\nAccountingStorageType=accounting_storage/slurmdbd\n\
                 AccountingStorageHost=127.0.0.1\nAccountingStoragePort={port}\n"
            ),
        )
        .expect("write slurm.conf");
        let dbd = Dbd {
            dir,
            port,
            rt: tokio::runtime::Runtime::new().expect("runtime"),
            stop: Some(stop),
            server: Some(server),
        };
        dbd.admin(|mut c| async move {
            c.add_clusters(AddClustersRequest {
                names: clusters.iter().map(|s| s.to_string()).collect(),
                commit: true,
                ..Default::default()
            })
            .await
            .map(|_| ())
        });
        dbd
    }

    fn signer(&self) -> Signer {
        Signer::for_current_user(Key::load(&self.dir.path().join(KEY_FILE)).expect("key"))
    }

    /// Runs `f` with an accounting client (the listener is bound before the daemon starts, so
    /// connecting never races it).
    pub fn admin<F, Fut>(&self, f: F)
    where
        F: FnOnce(sluice_wire::client::DbdClient) -> Fut,
        Fut: std::future::Future<Output = Result<(), tonic::Status>>,
    {
        let signer = self.signer();
        let port = self.port;
        self.rt.block_on(async move {
            let client = connect_dbd("127.0.0.1", port, signer).await.expect("dbd");
            f(client).await.expect("admin request");
        });
    }

    /// Sends `records` of `cluster` (numbered from `first_seq`) in one `RecordBatch`.
    pub fn send(&self, cluster: &str, first_seq: u64, records: Vec<Kind>) {
        let signer = self.signer();
        let port = self.port;
        let records: Vec<AcctRecord> = records
            .into_iter()
            .enumerate()
            .map(|(i, kind)| AcctRecord {
                seq: first_seq + i as u64,
                kind: Some(kind),
            })
            .collect();
        self.rt.block_on(async move {
            let channel = connect("127.0.0.1", port, signer).await.expect("dbd");
            AccountingRecordsClient::new(channel)
                .record_batch(RecordBatchRequest {
                    cluster: cluster.into(),
                    records,
                    stream_id: 1,
                })
                .await
                .expect("record batch");
        });
    }

    /// The `slurm.conf` commands read.
    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// Runs `bin` with `args` in UTC against this dbd.
    pub fn run(&self, bin: &str, args: &[&str]) -> Output {
        self.run_env(bin, args, &[])
    }

    /// Like [`Dbd::run`], with extra environment variables.
    pub fn run_env(&self, bin: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .env("SLURM_CONF", self.conf())
            .env("TZ", "UTC")
            .env_remove("SACCT_FORMAT")
            .env_remove("SACCT_FEDERATION")
            .env_remove("SACCT_LOCAL");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run command");
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Drop for Dbd {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

/// A submit record.
pub fn submitted(job: u32, user: (u32, &str), account: &str, submit: i64) -> Kind {
    Kind::JobSubmitted(JobSubmittedRecord {
        job_id: job,
        name: format!("job{job}"),
        uid: user.0,
        gid: user.0,
        user: user.1.into(),
        account: account.into(),
        partition: "debug".into(),
        submit,
        eligible: submit,
        time_limit_min: 60,
        req_nodes: 1,
        req_cpus: 2,
        req_mem_mb: 1000,
        workdir: "/tmp".into(),
        ..Default::default()
    })
}

/// A start record on `nodes` (`count` nodes, 2 CPUs each).
pub fn started(job: u32, start: i64, nodes: &str, count: u32) -> Kind {
    Kind::JobStarted(JobStartedRecord {
        job_id: job,
        start,
        node_list: nodes.into(),
        node_count: count,
        cpus: 2 * count,
        mem_mb: 1000,
        ..Default::default()
    })
}

/// An end record.
pub fn ended(job: u32, end: i64, state: u32, exit_code: i32, requester: Option<u32>) -> Kind {
    Kind::JobEnded(JobEndedRecord {
        job_id: job,
        end,
        state,
        exit_code,
        requester_uid: requester,
        ..Default::default()
    })
}

/// A finished step record.
pub fn step(job: u32, step_id: i32, name: &str, start: i64, end: i64, state: u32) -> Kind {
    Kind::Step(StepRecord {
        job_id: job,
        step_id,
        name: name.into(),
        start,
        end,
        state,
        node_list: "n1".into(),
        node_count: 1,
        ntasks: 1,
        cpus: 2,
        ..Default::default()
    })
}
