//! The rollups' inputs besides job runs: suspensions (`job_suspends`) and node events,
//! including the cluster's capacity events (`node_events` rows with an empty node name).

use crate::db::schema::{job_suspends, node_events};
use diesel::prelude::*;

use crate::store::conn::AnyConnection;
use crate::store::models::bulk::IN_CHUNK;
use crate::store::models::bulk::insert_all;

/// The `kind` of a capacity event (a `node_events` row with an empty node name).
pub const CAPACITY_KIND: &str = "cluster";
/// The reason of a capacity event, Slurm's text for it.
pub const CAPACITY_REASON: &str = "Cluster Registered TRES";

/// One suspension of a run (`time_end` 0 while suspended).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = job_suspends)]
#[diesel(treat_none_as_default_value = false)]
pub struct SuspendRow {
    pub cluster: String,
    pub job_id: i64,
    pub run: i32,
    pub time_start: i64,
    pub time_end: i64,
}

/// The suspensions of the jobs `job_ids` of `cluster` (open ones only with `open_only`).
pub fn suspends_of(
    conn: &mut AnyConnection,
    cluster: &str,
    job_ids: &[i64],
    open_only: bool,
) -> QueryResult<Vec<SuspendRow>> {
    let mut rows = Vec::new();
    for ids in job_ids.chunks(IN_CHUNK) {
        let mut q = job_suspends::table
            .filter(job_suspends::cluster.eq(cluster))
            .filter(job_suspends::job_id.eq_any(ids))
            .into_boxed();
        if open_only {
            q = q.filter(job_suspends::time_end.eq(0));
        }
        rows.extend(q.select(SuspendRow::as_select()).load(conn)?);
    }
    Ok(rows)
}

/// Inserts suspensions.
pub fn insert_suspends(conn: &mut AnyConnection, rows: &[SuspendRow]) -> QueryResult<()> {
    insert_all!(conn, job_suspends::table, rows)
}

/// Ends the suspension of a run that began at `start`.
pub fn close_suspend(conn: &mut AnyConnection, row: &SuspendRow) -> QueryResult<()> {
    diesel::update(job_suspends::table.find((&row.cluster, row.job_id, row.run, row.time_start)))
        .set(job_suspends::time_end.eq(row.time_end))
        .execute(conn)
        .map(|_| ())
}

/// A node event as the rollup reads it: node events have a node name, capacity rows none.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = node_events)]
pub struct EventRow {
    pub id: i64,
    pub node_name: String,
    pub time_start: i64,
    pub time_end: i64,
    pub kind: String,
    pub cpus: i64,
    pub mem_mb: i64,
    pub node_count: i64,
}

/// `cluster`'s events (capacity rows included) overlapping `[from, to)`.
pub fn events_in(
    conn: &mut AnyConnection,
    cluster: &str,
    from: i64,
    to: i64,
) -> QueryResult<Vec<EventRow>> {
    node_events::table
        .filter(node_events::cluster.eq(cluster))
        .filter(node_events::time_start.lt(to))
        .filter(
            node_events::time_end
                .eq(0)
                .or(node_events::time_end.gt(from)),
        )
        .order((node_events::time_start, node_events::id))
        .select(EventRow::as_select())
        .load(conn)
}

/// `cluster`'s open capacity row, if any.
pub fn open_capacity(conn: &mut AnyConnection, cluster: &str) -> QueryResult<Option<EventRow>> {
    node_events::table
        .filter(node_events::cluster.eq(cluster))
        .filter(node_events::node_name.eq(""))
        .filter(node_events::time_end.eq(0))
        .order(node_events::id.desc())
        .select(EventRow::as_select())
        .first(conn)
        .optional()
}

/// Opens a capacity row of `cluster` at `at`.
pub fn insert_capacity(
    conn: &mut AnyConnection,
    cluster: &str,
    at: i64,
    (cpus, mem_mb, nodes): (i64, i64, i64),
) -> QueryResult<()> {
    diesel::insert_into(node_events::table)
        .values((
            node_events::cluster.eq(cluster),
            node_events::node_name.eq(""),
            node_events::time_start.eq(at),
            node_events::time_end.eq(0),
            node_events::kind.eq(CAPACITY_KIND),
            node_events::reason.eq(CAPACITY_REASON),
            node_events::reason_uid.eq(0),
            node_events::cpus.eq(cpus),
            node_events::mem_mb.eq(mem_mb),
            node_events::node_count.eq(nodes),
        ))
        .execute(conn)
        .map(|_| ())
}

/// Sets a capacity row's end and counts.
pub fn update_capacity(
    conn: &mut AnyConnection,
    id: i64,
    end: i64,
    (cpus, mem_mb, nodes): (i64, i64, i64),
) -> QueryResult<()> {
    diesel::update(node_events::table.find(id))
        .set((
            node_events::time_end.eq(end),
            node_events::cpus.eq(cpus),
            node_events::mem_mb.eq(mem_mb),
            node_events::node_count.eq(nodes),
        ))
        .execute(conn)
        .map(|_| ())
}
