//! The `job_het` table: the heterogeneous job each component job belongs to (`sbatch A : B`),
//! keyed by (cluster, job_id): its leader's id and the component's offset, as sacct shows
//! them (`123+1`). `job_runs` is at diesel's 32-column limit, so they live here; every run of
//! a job shares them. Few jobs are components, so plain chunked reads serve.

use std::collections::{BTreeSet, HashMap};

use crate::db::schema::job_het;
use diesel::prelude::*;

use super::bulk::{IN_CHUNK, insert_all};
use crate::store::conn::AnyConnection;

/// One component's place in its heterogeneous job.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = job_het, primary_key(cluster, job_id))]
#[diesel(treat_none_as_default_value = false)]
pub struct HetRow {
    pub cluster: String,
    pub job_id: i64,
    /// The job's first submission.
    pub time_submit: i64,
    /// The heterogeneous job's id (its leader's job id).
    pub het_job_id: i64,
    pub het_offset: i32,
}

/// `(heterogeneous job id, offset)` of each of the jobs `job_ids` of `cluster` that is a
/// component of one.
pub fn of_jobs(
    conn: &mut AnyConnection,
    cluster: &str,
    job_ids: &[i64],
) -> QueryResult<HashMap<i64, (i64, i32)>> {
    let mut out = HashMap::new();
    for ids in job_ids.chunks(IN_CHUNK) {
        let rows: Vec<(i64, i64, i32)> = job_het::table
            .filter(job_het::cluster.eq(cluster))
            .filter(job_het::job_id.eq_any(ids))
            .select((job_het::job_id, job_het::het_job_id, job_het::het_offset))
            .load(conn)?;
        out.extend(rows.into_iter().map(|(j, h, o)| (j, (h, o))));
    }
    Ok(out)
}

/// `(heterogeneous job id, offset, job id)` of every component of the heterogeneous jobs
/// `leaders` on `clusters` (every cluster when empty), for sacct's `-j`.
pub fn components(
    conn: &mut AnyConnection,
    clusters: &[String],
    leaders: &[i64],
) -> QueryResult<Vec<(i64, i32, i64)>> {
    let mut out = Vec::new();
    for ids in leaders.chunks(IN_CHUNK) {
        let mut q = job_het::table
            .filter(job_het::het_job_id.eq_any(ids))
            .select((job_het::het_job_id, job_het::het_offset, job_het::job_id))
            .into_boxed();
        if !clusters.is_empty() {
            q = q.filter(job_het::cluster.eq_any(clusters));
        }
        out.extend(q.load::<(i64, i32, i64)>(conn)?);
    }
    Ok(out)
}

/// Records the components `rows` of `cluster` (job id, first submission, heterogeneous job
/// id, offset); a job recorded already keeps its row.
pub fn set(
    conn: &mut AnyConnection,
    cluster: &str,
    rows: &[(i64, i64, i64, i32)],
) -> QueryResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let mut known: BTreeSet<i64> = BTreeSet::new();
    for chunk in ids.chunks(IN_CHUNK) {
        known.extend(
            job_het::table
                .filter(job_het::cluster.eq(cluster))
                .filter(job_het::job_id.eq_any(chunk))
                .select(job_het::job_id)
                .load::<i64>(conn)?,
        );
    }
    let new: Vec<HetRow> = rows
        .iter()
        .filter(|r| !known.contains(&r.0))
        .map(|&(job_id, time_submit, het_job_id, het_offset)| HetRow {
            cluster: cluster.to_string(),
            job_id,
            time_submit,
            het_job_id,
            het_offset,
        })
        .collect();
    insert_all!(conn, job_het::table, new.as_slice())
}

/// Deletes `cluster`'s rows of jobs submitted before `before` that have no run left (purged);
/// returns how many.
pub fn purge_orphans(conn: &mut AnyConnection, cluster: &str, before: i64) -> QueryResult<usize> {
    let old: Vec<i64> = job_het::table
        .filter(job_het::cluster.eq(cluster))
        .filter(job_het::time_submit.lt(before))
        .select(job_het::job_id)
        .load(conn)?;
    let gone = super::jobs::without_runs(conn, cluster, old)?;
    let mut n = 0;
    for chunk in gone.chunks(IN_CHUNK) {
        n += diesel::delete(
            job_het::table
                .filter(job_het::cluster.eq(cluster))
                .filter(job_het::job_id.eq_any(chunk)),
        )
        .execute(conn)?;
    }
    Ok(n)
}
