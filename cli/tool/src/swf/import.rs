//! `sluice import swf`: a trace's jobs sent to the dbd as a controller sends its records
//! (`RecordBatch`), so they are stored, rolled up and queried like any cluster's history.
//!
//! A reader thread parses the trace and cuts the records into batches of about
//! `--batch` records, never splitting a job (a batch is applied in one transaction, so a job
//! is loaded whole or not at all), while this task sends them one at a time, in order: the
//! dbd keeps one applied-sequence cursor per (cluster, stream), and each import is a stream
//! of its own (a fresh random id), numbered from 1. The first record is the machine's
//! capacity (`MaxProcs` CPUs on `MaxNodes` nodes) at the trace's start, so utilization
//! reports have a total to measure against. Importing the same trace again rewrites the same
//! job rows (they are keyed by cluster and job id).

use std::io::BufRead;
use std::path::PathBuf;

use sluice_wire::client::{DbdClient, RecordsClient};
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::{
    AcctRecord, ClusterCapacityRecord, ListClustersRequest, RecordBatchRequest,
};
use tokio::sync::mpsc;

use super::SwfError;
use super::format::LineError;
use super::mapping::{Mapped, Mapping, map_job};
use super::reader::{Event, Header, Reader};

/// How to import a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// The cluster the records belong to.
    pub cluster: String,
    /// The trace's start (unix seconds), overriding its `UnixStartTime` header.
    pub start: Option<i64>,
    /// Records per batch (at least one job's).
    pub batch_records: usize,
    /// The import's record stream: a fresh id per import.
    pub stream_id: u64,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Jobs stored.
    pub jobs: u64,
    /// Records sent (and applied), capacity included.
    pub records: u64,
    /// Malformed lines skipped.
    pub malformed: u64,
    /// Partial-execution lines skipped (their summary line carries the job).
    pub partial: u64,
    /// Lines read.
    pub lines: u64,
    /// The trace's start (unix seconds), where the capacity was recorded.
    pub start: Option<i64>,
    /// First submission and last end among the jobs loaded.
    pub span: Option<(i64, i64)>,
    /// CPU-seconds the jobs allocated (CPUs × run time).
    pub cpu_secs: u64,
    /// The capacity recorded: (CPUs, nodes).
    pub capacity: Option<(u64, u64)>,
    /// The header as read.
    pub header: Header,
}

/// What the reader thread hands over.
enum Msg {
    Batch { records: Vec<AcctRecord>, jobs: u64 },
    Malformed(LineError),
    Done(Box<ImportSummary>),
    Failed(SwfError),
}

/// Imports the trace `input` into `opts.cluster`; `on_malformed` hears of each skipped line as
/// it is found.
pub async fn import_swf<R: BufRead + Send + 'static>(
    input: R,
    path: PathBuf,
    opts: &ImportOptions,
    dbd: &mut DbdClient,
    records: &mut RecordsClient,
    on_malformed: &mut dyn FnMut(&LineError),
) -> Result<ImportSummary, SwfError> {
    let req = ListClustersRequest {
        names: vec![opts.cluster.clone()],
        ..Default::default()
    };
    let known = dbd
        .list_clusters(req)
        .await
        .map_err(|status| rpc_error("ListClusters", 0, status, &opts.cluster))?
        .into_inner();
    if !known.clusters.iter().any(|c| c.name == opts.cluster) {
        return Err(SwfError::UnknownCluster {
            name: opts.cluster.clone(),
        });
    }
    let (tx, mut rx) = mpsc::channel(4);
    let reader_opts = opts.clone();
    let reader = std::thread::spawn(move || produce(Reader::new(input), path, &reader_opts, &tx));
    let mut loaded = 0u64;
    let mut outcome = Err(SwfError::NotApplied {
        applied: 0,
        sent: 0,
    });
    while let Some(msg) = rx.recv().await {
        match msg {
            Msg::Batch {
                records: batch,
                jobs,
            } => {
                let sent = batch.last().map_or(0, |r| r.seq);
                let req = RecordBatchRequest {
                    cluster: opts.cluster.clone(),
                    records: batch,
                    stream_id: opts.stream_id,
                };
                let reply = records
                    .record_batch(req)
                    .await
                    .map_err(|status| rpc_error("RecordBatch", loaded, status, &opts.cluster))?
                    .into_inner();
                if reply.applied_seq < sent {
                    return Err(SwfError::NotApplied {
                        applied: reply.applied_seq,
                        sent,
                    });
                }
                loaded += jobs;
            }
            Msg::Malformed(e) => on_malformed(&e),
            Msg::Done(summary) => outcome = Ok(*summary),
            Msg::Failed(e) => outcome = Err(e),
        }
    }
    // The reader has sent its last message once the channel closed.
    let _ = reader.join();
    outcome
}

fn rpc_error(what: &'static str, loaded: u64, status: tonic::Status, cluster: &str) -> SwfError {
    match status.code() {
        tonic::Code::PermissionDenied => SwfError::NotAdmin,
        tonic::Code::NotFound => SwfError::UnknownCluster {
            name: cluster.to_string(),
        },
        _ => SwfError::Rpc {
            what,
            loaded,
            status: Box::new(status),
        },
    }
}

/// The reader thread: parses, maps and batches the trace, ending with `Done` or `Failed`.
fn produce<R: BufRead>(
    mut reader: Reader<R>,
    path: PathBuf,
    opts: &ImportOptions,
    tx: &mpsc::Sender<Msg>,
) {
    let send = |msg: Msg| tx.blocking_send(msg).is_ok();
    let mut sum = ImportSummary::default();
    let mut mapping: Option<Mapping> = None;
    let mut batch: Vec<AcctRecord> = Vec::with_capacity(opts.batch_records + 3);
    let mut batch_jobs = 0u64;
    let mut seq = 0u64;
    let mut push = |batch: &mut Vec<AcctRecord>, kind: Kind| {
        seq += 1;
        batch.push(AcctRecord {
            seq,
            kind: Some(kind),
        });
    };
    while let Some(event) = reader.next_event() {
        let (line, job) = match event {
            Ok(Event::Job { line, job }) => (line, job),
            Ok(Event::Malformed(e)) => {
                sum.malformed += 1;
                if !send(Msg::Malformed(e)) {
                    return;
                }
                continue;
            }
            Err(source) => {
                send(Msg::Failed(SwfError::Read { path, source }));
                return;
            }
        };
        let m = match mapping {
            Some(m) => m,
            None => {
                let header = reader.header();
                let Some(base) = opts.start.or(header.unix_start_time) else {
                    send(Msg::Failed(SwfError::NoStartTime));
                    return;
                };
                let m = Mapping::new(base, header.cpus(), header.nodes());
                sum.start = Some(base);
                if let (Some(cpus), Some(nodes)) = (header.cpus(), header.nodes()) {
                    sum.capacity = Some((cpus, nodes));
                    push(
                        &mut batch,
                        Kind::Capacity(ClusterCapacityRecord {
                            at: base,
                            cpus,
                            mem_mb: 0,
                            nodes: u32::try_from(nodes).unwrap_or(u32::MAX),
                        }),
                    );
                }
                mapping = Some(m);
                m
            }
        };
        match map_job(&job, &m) {
            Ok(Mapped::Job(j)) => {
                sum.jobs += 1;
                sum.cpu_secs = sum.cpu_secs.saturating_add(j.cpu_secs);
                sum.span = Some(match sum.span {
                    Some((first, last)) => (first.min(j.submit), last.max(j.end)),
                    None => (j.submit, j.end),
                });
                for kind in j.kinds {
                    push(&mut batch, kind);
                }
                batch_jobs += 1;
            }
            Ok(Mapped::Partial) => sum.partial += 1,
            Err(problem) => {
                sum.malformed += 1;
                if !send(Msg::Malformed(LineError { line, problem })) {
                    return;
                }
            }
        }
        if batch.len() >= opts.batch_records {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(opts.batch_records + 3));
            let jobs = std::mem::take(&mut batch_jobs);
            if !send(Msg::Batch {
                records: full,
                jobs,
            }) {
                return;
            }
        }
    }
    if !batch.is_empty()
        && !send(Msg::Batch {
            records: batch,
            jobs: batch_jobs,
        })
    {
        return;
    }
    sum.records = seq;
    sum.lines = reader.lines();
    sum.header = reader.header().clone();
    send(Msg::Done(Box::new(sum)));
}
