//! A real accounting daemon in the test process (SQLite in a temp dir, ephemeral port), loaded
//! with job records through `RecordBatch` as a controller sends them, for driving the real
//! `sacct` binary.

use std::path::PathBuf;
use std::process::Command;

use sluice_testkit::dbd::{Backend, TestDbd};
use sluice_wire::auth::Signer;
use sluice_wire::client::{connect, connect_dbd};
use sluice_wire::proto::accounting_records_client::AccountingRecordsClient;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::*;

/// What a command did.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A running dbd with a `slurm.conf` (cluster `c1`) pointing at it; stopped on drop.
pub struct Dbd {
    dbd: TestDbd,
    pub port: u16,
    rt: tokio::runtime::Runtime,
}

impl Dbd {
    /// Starts the daemon (SQLite) with clusters `clusters` registered.
    pub fn start(clusters: &[&str]) -> Dbd {
        let dbd = TestDbd::start(Backend::Sqlite);
        let port = dbd.port();
        std::fs::write(
            dbd.dir().join("slurm.conf"),
            format!(
                "ClusterName=c1\nAccountingStorageType=accounting_storage/slurmdbd\n\
                 AccountingStorageHost=127.0.0.1\nAccountingStoragePort={port}\n"
            ),
        )
        .expect("write slurm.conf");
        let dbd = Dbd {
            dbd,
            port,
            rt: tokio::runtime::Runtime::new().expect("runtime"),
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
        self.dbd.signer()
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
        self.dbd.dir().join("slurm.conf")
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
