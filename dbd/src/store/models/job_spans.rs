//! The `job_spans` table: per cluster, the longest any finished run took from submission to
//! its end. sacct's windowed query uses it to bound the submit times it scans (a run that
//! ended at or after the window's start was submitted at most this long before it), so a
//! one-day query over years of history reads about one day of rows.

use crate::db::schema::job_spans;
use diesel::prelude::*;

use super::cached;
use super::jobs::JobRunRow;
use crate::store::conn::AnyConnection;

/// The longest submit-to-end span of `cluster`'s finished runs; `None` before any run ended.
pub fn get(conn: &mut AnyConnection, cluster: &str) -> QueryResult<Option<i64>> {
    job_spans::table
        .find(cluster)
        .select(job_spans::max_span)
        .get_result(conn)
        .optional()
}

/// The longest span among `rows` (finished runs only), if any finished.
pub fn longest(rows: &[JobRunRow]) -> Option<i64> {
    rows.iter()
        .filter(|r| r.time_end != 0)
        .map(|r| r.time_end.saturating_sub(r.time_submit).max(0))
        .max()
}

/// Raises `cluster`'s span to cover the finished runs among `rows` (written by an ingest).
/// One read per batch, and a write only when the span grows.
pub fn widen(conn: &mut AnyConnection, cluster: &str, rows: &[JobRunRow]) -> QueryResult<()> {
    let Some(span) = longest(rows) else {
        return Ok(());
    };
    match get(conn, cluster)? {
        Some(stored) if stored >= span => Ok(()),
        Some(_) => cached::update(
            job_spans::table,
            job_spans::cluster.eq(cluster),
            job_spans::max_span.eq(span),
        )
        .execute(conn)
        .map(|_| ()),
        None => diesel::insert_into(job_spans::table)
            .values((job_spans::cluster.eq(cluster), job_spans::max_span.eq(span)))
            .execute(conn)
            .map(|_| ()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(submit: i64, end: i64) -> JobRunRow {
        let mut r = JobRunRow::empty("c1", 1, 0);
        r.time_submit = submit;
        r.time_end = end;
        r
    }

    #[test]
    fn only_finished_runs_count() {
        assert_eq!(longest(&[run(100, 0)]), None);
        assert_eq!(
            longest(&[run(100, 0), run(100, 160), run(50, 90)]),
            Some(60)
        );
        assert_eq!(
            longest(&[run(200, 150)]),
            Some(0),
            "clock skew never shrinks"
        );
    }
}
