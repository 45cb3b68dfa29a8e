//! The accounting shipper: a task that sends the outbox to the dbd in seq order.
//!
//! It reads the oldest records (up to [`ShipperConfig::batch_max`]) through its own SQLite
//! connection, which WAL lets read while the core commits, sends them as one `RecordBatch`
//! tagged with the store's outbox stream id, and deletes every record up to the `applied_seq`
//! the dbd answers. The dbd applies batches idempotently by seq within a stream, so a batch
//! resent after a lost reply is stored once, and a store created afresh (new stream, seqs from 1)
//! is not taken for a replay of the old one. On a failure it
//! backs off (100 ms doubling up to 5 s) and tries again; when the outbox is empty it waits for
//! [`ShipperHandle::notify`] (after each commit) or a 1 s timer. Unless a backlog waits (a full
//! batch), it sends at most one batch per [`ShipperConfig::gather`]: a record committed after a
//! quiet spell leaves at once, and records committed in quick succession (a job's submission,
//! start, revocation and end, or many jobs'), also while a batch is on its way, wait out the rest
//! of the period and go together: one RPC, one dbd transaction and one delete here for the lot
//! instead of one per record. A commit with a job's end wakes it with
//! [`ShipperHandle::notify_now`], which skips the wait: `sacct` shows a job's end as soon as it
//! left the queue (workflow tools poll the queue, then read the job's state and exit code).
//! The core never waits for it: the only shared resource is SQLite's write lock, held for the
//! length of one delete.

use crate::store::{StateStore, schema};
use prost::Message;
use rusqlite::Connection;
use sluice_wire::client::RecordsClient;
use sluice_wire::daemon::fault::FaultEpisodes;
use sluice_wire::proto::{AcctRecord, RecordBatchRequest};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// The shipper's timings and batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShipperConfig {
    /// Most records per batch.
    pub batch_max: u32,
    /// First wait after a failure.
    pub backoff_min: Duration,
    /// Longest wait after repeated failures.
    pub backoff_max: Duration,
    /// How often an idle shipper looks at the outbox without being notified.
    pub idle_poll: Duration,
    /// How long one `RecordBatch` call may take before it counts as failed.
    pub rpc_timeout: Duration,
    /// Shortest time between the starts of two batches read after a wake-up: what is
    /// committed within it after a batch waits for the next one. A lone record is not delayed.
    pub gather: Duration,
}

impl Default for ShipperConfig {
    fn default() -> Self {
        Self {
            batch_max: 1_000,
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(5),
            idle_poll: Duration::from_secs(1),
            rpc_timeout: Duration::from_secs(30),
            gather: Duration::from_millis(20),
        }
    }
}

/// Starts shippers.
pub struct Shipper;

impl Shipper {
    /// Spawns the shipper of the outbox in `state_dir` (`StateSaveLocation`) for `cluster` on
    /// the current tokio runtime, with the default [`ShipperConfig`].
    pub fn spawn(state_dir: &Path, cluster: String, dbd: RecordsClient) -> ShipperHandle {
        Self::spawn_with(state_dir, cluster, dbd, ShipperConfig::default())
    }

    /// [`Shipper::spawn`] with explicit timings.
    pub fn spawn_with(
        state_dir: &Path,
        cluster: String,
        dbd: RecordsClient,
        cfg: ShipperConfig,
    ) -> ShipperHandle {
        let wake = Arc::new(Notify::new());
        let now = Arc::new(AtomicBool::new(false));
        let (acked_tx, acked) = watch::channel(0);
        let (stop, stop_rx) = watch::channel(false);
        let run = Run {
            path: StateStore::file(state_dir),
            cluster,
            dbd,
            cfg,
            wake: wake.clone(),
            now: now.clone(),
            acked: acked_tx,
            stop: stop_rx,
            faults: FaultEpisodes::new("accounting outbox"),
        };
        ShipperHandle {
            wake,
            now,
            acked,
            stop,
            task: Some(tokio::spawn(run.run())),
        }
    }
}

/// The running shipper; dropping it stops the task, [`ShipperHandle::stop`] also waits for it.
pub struct ShipperHandle {
    wake: Arc<Notify>,
    /// Set with a wake-up that must not wait out the gather period.
    now: Arc<AtomicBool>,
    acked: watch::Receiver<u64>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl ShipperHandle {
    /// Tells the shipper new records were committed (cheap; never blocks).
    pub fn notify(&self) {
        self.wake.notify_one();
    }

    /// [`ShipperHandle::notify`] for records someone waits for: the next batch leaves without
    /// waiting out the gather period.
    pub fn notify_now(&self) {
        self.now.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    /// The highest seq the dbd confirmed and the shipper deleted from the outbox.
    pub fn acked(&self) -> watch::Receiver<u64> {
        self.acked.clone()
    }

    /// Stops the shipper between two steps of a round and waits until it has let go of the
    /// state file: its connection closed, none of its SQLite work left on the blocking pool
    /// (aborting the task would leave such work running). Only then may the file be removed
    /// and made again: SQLite shares locks and the WAL index among one process's connections to
    /// the same inode, and a new file can get the inode number of a removed one that is still
    /// open.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ShipperHandle {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

struct Run {
    path: PathBuf,
    cluster: String,
    dbd: RecordsClient,
    cfg: ShipperConfig,
    wake: Arc<Notify>,
    /// Shared with the handle: set by [`ShipperHandle::notify_now`].
    now: Arc<AtomicBool>,
    acked: watch::Sender<u64>,
    /// Becomes true when the handle asks the shipper to stop.
    stop: watch::Receiver<bool>,
    /// The outbox's own failures (disk full, read-only), logged once per episode.
    faults: FaultEpisodes,
}

/// How one round went.
enum Round {
    /// Nothing to send.
    Idle,
    /// Records were applied; `full`: more wait already (the batch took `batch_max` records, or
    /// the dbd applied only part of it).
    Progress { full: bool },
    /// Something failed; back off.
    Failed,
}

impl Run {
    /// Logs an outbox failure (once per episode) and backs off.
    fn store_failed(&mut self, e: &rusqlite::Error) -> Round {
        let reason = format!("{}: {e}", self.path.display());
        if let Some(line) = self.faults.failed(&reason, Instant::now()) {
            tracing::warn!("{line}");
        }
        Round::Failed
    }

    async fn run(mut self) {
        let mut conn: Option<Connection> = None;
        let mut backoff = self.cfg.backoff_min;
        // When the last batch was read.
        let mut last_read: Option<tokio::time::Instant> = None;
        loop {
            // Asked to stop, or the handle is gone.
            if *self.stop.borrow() || self.stop.has_changed().is_err() {
                return;
            }
            let started = tokio::time::Instant::now();
            let round = self.round(&mut conn).await;
            if matches!(round, Round::Progress { .. }) {
                last_read = Some(started);
            }
            if !matches!(round, Round::Failed)
                && let Some(line) = self.faults.succeeded(Instant::now())
            {
                tracing::info!("{line}");
            }
            match round {
                // A backlog: read on at once.
                Round::Progress { full: true } => backoff = self.cfg.backoff_min,
                // Drained (records committed meanwhile have left a wake-up behind): wait for
                // the next commit, then for the rest of the period since the last batch, so
                // records committed one after another go together; a job's end cuts it short.
                Round::Progress { full: false } | Round::Idle => {
                    backoff = self.cfg.backoff_min;
                    let woken = tokio::select! {
                        () = self.wake.notified() => true,
                        () = tokio::time::sleep(self.cfg.idle_poll) => false,
                        () = stopped(&mut self.stop) => false,
                    };
                    if woken && let Some(at) = last_read.map(|t| t + self.cfg.gather) {
                        self.gather_until(at).await;
                    }
                }
                Round::Failed => {
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = stopped(&mut self.stop) => {}
                    }
                    backoff = (backoff * 2).min(self.cfg.backoff_max);
                }
            }
        }
    }

    /// Waits until `at`, unless [`ShipperHandle::notify_now`] comes first (or came already)
    /// or the shipper is stopped.
    async fn gather_until(&mut self, at: tokio::time::Instant) {
        while !self.now.load(Ordering::Acquire) {
            tokio::select! {
                () = tokio::time::sleep_until(at) => return,
                // A plain wake-up only adds to what the next batch takes.
                () = self.wake.notified() => {}
                () = stopped(&mut self.stop) => return,
            }
        }
    }

    /// Reads one batch, sends it and deletes what the dbd applied.
    async fn round(&mut self, slot: &mut Option<Connection>) -> Round {
        // What was committed before this read goes with it, urgent or not.
        self.now.store(false, Ordering::Release);
        // Not even a read while a state file cannot be written: SQLite would write its
        // read mark through a mapping of the index file (a SIGBUS when that is immutable).
        if let Err(e) = crate::store::check_writable(&self.path) {
            let reason = e.to_string();
            if let Some(line) = self.faults.failed(&reason, Instant::now()) {
                tracing::warn!("{line}");
            }
            return Round::Failed;
        }
        let conn = match slot.take() {
            Some(c) => c,
            None => match open(&self.path) {
                Ok(c) => c,
                Err(e) => return self.store_failed(&e),
            },
        };
        let max = self.cfg.batch_max;
        let Some((conn, read)) = blocking(conn, move |c| read_batch(c, max)).await else {
            return Round::Failed;
        };
        let (stream_id, records) = match read {
            Ok(r) => r,
            Err(e) => return self.store_failed(&e),
        };
        *slot = Some(conn);
        let (Some(first), Some(last)) = (records.first(), records.last()) else {
            return Round::Idle;
        };
        let (first, last, count) = (first.seq, last.seq, records.len());
        let req = RecordBatchRequest {
            cluster: self.cluster.clone(),
            records,
            stream_id,
        };
        let reply = tokio::select! {
            reply = tokio::time::timeout(self.cfg.rpc_timeout, self.dbd.record_batch(req)) => reply,
            // Sent again by the next shipper; the dbd stores a batch once.
            () = stopped(&mut self.stop) => return Round::Failed,
        };
        let applied = match reply {
            Ok(Ok(r)) => r.into_inner().applied_seq,
            Ok(Err(status)) => {
                tracing::warn!(
                    "accounting daemon refused records {first}-{last}: {}",
                    status.message()
                );
                return Round::Failed;
            }
            Err(_) => {
                tracing::warn!("accounting daemon did not answer for records {first}-{last}");
                return Round::Failed;
            }
        };
        let Some(conn) = slot.take() else {
            return Round::Failed;
        };
        let Some((conn, deleted)) = blocking(conn, move |c| {
            let n = c.execute(
                "DELETE FROM acct_outbox WHERE seq <= ?1",
                [i64::try_from(applied).unwrap_or(i64::MAX)],
            )?;
            crate::store::mark_read(c)?;
            Ok(n)
        })
        .await
        else {
            return Round::Failed;
        };
        *slot = Some(conn);
        if let Err(e) = deleted {
            // Sent again after the fault; the dbd stores a batch once.
            return self.store_failed(&e);
        }
        self.acked.send_if_modified(|a| {
            let moved = applied > *a;
            *a = (*a).max(applied);
            moved
        });
        if applied < first {
            // The dbd took none of the batch: do not spin on it.
            tracing::warn!("accounting daemon applied up to {applied}, below record {first}");
            return Round::Failed;
        }
        // More waits when the batch was full or the dbd did not take all of it.
        Round::Progress {
            full: u32::try_from(count).unwrap_or(u32::MAX) >= max || applied < last,
        }
    }
}

/// Returns once the handle asked the shipper to stop (or is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    // Its deletes need no power-loss safety: a batch sent again is stored once.
    schema::configure(&conn, sluice_vocab::cluster_conf::StateSync::Normal)?;
    Ok(conn)
}

/// The outbox stream id and its oldest `max` records in seq order. A record that does not
/// decode is logged and left out (it is deleted with the batch once the dbd has applied past
/// it).
fn read_batch(conn: &Connection, max: u32) -> rusqlite::Result<(u64, Vec<AcctRecord>)> {
    let stream_id = schema::stream_id(conn)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
    // No `LIMIT ?`: SQLite prepares a statement whose limit is a bound parameter again at
    // every run; rows in key order are stepped one by one, so stopping at `max` reads no more.
    let mut stmt = conn.prepare_cached("SELECT seq, record FROM acct_outbox ORDER BY seq")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?
        .take(usize::try_from(max).unwrap_or(usize::MAX))
        .collect::<rusqlite::Result<Vec<(i64, Vec<u8>)>>>()?;
    let mut out = Vec::with_capacity(rows.len());
    for (seq, blob) in rows {
        match AcctRecord::decode(blob.as_slice()) {
            Ok(mut rec) => {
                rec.seq = u64::try_from(seq).unwrap_or(0);
                out.push(rec);
            }
            Err(e) => tracing::error!("accounting record {seq} is unreadable, skipped: {e}"),
        }
    }
    Ok((stream_id, out))
}

/// Runs `f` on the connection on the blocking pool, so the runtime's workers never wait on
/// SQLite. Gives the connection back with the result, or `None` when the blocking task did
/// not finish (runtime shutting down): the next round opens a new connection.
async fn blocking<T: Send + 'static>(
    conn: Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
) -> Option<(Connection, rusqlite::Result<T>)> {
    tokio::task::spawn_blocking(move || {
        let r = f(&conn);
        (conn, r)
    })
    .await
    .ok()
}
