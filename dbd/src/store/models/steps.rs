//! The `job_steps` table: the steps of each job run, keyed by (cluster, job_id, run, step_id).

use diesel::prelude::*;
use sluice_schema::db::schema::job_steps;

use super::bulk::insert_all;
use super::jobs::{IN_CHUNK, u32_of};
use crate::store::conn::AnyConnection;
use crate::store::records::Step;

/// One row of `job_steps`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = job_steps, primary_key(cluster, job_id, run, step_id))]
#[diesel(treat_none_as_default_value = false)]
pub struct StepRow {
    pub cluster: String,
    pub job_id: i64,
    pub run: i32,
    pub step_id: i32,
    pub name: String,
    pub time_start: i64,
    pub time_end: i64,
    pub state: i64,
    pub exit_code: i32,
    pub exit_signal: i32,
    pub node_list: String,
    pub node_count: i64,
    pub ntasks: i64,
    pub cpus: i64,
}

/// The key of a step within its cluster: (job_id, run, step_id).
pub type StepKey = (i64, i32, i32);

impl StepRow {
    /// The row storing `step` of `cluster`.
    pub fn new(cluster: &str, step: &Step) -> Self {
        Self {
            cluster: cluster.to_string(),
            job_id: i64::from(step.job_id),
            run: super::to_i32(step.run),
            step_id: step.step_id,
            name: step.name.clone(),
            time_start: step.start,
            time_end: step.end,
            state: i64::from(step.state),
            exit_code: step.exit_code,
            exit_signal: step.signal,
            node_list: step.node_list.clone(),
            node_count: i64::from(step.node_count),
            ntasks: i64::from(step.ntasks),
            cpus: i64::from(step.cpus),
        }
    }

    /// The row's key within its cluster.
    pub fn key(&self) -> StepKey {
        (self.job_id, self.run, self.step_id)
    }
}

impl From<StepRow> for Step {
    fn from(r: StepRow) -> Self {
        Self {
            job_id: u32_of(r.job_id),
            run: u32::try_from(r.run).unwrap_or(0),
            step_id: r.step_id,
            name: r.name,
            start: r.time_start,
            end: r.time_end,
            state: u32_of(r.state),
            exit_code: r.exit_code,
            signal: r.exit_signal,
            node_list: r.node_list,
            node_count: u32_of(r.node_count),
            ntasks: u32_of(r.ntasks),
            cpus: u32_of(r.cpus),
        }
    }
}

/// Every step of the jobs `job_ids` of `cluster` (see [`keyed`](super::keyed)).
pub fn steps_of(
    conn: &mut AnyConnection,
    cluster: &str,
    job_ids: &[i64],
) -> QueryResult<Vec<StepRow>> {
    let of_cluster = || {
        job_steps::table
            .filter(job_steps::cluster.eq(cluster))
            .select(StepRow::as_select())
    };
    super::keyed::rows_of_jobs(
        conn,
        "job_steps",
        cluster,
        job_ids,
        |s: &StepRow| s.job_id,
        |c, lo, hi| {
            of_cluster()
                .filter(job_steps::job_id.between(lo, hi))
                .load(c)
        },
        |c, ids| of_cluster().filter(job_steps::job_id.eq_any(ids)).load(c),
    )
}

/// Inserts new rows (see [`bulk`](super::bulk)).
pub fn insert_many(conn: &mut AnyConnection, rows: &[StepRow]) -> QueryResult<()> {
    insert_all!(conn, job_steps::table, rows)
}

/// Deletes every step of the jobs `job_ids` of `cluster` (to write them again).
pub fn delete_jobs(conn: &mut AnyConnection, cluster: &str, job_ids: &[i64]) -> QueryResult<()> {
    for ids in job_ids.chunks(IN_CHUNK) {
        diesel::delete(
            job_steps::table
                .filter(job_steps::cluster.eq(cluster))
                .filter(job_steps::job_id.eq_any(ids)),
        )
        .execute(conn)?;
    }
    Ok(())
}
