//! Builders for the usage-rollup suites: a cluster fed with records in simulated time, and
//! readers of its usage.

use sluice_dbd::store::usage::{ClusterUsage, PurgePolicy, UsageQuery};
use sluice_dbd::store::*;
use sluice_reports::{Calendar, Tres, UsageSecs};
use sluice_vocab::states::JobState;

/// 2026-11-01T00:00:00Z: the suites count in UTC.
pub const DAY0: i64 = 1_793_491_200;
pub const HOUR: i64 = 3_600;
pub const DAY: i64 = 86_400;
/// 2026-12-01T00:00:00Z.
pub const DEC1: i64 = DAY0 + 30 * DAY;

/// `h` hours and `m` minutes after [`DAY0`].
pub fn at(h: i64, m: i64) -> i64 {
    DAY0 + h * HOUR + m * 60
}

pub fn utc() -> Calendar {
    Calendar::utc()
}

/// A cluster's controller: numbers its records and sends them as one batch.
pub struct Feed<'a> {
    pub store: &'a Store,
    pub cluster: String,
    pub stream: u64,
    seq: u64,
}

impl<'a> Feed<'a> {
    pub fn new(store: &'a Store, cluster: &str) -> Self {
        Self {
            store,
            cluster: cluster.to_string(),
            stream: 7,
            seq: 0,
        }
    }

    /// Sends `kinds` as one batch.
    pub fn send(&mut self, kinds: Vec<RecordKind>) {
        let records: Vec<Record> = kinds
            .into_iter()
            .map(|kind| {
                self.seq += 1;
                Record {
                    seq: self.seq,
                    kind,
                }
            })
            .collect();
        self.store
            .record_batch(&self.cluster, self.stream, &records)
            .unwrap();
    }
}

pub fn capacity(at: i64, cpus: u64, nodes: u32) -> RecordKind {
    RecordKind::ClusterCapacity(ClusterCapacity {
        at,
        cpus,
        mem_mb: cpus * 1_000,
        nodes,
    })
}

/// A node event of a 4-CPU node.
pub fn node(name: &str, at: i64, kind: &str) -> RecordKind {
    RecordKind::NodeEvent(NodeEvent {
        node: name.into(),
        at,
        kind: kind.into(),
        reason: "test".into(),
        reason_uid: 0,
        cpus: 4,
    })
}

/// A job's run as it happens.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: u32,
    pub user: &'static str,
    pub account: &'static str,
    pub eligible: i64,
    pub cpus: u32,
    pub nodes: u32,
}

impl Job {
    pub fn new(
        id: u32,
        user: &'static str,
        account: &'static str,
        eligible: i64,
        cpus: u32,
        nodes: u32,
    ) -> Self {
        Self {
            id,
            user,
            account,
            eligible,
            cpus,
            nodes,
        }
    }

    pub fn submitted(&self) -> RecordKind {
        RecordKind::JobSubmitted(Box::new(JobSubmitted {
            job_id: self.id,
            name: format!("job{}", self.id),
            uid: 1_000,
            user: self.user.into(),
            account: self.account.into(),
            partition: "batch".into(),
            submit: self.eligible,
            eligible: self.eligible,
            time_limit_min: -1,
            req_nodes: self.nodes,
            req_cpus: self.cpus,
            req_mem_mb: u64::from(self.cpus) * 100,
            ..Default::default()
        }))
    }

    pub fn started(&self, at: i64) -> RecordKind {
        RecordKind::JobStarted(JobStarted {
            job_id: self.id,
            run: 0,
            start: at,
            node_list: "n1".into(),
            node_count: self.nodes,
            cpus: self.cpus,
            mem_mb: u64::from(self.cpus) * 100,
            eligible: 0,
        })
    }

    pub fn ended(&self, at: i64) -> RecordKind {
        RecordKind::JobEnded(JobEnded {
            job_id: self.id,
            run: 0,
            end: at,
            state: JobState::Completed.stored(),
            ..Default::default()
        })
    }

    pub fn suspended(&self, at: i64, suspended: bool) -> RecordKind {
        RecordKind::JobSuspended(JobSuspended {
            job_id: self.id,
            run: 0,
            at,
            suspended,
        })
    }

    /// Submitted, started and ended.
    pub fn ran(&self, start: i64, end: i64) -> Vec<RecordKind> {
        vec![self.submitted(), self.started(start), self.ended(end)]
    }
}

/// Rolls up at `now` without purging.
pub fn roll(store: &Store, now: i64) -> u64 {
    store
        .roll_up(&utc(), now, &PurgePolicy::default())
        .unwrap()
        .hours
}

/// The report of `[from, to)` at `now`: the table read and each (cluster, tres) row.
pub fn report(
    store: &Store,
    clusters: &[&str],
    tres: &[Tres],
    (from, to): (i64, i64),
    now: i64,
) -> (&'static str, Vec<ClusterUsage>) {
    let q = UsageQuery {
        clusters: clusters.iter().map(|c| c.to_string()).collect(),
        start: from,
        end: to,
        tres: tres.to_vec(),
        ..Default::default()
    };
    let r = store.cluster_utilization(&utc(), &q, now).unwrap();
    (r.period.name(), r.rows)
}

/// One cluster's usage of `tres` over `[from, to)`; the table read must be `table`.
pub fn usage(
    store: &Store,
    cluster: &str,
    tres: Tres,
    window: (i64, i64),
    now: i64,
    table: &str,
) -> UsageSecs {
    let (read, rows) = report(store, &[cluster], &[tres], window, now);
    assert_eq!(read, table, "table read for {window:?}");
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0].usage
}

/// Usage seconds built by name, for readable expectations.
#[allow(clippy::too_many_arguments)]
pub fn secs(
    count: u64,
    total: u64,
    alloc: u64,
    down: u64,
    pdown: u64,
    idle: u64,
    plan: u64,
    over: u64,
) -> UsageSecs {
    UsageSecs {
        count,
        total,
        alloc,
        down,
        pdown,
        idle,
        plan,
        over,
    }
}
