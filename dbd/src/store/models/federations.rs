//! The `federations` table.

use crate::db::schema::federations;
use diesel::prelude::*;

use super::to_u32;
use crate::store::conn::AnyConnection;
use crate::store::types::{Cluster, Federation};

/// One row of `federations`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = federations, primary_key(name))]
pub struct FederationRow {
    pub name: String,
    pub flags: i32,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
}

impl FederationRow {
    /// A fresh federation.
    pub fn new(name: &str, now: i64) -> Self {
        Self {
            name: name.to_string(),
            flags: 0,
            creation_time: now,
            mod_time: now,
            deleted: false,
        }
    }

    /// The record with its members.
    pub fn into_record(self, clusters: Vec<Cluster>) -> Federation {
        Federation {
            name: self.name,
            flags: to_u32(self.flags),
            creation_time: self.creation_time,
            mod_time: self.mod_time,
            deleted: self.deleted,
            clusters,
        }
    }
}

/// The row named `name`, deleted or not.
pub fn get(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<FederationRow>> {
    federations::table
        .find(name)
        .select(FederationRow::as_select())
        .get_result(conn)
        .optional()
}

/// The live federation named `name`.
pub fn get_live(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<FederationRow>> {
    Ok(get(conn, name)?.filter(|r| !r.deleted))
}

/// Every row (live only unless `with_deleted`), by name.
pub fn all(conn: &mut AnyConnection, with_deleted: bool) -> QueryResult<Vec<FederationRow>> {
    let rows = federations::table
        .select(FederationRow::as_select())
        .order(federations::name)
        .load(conn)?;
    Ok(rows
        .into_iter()
        .filter(|r| with_deleted || !r.deleted)
        .collect())
}

/// Inserts a new row.
pub fn insert(conn: &mut AnyConnection, row: &FederationRow) -> QueryResult<()> {
    diesel::insert_into(federations::table)
        .values(row)
        .execute(conn)
        .map(|_| ())
}

/// Writes every column of an existing row.
pub fn update(conn: &mut AnyConnection, row: &FederationRow) -> QueryResult<()> {
    diesel::update(federations::table.find(&row.name))
        .set(row)
        .execute(conn)
        .map(|_| ())
}
