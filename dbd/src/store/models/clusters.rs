//! The `clusters` table.

use crate::db::schema::clusters;
use diesel::prelude::*;

use super::{to_i32, to_u32};
use crate::store::conn::{AnyConnection, native};
use crate::store::types::Cluster;

/// One row of `clusters`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = clusters, primary_key(name))]
pub struct ClusterRow {
    pub name: String,
    pub control_host: String,
    pub control_port: i32,
    pub rpc_version: i32,
    pub classification: String,
    pub federation: String,
    pub fed_id: i32,
    pub fed_state: i32,
    pub features: String,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
}

impl ClusterRow {
    /// A fresh cluster outside any federation.
    pub fn new(name: &str, now: i64) -> Self {
        Self {
            name: name.to_string(),
            control_host: String::new(),
            control_port: 0,
            rpc_version: 0,
            classification: String::new(),
            federation: String::new(),
            fed_id: 0,
            fed_state: 0,
            features: String::new(),
            creation_time: now,
            mod_time: now,
            deleted: false,
        }
    }

    /// The features as a list.
    pub fn feature_list(&self) -> Vec<String> {
        split_features(&self.features)
    }

    /// Stores `list` comma-joined.
    pub fn set_features(&mut self, list: &[String]) {
        self.features = list.join(",");
    }

    /// Takes the cluster out of its federation (fed id 0, fed state NA).
    pub fn leave_federation(&mut self) {
        self.federation.clear();
        self.fed_id = 0;
        self.fed_state = 0;
    }

    /// Sets the fed id from an allocator value.
    pub fn set_fed_id(&mut self, id: u32) {
        self.fed_id = to_i32(id);
    }
}

fn split_features(s: &str) -> Vec<String> {
    s.split(',')
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect()
}

impl From<ClusterRow> for Cluster {
    fn from(r: ClusterRow) -> Self {
        let features = split_features(&r.features);
        Self {
            name: r.name,
            control_host: r.control_host,
            control_port: to_u32(r.control_port),
            rpc_version: to_u32(r.rpc_version),
            classification: r.classification,
            federation: r.federation,
            fed_id: to_u32(r.fed_id),
            fed_state: to_u32(r.fed_state),
            features,
            creation_time: r.creation_time,
            mod_time: r.mod_time,
            deleted: r.deleted,
        }
    }
}

/// The row named `name`, deleted or not.
pub fn get(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<ClusterRow>> {
    native!(conn, c => clusters::table
        .find(name)
        .select(ClusterRow::as_select())
        .get_result(c)
        .optional())
}

/// The live cluster named `name`.
pub fn get_live(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<ClusterRow>> {
    Ok(get(conn, name)?.filter(|r| !r.deleted))
}

/// Every row (live only unless `with_deleted`), by name.
pub fn all(conn: &mut AnyConnection, with_deleted: bool) -> QueryResult<Vec<ClusterRow>> {
    let rows = clusters::table
        .select(ClusterRow::as_select())
        .order(clusters::name)
        .load(conn)?;
    Ok(rows
        .into_iter()
        .filter(|r| with_deleted || !r.deleted)
        .collect())
}

/// The live members of `federation`, by fed id.
pub fn members(conn: &mut AnyConnection, federation: &str) -> QueryResult<Vec<ClusterRow>> {
    clusters::table
        .filter(clusters::federation.eq(federation))
        .filter(clusters::deleted.eq(false))
        .order(clusters::fed_id)
        .select(ClusterRow::as_select())
        .load(conn)
}

/// Inserts a new row.
pub fn insert(conn: &mut AnyConnection, row: &ClusterRow) -> QueryResult<()> {
    diesel::insert_into(clusters::table)
        .values(row)
        .execute(conn)
        .map(|_| ())
}

/// Writes every column of an existing row.
pub fn update(conn: &mut AnyConnection, row: &ClusterRow) -> QueryResult<()> {
    diesel::update(clusters::table.find(&row.name))
        .set(row)
        .execute(conn)
        .map(|_| ())
}
