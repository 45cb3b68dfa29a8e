//! sacct's scan of `job_runs` on SQLite through SQLite's own prepared statements (rusqlite):
//! each statement text is prepared once per reader connection and cached, and each row is
//! read column by column straight into a [`JobRunRow`], without diesel's per-column dispatch
//! over three backends (a fifth of the dbd's time per streamed row, measured).
//!
//! The statements say what [`Diesel`](super::query::Diesel)'s do, with the same index-range
//! shapes (the planner hints of the jobs migration apply to both), except the per-state
//! windows: those rows are read and left to [`window::keep`](super::window::keep), which
//! `page` applies to every row anyway.

use std::collections::{HashMap, HashSet};

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Row, params_from_iter};
use sluice_vocab::states::JobState;

use super::query::{Key, Part, RunSource};
use super::types::{JobQuery, TextField};
use crate::store::models::bulk::IN_CHUNK;
use crate::store::models::job_resizes::ResizeRow;
use crate::store::models::jobs::JobRunRow;
use crate::store::models::keyed::{READ_GAP, split_ids};
use crate::store::models::steps::StepRow;

/// `job_runs`' columns in [`JobRunRow`]'s field order.
const COLUMNS: &str = "cluster, job_id, run, array_job_id, array_task_id, name, uid, gid, \
     user_name, account, partition_name, state, exit_code, exit_signal, time_submit, \
     time_eligible, time_start, time_end, suspended_secs, suspend_since, time_limit_min, \
     node_list, node_count, cpus, mem_mb, req_cpus, req_mem_mb, workdir, reason, job_comment, \
     latest, requester_uid";

/// The text columns of `job_runs` a query may leave unread, with their fields.
const PROJECTED: [(&str, TextField); 8] = [
    ("name", TextField::Name),
    ("user_name", TextField::User),
    ("account", TextField::Account),
    ("partition_name", TextField::Partition),
    ("node_list", TextField::NodeList),
    ("workdir", TextField::WorkDir),
    ("reason", TextField::Reason),
    ("job_comment", TextField::Comment),
];

/// [`COLUMNS`] with each text column `q` does not read replaced by `''`, so SQLite neither
/// decodes nor copies it and the row reads an empty string (no allocation), in the same
/// positions. Each projection is its own cached statement text.
fn columns(q: &JobQuery) -> std::borrow::Cow<'static, str> {
    if q.fields.is_none() {
        return COLUMNS.into();
    }
    let list = COLUMNS
        .split(", ")
        .map(|c| {
            let unread = PROJECTED
                .iter()
                .any(|&(name, field)| name == c.trim() && !q.reads(field));
            if unread { "''" } else { c.trim() }
        })
        .collect::<Vec<_>>()
        .join(", ");
    list.into()
}

/// `job_resizes`' columns in [`ResizeRow`]'s field order.
const RESIZE_COLUMNS: &str = "cluster, job_id, run, time_end, node_list, node_count, cpus, \
     mem_mb, suspended_secs, time_limit_min";

/// `job_steps`' columns in [`StepRow`]'s field order.
const STEP_COLUMNS: &str = "cluster, job_id, run, step_id, name, time_start, time_end, state, \
     exit_code, exit_signal, node_list, node_count, ntasks, cpus, usage_tasks, user_cpu_ms, \
     sys_cpu_ms, tres_usage_in_tot, tres_usage_in_max, tres_usage_in_max_taskid, \
     tres_usage_in_max_nodeid, tres_usage_in_min, tres_usage_in_ave, tres_usage_out_tot, \
     tres_usage_out_max, tres_usage_out_max_taskid, tres_usage_out_max_nodeid, \
     tres_usage_out_min, tres_usage_out_ave";

/// A scan source over one SQLite reader connection, inside the read transaction its caller
/// opened (so every statement of a page sees one state).
pub(crate) struct Sqlite<'a>(pub &'a Connection);

/// A statement under construction: its text and its arguments, in order.
struct Stmt {
    sql: String,
    args: Vec<Value>,
}

impl Stmt {
    /// `SELECT columns FROM table WHERE cluster = ?`.
    fn select_from(columns: &str, table: &str, cluster: &str) -> Self {
        let mut sql = String::with_capacity(1024);
        sql.push_str("SELECT ");
        sql.push_str(columns);
        sql.push_str(" FROM ");
        sql.push_str(table);
        sql.push_str(" WHERE cluster = ?");
        Self {
            sql,
            args: vec![Value::Text(cluster.to_string())],
        }
    }

    /// `SELECT` of `job_runs`' columns as `q` reads them.
    fn select(q: &JobQuery, cluster: &str) -> Self {
        Self::select_from(&columns(q), "job_runs", cluster)
    }

    /// ` AND <cond>` with `cond`'s `?` bound to `args`.
    fn and(&mut self, cond: &str, args: impl IntoIterator<Item = Value>) {
        self.sql.push_str(" AND ");
        self.sql.push_str(cond);
        self.args.extend(args);
    }

    /// ` AND <column> IN (?, ...)`.
    fn and_in(&mut self, column: &str, values: impl IntoIterator<Item = Value>) {
        self.sql.push_str(" AND ");
        self.sql.push_str(column);
        self.sql.push_str(" IN (");
        let before = self.args.len();
        for v in values {
            self.sql.push_str(if self.args.len() == before {
                "?"
            } else {
                ", ?"
            });
            self.args.push(v);
        }
        self.sql.push(')');
    }

    fn rows(self, conn: &Connection) -> rusqlite::Result<Vec<JobRunRow>> {
        self.read(conn, job_run)
    }

    /// Runs the statement (prepared once per connection) and reads each row with `read`.
    fn read<T>(
        self,
        conn: &Connection,
        read: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<Vec<T>> {
        let mut stmt = conn.prepare_cached(&self.sql)?;
        let mut rows = stmt.query(params_from_iter(self.args))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(read(row)?);
        }
        Ok(out)
    }
}

/// Typed reads of one row's columns.
struct Cols<'r, 's>(&'r Row<'s>);

impl Cols<'_, '_> {
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        Ok(self.0.get_ref(i)?.as_i64()?)
    }

    fn int32(&self, i: usize) -> rusqlite::Result<i32> {
        let v = self.int(i)?;
        i32::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v))
    }

    fn opt_int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        Ok(self.0.get_ref(i)?.as_i64_or_null()?)
    }

    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.opt_text(i)?.ok_or(rusqlite::Error::InvalidColumnType(
            i,
            String::new(),
            rusqlite::types::Type::Null,
        ))
    }

    fn opt_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        match self.0.get_ref(i)? {
            ValueRef::Text(t) => Ok(Some(String::from_utf8_lossy(t).into_owned())),
            ValueRef::Null => Ok(None),
            other => Err(rusqlite::Error::InvalidColumnType(
                i,
                String::new(),
                other.data_type(),
            )),
        }
    }
}

fn ints(values: impl IntoIterator<Item = impl Into<i64>>) -> impl Iterator<Item = Value> {
    values.into_iter().map(|v| Value::Integer(v.into()))
}

fn texts<'a>(values: &'a [String]) -> impl Iterator<Item = Value> + 'a {
    values.iter().map(|v| Value::Text(v.clone()))
}

/// One row of [`COLUMNS`].
fn job_run(row: &Row<'_>) -> rusqlite::Result<JobRunRow> {
    let c = Cols(row);
    Ok(JobRunRow {
        cluster: c.text(0)?,
        job_id: c.int(1)?,
        run: c.int32(2)?,
        array_job_id: c.int(3)?,
        array_task_id: c.int(4)?,
        name: c.text(5)?,
        uid: c.int(6)?,
        gid: c.int(7)?,
        user_name: c.text(8)?,
        account: c.text(9)?,
        partition_name: c.text(10)?,
        state: c.int(11)?,
        exit_code: c.int32(12)?,
        exit_signal: c.int32(13)?,
        time_submit: c.int(14)?,
        time_eligible: c.int(15)?,
        time_start: c.int(16)?,
        time_end: c.int(17)?,
        suspended_secs: c.int(18)?,
        suspend_since: c.int(19)?,
        time_limit_min: c.int(20)?,
        node_list: c.text(21)?,
        node_count: c.int(22)?,
        cpus: c.int(23)?,
        mem_mb: c.int(24)?,
        req_cpus: c.int(25)?,
        req_mem_mb: c.int(26)?,
        workdir: c.text(27)?,
        reason: c.text(28)?,
        job_comment: c.text(29)?,
        latest: c.int(30)? != 0,
        requester_uid: c.int(31)?,
    })
}

/// One row of [`RESIZE_COLUMNS`].
fn resize(row: &Row<'_>) -> rusqlite::Result<ResizeRow> {
    let c = Cols(row);
    Ok(ResizeRow {
        cluster: c.text(0)?,
        job_id: c.int(1)?,
        run: c.int32(2)?,
        time_end: c.int(3)?,
        node_list: c.text(4)?,
        node_count: c.int(5)?,
        cpus: c.int(6)?,
        mem_mb: c.int(7)?,
        suspended_secs: c.int(8)?,
        time_limit_min: c.int(9)?,
    })
}

/// One row of [`STEP_COLUMNS`].
fn step(row: &Row<'_>) -> rusqlite::Result<StepRow> {
    let c = Cols(row);
    Ok(StepRow {
        cluster: c.text(0)?,
        job_id: c.int(1)?,
        run: c.int32(2)?,
        step_id: c.int32(3)?,
        name: c.text(4)?,
        time_start: c.int(5)?,
        time_end: c.int(6)?,
        state: c.int(7)?,
        exit_code: c.int32(8)?,
        exit_signal: c.int32(9)?,
        node_list: c.text(10)?,
        node_count: c.int(11)?,
        ntasks: c.int(12)?,
        cpus: c.int(13)?,
        usage_tasks: c.opt_int(14)?,
        user_cpu_ms: c.opt_int(15)?,
        sys_cpu_ms: c.opt_int(16)?,
        tres_usage_in_tot: c.opt_text(17)?,
        tres_usage_in_max: c.opt_text(18)?,
        tres_usage_in_max_taskid: c.opt_text(19)?,
        tres_usage_in_max_nodeid: c.opt_text(20)?,
        tres_usage_in_min: c.opt_text(21)?,
        tres_usage_in_ave: c.opt_text(22)?,
        tres_usage_out_tot: c.opt_text(23)?,
        tres_usage_out_max: c.opt_text(24)?,
        tres_usage_out_max_taskid: c.opt_text(25)?,
        tres_usage_out_max_nodeid: c.opt_text(26)?,
        tres_usage_out_min: c.opt_text(27)?,
        tres_usage_out_ave: c.opt_text(28)?,
    })
}

/// The rows of the jobs `ids` of `cluster` from `table`: dense stretches of ids as one
/// `BETWEEN` range each (one cached statement, whatever their count), the scattered rest as
/// `IN` lists; rows of ids in a stretch's gaps are dropped.
/// A (job id, text) row of a side table of the jobs.
fn pair(row: &Row<'_>) -> rusqlite::Result<(i64, String)> {
    Ok((row.get(0)?, row.get(1)?))
}

fn rows_of_jobs<T>(
    conn: &Connection,
    columns: &str,
    table: &str,
    cluster: &str,
    ids: &[i64],
    read: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
    job_of: impl Fn(&T) -> i64,
) -> rusqlite::Result<Vec<T>> {
    let split = split_ids(ids, READ_GAP);
    let wanted: HashSet<i64> = ids.iter().copied().collect();
    let mut out = Vec::new();
    for (lo, hi) in split.ranges {
        let mut stmt = Stmt::select_from(columns, table, cluster);
        stmt.and("job_id BETWEEN ? AND ?", ints([lo, hi]));
        let rows = stmt.read(conn, &read)?;
        out.extend(rows.into_iter().filter(|r| wanted.contains(&job_of(r))));
    }
    for chunk in split.scattered.chunks(IN_CHUNK) {
        let mut stmt = Stmt::select_from(columns, table, cluster);
        stmt.and_in("job_id", ints(chunk.iter().copied()));
        out.extend(stmt.read(conn, &read)?);
    }
    Ok(out)
}

/// The window conditions every matching run meets, whatever its states: the submit bound,
/// and without states the eligibility rules; see [`sql_window`](super::window::sql_window).
fn window(q: &JobQuery, stmt: &mut Stmt) {
    let (s, e) = (q.start, q.end);
    if !q.states.is_empty() && s == 0 && e == 0 {
        let resizing = q.states.contains(&JobState::Resizing.stored());
        stmt.sql.push_str(if resizing {
            " AND (state"
        } else {
            " AND state"
        });
        stmt.sql.push_str(" IN (");
        for (i, &state) in q.states.iter().enumerate() {
            stmt.sql.push_str(if i == 0 { "?" } else { ", ?" });
            stmt.args.push(Value::Integer(i64::from(state)));
        }
        stmt.sql.push_str(if resizing {
            ") OR time_start <> 0)"
        } else {
            ")"
        });
        return;
    }
    if e != 0 {
        stmt.and("time_submit <= ?", ints([e]));
    }
    if !q.states.is_empty() {
        return;
    }
    if s != 0 {
        stmt.and("(time_end = 0 OR time_end >= ?)", ints([s]));
    }
    if q.job_ids.is_empty() {
        if s != 0 || e != 0 {
            stmt.and("time_eligible <> 0", []);
        }
        if e != 0 {
            stmt.and("time_eligible <= ?", ints([e]));
        }
    }
}

impl RunSource for Sqlite<'_> {
    type Error = rusqlite::Error;

    fn cluster_names(&mut self) -> rusqlite::Result<Vec<String>> {
        let mut stmt = self.0.prepare_cached("SELECT name FROM clusters")?;
        let names = stmt.query_map([], |r| r.get(0))?;
        names.collect()
    }

    fn span(&mut self, cluster: &str) -> rusqlite::Result<Option<i64>> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT max_span FROM job_spans WHERE cluster = ?")?;
        let mut rows = stmt.query([cluster])?;
        rows.next()?.map(|r| r.get(0)).transpose()
    }

    fn by_ids(
        &mut self,
        cluster: &str,
        q: &JobQuery,
        ids: &[i64],
    ) -> rusqlite::Result<Vec<JobRunRow>> {
        let mut direct = Stmt::select(q, cluster);
        direct.and_in("job_id", ints(ids.iter().copied()));
        let mut rows = direct.rows(self.0)?;
        // The literal lets the planner use the partial index of array tasks.
        let mut tasks = Stmt::select(q, cluster);
        tasks.and("array_job_id <> 0", []);
        tasks.and_in("array_job_id", ints(ids.iter().copied()));
        rows.extend(tasks.rows(self.0)?);
        Ok(rows)
    }

    fn load(
        &mut self,
        cluster: &str,
        q: &JobQuery,
        after: Option<Key>,
        part: Part,
        limit: usize,
    ) -> rusqlite::Result<Vec<JobRunRow>> {
        let mut stmt = Stmt::select(q, cluster);
        if part == Part::Open {
            // As in the diesel source: `uid + 0` keeps the planner on `job_runs_end`.
            stmt.and("time_end = 0", []);
            if !q.uids.is_empty() && q.uid_or_accounts.is_empty() {
                stmt.and_in("uid + 0", ints(q.uids.iter().copied()));
            }
        } else {
            if !q.uids.is_empty() && !q.uid_or_accounts.is_empty() {
                // A coordinator's plain sacct: its own runs or those of its accounts.
                let marks = |n: usize| vec!["?"; n].join(", ");
                let cond = format!(
                    "(uid IN ({}) OR account IN ({}))",
                    marks(q.uids.len()),
                    marks(q.uid_or_accounts.len())
                );
                let args: Vec<Value> = ints(q.uids.iter().copied())
                    .chain(texts(&q.uid_or_accounts))
                    .collect();
                stmt.and(&cond, args);
            } else if !q.uids.is_empty() {
                stmt.and_in("uid", ints(q.uids.iter().copied()));
            }
            if !q.accounts.is_empty() {
                stmt.and_in("account", texts(&q.accounts));
            }
            if !q.names.is_empty() {
                stmt.and_in("name", texts(&q.names));
            }
            if !q.partitions.is_empty() {
                stmt.and_in("partition_name", texts(&q.partitions));
            }
        }
        if let Part::Ended { from } = part {
            stmt.and("time_end >= ?", ints([q.start.max(1)]));
            if let Some(from) = from {
                stmt.and("time_submit >= ?", ints([from]));
            }
        }
        if !q.duplicates {
            let revoked = JobState::Revoked.stored();
            stmt.and("latest = 1 AND state <> ?", ints([revoked]));
        }
        window(q, &mut stmt);
        if let Some((submit, job, run)) = after {
            // The plain bound lets the index range start at the cursor.
            stmt.and(
                "time_submit >= ? AND (time_submit > ? OR (time_submit = ? AND \
                 (job_id > ? OR (job_id = ? AND run > ?))))",
                ints([submit, submit, submit, job, job, i64::from(run)]),
            );
        }
        // The limit is written into the text, not bound: SQLite prepares a statement whose
        // `LIMIT` is a parameter again at every run (a page's size is one constant, so this
        // is still one cached statement per query shape).
        stmt.sql
            .push_str(" ORDER BY time_submit, job_id, run LIMIT ");
        stmt.sql.push_str(&limit.to_string());
        stmt.rows(self.0)
    }

    fn resizes_of(&mut self, cluster: &str, job_ids: &[i64]) -> rusqlite::Result<Vec<ResizeRow>> {
        let mut rows = rows_of_jobs(
            self.0,
            RESIZE_COLUMNS,
            "job_resizes",
            cluster,
            job_ids,
            resize,
            |r| r.job_id,
        )?;
        rows.sort_by_key(|r| (r.job_id, r.run, r.time_end));
        Ok(rows)
    }

    fn steps_of(&mut self, cluster: &str, job_ids: &[i64]) -> rusqlite::Result<Vec<StepRow>> {
        rows_of_jobs(
            self.0,
            STEP_COLUMNS,
            "job_steps",
            cluster,
            job_ids,
            step,
            |s| s.job_id,
        )
    }

    fn wckeys_of(
        &mut self,
        cluster: &str,
        job_ids: &[i64],
    ) -> rusqlite::Result<HashMap<i64, String>> {
        let rows = rows_of_jobs(
            self.0,
            "job_id, wckey",
            "job_wckeys",
            cluster,
            job_ids,
            pair,
            |p| p.0,
        )?;
        Ok(rows.into_iter().collect())
    }

    fn qos_of(&mut self, cluster: &str, job_ids: &[i64]) -> rusqlite::Result<HashMap<i64, String>> {
        let rows = rows_of_jobs(
            self.0,
            "job_id, qos",
            "job_qos",
            cluster,
            job_ids,
            pair,
            |p| p.0,
        )?;
        Ok(rows.into_iter().collect())
    }

    fn het_of(
        &mut self,
        cluster: &str,
        job_ids: &[i64],
    ) -> rusqlite::Result<HashMap<i64, (i64, i32)>> {
        let rows = rows_of_jobs(
            self.0,
            "job_id, het_job_id, het_offset",
            "job_het",
            cluster,
            job_ids,
            |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))),
            |h: &(i64, (i64, i32))| h.0,
        )?;
        Ok(rows.into_iter().collect())
    }

    fn newer_runs(
        &mut self,
        cluster: &str,
        q: &JobQuery,
        ids: &[i64],
        after: i64,
    ) -> rusqlite::Result<Vec<JobRunRow>> {
        let mut stmt = Stmt::select(q, cluster);
        stmt.and_in("job_id", ints(ids.iter().copied()));
        let revoked = JobState::Revoked.stored();
        stmt.and(
            "latest = 1 AND state <> ? AND time_submit > ?",
            ints([i64::from(revoked), after]),
        );
        stmt.rows(self.0)
    }
}
