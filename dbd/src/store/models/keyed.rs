//! Reading the rows of many jobs by id (the runs and steps an ingest batch touches, the steps
//! of a page of sacct's runs), in few statements with plans that stay good on every backend.
//!
//! The ids are split first ([`split_ids`]): dense stretches (a batch's new jobs have
//! consecutive ids) are read as `job_id BETWEEN lo AND hi`, one index range each, and the rows
//! of ids in the stretch's gaps dropped; the scattered rest is looked up id by id. A long
//! `IN (...)` list costs MariaDB about as much optimising as reading (an index dive per value),
//! and SQLite a fresh statement per list length, where a range is one cached statement.
//!
//! On PostgreSQL the scattered ids are not an `= ANY($2)`: with statistics PostgreSQL answers
//! it with one probe of the primary key per id, but before the first ANALYZE of a table (a new
//! database filling up, until autovacuum gets to it) it assumes `cluster = $1` matches 0.5% of
//! the rows, and reading those through any `(cluster, ...)` index looks cheaper than hundreds
//! of probes: every batch then scans every run of the cluster, and an import slows down with
//! each row it adds. [`pg_rows_of_jobs`] looks each id up on its own, in one statement.

use std::collections::BTreeSet;

use diesel::pg::{Pg, PgConnection};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text};

use super::jobs::IN_CHUNK;
use crate::store::conn::AnyConnection;

/// Ids further apart than this end a dense stretch.
const MAX_GAP: i64 = 4;
/// Stretches of fewer ids are looked up id by id.
const MIN_STRETCH: usize = 8;

/// Job ids split by how to read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdSplit {
    /// Inclusive `(lo, hi)` ranges of dense stretches, ascending.
    pub ranges: Vec<(i64, i64)>,
    /// The ids outside the ranges, ascending.
    pub scattered: Vec<i64>,
}

/// Splits `ids` (any order, repeats allowed) into dense ranges and scattered ids.
pub fn split_ids(ids: &[i64]) -> IdSplit {
    let sorted: Vec<i64> = ids
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut split = IdSplit::default();
    let mut start = 0;
    for end in 1..=sorted.len() {
        let breaks = end == sorted.len() || sorted[end] - sorted[end - 1] > MAX_GAP;
        if !breaks {
            continue;
        }
        let stretch = &sorted[start..end];
        if stretch.len() >= MIN_STRETCH {
            split.ranges.push((stretch[0], stretch[stretch.len() - 1]));
        } else {
            split.scattered.extend_from_slice(stretch);
        }
        start = end;
    }
    split
}

/// The rows of the jobs `ids` of `cluster` from `table` (a table keyed by `(cluster, job_id,
/// ...)`), in no particular order: `range` reads one `(lo, hi)` range, `any` a list of at most
/// [`IN_CHUNK`] ids (not used on PostgreSQL), `job_of` tells a row's job.
pub fn rows_of_jobs<T>(
    conn: &mut AnyConnection,
    table: &'static str,
    cluster: &str,
    ids: &[i64],
    job_of: impl Fn(&T) -> i64,
    mut range: impl FnMut(&mut AnyConnection, i64, i64) -> QueryResult<Vec<T>>,
    mut any: impl FnMut(&mut AnyConnection, &[i64]) -> QueryResult<Vec<T>>,
) -> QueryResult<Vec<T>>
where
    T: QueryableByName<Pg> + 'static,
{
    let split = split_ids(ids);
    let mut rows = Vec::new();
    for (lo, hi) in split.ranges {
        let wanted: BTreeSet<i64> = ids
            .iter()
            .copied()
            .filter(|id| (lo..=hi).contains(id))
            .collect();
        let mut read = range(conn, lo, hi)?;
        read.retain(|r| wanted.contains(&job_of(r)));
        rows.append(&mut read);
    }
    if let AnyConnection::Postgresql(c) = conn {
        rows.extend(pg_rows_of_jobs(c, table, cluster, &split.scattered)?);
    } else {
        for chunk in split.scattered.chunks(IN_CHUNK) {
            rows.extend(any(conn, chunk)?);
        }
    }
    Ok(rows)
}

/// On PostgreSQL, the rows of `table` of the jobs `job_ids` of `cluster`, each id looked up
/// on its own: `OFFSET 0` keeps the lateral subquery from being flattened into a join the
/// planner would cost with the same guess, so it stays an equality lookup on
/// `(cluster, job_id)`, which only the primary key serves.
fn pg_rows_of_jobs<T>(
    c: &mut PgConnection,
    table: &'static str,
    cluster: &str,
    job_ids: &[i64],
) -> QueryResult<Vec<T>>
where
    T: QueryableByName<Pg> + 'static,
{
    if job_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT r.* FROM unnest($2) AS k(id), \
         LATERAL (SELECT * FROM {table} WHERE cluster = $1 AND job_id = k.id OFFSET 0) AS r"
    );
    diesel::sql_query(sql)
        .bind::<Text, _>(cluster)
        .bind::<Array<BigInt>, _>(job_ids)
        .load(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_stretches_become_ranges() {
        let mut ids: Vec<i64> = (100..=140).collect();
        ids.extend([3, 7, 500, 502]);
        ids.extend((1000..1040).step_by(4));
        let split = split_ids(&ids);
        assert_eq!(split.ranges, vec![(100, 140), (1000, 1036)]);
        assert_eq!(split.scattered, vec![3, 7, 500, 502]);
    }

    #[test]
    fn short_or_sparse_stretches_stay_scattered() {
        assert_eq!(split_ids(&[]), IdSplit::default());
        let short: Vec<i64> = (1..8).collect();
        assert_eq!(split_ids(&short).scattered, short);
        let sparse: Vec<i64> = (0..20).map(|i| i * 5).collect();
        assert_eq!(split_ids(&sparse).scattered, sparse);
    }

    #[test]
    fn repeats_and_order_do_not_matter() {
        let mut ids: Vec<i64> = (1..=10).rev().collect();
        ids.extend(1..=10);
        let split = split_ids(&ids);
        assert_eq!(split.ranges, vec![(1, 10)]);
        assert!(split.scattered.is_empty());
    }
}
