//! The `job_wckeys` table: the wckey (`--wckey`) of each job that has one, keyed by (cluster,
//! job_id). `job_runs` is at diesel's 32-column limit, so the wckey lives here; every run of a
//! job shares it. Few jobs carry one, so plain chunked reads serve.

use std::collections::HashMap;

use crate::db::schema::job_wckeys;
use diesel::prelude::*;

use super::bulk::{IN_CHUNK, insert_all};
use crate::store::conn::AnyConnection;

/// One job's wckey.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = job_wckeys, primary_key(cluster, job_id))]
#[diesel(treat_none_as_default_value = false)]
pub struct WckeyRow {
    pub cluster: String,
    pub job_id: i64,
    /// The job's first submission.
    pub time_submit: i64,
    pub wckey: String,
}

/// The wckey of each of the jobs `job_ids` of `cluster` that has one.
pub fn of_jobs(
    conn: &mut AnyConnection,
    cluster: &str,
    job_ids: &[i64],
) -> QueryResult<HashMap<i64, String>> {
    let mut out = HashMap::new();
    for ids in job_ids.chunks(IN_CHUNK) {
        let rows: Vec<(i64, String)> = job_wckeys::table
            .filter(job_wckeys::cluster.eq(cluster))
            .filter(job_wckeys::job_id.eq_any(ids))
            .select((job_wckeys::job_id, job_wckeys::wckey))
            .load(conn)?;
        out.extend(rows);
    }
    Ok(out)
}

/// Sets the wckeys of `cluster`'s jobs: each job of `wckeys` gets its wckey (`""`: none), the
/// first submission time kept when the job had a row already.
pub fn set(
    conn: &mut AnyConnection,
    cluster: &str,
    wckeys: &[(i64, i64, String)],
) -> QueryResult<()> {
    if wckeys.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = wckeys.iter().map(|w| w.0).collect();
    let mut first: HashMap<i64, i64> = HashMap::new();
    for chunk in ids.chunks(IN_CHUNK) {
        let rows: Vec<(i64, i64)> = job_wckeys::table
            .filter(job_wckeys::cluster.eq(cluster))
            .filter(job_wckeys::job_id.eq_any(chunk))
            .select((job_wckeys::job_id, job_wckeys::time_submit))
            .load(conn)?;
        first.extend(rows);
        diesel::delete(
            job_wckeys::table
                .filter(job_wckeys::cluster.eq(cluster))
                .filter(job_wckeys::job_id.eq_any(chunk)),
        )
        .execute(conn)?;
    }
    let rows: Vec<WckeyRow> = wckeys
        .iter()
        .filter(|w| !w.2.is_empty())
        .map(|(job_id, submit, wckey)| WckeyRow {
            cluster: cluster.to_string(),
            job_id: *job_id,
            time_submit: first.get(job_id).copied().unwrap_or(*submit),
            wckey: wckey.clone(),
        })
        .collect();
    insert_all!(conn, job_wckeys::table, rows.as_slice())
}

/// Deletes `cluster`'s rows of jobs submitted before `before` that have no run left (purged);
/// returns how many.
pub fn purge_orphans(conn: &mut AnyConnection, cluster: &str, before: i64) -> QueryResult<usize> {
    let old: Vec<i64> = job_wckeys::table
        .filter(job_wckeys::cluster.eq(cluster))
        .filter(job_wckeys::time_submit.lt(before))
        .select(job_wckeys::job_id)
        .load(conn)?;
    let gone = super::jobs::without_runs(conn, cluster, old)?;
    let mut n = 0;
    for chunk in gone.chunks(IN_CHUNK) {
        n += diesel::delete(
            job_wckeys::table
                .filter(job_wckeys::cluster.eq(cluster))
                .filter(job_wckeys::job_id.eq_any(chunk)),
        )
        .execute(conn)?;
    }
    Ok(n)
}
