//! The `job_runs` table: one row per run of a job, keyed by (cluster, job_id, run).

use crate::db::schema::job_runs;
use diesel::prelude::*;

use super::bulk::{IN_CHUNK, insert_all};
use super::u32_of;
use crate::store::conn::{AnyConnection, native};
use crate::store::types::records::JobRun;

/// One row of `job_runs`. Unsigned wire values are stored widened to BIGINT.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = job_runs, primary_key(cluster, job_id, run))]
#[diesel(treat_none_as_default_value = false)]
pub struct JobRunRow {
    pub cluster: String,
    pub job_id: i64,
    pub run: i32,
    pub array_job_id: i64,
    /// -1 when not an array task.
    pub array_task_id: i64,
    pub name: String,
    pub uid: i64,
    pub gid: i64,
    pub user_name: String,
    pub account: String,
    pub partition_name: String,
    pub state: i64,
    pub exit_code: i32,
    pub exit_signal: i32,
    pub time_submit: i64,
    pub time_eligible: i64,
    pub time_start: i64,
    pub time_end: i64,
    pub suspended_secs: i64,
    pub suspend_since: i64,
    pub time_limit_min: i64,
    pub node_list: String,
    pub node_count: i64,
    pub cpus: i64,
    pub mem_mb: i64,
    pub req_cpus: i64,
    pub req_mem_mb: i64,
    pub workdir: String,
    pub reason: String,
    pub job_comment: String,
    pub latest: bool,
    /// Who cancelled the run; -1 when unknown.
    pub requester_uid: i64,
}

impl JobRunRow {
    /// An empty PENDING run of `job_id` (filled in by the records that follow).
    pub fn empty(cluster: &str, job_id: i64, run: i32) -> Self {
        Self {
            cluster: cluster.to_string(),
            job_id,
            run,
            array_job_id: 0,
            array_task_id: -1,
            name: String::new(),
            uid: 0,
            gid: 0,
            user_name: String::new(),
            account: String::new(),
            partition_name: String::new(),
            state: 0,
            exit_code: 0,
            exit_signal: 0,
            time_submit: 0,
            time_eligible: 0,
            time_start: 0,
            time_end: 0,
            suspended_secs: 0,
            suspend_since: 0,
            time_limit_min: 0,
            node_list: String::new(),
            node_count: 0,
            cpus: 0,
            mem_mb: 0,
            req_cpus: 0,
            req_mem_mb: 0,
            workdir: String::new(),
            reason: String::new(),
            job_comment: String::new(),
            latest: true,
            requester_uid: -1,
        }
    }
}

impl From<JobRunRow> for JobRun {
    fn from(r: JobRunRow) -> Self {
        Self {
            cluster: r.cluster,
            job_id: u32_of(r.job_id),
            array_job_id: u32_of(r.array_job_id),
            array_task_id: u32::try_from(r.array_task_id).ok(),
            run: u32::try_from(r.run).unwrap_or(0),
            name: r.name,
            uid: u32_of(r.uid),
            gid: u32_of(r.gid),
            user: r.user_name,
            account: r.account,
            partition: r.partition_name,
            state: u32_of(r.state),
            exit_code: r.exit_code,
            signal: r.exit_signal,
            submit: r.time_submit,
            eligible: r.time_eligible,
            start: r.time_start,
            end: r.time_end,
            suspended_secs: r.suspended_secs,
            time_limit_min: r.time_limit_min,
            node_list: r.node_list,
            node_count: u32_of(r.node_count),
            cpus: u32_of(r.cpus),
            mem_mb: u64::try_from(r.mem_mb).unwrap_or(0),
            req_cpus: u32_of(r.req_cpus),
            req_mem_mb: u64::try_from(r.req_mem_mb).unwrap_or(0),
            workdir: r.workdir,
            reason: r.reason,
            comment: r.job_comment,
            wckey: String::new(),
            het_job_id: 0,
            het_offset: 0,
            requester_uid: u32::try_from(r.requester_uid).ok(),
            qos: String::new(),
            steps: Vec::new(),
        }
    }
}

/// Every run of the jobs `job_ids` of `cluster` (see [`keyed`](super::keyed)).
pub fn runs_of(
    conn: &mut AnyConnection,
    cluster: &str,
    job_ids: &[i64],
) -> QueryResult<Vec<JobRunRow>> {
    // A macro, not a closure: the selection is typed for one backend, and the ranges run on
    // the backend's own connection (see `conn::native`).
    macro_rules! of_cluster {
        () => {
            job_runs::table
                .filter(job_runs::cluster.eq(cluster))
                .select(JobRunRow::as_select())
        };
    }
    super::keyed::rows_of_jobs(
        conn,
        "job_runs",
        cluster,
        job_ids,
        |r: &JobRunRow| r.job_id,
        |c, lo, hi| native!(c, c => of_cluster!().filter(job_runs::job_id.between(lo, hi)).load(c)),
        |c, ids| of_cluster!().filter(job_runs::job_id.eq_any(ids)).load(c),
    )
}

/// Inserts new rows (see [`bulk`](super::bulk)).
pub fn insert_many(conn: &mut AnyConnection, rows: &[JobRunRow]) -> QueryResult<()> {
    insert_all!(conn, job_runs::table, rows)
}

/// Deletes every run of the jobs `job_ids` of `cluster` (to write them again; see
/// [`keyed`](super::keyed)).
pub fn delete_jobs(conn: &mut AnyConnection, cluster: &str, job_ids: &[i64]) -> QueryResult<()> {
    let of_cluster = job_runs::table.filter(job_runs::cluster.eq(cluster));
    super::keyed::delete_jobs(
        conn,
        "job_runs",
        cluster,
        job_ids,
        |c, lo, hi| diesel::delete(of_cluster.filter(job_runs::job_id.between(lo, hi))).execute(c),
        |c, ids| diesel::delete(of_cluster.filter(job_runs::job_id.eq_any(ids))).execute(c),
    )
}

/// Those of `cluster`'s jobs `ids` that have no run left (purged): what the tables keyed by
/// job alone (`job_het`, `job_wckeys`) drop with them.
pub fn without_runs(
    conn: &mut AnyConnection,
    cluster: &str,
    ids: Vec<i64>,
) -> QueryResult<Vec<i64>> {
    let mut live = std::collections::BTreeSet::new();
    for chunk in ids.chunks(IN_CHUNK) {
        live.extend(
            job_runs::table
                .filter(job_runs::cluster.eq(cluster))
                .filter(job_runs::job_id.eq_any(chunk))
                .select(job_runs::job_id)
                .load::<i64>(conn)?,
        );
    }
    Ok(ids.into_iter().filter(|id| !live.contains(id)).collect())
}
