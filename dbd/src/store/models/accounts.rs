//! The `accounts` table.

use crate::db::schema::accounts;
use diesel::prelude::*;

use crate::store::conn::AnyConnection;
use crate::store::types::Account;

/// One row of `accounts`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = accounts, primary_key(name))]
pub struct AccountRow {
    pub name: String,
    pub description: String,
    pub organization: String,
    pub parent: String,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
}

impl From<AccountRow> for Account {
    fn from(r: AccountRow) -> Self {
        Self {
            name: r.name,
            description: r.description,
            organization: r.organization,
            parent: r.parent,
            deleted: r.deleted,
            coordinators: Vec::new(),
        }
    }
}

/// The row named `name`, deleted or not.
pub fn get(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<AccountRow>> {
    accounts::table
        .find(name)
        .select(AccountRow::as_select())
        .get_result(conn)
        .optional()
}

/// The live account named `name`.
pub fn get_live(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<AccountRow>> {
    Ok(get(conn, name)?.filter(|r| !r.deleted))
}

/// Every row (live only unless `with_deleted`), by name.
pub fn all(conn: &mut AnyConnection, with_deleted: bool) -> QueryResult<Vec<AccountRow>> {
    let rows = accounts::table
        .select(AccountRow::as_select())
        .order(accounts::name)
        .load(conn)?;
    Ok(rows
        .into_iter()
        .filter(|r| with_deleted || !r.deleted)
        .collect())
}

/// The live children of `parent`, by name.
pub fn children(conn: &mut AnyConnection, parent: &str) -> QueryResult<Vec<AccountRow>> {
    accounts::table
        .filter(accounts::parent.eq(parent))
        .filter(accounts::deleted.eq(false))
        .order(accounts::name)
        .select(AccountRow::as_select())
        .load(conn)
}

/// Inserts a new row.
pub fn insert(conn: &mut AnyConnection, row: &AccountRow) -> QueryResult<()> {
    diesel::insert_into(accounts::table)
        .values(row)
        .execute(conn)
        .map(|_| ())
}

/// Writes every column of an existing row.
pub fn update(conn: &mut AnyConnection, row: &AccountRow) -> QueryResult<()> {
    diesel::update(accounts::table.find(&row.name))
        .set(row)
        .execute(conn)
        .map(|_| ())
}
