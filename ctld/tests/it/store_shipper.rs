//! The shipper against a fake `AccountingRecords` server that fails, then loses a reply after
//! applying a batch: every record arrives once, in seq order, and the outbox empties. And a
//! wiped state directory ships as a new outbox stream, whose records land.

use crate::store_util;

use sluice_ctld::shipper::{Shipper, ShipperConfig};
use sluice_ctld::store::StateStore;
use sluice_testkit::fake::accounting_records_server::{AccountingRecords, AccountingRecordsServer};
use sluice_wire::auth::{Key, Signer};
use sluice_wire::client::connect_lazy;
use sluice_wire::proto::accounting_records_client::AccountingRecordsClient;
use sluice_wire::proto::{RecordBatchReply, RecordBatchRequest};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store_util::{cluster, commit, job};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// A dbd that applies records idempotently by seq, as the real one does, and misbehaves on
/// request.
#[derive(Default)]
struct Dbd {
    /// Calls to refuse before accepting any.
    fail_first: u32,
    /// Apply the next accepted batch but answer with an error, as a lost reply.
    lose_one_reply: bool,
    /// (stream, seq) stored, in the order stored.
    stored: Vec<(u64, u64)>,
    /// First seq of every batch received.
    batches: Vec<u64>,
    refused: u32,
}

#[derive(Clone)]
struct Fake(Arc<Mutex<Dbd>>);

#[tonic::async_trait]
impl AccountingRecords for Fake {
    async fn record_batch(
        &self,
        req: Request<RecordBatchRequest>,
    ) -> Result<Response<RecordBatchReply>, Status> {
        let req = req.into_inner();
        let mut dbd = self.0.lock().unwrap();
        assert_eq!(req.cluster, "test");
        dbd.batches.push(req.records.first().map_or(0, |r| r.seq));
        if dbd.fail_first > 0 {
            dbd.fail_first -= 1;
            dbd.refused += 1;
            return Err(Status::unavailable("dbd starting"));
        }
        let stream = req.stream_id;
        let cursor = |dbd: &Dbd| {
            dbd.stored
                .iter()
                .filter(|s| s.0 == stream)
                .map(|s| s.1)
                .max()
        };
        for r in &req.records {
            assert!(r.kind.is_some(), "record {} has no content", r.seq);
            if cursor(&dbd).is_none_or(|last| r.seq > last) {
                dbd.stored.push((stream, r.seq));
            }
        }
        if std::mem::take(&mut dbd.lose_one_reply) {
            return Err(Status::unavailable("connection reset"));
        }
        let applied_seq = cursor(&dbd).unwrap_or(0);
        Ok(Response::new(RecordBatchReply { applied_seq }))
    }
}

/// Commits `jobs` submissions, each with its accounting records; returns the last seq.
fn workload(store: &mut StateStore, jobs: u32) -> u64 {
    let mut fx = cluster();
    for i in 0..jobs {
        let id = fx.submit(job("w")).unwrap();
        fx.schedule();
        if fx.state(id) == sluice_vocab::JobState::Running {
            fx.exit(id, 0).unwrap();
        }
        if i % 100 == 99 {
            commit(store, &mut fx);
        }
    }
    commit(store, &mut fx);
    store.next_seq() - 1
}

async fn wait_acked(rx: &mut tokio::sync::watch::Receiver<u64>, seq: u64) {
    tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|a| *a >= seq))
        .await
        .expect("the shipper caught up within 30 s")
        .expect("the shipper is running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_arrives_once_in_order_despite_failures_and_a_lost_reply() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let first_last = workload(&mut store, 800);
    assert!(first_last > 2_000, "{first_last} records: several batches");

    let dbd = Arc::new(Mutex::new(Dbd {
        fail_first: 3,
        lose_one_reply: true,
        ..Dbd::default()
    }));
    let (port, server) = serve(&dbd).await;
    let shipper = ship(dir.path(), port);
    let mut acked = shipper.acked();
    wait_acked(&mut acked, first_last).await;

    // More work while the shipper runs: a notify sends it without waiting for the timer.
    let last = workload_more(&mut store, first_last);
    shipper.notify();
    wait_acked(&mut acked, last).await;

    let dbd = dbd.lock().unwrap();
    let stream = store.stream_id();
    assert_eq!(
        dbd.stored,
        (1..=last).map(|s| (stream, s)).collect::<Vec<_>>()
    );
    assert_eq!(dbd.refused, 3);
    let mut firsts = dbd.batches.clone();
    firsts.dedup();
    assert!(
        dbd.batches.len() >= firsts.len() + 4,
        "3 refusals and one resend after the lost reply: {:?}",
        dbd.batches
    );
    assert_eq!(store.outbox_len().unwrap(), 0);
    drop(shipper);
    server.abort();
}

/// A second round of commits on the same store, after `after`; returns the last seq.
fn workload_more(store: &mut StateStore, after: u64) -> u64 {
    let last = workload(store, 50);
    assert!(last > after);
    last
}

/// Serves the fake dbd on a free loopback port.
async fn serve(dbd: &Arc<Mutex<Dbd>>) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tonic::transport::Server::builder()
        .add_service(AccountingRecordsServer::new(Fake(dbd.clone())))
        .serve_with_incoming(TcpListenerStream::new(listener));
    let server = tokio::spawn(async move {
        let _ = server.await;
    });
    (port, server)
}

/// The files under `dir` this process holds open.
fn open_files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .collect()
}

/// A shipper of the outbox in `dir` to the fake dbd on `port`, with short backoffs.
fn ship(dir: &std::path::Path, port: u16) -> sluice_ctld::shipper::ShipperHandle {
    let signer = Signer::new(Key::from_bytes(vec![7; 32]), 0);
    let client = AccountingRecordsClient::new(connect_lazy("127.0.0.1", port, signer).unwrap());
    let cfg = ShipperConfig {
        backoff_min: Duration::from_millis(10),
        backoff_max: Duration::from_millis(40),
        ..ShipperConfig::default()
    };
    Shipper::spawn_with(dir, "test".into(), client, cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wiped_state_dir_ships_a_new_stream_whose_records_land() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let mut store = StateStore::open(&state).unwrap();
    let old_last = workload(&mut store, 40);
    let old_stream = store.stream_id();
    drop(store);
    let store = StateStore::open(&state).unwrap();
    assert_eq!(store.stream_id(), old_stream, "the stream id is kept");
    drop(store);

    let dbd = Arc::new(Mutex::new(Dbd::default()));
    let (port, server) = serve(&dbd).await;
    let shipper = ship(&state, port);
    wait_acked(&mut shipper.acked(), old_last).await;
    // Once stopped, nothing in this process holds the old file open: a connection left to it
    // would meet the new file if that got the removed one's inode number.
    shipper.stop().await;
    assert_eq!(open_files_under(&state), Vec::<std::path::PathBuf>::new());

    // StateSaveLocation is wiped: the new store numbers its records from 1 again.
    std::fs::remove_dir_all(&state).unwrap();
    let mut store = StateStore::open(&state).unwrap();
    let new_stream = store.stream_id();
    assert_ne!(new_stream, old_stream);
    let new_last = workload(&mut store, 5);
    assert!(
        new_last < old_last,
        "{new_last} records, below the old cursor {old_last}"
    );
    let shipper = ship(&state, port);
    wait_acked(&mut shipper.acked(), new_last).await;
    assert_eq!(store.outbox_len().unwrap(), 0);

    let dbd = dbd.lock().unwrap();
    let landed = |stream: u64| -> Vec<u64> {
        dbd.stored
            .iter()
            .filter(|s| s.0 == stream)
            .map(|s| s.1)
            .collect()
    };
    assert_eq!(landed(old_stream), (1..=old_last).collect::<Vec<_>>());
    assert_eq!(
        landed(new_stream),
        (1..=new_last).collect::<Vec<_>>(),
        "every record of the new stream landed"
    );
    drop(shipper);
    server.abort();
}

/// A shipper with gather period `gather` that has sent one job's records, alone: batch 1.
struct AfterALoneBatch {
    _dir: tempfile::TempDir,
    store: StateStore,
    dbd: Arc<Mutex<Dbd>>,
    shipper: sluice_ctld::shipper::ShipperHandle,
    acked: tokio::sync::watch::Receiver<u64>,
    server: tokio::task::JoinHandle<()>,
    /// The last seq of that batch.
    lone: u64,
}

async fn after_a_lone_batch(gather: Duration) -> AfterALoneBatch {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let dbd = Arc::new(Mutex::new(Dbd::default()));
    let (port, server) = serve(&dbd).await;
    let signer = Signer::new(Key::from_bytes(vec![7; 32]), 0);
    let client = AccountingRecordsClient::new(connect_lazy("127.0.0.1", port, signer).unwrap());
    let cfg = ShipperConfig {
        gather,
        ..ShipperConfig::default()
    };
    let shipper = Shipper::spawn_with(dir.path(), "test".into(), client, cfg);
    let mut acked = shipper.acked();
    // A job's records after a quiet spell: one batch, at once.
    let lone = workload(&mut store, 1);
    shipper.notify();
    wait_acked(&mut acked, lone).await;
    assert_eq!(dbd.lock().unwrap().batches, [1]);
    AfterALoneBatch {
        _dir: dir,
        store,
        dbd,
        shipper,
        acked,
        server,
        lone,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_committed_in_quick_succession_after_a_batch_travel_together() {
    // A long period, so that the burst below surely falls within one.
    let mut t = after_a_lone_batch(Duration::from_secs(2)).await;
    // Five jobs committed one after another, each waking the shipper: one more batch.
    let mut last = t.lone;
    for _ in 0..5 {
        last = workload(&mut t.store, 1);
        t.shipper.notify();
    }
    wait_acked(&mut t.acked, last).await;
    let dbd = t.dbd.lock().unwrap();
    assert_eq!(dbd.batches, [1, t.lone + 1], "{:?}", dbd.batches);
    let stream = t.store.stream_id();
    assert_eq!(
        dbd.stored,
        (1..=last).map(|s| (stream, s)).collect::<Vec<_>>()
    );
    t.server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_end_does_not_wait_out_the_gather_period() {
    // A period far longer than `wait_acked` waits: only `notify_now` can get the batch out.
    let mut t = after_a_lone_batch(Duration::from_secs(3_600)).await;
    // Within the period: a plain wake-up waits, one for a job's end goes at once, and takes
    // what the plain one left.
    let waiting = workload(&mut t.store, 1);
    t.shipper.notify();
    let ended = workload(&mut t.store, 1);
    t.shipper.notify_now();
    wait_acked(&mut t.acked, ended).await;
    assert!(waiting < ended);
    let dbd = t.dbd.lock().unwrap();
    assert_eq!(dbd.batches, [1, t.lone + 1], "{:?}", dbd.batches);
    t.server.abort();
}
