//! The `users` table.

use crate::db::schema::users;
use diesel::prelude::*;

use crate::store::conn::AnyConnection;
use crate::store::types::{AdminLevel, User};

/// One row of `users`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = users, primary_key(name))]
pub struct UserRow {
    pub name: String,
    pub default_account: String,
    pub admin_level: i32,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
}

impl UserRow {
    /// The admin level (an unknown stored value grants nothing).
    pub fn level(&self) -> AdminLevel {
        AdminLevel::from_stored(self.admin_level)
    }
}

impl From<UserRow> for User {
    fn from(r: UserRow) -> Self {
        let admin_level = r.level();
        Self {
            name: r.name,
            default_account: r.default_account,
            admin_level,
            deleted: r.deleted,
            coord_accounts: Vec::new(),
        }
    }
}

/// The row named `name`, deleted or not.
pub fn get(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<UserRow>> {
    users::table
        .find(name)
        .select(UserRow::as_select())
        .get_result(conn)
        .optional()
}

/// The live user named `name`.
pub fn get_live(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<UserRow>> {
    Ok(get(conn, name)?.filter(|r| !r.deleted))
}

/// Every row (live only unless `with_deleted`), by name.
pub fn all(conn: &mut AnyConnection, with_deleted: bool) -> QueryResult<Vec<UserRow>> {
    let rows = users::table
        .select(UserRow::as_select())
        .order(users::name)
        .load(conn)?;
    Ok(rows
        .into_iter()
        .filter(|r| with_deleted || !r.deleted)
        .collect())
}

/// The live users whose default account is one of `accounts`.
pub fn with_default_in(conn: &mut AnyConnection, accounts: &[String]) -> QueryResult<Vec<UserRow>> {
    users::table
        .filter(users::default_account.eq_any(accounts))
        .filter(users::deleted.eq(false))
        .order(users::name)
        .select(UserRow::as_select())
        .load(conn)
}

/// Inserts a new row.
pub fn insert(conn: &mut AnyConnection, row: &UserRow) -> QueryResult<()> {
    diesel::insert_into(users::table)
        .values(row)
        .execute(conn)
        .map(|_| ())
}

/// Writes every column of an existing row.
pub fn update(conn: &mut AnyConnection, row: &UserRow) -> QueryResult<()> {
    diesel::update(users::table.find(&row.name))
        .set(row)
        .execute(conn)
        .map(|_| ())
}
