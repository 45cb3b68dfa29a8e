//! Reading what a rollup needs: job runs (by the indexes `job_runs_submit` and `job_runs_end`),
//! their suspensions and earlier allocations, and node and capacity events, turned into the pure crate's inputs.

use std::collections::BTreeMap;

use crate::db::schema::job_runs;
use diesel::prelude::*;
use sluice_reports::{Capacity, JobUse, NodeDown, TresCounts};

use super::events::{self, EventRow};
use super::rows::narrow;
use crate::store::conn::AnyConnection;
use crate::store::models::bulk::IN_CHUNK;
use crate::store::models::job_resizes;

/// The columns of a run the rollups read.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = job_runs)]
pub struct RunRow {
    pub job_id: i64,
    pub run: i32,
    pub account: String,
    pub user_name: String,
    pub time_submit: i64,
    pub time_eligible: i64,
    pub time_start: i64,
    pub time_end: i64,
    pub suspended_secs: i64,
    pub suspend_since: i64,
    pub node_count: i64,
    pub cpus: i64,
    pub mem_mb: i64,
    pub req_cpus: i64,
    pub req_mem_mb: i64,
}

impl RunRow {
    /// The run's key within its cluster.
    pub fn key(&self) -> (i64, i32) {
        (self.job_id, self.run)
    }

    /// Whether the run may still count after `at`: not ended, or ended after it.
    pub fn active_after(&self, at: i64) -> bool {
        self.time_end == 0 || self.time_end > at
    }

    fn was_suspended(&self) -> bool {
        self.suspended_secs > 0 || self.suspend_since != 0
    }
}

/// Runs of `cluster` submitted before `at` that had not ended by it: the runs a roll starting
/// at `at` carries in. Two index ranges of `job_runs_end`: runs not ended, runs ended later.
pub fn runs_active_at(
    conn: &mut AnyConnection,
    cluster: &str,
    at: i64,
) -> QueryResult<Vec<RunRow>> {
    let mut rows: Vec<RunRow> = job_runs::table
        .filter(job_runs::cluster.eq(cluster))
        .filter(job_runs::time_end.eq(0))
        .filter(job_runs::time_submit.lt(at))
        .select(RunRow::as_select())
        .load(conn)?;
    rows.extend(
        job_runs::table
            .filter(job_runs::cluster.eq(cluster))
            .filter(job_runs::time_end.gt(at))
            .filter(job_runs::time_submit.lt(at))
            .select(RunRow::as_select())
            .load::<RunRow>(conn)?,
    );
    Ok(rows)
}

/// Runs of `cluster` submitted in `[from, to)` (a range of `job_runs_submit`).
pub fn runs_submitted_in(
    conn: &mut AnyConnection,
    cluster: &str,
    from: i64,
    to: i64,
) -> QueryResult<Vec<RunRow>> {
    job_runs::table
        .filter(job_runs::cluster.eq(cluster))
        .filter(job_runs::time_submit.ge(from))
        .filter(job_runs::time_submit.lt(to))
        .select(RunRow::as_select())
        .load(conn)
}

/// The runs `keys` of `cluster` as stored now.
pub fn runs_by_key(
    conn: &mut AnyConnection,
    cluster: &str,
    keys: &[(i64, i32)],
) -> QueryResult<Vec<RunRow>> {
    let mut keys = keys.to_vec();
    keys.sort_unstable();
    let mut job_ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let mut rows = Vec::new();
    for ids in job_ids.chunks(IN_CHUNK) {
        rows.extend(
            job_runs::table
                .filter(job_runs::cluster.eq(cluster))
                .filter(job_runs::job_id.eq_any(ids))
                .select(RunRow::as_select())
                .load::<RunRow>(conn)?,
        );
    }
    rows.retain(|r| keys.binary_search(&r.key()).is_ok());
    Ok(rows)
}

/// Runs of `clusters` that ran during `[from, to)`: started before `to`, not ended before
/// `from` (ranges of `job_runs_end`).
pub fn runs_running_in(
    conn: &mut AnyConnection,
    cluster: &str,
    from: i64,
    to: i64,
) -> QueryResult<Vec<RunRow>> {
    let mut rows: Vec<RunRow> = job_runs::table
        .filter(job_runs::cluster.eq(cluster))
        .filter(job_runs::time_end.eq(0))
        .filter(job_runs::time_start.ne(0))
        .filter(job_runs::time_start.lt(to))
        .select(RunRow::as_select())
        .load(conn)?;
    rows.extend(
        job_runs::table
            .filter(job_runs::cluster.eq(cluster))
            .filter(job_runs::time_end.gt(from))
            .filter(job_runs::time_start.ne(0))
            .filter(job_runs::time_start.lt(to))
            .select(RunRow::as_select())
            .load::<RunRow>(conn)?,
    );
    Ok(rows)
}

/// The runs as the pure rollup sees them, keyed by `key_of`, with their suspensions. A run
/// whose allocation changed (failure management) is one use per allocation, each over its own
/// time (Slurm's RESIZING records): only the first waited, so only it has planned time.
pub fn job_uses<K: Clone>(
    conn: &mut AnyConnection,
    cluster: &str,
    runs: &[RunRow],
    mut key_of: impl FnMut(&RunRow) -> K,
) -> QueryResult<Vec<JobUse<K>>> {
    let mut suspended_jobs: Vec<i64> = runs
        .iter()
        .filter(|r| r.was_suspended())
        .map(|r| r.job_id)
        .collect();
    suspended_jobs.sort_unstable();
    suspended_jobs.dedup();
    let mut suspends: BTreeMap<(i64, i32), Vec<(i64, i64)>> = BTreeMap::new();
    for s in events::suspends_of(conn, cluster, &suspended_jobs, false)? {
        suspends
            .entry((s.job_id, s.run))
            .or_default()
            .push((s.time_start, s.time_end));
    }
    let first_start = runs
        .iter()
        .filter(|r| r.time_start != 0)
        .map(|r| r.time_start)
        .min();
    let resizes = match first_start {
        Some(t) => job_resizes::ended_after(conn, cluster, t.saturating_sub(1))?,
        None => BTreeMap::new(),
    };
    let mut uses = Vec::with_capacity(runs.len());
    for r in runs {
        let alloc = counts(r.cpus, r.mem_mb, r.node_count);
        // What a waiting job asks for; the node count it needs is at least one (requested
        // node counts are not stored).
        let req = TresCounts::new(
            if r.req_cpus > 0 {
                narrow(r.req_cpus)
            } else {
                alloc.cpu
            },
            if r.req_mem_mb > 0 {
                narrow(r.req_mem_mb)
            } else {
                alloc.mem
            },
            alloc.node.max(1),
        );
        let key = key_of(r);
        let suspended = suspends.remove(&r.key()).unwrap_or_default();
        let earlier = resizes.get(&r.key()).map_or(&[][..], Vec::as_slice);
        if r.time_start == 0 || earlier.is_empty() {
            uses.push(JobUse {
                key,
                eligible: r.time_eligible,
                start: r.time_start,
                end: r.time_end,
                alloc,
                req,
                suspended,
            });
            continue;
        }
        for (i, seg) in job_resizes::segments(r.time_start, r.time_end, earlier)
            .into_iter()
            .enumerate()
        {
            uses.push(JobUse {
                key: key.clone(),
                eligible: if i == 0 { r.time_eligible } else { seg.start },
                start: seg.start,
                end: seg.end,
                alloc: seg
                    .earlier
                    .map_or(alloc, |e| counts(e.cpus, e.mem_mb, e.node_count)),
                req,
                suspended: suspended.clone(),
            });
        }
    }
    Ok(uses)
}

fn counts(cpus: i64, mem_mb: i64, nodes: i64) -> TresCounts {
    TresCounts::new(narrow(cpus), narrow(mem_mb), narrow(nodes))
}

/// `cluster`'s capacity periods and node down periods overlapping `[from, to)`.
pub fn events_in(
    conn: &mut AnyConnection,
    cluster: &str,
    from: i64,
    to: i64,
) -> QueryResult<(Vec<Capacity>, Vec<NodeDown>)> {
    let (mut capacity, mut down) = (Vec::new(), Vec::new());
    for e in events::events_in(conn, cluster, from, to)? {
        if e.node_name.is_empty() {
            capacity.push(capacity_of(&e));
        } else {
            down.push(NodeDown {
                planned: is_planned_down(&e.kind),
                node: e.node_name,
                start: e.time_start,
                end: e.time_end,
                cpus: narrow(e.cpus),
            });
        }
    }
    Ok((capacity, down))
}

fn capacity_of(e: &EventRow) -> Capacity {
    Capacity {
        start: e.time_start,
        end: e.time_end,
        counts: TresCounts::new(narrow(e.cpus), narrow(e.mem_mb), narrow(e.node_count)),
    }
}

/// Powered-down nodes (and nodes not yet in service) are planned down; every other event
/// (down, drain, fail...) is down.
pub fn is_planned_down(kind: &str) -> bool {
    matches!(kind, "power_down" | "future")
}
