//! The `job_resizes` table: a run's earlier allocations, keyed by (cluster, job_id, run,
//! time_end). Failure management changes a running job's nodes rarely, so these rows are few:
//! plain chunked reads serve them.

use std::collections::BTreeSet;

use crate::db::schema::{job_resizes, job_runs};
use diesel::prelude::*;

use super::bulk::{IN_CHUNK, insert_all};
use crate::store::conn::AnyConnection;

/// One earlier allocation of a run, in force until `time_end`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = job_resizes, primary_key(cluster, job_id, run, time_end))]
#[diesel(treat_none_as_default_value = false)]
pub struct ResizeRow {
    pub cluster: String,
    pub job_id: i64,
    pub run: i32,
    /// When the allocation changed (the end of this one).
    pub time_end: i64,
    pub node_list: String,
    pub node_count: i64,
    pub cpus: i64,
    pub mem_mb: i64,
    /// The run's suspended seconds up to `time_end`.
    pub suspended_secs: i64,
    /// The run's time limit then (-1 = UNLIMITED).
    pub time_limit_min: i64,
}

impl ResizeRow {
    /// The run it belongs to, within its cluster.
    pub fn run_key(&self) -> (i64, i32) {
        (self.job_id, self.run)
    }
}

/// Every earlier allocation of the jobs `job_ids` of `cluster`, by run then time.
pub fn of_jobs(
    conn: &mut AnyConnection,
    cluster: &str,
    job_ids: &[i64],
) -> QueryResult<Vec<ResizeRow>> {
    let mut rows = Vec::new();
    for ids in job_ids.chunks(IN_CHUNK) {
        rows.extend(
            job_resizes::table
                .filter(job_resizes::cluster.eq(cluster))
                .filter(job_resizes::job_id.eq_any(ids))
                .select(ResizeRow::as_select())
                .load::<ResizeRow>(conn)?,
        );
    }
    rows.sort_by_key(|r| (r.job_id, r.run, r.time_end));
    Ok(rows)
}

/// Inserts new rows.
pub fn insert_many(conn: &mut AnyConnection, rows: &[ResizeRow]) -> QueryResult<()> {
    insert_all!(conn, job_resizes::table, rows)
}

/// Deletes `cluster`'s rows that changed before `before` and whose run is gone (purged);
/// returns how many.
pub fn purge_orphans(conn: &mut AnyConnection, cluster: &str, before: i64) -> QueryResult<usize> {
    let old: Vec<(i64, i32)> = job_resizes::table
        .filter(job_resizes::cluster.eq(cluster))
        .filter(job_resizes::time_end.lt(before))
        .select((job_resizes::job_id, job_resizes::run))
        .distinct()
        .load(conn)?;
    if old.is_empty() {
        return Ok(0);
    }
    let mut ids: Vec<i64> = old.iter().map(|k| k.0).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut live: BTreeSet<(i64, i32)> = BTreeSet::new();
    for chunk in ids.chunks(IN_CHUNK) {
        live.extend(
            job_runs::table
                .filter(job_runs::cluster.eq(cluster))
                .filter(job_runs::job_id.eq_any(chunk))
                .select((job_runs::job_id, job_runs::run))
                .load::<(i64, i32)>(conn)?,
        );
    }
    let mut gone = 0;
    for (job_id, run) in old.into_iter().filter(|k| !live.contains(k)) {
        gone += diesel::delete(
            job_resizes::table
                .filter(job_resizes::cluster.eq(cluster))
                .filter(job_resizes::job_id.eq(job_id))
                .filter(job_resizes::run.eq(run)),
        )
        .execute(conn)?;
    }
    Ok(gone)
}

/// One record of a run split at its resizes: the allocation in force over `[start, end)`
/// (`end` 0: still going). `earlier` is the stored earlier allocation, `None` for the run's
/// current one (the last record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    pub start: i64,
    pub end: i64,
    pub earlier: Option<&'a ResizeRow>,
    /// Seconds suspended in it when `earlier`; in the last record, the earlier records' total
    /// (its own are the run's total less that).
    pub suspended_secs: i64,
}

/// The records of a run that started at `start` and ended at `end` (0: still going), given its
/// earlier allocations `resizes` ordered by `time_end`: one per earlier allocation, then the
/// current one, from the last change on. Without resizes, the run itself.
pub fn segments(start: i64, end: i64, resizes: &[ResizeRow]) -> Vec<Segment<'_>> {
    let mut out = Vec::with_capacity(resizes.len() + 1);
    let (mut from, mut suspended) = (start, 0);
    for r in resizes {
        let to = r.time_end.max(from);
        out.push(Segment {
            start: from,
            end: to,
            earlier: Some(r),
            suspended_secs: (r.suspended_secs - suspended).max(0),
        });
        (from, suspended) = (to, r.suspended_secs.max(suspended));
    }
    out.push(Segment {
        start: from,
        end,
        earlier: None,
        suspended_secs: suspended,
    });
    out
}

/// The earlier allocations of `cluster` that ended after `after`, by run, each run's ordered
/// by time: what the runs that ran after `after` were split at.
pub fn ended_after(
    conn: &mut AnyConnection,
    cluster: &str,
    after: i64,
) -> QueryResult<std::collections::BTreeMap<(i64, i32), Vec<ResizeRow>>> {
    let rows: Vec<ResizeRow> = job_resizes::table
        .filter(job_resizes::cluster.eq(cluster))
        .filter(job_resizes::time_end.gt(after))
        .select(ResizeRow::as_select())
        .load(conn)?;
    let mut by_run: std::collections::BTreeMap<(i64, i32), Vec<ResizeRow>> =
        std::collections::BTreeMap::new();
    for r in rows {
        by_run.entry(r.run_key()).or_default().push(r);
    }
    for v in by_run.values_mut() {
        v.sort_by_key(|r| r.time_end);
    }
    Ok(by_run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(time_end: i64, cpus: i64, suspended_secs: i64) -> ResizeRow {
        ResizeRow {
            cluster: "c1".into(),
            job_id: 1,
            run: 0,
            time_end,
            node_list: String::new(),
            node_count: 1,
            cpus,
            mem_mb: 0,
            suspended_secs,
            time_limit_min: 10,
        }
    }

    #[test]
    fn a_run_splits_at_each_change() {
        let rows = [row(100, 8, 5), row(250, 4, 5)];
        let got: Vec<_> = segments(40, 400, &rows)
            .iter()
            .map(|s| (s.start, s.end, s.earlier.map(|r| r.cpus), s.suspended_secs))
            .collect();
        assert_eq!(
            got,
            vec![
                (40, 100, Some(8), 5),
                (100, 250, Some(4), 0),
                (250, 400, None, 5)
            ]
        );
        assert_eq!(segments(40, 0, &[]).len(), 1);
    }
}
