//! sacct's query over `job_runs`, one page at a time, built so each read is a bounded index
//! range on every backend whatever the planner knows (see [`JobQuery`] for what matches and
//! [`window`](super::window) for the rules).
//!
//! Clusters are walked one after the other in name order; inside a cluster rows come in
//! (time_submit, job_id, run) order. Three shapes of read:
//! * job ids: the runs with those ids (primary key) and the tasks of arrays with those ids
//!   (`job_runs_array`, a partial index of array tasks where the backend has them), every
//!   other condition checked here; these are few rows, sorted here;
//! * a window with a start: two disjoint ranges merged, the runs still going (`time_end = 0`,
//!   through `job_runs_end`; the uid filter is written so no planner prefers `job_runs_uid`
//!   for it) and the finished runs with `time_end >= start` submitted in
//!   `[start - span, end]`, where `span` is the cluster's longest submit-to-end time
//!   ([`job_spans`]), through `job_runs_submit` / `job_runs_uid` / `job_runs_account`: a
//!   one-day window reads about one day of rows even over years of history. Every window rule
//!   implies "still going, or ended at or after the start", so the split loses nothing;
//! * otherwise one ordered range from the beginning of time.
//!
//! Each page returns the rows it read (its cursor is the last of them); the rows failing a
//! condition checked in Rust are dropped by the caller with
//! [`window::keep`](super::window::keep).

use std::collections::{BTreeMap, HashMap};

use crate::db::schema::{clusters, job_qos, job_runs};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use sluice_vocab::states::JobState;

use super::types::{JobCursor, JobQuery};
use super::window::sql_window;
use crate::store::AnyConnection;
use crate::store::conn::MultiBackend;
use crate::store::models::bulk::IN_CHUNK;
use crate::store::models::job_resizes::{self, ResizeRow};
use crate::store::models::jobs::JobRunRow;
use crate::store::models::steps::{self, StepRow};
use crate::store::models::{job_het, job_spans, job_wckeys};

/// Which rows of a cluster one statement reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// Everything the query selects, from the beginning (no window start, no job ids).
    All,
    /// Runs not ended yet.
    Open,
    /// Runs ended at or after the window start, submitted in `[from, ..]`.
    Ended { from: Option<i64> },
}

/// The rows one page read, in result order; `more` when the result may go on after them.
pub(super) struct Scan {
    pub rows: Vec<JobRunRow>,
    pub more: bool,
}

/// A position inside one cluster: (time_submit, job_id, run).
pub(super) type Key = (i64, i64, i32);

/// Where a scan reads `job_runs` from: diesel on every backend ([`Diesel`]), or SQLite's own
/// prepared statements ([`sqlite_scan`](super::sqlite_scan)). Both read the same rows; the
/// walk over clusters, parts and pages is [`scan`]'s.
pub(super) trait RunSource {
    type Error;
    /// Every cluster's name.
    fn cluster_names(&mut self) -> Result<Vec<String>, Self::Error>;
    /// The cluster's longest submit-to-end span ([`job_spans`]).
    fn span(&mut self, cluster: &str) -> Result<Option<i64>, Self::Error>;
    /// The runs of `cluster` whose job id or array job id is in `ids` (at most
    /// [`IN_CHUNK`] of them), in any order, with the text fields `query` reads (a source
    /// may give them all).
    fn by_ids(
        &mut self,
        cluster: &str,
        query: &JobQuery,
        ids: &[i64],
    ) -> Result<Vec<JobRunRow>, Self::Error>;
    /// Up to `limit` rows of `part` of `cluster` after `after`, in key order; see [`Diesel`]'s
    /// for the conditions (a source may leave window conditions to
    /// [`window::keep`](super::window::keep), but must read every row that could match).
    fn load(
        &mut self,
        cluster: &str,
        query: &JobQuery,
        after: Option<Key>,
        part: Part,
        limit: usize,
    ) -> Result<Vec<JobRunRow>, Self::Error>;
    /// The earlier allocations of the jobs `job_ids` of `cluster`, ordered by (job, run,
    /// change time).
    fn resizes_of(&mut self, cluster: &str, job_ids: &[i64])
    -> Result<Vec<ResizeRow>, Self::Error>;
    /// The steps of the jobs `job_ids` of `cluster`, in any order.
    fn steps_of(&mut self, cluster: &str, job_ids: &[i64]) -> Result<Vec<StepRow>, Self::Error>;
    /// The newest, non-REVOKED runs of `cluster` with a job id in `ids` (at most
    /// [`IN_CHUNK`]), submitted after `after`, in any order.
    fn newer_runs(
        &mut self,
        cluster: &str,
        query: &JobQuery,
        ids: &[i64],
        after: i64,
    ) -> Result<Vec<JobRunRow>, Self::Error>;
    /// The wckeys of the jobs `job_ids` of `cluster` that were submitted with one.
    fn wckeys_of(
        &mut self,
        cluster: &str,
        job_ids: &[i64],
    ) -> Result<HashMap<i64, String>, Self::Error>;
    /// The QOS of the jobs `job_ids` of `cluster` that were recorded with one.
    fn qos_of(
        &mut self,
        cluster: &str,
        job_ids: &[i64],
    ) -> Result<HashMap<i64, String>, Self::Error>;
    /// `(heterogeneous job id, offset)` of each of the jobs `job_ids` of `cluster` that is a
    /// component of one.
    fn het_of(
        &mut self,
        cluster: &str,
        job_ids: &[i64],
    ) -> Result<HashMap<i64, (i64, i32)>, Self::Error>;
}

/// Reads up to `limit` rows of `query` after `after`.
pub(super) fn scan<S: RunSource>(
    src: &mut S,
    query: &JobQuery,
    after: Option<&JobCursor>,
    limit: usize,
) -> Result<Scan, S::Error> {
    let mut names = if query.clusters.is_empty() {
        src.cluster_names()?
    } else {
        query.clusters.clone()
    };
    names.sort();
    names.dedup();
    let mut rows: Vec<JobRunRow> = Vec::new();
    for name in names {
        let from = match after {
            Some(c) if name < c.cluster => continue,
            Some(c) if name == c.cluster => Some(c.key()),
            _ => None,
        };
        let want = limit - rows.len();
        let got = cluster_rows(src, &name, query, from, want)?;
        let full = got.len() >= want;
        rows.extend(got);
        if full {
            return Ok(Scan { rows, more: true });
        }
    }
    Ok(Scan { rows, more: false })
}

/// Up to `limit` rows of one cluster after `after`.
fn cluster_rows<S: RunSource>(
    src: &mut S,
    cluster: &str,
    query: &JobQuery,
    after: Option<Key>,
    limit: usize,
) -> Result<Vec<JobRunRow>, S::Error> {
    if !query.job_ids.is_empty() {
        return by_ids(src, cluster, query, after, limit);
    }
    if query.start == 0 {
        return src.load(cluster, query, after, Part::All, limit);
    }
    let span = src.span(cluster)?;
    let from = span.map(|s| query.start.saturating_sub(s));
    let open = src.load(cluster, query, after, Part::Open, limit)?;
    let ended = src.load(cluster, query, after, Part::Ended { from }, limit)?;
    Ok(merge(open, ended, limit))
}

/// The runs of the jobs `query.job_ids` and the tasks of arrays with those ids, after
/// `after`, sorted; conditions other than the ids are left to
/// [`window::keep`](super::window::keep).
fn by_ids<S: RunSource>(
    src: &mut S,
    cluster: &str,
    query: &JobQuery,
    after: Option<Key>,
    limit: usize,
) -> Result<Vec<JobRunRow>, S::Error> {
    let ids: Vec<i64> = query.job_ids.iter().map(|&j| i64::from(j)).collect();
    let mut found: BTreeMap<Key, JobRunRow> = BTreeMap::new();
    for chunk in ids.chunks(IN_CHUNK) {
        found.extend(
            src.by_ids(cluster, query, chunk)?
                .into_iter()
                .map(|r| (key(&r), r)),
        );
    }
    Ok(found
        .into_iter()
        .filter(|(k, _)| after.is_none_or(|a| *k > a))
        .map(|(_, r)| r)
        .take(limit)
        .collect())
}

fn key(r: &JobRunRow) -> Key {
    (r.time_submit, r.job_id, r.run)
}

/// The first `limit` rows of two sorted, disjoint lists, in order.
fn merge(a: Vec<JobRunRow>, b: Vec<JobRunRow>, limit: usize) -> Vec<JobRunRow> {
    let mut out = Vec::with_capacity(limit.min(a.len() + b.len()));
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while out.len() < limit {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if key(x) <= key(y) => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        match next {
            Some(r) => out.push(r),
            None => break,
        }
    }
    out
}

/// The diesel source, on any backend: every condition of the query as SQL.
pub(super) struct Diesel<'a>(pub &'a mut AnyConnection);

impl RunSource for Diesel<'_> {
    type Error = diesel::result::Error;

    fn cluster_names(&mut self) -> QueryResult<Vec<String>> {
        clusters::table.select(clusters::name).load(self.0)
    }

    fn span(&mut self, cluster: &str) -> QueryResult<Option<i64>> {
        job_spans::get(self.0, cluster)
    }

    fn by_ids(
        &mut self,
        cluster: &str,
        _query: &JobQuery,
        ids: &[i64],
    ) -> QueryResult<Vec<JobRunRow>> {
        use job_runs::dsl as t;
        let mut rows: Vec<JobRunRow> = job_runs::table
            .select(JobRunRow::as_select())
            .filter(t::cluster.eq(cluster))
            .filter(t::job_id.eq_any(ids))
            .load(self.0)?;
        // A literal `array_job_id <> 0` (not a bound parameter) lets every planner see that
        // the partial index of array tasks serves the read.
        let tasks: Vec<JobRunRow> = job_runs::table
            .select(JobRunRow::as_select())
            .filter(t::cluster.eq(cluster))
            .filter(sql::<Bool>("array_job_id <> 0"))
            .filter(t::array_job_id.eq_any(ids))
            .load(self.0)?;
        rows.extend(tasks);
        Ok(rows)
    }

    fn load(
        &mut self,
        cluster: &str,
        query: &JobQuery,
        after: Option<Key>,
        part: Part,
        limit: usize,
    ) -> QueryResult<Vec<JobRunRow>> {
        load(self.0, cluster, query, after, part, limit)
    }

    fn resizes_of(&mut self, cluster: &str, job_ids: &[i64]) -> QueryResult<Vec<ResizeRow>> {
        job_resizes::of_jobs(self.0, cluster, job_ids)
    }

    fn steps_of(&mut self, cluster: &str, job_ids: &[i64]) -> QueryResult<Vec<StepRow>> {
        steps::steps_of(self.0, cluster, job_ids)
    }

    fn wckeys_of(&mut self, cluster: &str, job_ids: &[i64]) -> QueryResult<HashMap<i64, String>> {
        job_wckeys::of_jobs(self.0, cluster, job_ids)
    }

    fn het_of(&mut self, cluster: &str, job_ids: &[i64]) -> QueryResult<HashMap<i64, (i64, i32)>> {
        job_het::of_jobs(self.0, cluster, job_ids)
    }

    fn qos_of(&mut self, cluster: &str, job_ids: &[i64]) -> QueryResult<HashMap<i64, String>> {
        let mut out = HashMap::new();
        for ids in job_ids.chunks(IN_CHUNK) {
            let rows: Vec<(i64, String)> = job_qos::table
                .filter(job_qos::cluster.eq(cluster))
                .filter(job_qos::job_id.eq_any(ids))
                .select((job_qos::job_id, job_qos::qos))
                .load(self.0)?;
            out.extend(rows);
        }
        Ok(out)
    }

    fn newer_runs(
        &mut self,
        cluster: &str,
        _query: &JobQuery,
        ids: &[i64],
        after: i64,
    ) -> QueryResult<Vec<JobRunRow>> {
        use job_runs::dsl as t;
        let revoked = i64::from(JobState::Revoked.stored());
        job_runs::table
            .select(JobRunRow::as_select())
            .filter(t::cluster.eq(cluster))
            .filter(t::job_id.eq_any(ids))
            .filter(t::latest.eq(true))
            .filter(t::state.ne(revoked))
            .filter(t::time_submit.gt(after))
            .load(self.0)
    }
}

fn load(
    conn: &mut AnyConnection,
    cluster: &str,
    query: &JobQuery,
    after: Option<Key>,
    part: Part,
    limit: usize,
) -> QueryResult<Vec<JobRunRow>> {
    use job_runs::dsl as t;
    let mut q = job_runs::table
        .select(JobRunRow::as_select())
        .filter(t::cluster.eq(cluster.to_string()))
        .into_boxed::<MultiBackend>();
    let uids: Vec<i64> = query.uids.iter().map(|&u| i64::from(u)).collect();
    if part == Part::Open {
        // Still-going runs are few: read them through `job_runs_end`. `uid + 0` is not an
        // indexed column, so no planner picks `job_runs_uid` (the user's whole history).
        q = q.filter(t::time_end.eq(0));
        if !uids.is_empty() && query.uid_or_accounts.is_empty() {
            q = q.filter((t::uid + 0i64).eq_any(uids));
        }
    } else {
        if !uids.is_empty() && !query.uid_or_accounts.is_empty() {
            let theirs = t::account.eq_any(query.uid_or_accounts.clone());
            q = q.filter(t::uid.eq_any(uids).or(theirs));
        } else if !uids.is_empty() {
            q = q.filter(t::uid.eq_any(uids));
        }
        if !query.accounts.is_empty() {
            q = q.filter(t::account.eq_any(query.accounts.clone()));
        }
        if !query.names.is_empty() {
            q = q.filter(t::name.eq_any(query.names.clone()));
        }
        if !query.partitions.is_empty() {
            q = q.filter(t::partition_name.eq_any(query.partitions.clone()));
        }
    }
    if let Part::Ended { from } = part {
        q = q.filter(t::time_end.ge(query.start.max(1)));
        if let Some(from) = from {
            q = q.filter(t::time_submit.ge(from));
        }
    }
    if !query.duplicates {
        let revoked = i64::from(JobState::Revoked.stored());
        q = q.filter(t::latest.eq(true)).filter(t::state.ne(revoked));
    }
    q = q.filter(sql_window(query));
    if let Some((submit, job, run)) = after {
        let later_run = t::job_id.eq(job).and(t::run.gt(run));
        let later_job = t::job_id.gt(job).or(later_run);
        let later = t::time_submit
            .gt(submit)
            .or(t::time_submit.eq(submit).and(later_job));
        // The plain bound lets every backend start the index range at the cursor.
        q = q.filter(t::time_submit.ge(submit)).filter(later);
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    q.order((t::time_submit, t::job_id, t::run))
        .limit(limit)
        .load(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(submit: i64, job: i64) -> JobRunRow {
        let mut r = JobRunRow::empty("c1", job, 0);
        r.time_submit = submit;
        r
    }

    #[test]
    fn merge_interleaves_in_key_order_up_to_the_limit() {
        let a = vec![row(1, 1), row(5, 2)];
        let b = vec![row(2, 3), row(5, 4), row(9, 5)];
        let ids: Vec<i64> = merge(a.clone(), b.clone(), 10)
            .iter()
            .map(|r| r.job_id)
            .collect();
        assert_eq!(ids, vec![1, 3, 2, 4, 5]);
        assert_eq!(merge(a, b, 2).len(), 2);
    }
}
