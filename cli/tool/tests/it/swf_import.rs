//! `sluice import swf` into a real accounting daemon (its store and services in this process,
//! SQLite in a temp dir, ephemeral port): the jobs come back through `ListJobs` as sacct sees
//! them, and the `Reports` service's allocated CPU-seconds match the trace's.

use crate::swf_support;

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::Arc;

use sluice_dbd::service::{AccountingService, RecordsService, ReportsService};
use sluice_dbd::store::usage::PurgePolicy;
use sluice_dbd::store::{AddClusters, Apply, Store};
use sluice_reports::Calendar;
use sluice_tool::swf::generate::{GenConfig, write_trace};
use sluice_tool::swf::{Event, ImportOptions, ImportSummary, Reader, Status, SwfError, import_swf};
use sluice_vocab::states::JobState;
use sluice_wire::auth::{KEY_FILE, Key, Signer, Verifier};
use sluice_wire::client::{RecordsClient, connect, connect_dbd};
use sluice_wire::proto::reports_client::ReportsClient;
use sluice_wire::proto::{ClusterUsage, JobQuery, JobRow, UsageQuery};
use swf_support::{LOADED, MALFORMED_LINES, T0, TRACE};

const DAY: i64 = 86_400;
/// The dbd's clock: well after every trace here has ended.
const NOW: i64 = T0 + 30 * DAY;

struct Dbd {
    store: Arc<Store>,
    port: u16,
    dir: tempfile::TempDir,
}

fn start() -> Dbd {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("acct.db").display());
    let store = Arc::new(Store::connect_at(&url, T0 - DAY).expect("store"));
    let clusters = AddClusters {
        names: vec!["c1".into()],
        ..Default::default()
    };
    store
        .add_clusters(&clusters, Apply::Commit, T0 - DAY)
        .expect("cluster");
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
            let reports =
                ReportsService::new(Arc::clone(&served), Calendar::utc(), Arc::new(|| NOW));
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
    Dbd { store, port, dir }
}

impl Dbd {
    fn signer(&self) -> Signer {
        Signer::for_current_user(Key::load(&self.dir.path().join(KEY_FILE)).expect("key"))
    }

    async fn records(&self) -> RecordsClient {
        let channel = connect("127.0.0.1", self.port, self.signer())
            .await
            .expect("dbd");
        RecordsClient::new(channel)
    }

    /// Imports `text` into `cluster`; the malformed lines' numbers come back too.
    async fn import(
        &self,
        text: &[u8],
        cluster: &str,
        start: Option<i64>,
        batch_records: usize,
    ) -> (Result<ImportSummary, SwfError>, Vec<u64>) {
        let mut dbd = connect_dbd("127.0.0.1", self.port, self.signer())
            .await
            .expect("dbd");
        let mut records = self.records().await;
        let opts = ImportOptions {
            cluster: cluster.into(),
            start,
            batch_records,
            stream_id: rand_stream(),
        };
        let mut malformed = Vec::new();
        let result = import_swf(
            Cursor::new(text.to_vec()),
            PathBuf::from("trace.swf"),
            &opts,
            &mut dbd,
            &mut records,
            &mut |e| malformed.push(e.line),
        )
        .await;
        (result, malformed)
    }

    /// Every job of c1, as sacct reads them (all time, last run), by job id.
    async fn jobs(&self) -> Vec<JobRow> {
        let query = JobQuery {
            clusters: vec!["c1".into()],
            ..Default::default()
        };
        let mut stream = self
            .records()
            .await
            .list_jobs(query)
            .await
            .expect("list")
            .into_inner();
        let mut rows = Vec::new();
        while let Some(chunk) = stream.message().await.expect("rows") {
            rows.extend(chunk.rows);
        }
        rows.sort_by_key(|r| r.job_id);
        rows
    }

    /// Rolls usage up to NOW and reads c1's CPU utilization over `[start, end)`.
    async fn utilization(&self, start: i64, end: i64) -> ClusterUsage {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || {
            store.roll_up(&Calendar::utc(), NOW, &PurgePolicy::default())
        })
        .await
        .expect("join")
        .expect("roll up");
        let channel = connect("127.0.0.1", self.port, self.signer())
            .await
            .expect("dbd");
        let reply = ReportsClient::new(channel)
            .cluster_utilization(UsageQuery {
                clusters: vec!["c1".into()],
                start,
                end,
                tres: vec!["cpu".into()],
                ..Default::default()
            })
            .await
            .expect("utilization")
            .into_inner();
        assert_eq!(reply.rows.len(), 1, "{reply:?}");
        reply.rows[0].clone()
    }
}

/// A stream id of its own per import, as `sluice import` makes.
fn rand_stream() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0x5eed_0000);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hand_written_trace_loads_as_finished_jobs() {
    let dbd = start();
    let (result, malformed) = dbd.import(TRACE.as_bytes(), "c1", None, 4).await;
    let sum = result.expect("import");
    assert_eq!(malformed, MALFORMED_LINES);
    assert_eq!(
        (sum.jobs, sum.malformed, sum.partial, sum.lines),
        (6, 6, 1, 23)
    );
    // Capacity, then three records per job that ran and two for the one that never did.
    assert_eq!(sum.records, 1 + 5 * 3 + 2);
    assert_eq!(sum.capacity, Some((16, 4)));
    assert_eq!(sum.span, Some((T0, T0 + 540 + 7200 + 7200)));
    let expected_secs: u64 = LOADED.iter().map(|(_, s)| s).sum();
    assert_eq!(sum.cpu_secs, expected_secs);

    let rows = dbd.jobs().await;
    let ids: Vec<u32> = rows.iter().map(|r| r.job_id).collect();
    assert_eq!(ids, LOADED.map(|(id, _)| id));
    let view = |r: &JobRow| {
        (
            r.job_id,
            r.user.clone(),
            r.uid,
            r.account.clone(),
            r.partition.clone(),
            JobState::from_stored(r.state),
            r.exit_code,
        )
    };
    let s = |v: &str| v.to_string();
    assert_eq!(
        rows.iter().map(view).collect::<Vec<_>>(),
        vec![
            (
                1,
                s("user1"),
                1,
                s("acct1"),
                s("part1"),
                Some(JobState::Completed),
                0
            ),
            (
                2,
                s("user2"),
                2,
                s("acct1"),
                s("part2"),
                Some(JobState::Failed),
                1
            ),
            (
                3,
                s("user1"),
                1,
                s("acct2"),
                s("part1"),
                Some(JobState::Cancelled),
                0
            ),
            (4, s("user3"), 3, s(""), s(""), Some(JobState::Cancelled), 0),
            (
                5,
                s(""),
                u32::MAX,
                s(""),
                s(""),
                Some(JobState::Completed),
                0
            ),
            (
                11,
                s("user4"),
                4,
                s("acct2"),
                s("part2"),
                Some(JobState::Completed),
                0
            ),
        ]
    );
    let times = |r: &JobRow| {
        (
            r.submit,
            r.eligible,
            r.start,
            r.end,
            r.cpus,
            r.time_limit_min,
        )
    };
    assert_eq!(times(&rows[0]), (T0, T0, T0 + 10, T0 + 3610, 4, 120));
    assert_eq!(
        times(&rows[1]),
        (T0 + 60, T0 + 60, T0 + 60, T0 + 1860, 8, -1)
    );
    // Cancelled while queued: never started, nothing allocated.
    assert_eq!((rows[2].start, rows[2].end, rows[2].cpus), (0, T0 + 420, 0));
    assert_eq!(
        times(&rows[5]),
        (T0 + 540, T0 + 540, T0 + 7740, T0 + 14_940, 16, 60)
    );
    assert_eq!((rows[5].node_count, rows[5].name.as_str()), (4, "app9"));
    assert_eq!(rows[5].comment, "queue2");

    // The day's usage: every job's CPU-seconds allocated, against 16 CPUs all day.
    let usage = dbd.utilization(T0, T0 + DAY).await;
    assert_eq!(usage.alloc_secs, expected_secs);
    assert_eq!((usage.count, usage.total_secs), (16, 16 * DAY as u64));
    assert_eq!(usage.down_secs + usage.pdown_secs, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_cluster_is_refused_before_anything_is_sent() {
    let dbd = start();
    let (result, malformed) = dbd.import(TRACE.as_bytes(), "nope", None, 1000).await;
    match result {
        Err(e @ SwfError::UnknownCluster { .. }) => assert_eq!(
            e.to_string(),
            "cluster 'nope' does not exist in the accounting database; \
             add it first (sacctmgr add cluster nope)"
        ),
        other => panic!("expected an unknown cluster: {other:?}"),
    }
    assert!(malformed.is_empty(), "the trace was not read");
    assert!(dbd.jobs().await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trace_without_a_start_time_needs_start() {
    let dbd = start();
    let trace = "; MaxProcs: 8\n1 100 0 60 2 -1 -1 2 120 -1 1 7 3 -1 -1 -1 -1 -1\n";
    let (result, _) = dbd.import(trace.as_bytes(), "c1", None, 1000).await;
    assert!(matches!(result, Err(SwfError::NoStartTime)), "{result:?}");
    assert!(dbd.jobs().await.is_empty(), "nothing half-loaded");
    let base = T0 + 5 * DAY;
    let (result, _) = dbd.import(trace.as_bytes(), "c1", Some(base), 1000).await;
    let sum = result.expect("import with --start");
    assert_eq!((sum.jobs, sum.capacity), (1, Some((8, 8))));
    let rows = dbd.jobs().await;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].submit,
            rows[0].start,
            rows[0].end,
            rows[0].user.as_str()
        ),
        (base + 100, base + 100, base + 160, "user7")
    );
}

/// (statuses, CPU-seconds) of a trace, computed from its fields.
fn tally(text: &[u8]) -> (Vec<Status>, u64) {
    let mut reader = Reader::new(text);
    let (mut statuses, mut secs) = (Vec::new(), 0u64);
    while let Some(event) = reader.next_event() {
        let Ok(Event::Job { job, .. }) = event else {
            panic!("a generated trace reads back whole");
        };
        let ran = !(job.status == Status::Cancelled && job.run == Some(0));
        if ran {
            secs += u64::from(job.alloc_procs.unwrap_or(0)) * job.run.unwrap_or(0) as u64;
        }
        statuses.push(job.status);
    }
    (statuses, secs)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_generated_trace_loads_whole_in_many_batches() {
    let dbd = start();
    let cfg = GenConfig {
        jobs: 3_000,
        users: 30,
        accounts: 6,
        partitions: 2,
        procs: Some(1 << 20),
        start: T0,
        days: 5,
        seed: 99,
    };
    let mut text = Vec::new();
    write_trace(&cfg, &mut text).expect("generate");
    let (statuses, trace_secs) = tally(&text);
    let (result, malformed) = dbd.import(&text, "c1", None, 100).await;
    let sum = result.expect("import");
    assert!(malformed.is_empty());
    assert_eq!((sum.jobs, sum.cpu_secs), (3_000, trace_secs));
    let rows = dbd.jobs().await;
    assert_eq!(
        rows.iter().map(|r| r.job_id).collect::<Vec<_>>(),
        (1..=3_000).collect::<Vec<u32>>()
    );
    let state_of = |s: Status| match s {
        Status::Failed => JobState::Failed,
        Status::Cancelled => JobState::Cancelled,
        _ => JobState::Completed,
    };
    let stored: Vec<Option<JobState>> = rows
        .iter()
        .map(|r| JobState::from_stored(r.state))
        .collect();
    let expected: Vec<Option<JobState>> = statuses.into_iter().map(|s| Some(state_of(s))).collect();
    assert_eq!(stored, expected);
    let window = (T0, T0 + 20 * DAY);
    let usage = dbd.utilization(window.0, window.1).await;
    assert_eq!(usage.alloc_secs, trace_secs);

    // Importing it again (a new stream) rewrites the same jobs: nothing counts twice.
    let (again, _) = dbd.import(&text, "c1", None, 1000).await;
    assert_eq!(again.expect("second import").jobs, 3_000);
    assert_eq!(dbd.jobs().await.len(), 3_000);
    assert_eq!(
        dbd.utilization(window.0, window.1).await.alloc_secs,
        trace_secs
    );
}
