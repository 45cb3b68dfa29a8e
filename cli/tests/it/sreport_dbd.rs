//! `sreport` end to end: the dbd's real store and services (SQLite in a temp dir, ephemeral
//! port), a synthetic day of history sent through `RecordBatch` as a controller sends it,
//! rolled up, and the real binary printing hand-computed minutes.
//!
//! Cluster c1 on 2026-11-01 (UTC): 10 CPUs on two 5-CPU nodes all day (864,000 CPU-seconds).
//! * n1 down 02:00-04:00: 5 x 7,200 = 36,000 down.
//! * n2 powered down 20:00-22:00: 5 x 7,200 = 36,000 planned down.
//! * alice (phys) 4 CPUs 01:00-03:00: 28,800 allocated.
//! * bob (phys) 3 CPUs, eligible 05:00, started 06:00, ended 10:00: 43,200 allocated and
//!   10,800 planned (waiting).
//!
//! So allocated 72,000 s = 1,200 min, down 600, planned down 600, planned 180, idle
//! 864,000 - 72,000 - 36,000 - 36,000 - 10,800 = 709,200 s = 11,820 min, reported 14,400.

use crate::sreport_support;

use std::sync::Arc;

use sluice_dbd::service::{AccountingService, RecordsService, ReportsService};
use sluice_dbd::store::usage::PurgePolicy;
use sluice_dbd::store::{AddAccounts, AddClusters, AddUsers, Apply, Store};
use sluice_reports::Calendar;
use sluice_vocab::states::JobState;
use sluice_wire::auth::{KEY_FILE, Key, Signer, Verifier};
use sluice_wire::client::connect;
use sluice_wire::proto::accounting_records_client::AccountingRecordsClient;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::*;
use sreport_support::{RULE, run_bin, write_conf};

/// 2026-11-01T00:00:00Z.
const DAY0: i64 = 1_793_491_200;
const HOUR: i64 = 3_600;
/// The dbd's clock: well after the day, so the day's table is read.
const NOW: i64 = DAY0 + 10 * 86_400;

struct Dbd {
    store: Arc<Store>,
    port: u16,
    dir: tempfile::TempDir,
    conf: std::path::PathBuf,
}

fn start() -> Dbd {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("acct.db").display());
    let store = Arc::new(Store::connect_at(&url, DAY0 - 86_400).expect("store"));
    let before = DAY0 - 86_400;
    let clusters = AddClusters {
        names: vec!["c1".into()],
        ..Default::default()
    };
    store
        .add_clusters(&clusters, Apply::Commit, before)
        .expect("cluster");
    let accounts = AddAccounts {
        names: vec!["phys".into()],
        ..Default::default()
    };
    store
        .add_accounts(&accounts, Apply::Commit, before)
        .expect("account");
    let users = AddUsers {
        names: vec!["alice".into(), "bob".into()],
        accounts: vec!["phys".into()],
        ..Default::default()
    };
    store
        .add_users(&users, Apply::Commit, before)
        .expect("users");

    Key::create_if_missing(&dir.path().join(KEY_FILE)).expect("key");
    let key = Key::load(&dir.path().join(KEY_FILE)).expect("key");
    let admins = vec![nix::unistd::getuid().as_raw()];
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let served = Arc::clone(&store);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let verifier = Verifier::new(key);
            let clock = Arc::new(|| NOW);
            let reports = ReportsService::new(Arc::clone(&served), Calendar::utc(), clock);
            let records = RecordsService::new(Arc::clone(&served), admins.clone());
            let accounting = AccountingService::new(served, admins);
            let incoming =
                tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
            let _ = tonic::transport::Server::builder()
                .add_service(verifier.guard(reports.into_server()))
                .add_service(verifier.guard(records.into_server()))
                .add_service(verifier.guard(accounting.into_server()))
                .serve_with_incoming(incoming)
                .await;
        });
    });
    let conf = write_conf(dir.path(), port);
    Dbd {
        store,
        port,
        dir,
        conf,
    }
}

impl Dbd {
    /// Sends `kinds` as cluster c1's records 1.. in one batch, as a controller does.
    fn send(&self, kinds: Vec<Kind>) {
        let records = kinds
            .into_iter()
            .enumerate()
            .map(|(i, kind)| AcctRecord {
                seq: i as u64 + 1,
                kind: Some(kind),
            })
            .collect();
        let key = Key::load(&self.dir.path().join(KEY_FILE)).expect("key");
        let port = self.port;
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let reply = rt.block_on(async move {
            let channel = connect("127.0.0.1", port, Signer::for_current_user(key))
                .await
                .expect("dbd");
            AccountingRecordsClient::new(channel)
                .record_batch(RecordBatchRequest {
                    cluster: "c1".into(),
                    records,
                    stream_id: 7,
                })
                .await
                .expect("record batch")
                .into_inner()
        });
        assert!(reply.applied_seq > 0, "records applied");
    }
}

fn node(name: &str, at: i64, kind: &str) -> Kind {
    Kind::NodeEvent(NodeEventRecord {
        node: name.into(),
        at,
        kind: kind.into(),
        reason: "test".into(),
        reason_uid: 0,
        cpus: 5,
    })
}

/// A finished job: submitted and eligible at `eligible`, running `cpus` from `start` to `end`.
fn job(id: u32, user: &str, cpus: u32, eligible: i64, start: i64, end: i64) -> Vec<Kind> {
    vec![
        Kind::JobSubmitted(JobSubmittedRecord {
            job_id: id,
            name: format!("job{id}"),
            user: user.into(),
            account: "phys".into(),
            partition: "debug".into(),
            submit: eligible,
            eligible,
            time_limit_min: -1,
            req_nodes: 1,
            req_cpus: cpus,
            ..Default::default()
        }),
        Kind::JobStarted(JobStartedRecord {
            job_id: id,
            start,
            node_list: "n2".into(),
            node_count: 1,
            cpus,
            mem_mb: 100,
            eligible,
            ..Default::default()
        }),
        Kind::JobEnded(JobEndedRecord {
            job_id: id,
            end,
            state: JobState::Completed.stored(),
            ..Default::default()
        }),
    ]
}

fn history() -> Dbd {
    let dbd = start();
    let mut kinds = vec![Kind::Capacity(ClusterCapacityRecord {
        at: DAY0,
        cpus: 10,
        mem_mb: 10_000,
        nodes: 2,
    })];
    kinds.extend(job(
        1,
        "alice",
        4,
        DAY0 + HOUR,
        DAY0 + HOUR,
        DAY0 + 3 * HOUR,
    ));
    kinds.push(node("n1", DAY0 + 2 * HOUR, "down"));
    kinds.push(node("n1", DAY0 + 4 * HOUR, "up"));
    kinds.extend(job(
        2,
        "bob",
        3,
        DAY0 + 5 * HOUR,
        DAY0 + 6 * HOUR,
        DAY0 + 10 * HOUR,
    ));
    kinds.push(node("n2", DAY0 + 20 * HOUR, "power_down"));
    kinds.push(node("n2", DAY0 + 22 * HOUR, "power_up"));
    dbd.send(kinds);
    dbd.store
        .roll_up(&Calendar::utc(), NOW, &PurgePolicy::default())
        .expect("roll up");
    dbd
}

const DAY: [&str; 2] = ["start=2026-11-01", "end=2026-11-02"];

#[test]
fn cluster_utilization_from_rolled_up_history() {
    let dbd = history();
    let out = run_bin(&dbd.conf, &["cluster", "utilization", DAY[0], DAY[1]], None);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        out.stdout,
        format!(
            "{RULE}\nCluster Utilization 2026-11-01T00:00:00 - 2026-11-01T23:59:59\n\
             Usage reported in CPU Minutes\n{RULE}\n"
        ) + "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n\
             --------- -------- -------- -------- -------- -------- -------- \n\
             \x20      c1     1200      600      600    11820      180    14400 \n"
    );
    let hours = run_bin(
        &dbd.conf,
        &[
            "-n",
            "-P",
            "-t",
            "seconds",
            "cluster",
            "utilization",
            "start=2026-11-01T02:00",
            "end=2026-11-01T03:00",
        ],
        None,
    );
    // 02:00-03:00: n1 down (5 CPUs), alice's 4 CPUs, 1 CPU idle.
    assert_eq!(hours.stdout, "c1|14400|18000|0|3600|0|36000\n");
}

#[test]
fn top_usage_and_accounts_from_rolled_up_history() {
    let dbd = history();
    let top = run_bin(
        &dbd.conf,
        &["-n", "-P", "user", "topusage", DAY[0], DAY[1]],
        None,
    );
    assert_eq!((top.code, top.stderr.as_str()), (0, ""));
    let proper =
        |login: &str| sluice_cli::sreport::render::passwd_proper_name(login).unwrap_or_default();
    assert_eq!(
        top.stdout,
        format!(
            "c1|bob|{}|phys|720|0\nc1|alice|{}|phys|480|0\n",
            proper("bob"),
            proper("alice")
        )
    );
    let tree = run_bin(
        &dbd.conf,
        &[
            "-n",
            "-P",
            "cluster",
            "AccountUtilizationByUser",
            DAY[0],
            DAY[1],
            "format=acc,login,used",
        ],
        None,
    );
    assert_eq!(
        tree.stdout,
        "root||1200\nphys||1200\nphys|alice|480\nphys|bob|720\n"
    );
    let sizes = run_bin(
        &dbd.conf,
        &["-n", "-P", "job", "sizes", "printjobcount", DAY[0], DAY[1]],
        None,
    );
    assert_eq!(sizes.stdout, "c1|phys|2|0|0|0|0|2|100.00%\n");
}

#[test]
fn job_sizes_by_user_and_individual_sizes() {
    let dbd = history();
    let sizes = |extra: &[&str]| {
        let mut args = vec!["-n", "-P", "job", "sizes", "printjobcount", DAY[0], DAY[1]];
        args.extend_from_slice(extra);
        run_bin(&dbd.conf, &args, None)
    };
    // Both jobs were submitted as uid 0: one ran on 3 CPUs, one on 4.
    let individual = sizes(&["grouping=individual"]);
    assert_eq!(individual.stdout, "c1|phys|1|1|2|100.00%\n");
    let headers = run_bin(
        &dbd.conf,
        &["-P", "job", "sizes", "gr=ind", "users=root", DAY[0], DAY[1]],
        None,
    );
    assert!(
        headers
            .stdout
            .contains("Cluster|Account|3 CPUs|4 CPUs|Total Count|% of cluster\n"),
        "{}",
        headers.stdout
    );
    assert_eq!(
        sizes(&["users=root"]).stdout,
        "c1|phys|2|0|0|0|0|2|100.00%\n"
    );
    let nobody = sizes(&["users=4242"]);
    assert_eq!((nobody.code, nobody.stdout.as_str()), (0, ""));
    let no_groups = sizes(&["users=4242", "grouping=individual"]);
    assert_eq!(no_groups.code, 1);
    assert_eq!(
        no_groups.stderr,
        " We need a grouping list to set up the print.\n"
    );
    let unknown = sizes(&["users=no_such_user_here"]);
    assert_eq!(unknown.code, 1);
    assert_eq!(unknown.stderr, "Invalid user id: no_such_user_here\n");
}
