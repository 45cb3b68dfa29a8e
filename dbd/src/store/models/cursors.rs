//! The `job_id_cursors` table: per cluster, the next local job id to lease.

use crate::db::schema::job_id_cursors;
use diesel::prelude::*;

use super::cached;
use crate::store::conn::AnyConnection;

/// The cursor of `cluster`, if it has one.
pub fn get(conn: &mut AnyConnection, cluster: &str) -> QueryResult<Option<i64>> {
    job_id_cursors::table
        .find(cluster)
        .select(job_id_cursors::next_id)
        .get_result(conn)
        .optional()
}

/// Creates the cursor of `cluster` at `next_id`.
pub fn insert(conn: &mut AnyConnection, cluster: &str, next_id: i64) -> QueryResult<()> {
    diesel::insert_into(job_id_cursors::table)
        .values((
            job_id_cursors::cluster.eq(cluster),
            job_id_cursors::next_id.eq(next_id),
        ))
        .execute(conn)
        .map(|_| ())
}

/// Moves the cursor from `old` to `new` if nobody moved it meanwhile (compare-and-set, so two
/// dbds over one database never hand out the same ids); returns whether it moved.
pub fn advance(conn: &mut AnyConnection, cluster: &str, old: i64, new: i64) -> QueryResult<bool> {
    let n = cached::update(
        job_id_cursors::table,
        job_id_cursors::cluster
            .eq(cluster)
            .and(job_id_cursors::next_id.eq(old)),
        job_id_cursors::next_id.eq(new),
    )
    .execute(conn)?;
    Ok(n == 1)
}
