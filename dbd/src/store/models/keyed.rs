//! Reading and deleting the rows of many jobs by id (the runs and steps an ingest batch
//! touches and rewrites, the steps of a page of sacct's runs), in few statements with plans
//! that stay good on every backend.
//!
//! The ids are split first ([`split_ids`]): dense stretches (a batch's new jobs have
//! consecutive ids) become `job_id BETWEEN lo AND hi`, one index range each; the scattered
//! rest is looked up id by id. A read may take a stretch with small gaps and drop the rows of
//! the ids in them; a delete only takes stretches without gaps. A long `IN (...)` list costs
//! MariaDB about as much optimising as reading (an index dive per value), and SQLite a fresh
//! statement per list length, where a range is one cached statement.
//!
//! On PostgreSQL the scattered ids are not an `= ANY($2)` either: with statistics PostgreSQL
//! answers it with one probe of the primary key per id, but without them (a new database
//! filling up, until autovacuum's first ANALYZE; or a cluster the last ANALYZE did not see)
//! it takes `cluster = $1` to match a few rows, and reading those through any
//! `(cluster, ...)` index looks cheaper than hundreds of probes: every batch then scans every
//! row of the cluster, and an ingest slows down with each row it adds. Here each id is an
//! equality lookup on `(cluster, job_id)`, which only the primary key serves, in a lateral
//! subquery that `OFFSET 0` keeps from being flattened into a join the planner would cost
//! with the same guess; a delete takes the rows' `ctid`s found so (a TID scan).

use std::collections::BTreeSet;

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text};

use super::bulk::IN_CHUNK;
use crate::store::conn::AnyConnection;

/// On SQLite, at most this many scattered ids are reached one by one through the range's
/// statement (`BETWEEN id AND id`), which is prepared once and cached: an `IN (...)` list is a
/// new statement for each list, parsed and planned again every time (a few jobs per batch is
/// the common case, as the records of jobs that start and end one after another arrive). A
/// longer list is cheaper as one `IN` than as that many calls.
const SQLITE_BY_ID: usize = 32;

/// Whether `scattered` is reached id by id ([`SQLITE_BY_ID`]).
fn by_id_on_sqlite(conn: &AnyConnection, scattered: &[i64]) -> bool {
    matches!(conn, AnyConnection::Sqlite(_)) && scattered.len() <= SQLITE_BY_ID
}

/// Ids further apart than this end a dense stretch of a read.
pub const READ_GAP: i64 = 4;
/// Stretches of fewer ids are looked up id by id.
const MIN_STRETCH: usize = 8;

/// Job ids split by how to reach them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdSplit {
    /// Inclusive `(lo, hi)` ranges of dense stretches, ascending.
    pub ranges: Vec<(i64, i64)>,
    /// The ids outside the ranges, ascending.
    pub scattered: Vec<i64>,
}

/// Splits `ids` (any order, repeats allowed) into ranges of at least [`MIN_STRETCH`] ids
/// no more than `max_gap` apart, and scattered ids.
pub fn split_ids(ids: &[i64], max_gap: i64) -> IdSplit {
    let sorted: Vec<i64> = ids
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut split = IdSplit::default();
    let mut start = 0;
    for end in 1..=sorted.len() {
        let breaks = end == sorted.len() || sorted[end] - sorted[end - 1] > max_gap;
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
    let split = split_ids(ids, READ_GAP);
    let wanted: BTreeSet<i64> = ids.iter().copied().collect();
    let mut rows = Vec::new();
    for (lo, hi) in split.ranges {
        let mut read = range(conn, lo, hi)?;
        read.retain(|r| wanted.contains(&job_of(r)));
        rows.append(&mut read);
    }
    if split.scattered.is_empty() {
        return Ok(rows);
    }
    if by_id_on_sqlite(conn, &split.scattered) {
        for &id in &split.scattered {
            rows.extend(range(conn, id, id)?);
        }
        return Ok(rows);
    }
    if let AnyConnection::Postgresql(c) = conn {
        let sql = format!("SELECT r.* FROM {}", pg_lateral(table, "*"));
        let found: Vec<T> = diesel::sql_query(sql)
            .bind::<Text, _>(cluster)
            .bind::<Array<BigInt>, _>(&split.scattered)
            .load(c)?;
        rows.extend(found);
    } else {
        for chunk in split.scattered.chunks(IN_CHUNK) {
            rows.extend(any(conn, chunk)?);
        }
    }
    Ok(rows)
}

/// Deletes every row of the jobs `ids` of `cluster` from `table` (keyed as for
/// [`rows_of_jobs`]): `range` deletes one `(lo, hi)` range, `any` a list of at most
/// [`IN_CHUNK`] ids (not used on PostgreSQL).
pub fn delete_jobs(
    conn: &mut AnyConnection,
    table: &'static str,
    cluster: &str,
    ids: &[i64],
    mut range: impl FnMut(&mut AnyConnection, i64, i64) -> QueryResult<usize>,
    mut any: impl FnMut(&mut AnyConnection, &[i64]) -> QueryResult<usize>,
) -> QueryResult<()> {
    let split = split_ids(ids, 1);
    for (lo, hi) in split.ranges {
        range(conn, lo, hi)?;
    }
    if split.scattered.is_empty() {
        return Ok(());
    }
    if by_id_on_sqlite(conn, &split.scattered) {
        for &id in &split.scattered {
            range(conn, id, id)?;
        }
        return Ok(());
    }
    if let AnyConnection::Postgresql(c) = conn {
        let sql = format!(
            "DELETE FROM {table} WHERE ctid = ANY(ARRAY(SELECT r.ctid FROM {}))",
            pg_lateral(table, "ctid")
        );
        diesel::sql_query(sql)
            .bind::<Text, _>(cluster)
            .bind::<Array<BigInt>, _>(&split.scattered)
            .execute(c)?;
    } else {
        for chunk in split.scattered.chunks(IN_CHUNK) {
            any(conn, chunk)?;
        }
    }
    Ok(())
}

/// The FROM list selecting `columns` of `table`'s rows of cluster `$1` and each job id of the
/// array `$2`, one primary-key lookup per id (see the module doc).
fn pg_lateral(table: &'static str, columns: &str) -> String {
    format!(
        "unnest($2) AS k(id), LATERAL \
         (SELECT {columns} FROM {table} WHERE cluster = $1 AND job_id = k.id OFFSET 0) AS r"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_stretches_become_ranges() {
        let mut ids: Vec<i64> = (100..=140).collect();
        ids.extend([3, 7, 500, 502]);
        ids.extend((1000..1040).step_by(4));
        let split = split_ids(&ids, READ_GAP);
        assert_eq!(split.ranges, vec![(100, 140), (1000, 1036)]);
        assert_eq!(split.scattered, vec![3, 7, 500, 502]);
    }

    #[test]
    fn deletes_take_only_stretches_without_gaps() {
        let mut ids: Vec<i64> = (1..=20).collect();
        ids.extend((100..140).step_by(2));
        let split = split_ids(&ids, 1);
        assert_eq!(split.ranges, vec![(1, 20)]);
        assert_eq!(split.scattered, (100..140).step_by(2).collect::<Vec<_>>());
    }

    #[test]
    fn short_or_sparse_stretches_stay_scattered() {
        assert_eq!(split_ids(&[], READ_GAP), IdSplit::default());
        let short: Vec<i64> = (1..8).collect();
        assert_eq!(split_ids(&short, READ_GAP).scattered, short);
        let sparse: Vec<i64> = (0..20).map(|i| i * 5).collect();
        assert_eq!(split_ids(&sparse, READ_GAP).scattered, sparse);
    }

    #[test]
    fn repeats_and_order_do_not_matter() {
        let mut ids: Vec<i64> = (1..=10).rev().collect();
        ids.extend(1..=10);
        let split = split_ids(&ids, READ_GAP);
        assert_eq!(split.ranges, vec![(1, 10)]);
        assert!(split.scattered.is_empty());
    }
}
