//! Row types and single-table queries of the usage tables: `usage_state`, `usage_cluster`,
//! `usage_assoc` and `usage_assocs`.

use crate::db::schema::{usage_assoc, usage_assocs, usage_cluster, usage_state};
use diesel::prelude::*;
use sluice_reports::{Period, Tres, UsageSecs};

use crate::store::conn::AnyConnection;
use crate::store::models::bulk::{INSERT_CHUNK, insert_rows};

/// A `u64` for a BIGINT column, clamped at `i64::MAX`.
pub fn wide(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A stored BIGINT as `u64`; negative values (never written) read as 0.
pub fn narrow(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// One row of `usage_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = usage_state)]
pub struct StateRow {
    pub rolled_until: i64,
    pub purged_until: i64,
}

/// The rollup state of `cluster`, if it ever sent a timed record.
pub fn state(conn: &mut AnyConnection, cluster: &str) -> QueryResult<Option<StateRow>> {
    usage_state::table
        .find(cluster)
        .select(StateRow::as_select())
        .get_result(conn)
        .optional()
}

/// Every cluster with a rollup state, by name.
pub fn states(conn: &mut AnyConnection) -> QueryResult<Vec<(String, StateRow)>> {
    usage_state::table
        .order(usage_state::cluster)
        .select((usage_state::cluster, StateRow::as_select()))
        .load(conn)
}

/// Creates the state of `cluster`: nothing before `rolled_until` to roll.
pub fn insert_state(conn: &mut AnyConnection, cluster: &str, rolled_until: i64) -> QueryResult<()> {
    diesel::insert_into(usage_state::table)
        .values((
            usage_state::cluster.eq(cluster),
            usage_state::rolled_until.eq(rolled_until),
            usage_state::purged_until.eq(0),
        ))
        .execute(conn)
        .map(|_| ())
}

/// Moves `cluster`'s rolled mark from `from` to `to`; false if it was no longer at `from`
/// (a late record lowered it meanwhile).
pub fn move_rolled(
    conn: &mut AnyConnection,
    cluster: &str,
    from: i64,
    to: i64,
) -> QueryResult<bool> {
    let n = diesel::update(
        usage_state::table
            .filter(usage_state::cluster.eq(cluster))
            .filter(usage_state::rolled_until.eq(from)),
    )
    .set(usage_state::rolled_until.eq(to))
    .execute(conn)?;
    Ok(n == 1)
}

/// Sets `cluster`'s purge mark.
pub fn set_purged(conn: &mut AnyConnection, cluster: &str, purged_until: i64) -> QueryResult<()> {
    diesel::update(usage_state::table.find(cluster))
        .set(usage_state::purged_until.eq(purged_until))
        .execute(conn)
        .map(|_| ())
}

/// One row of `usage_cluster`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = usage_cluster)]
pub struct ClusterRow {
    pub cluster: String,
    pub period: i32,
    pub time_start: i64,
    pub tres: i32,
    pub tres_count: i64,
    pub total_secs: i64,
    pub alloc_secs: i64,
    pub down_secs: i64,
    pub pdown_secs: i64,
    pub idle_secs: i64,
    pub plan_secs: i64,
    pub over_secs: i64,
}

impl ClusterRow {
    /// The row of `cluster`'s `tres` usage `u` over the `period` starting at `start`.
    pub fn new(cluster: &str, period: Period, start: i64, tres: Tres, u: &UsageSecs) -> Self {
        Self {
            cluster: cluster.to_string(),
            period: period.id(),
            time_start: start,
            tres: tres.id(),
            tres_count: wide(u.count),
            total_secs: wide(u.total),
            alloc_secs: wide(u.alloc),
            down_secs: wide(u.down),
            pdown_secs: wide(u.pdown),
            idle_secs: wide(u.idle),
            plan_secs: wide(u.plan),
            over_secs: wide(u.over),
        }
    }

    /// The usage it holds.
    pub fn usage(&self) -> UsageSecs {
        UsageSecs {
            count: narrow(self.tres_count),
            total: narrow(self.total_secs),
            alloc: narrow(self.alloc_secs),
            down: narrow(self.down_secs),
            pdown: narrow(self.pdown_secs),
            idle: narrow(self.idle_secs),
            plan: narrow(self.plan_secs),
            over: narrow(self.over_secs),
        }
    }
}

/// One row of `usage_assoc`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = usage_assoc)]
pub struct AssocRow {
    pub cluster: String,
    pub period: i32,
    pub time_start: i64,
    pub assoc_id: i64,
    pub tres: i32,
    pub alloc_secs: i64,
}

/// `cluster`'s rows of `period` starting in `[from, to)`, oldest first (both tables).
pub fn cluster_rows(
    conn: &mut AnyConnection,
    clusters: &[String],
    period: Period,
    from: i64,
    to: i64,
    tres: &[i32],
) -> QueryResult<Vec<ClusterRow>> {
    let mut q = usage_cluster::table
        .filter(usage_cluster::period.eq(period.id()))
        .filter(usage_cluster::time_start.ge(from))
        .filter(usage_cluster::time_start.lt(to))
        .into_boxed();
    if !clusters.is_empty() {
        q = q.filter(usage_cluster::cluster.eq_any(clusters));
    }
    if !tres.is_empty() {
        q = q.filter(usage_cluster::tres.eq_any(tres));
    }
    q.order((
        usage_cluster::cluster,
        usage_cluster::time_start,
        usage_cluster::tres,
    ))
    .select(ClusterRow::as_select())
    .load(conn)
}

/// Association rows of `period` starting in `[from, to)` of `clusters` (all when empty).
pub fn assoc_rows(
    conn: &mut AnyConnection,
    clusters: &[String],
    period: Period,
    from: i64,
    to: i64,
    tres: &[i32],
) -> QueryResult<Vec<AssocRow>> {
    let mut q = usage_assoc::table
        .filter(usage_assoc::period.eq(period.id()))
        .filter(usage_assoc::time_start.ge(from))
        .filter(usage_assoc::time_start.lt(to))
        .into_boxed();
    if !clusters.is_empty() {
        q = q.filter(usage_assoc::cluster.eq_any(clusters));
    }
    if !tres.is_empty() {
        q = q.filter(usage_assoc::tres.eq_any(tres));
    }
    q.select(AssocRow::as_select()).load(conn)
}

/// Replaces `cluster`'s rows of `period` starting in `[from, to)` by `cluster_rows` and
/// `assoc_rows`.
pub fn replace(
    conn: &mut AnyConnection,
    cluster: &str,
    period: Period,
    (from, to): (i64, i64),
    cluster_rows: &[ClusterRow],
    assoc_rows: &[AssocRow],
) -> QueryResult<()> {
    diesel::delete(
        usage_cluster::table
            .filter(usage_cluster::cluster.eq(cluster))
            .filter(usage_cluster::period.eq(period.id()))
            .filter(usage_cluster::time_start.ge(from))
            .filter(usage_cluster::time_start.lt(to)),
    )
    .execute(conn)?;
    diesel::delete(
        usage_assoc::table
            .filter(usage_assoc::cluster.eq(cluster))
            .filter(usage_assoc::period.eq(period.id()))
            .filter(usage_assoc::time_start.ge(from))
            .filter(usage_assoc::time_start.lt(to)),
    )
    .execute(conn)?;
    for chunk in cluster_rows.chunks(INSERT_CHUNK) {
        insert_rows!(conn, usage_cluster::table, chunk)?;
    }
    for chunk in assoc_rows.chunks(INSERT_CHUNK) {
        insert_rows!(conn, usage_assoc::table, chunk)?;
    }
    Ok(())
}

/// One row of `usage_assocs`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = usage_assocs)]
pub struct AssocKeyRow {
    pub id: i64,
    pub cluster: String,
    pub account: String,
    pub user_name: String,
}

/// The numbered associations of `clusters` (all when empty).
pub fn assoc_keys(conn: &mut AnyConnection, clusters: &[String]) -> QueryResult<Vec<AssocKeyRow>> {
    let mut q = usage_assocs::table.into_boxed();
    if !clusters.is_empty() {
        q = q.filter(usage_assocs::cluster.eq_any(clusters));
    }
    q.select(AssocKeyRow::as_select()).load(conn)
}

/// Numbers the (account, user) pairs `pairs` of `cluster` (none of them numbered yet).
pub fn insert_assoc_keys(
    conn: &mut AnyConnection,
    cluster: &str,
    pairs: &[(String, String)],
) -> QueryResult<()> {
    let rows: Vec<_> = pairs
        .iter()
        .map(|(account, user)| {
            (
                usage_assocs::cluster.eq(cluster),
                usage_assocs::account.eq(account.as_str()),
                usage_assocs::user_name.eq(user.as_str()),
            )
        })
        .collect();
    for chunk in rows.chunks(INSERT_CHUNK) {
        insert_rows!(conn, usage_assocs::table, chunk)?;
    }
    Ok(())
}
