//! The `node_events` table: node down/drain/fail/power_down periods, open while `time_end` is 0.

use crate::db::schema::node_events;
use diesel::prelude::*;

use super::bulk::{IN_CHUNK, INSERT_CHUNK, insert_rows};
use super::u32_of;
use crate::store::conn::AnyConnection;
use crate::store::types::records::NodeEventInfo;

/// One stored row of `node_events`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, AsChangeset, Identifiable)]
#[diesel(table_name = node_events, primary_key(id))]
pub struct NodeEventRow {
    pub id: i64,
    pub cluster: String,
    pub node_name: String,
    pub time_start: i64,
    pub time_end: i64,
    pub kind: String,
    pub reason: String,
    pub reason_uid: i64,
    pub cpus: i64,
}

/// A row to insert (the database numbers it).
#[derive(Debug, Clone, PartialEq, Eq, Insertable)]
#[diesel(table_name = node_events)]
pub struct NewNodeEvent {
    pub cluster: String,
    pub node_name: String,
    pub time_start: i64,
    pub time_end: i64,
    pub kind: String,
    pub reason: String,
    pub reason_uid: i64,
    pub cpus: i64,
}

impl From<NodeEventRow> for NodeEventInfo {
    fn from(r: NodeEventRow) -> Self {
        Self {
            cluster: r.cluster,
            node: r.node_name,
            start: r.time_start,
            end: r.time_end,
            kind: r.kind,
            reason: r.reason,
            reason_uid: u32_of(r.reason_uid),
            cpus: u32_of(r.cpus),
        }
    }
}

/// The open events of the nodes `nodes` of `cluster`.
pub fn open_of(
    conn: &mut AnyConnection,
    cluster: &str,
    nodes: &[String],
) -> QueryResult<Vec<NodeEventRow>> {
    let mut rows = Vec::new();
    for names in nodes.chunks(IN_CHUNK) {
        rows.extend(
            node_events::table
                .filter(node_events::cluster.eq(cluster))
                .filter(node_events::node_name.eq_any(names))
                .filter(node_events::time_end.eq(0))
                .order(node_events::id)
                .select(NodeEventRow::as_select())
                .load(conn)?,
        );
    }
    Ok(rows)
}

/// Every event of `cluster` (of `node` only, if given), oldest first.
pub fn list(
    conn: &mut AnyConnection,
    cluster: &str,
    node: Option<&str>,
) -> QueryResult<Vec<NodeEventRow>> {
    let mut q = node_events::table
        .filter(node_events::cluster.eq(cluster))
        .into_boxed();
    if let Some(node) = node {
        q = q.filter(node_events::node_name.eq(node));
    }
    q.order((node_events::time_start, node_events::id))
        .select(NodeEventRow::as_select())
        .load(conn)
}

/// Inserts new rows, several per statement.
pub fn insert_many(conn: &mut AnyConnection, rows: &[NewNodeEvent]) -> QueryResult<()> {
    for chunk in rows.chunks(INSERT_CHUNK) {
        insert_rows!(conn, node_events::table, chunk)?;
    }
    Ok(())
}

/// Writes every column of an existing row.
pub fn update(conn: &mut AnyConnection, row: &NodeEventRow) -> QueryResult<()> {
    diesel::update(node_events::table.find(row.id))
        .set(row)
        .execute(conn)
        .map(|_| ())
}
