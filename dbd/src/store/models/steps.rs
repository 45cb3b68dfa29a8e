//! The `job_steps` table: the steps of each job run, keyed by (cluster, job_id, run, step_id).

use crate::db::schema::job_steps;
use diesel::prelude::*;
use sluice_vocab::jobacct::{StepUsage, TresMap, UsageSide};

use super::bulk::insert_all;
use super::u32_of;
use crate::store::conn::{AnyConnection, native};
use crate::store::types::records::Step;

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
    /// The step's usage (see [`StepUsage`]); all NULL when not measured.
    pub usage_tasks: Option<i64>,
    pub user_cpu_ms: Option<i64>,
    pub sys_cpu_ms: Option<i64>,
    pub tres_usage_in_tot: Option<String>,
    pub tres_usage_in_max: Option<String>,
    pub tres_usage_in_max_taskid: Option<String>,
    pub tres_usage_in_max_nodeid: Option<String>,
    pub tres_usage_in_min: Option<String>,
    pub tres_usage_in_ave: Option<String>,
    pub tres_usage_out_tot: Option<String>,
    pub tres_usage_out_max: Option<String>,
    pub tres_usage_out_max_taskid: Option<String>,
    pub tres_usage_out_max_nodeid: Option<String>,
    pub tres_usage_out_min: Option<String>,
    pub tres_usage_out_ave: Option<String>,
}

/// The key of a step within its cluster: (job_id, run, step_id).
pub type StepKey = (i64, i32, i32);

impl StepRow {
    /// The row storing `step` of `cluster`.
    pub fn new(cluster: &str, step: &Step) -> Self {
        let u = step.usage.as_ref();
        let big = |v: u64| Some(i64::try_from(v).unwrap_or(i64::MAX));
        let text = |f: fn(&StepUsage) -> &TresMap| u.map(|u| f(u).to_string());
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
            usage_tasks: u.and_then(|u| big(u64::from(u.tasks))),
            user_cpu_ms: u.and_then(|u| big(u.user_cpu_ms)),
            sys_cpu_ms: u.and_then(|u| big(u.sys_cpu_ms)),
            tres_usage_in_tot: text(|u| &u.usage_in.tot),
            tres_usage_in_max: text(|u| &u.usage_in.max),
            tres_usage_in_max_taskid: text(|u| &u.usage_in.max_task),
            tres_usage_in_max_nodeid: text(|u| &u.usage_in.max_node),
            tres_usage_in_min: text(|u| &u.usage_in.min),
            tres_usage_in_ave: text(|u| &u.usage_in.ave),
            tres_usage_out_tot: text(|u| &u.usage_out.tot),
            tres_usage_out_max: text(|u| &u.usage_out.max),
            tres_usage_out_max_taskid: text(|u| &u.usage_out.max_task),
            tres_usage_out_max_nodeid: text(|u| &u.usage_out.max_node),
            tres_usage_out_min: text(|u| &u.usage_out.min),
            tres_usage_out_ave: text(|u| &u.usage_out.ave),
        }
    }

    /// Keeps `old`'s usage when this row has none (a later record that did not measure).
    pub fn keep_usage_of(&mut self, old: &Self) {
        if self.usage_tasks.is_some() {
            return;
        }
        self.usage_tasks = old.usage_tasks;
        self.user_cpu_ms = old.user_cpu_ms;
        self.sys_cpu_ms = old.sys_cpu_ms;
        self.tres_usage_in_tot.clone_from(&old.tres_usage_in_tot);
        self.tres_usage_in_max.clone_from(&old.tres_usage_in_max);
        self.tres_usage_in_max_taskid
            .clone_from(&old.tres_usage_in_max_taskid);
        self.tres_usage_in_max_nodeid
            .clone_from(&old.tres_usage_in_max_nodeid);
        self.tres_usage_in_min.clone_from(&old.tres_usage_in_min);
        self.tres_usage_in_ave.clone_from(&old.tres_usage_in_ave);
        self.tres_usage_out_tot.clone_from(&old.tres_usage_out_tot);
        self.tres_usage_out_max.clone_from(&old.tres_usage_out_max);
        self.tres_usage_out_max_taskid
            .clone_from(&old.tres_usage_out_max_taskid);
        self.tres_usage_out_max_nodeid
            .clone_from(&old.tres_usage_out_max_nodeid);
        self.tres_usage_out_min.clone_from(&old.tres_usage_out_min);
        self.tres_usage_out_ave.clone_from(&old.tres_usage_out_ave);
    }

    /// The usage kept in the row; `None` when not measured or unreadable.
    pub fn usage(&self) -> Option<StepUsage> {
        let map = |t: &Option<String>| TresMap::parse(t.as_deref()?);
        let side = |m: [&Option<String>; 6]| {
            Some(UsageSide {
                tot: map(m[0])?,
                max: map(m[1])?,
                max_task: map(m[2])?,
                max_node: map(m[3])?,
                min: map(m[4])?,
                ave: map(m[5])?,
                // Which task and node had the least: live only (sstat), not kept.
                min_task: TresMap::default(),
                min_node: TresMap::default(),
            })
        };
        let num = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
        Some(StepUsage {
            tasks: u32::try_from(num(self.usage_tasks)?).ok()?,
            user_cpu_ms: num(self.user_cpu_ms)?,
            sys_cpu_ms: num(self.sys_cpu_ms)?,
            usage_in: side([
                &self.tres_usage_in_tot,
                &self.tres_usage_in_max,
                &self.tres_usage_in_max_taskid,
                &self.tres_usage_in_max_nodeid,
                &self.tres_usage_in_min,
                &self.tres_usage_in_ave,
            ])?,
            usage_out: side([
                &self.tres_usage_out_tot,
                &self.tres_usage_out_max,
                &self.tres_usage_out_max_taskid,
                &self.tres_usage_out_max_nodeid,
                &self.tres_usage_out_min,
                &self.tres_usage_out_ave,
            ])?,
        })
    }

    /// The row's key within its cluster.
    pub fn key(&self) -> StepKey {
        (self.job_id, self.run, self.step_id)
    }
}

impl From<StepRow> for Step {
    fn from(r: StepRow) -> Self {
        let usage = r.usage();
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
            usage,
        }
    }
}

/// Every step of the jobs `job_ids` of `cluster` (see [`keyed`](super::keyed)).
pub fn steps_of(
    conn: &mut AnyConnection,
    cluster: &str,
    job_ids: &[i64],
) -> QueryResult<Vec<StepRow>> {
    // A macro, not a closure: the selection is typed for one backend, and the ranges run on
    // the backend's own connection (see `conn::native`).
    macro_rules! of_cluster {
        () => {
            job_steps::table
                .filter(job_steps::cluster.eq(cluster))
                .select(StepRow::as_select())
        };
    }
    super::keyed::rows_of_jobs(
        conn,
        "job_steps",
        cluster,
        job_ids,
        |s: &StepRow| s.job_id,
        |c, lo, hi| native!(c, c => of_cluster!().filter(job_steps::job_id.between(lo, hi)).load(c)),
        |c, ids| of_cluster!().filter(job_steps::job_id.eq_any(ids)).load(c),
    )
}

/// Inserts new rows (see [`bulk`](super::bulk)).
pub fn insert_many(conn: &mut AnyConnection, rows: &[StepRow]) -> QueryResult<()> {
    insert_all!(conn, job_steps::table, rows)
}

/// Deletes every step of the jobs `job_ids` of `cluster` (to write them again; see
/// [`keyed`](super::keyed)).
pub fn delete_jobs(conn: &mut AnyConnection, cluster: &str, job_ids: &[i64]) -> QueryResult<()> {
    let of_cluster = job_steps::table.filter(job_steps::cluster.eq(cluster));
    super::keyed::delete_jobs(
        conn,
        "job_steps",
        cluster,
        job_ids,
        |c, lo, hi| diesel::delete(of_cluster.filter(job_steps::job_id.between(lo, hi))).execute(c),
        |c, ids| diesel::delete(of_cluster.filter(job_steps::job_id.eq_any(ids))).execute(c),
    )
}
