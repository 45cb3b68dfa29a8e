//! The `coordinators` table: direct coordinator grants (user, account).

use crate::db::schema::coordinators;
use diesel::prelude::*;

use crate::store::conn::AnyConnection;

/// One row of `coordinators`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = coordinators, primary_key(user_name, account))]
pub struct CoordRow {
    pub user_name: String,
    pub account: String,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
}

/// The live grants, by user then account.
pub fn live(conn: &mut AnyConnection) -> QueryResult<Vec<CoordRow>> {
    coordinators::table
        .filter(coordinators::deleted.eq(false))
        .order((coordinators::user_name, coordinators::account))
        .select(CoordRow::as_select())
        .load(conn)
}

/// The grant of `user` over `account`, deleted or not.
pub fn get(conn: &mut AnyConnection, user: &str, account: &str) -> QueryResult<Option<CoordRow>> {
    coordinators::table
        .find((user, account))
        .select(CoordRow::as_select())
        .get_result(conn)
        .optional()
}

/// Grants `user` coordination of `account` (again, when the grant was removed); whether it is new.
pub fn grant(conn: &mut AnyConnection, user: &str, account: &str, now: i64) -> QueryResult<bool> {
    match get(conn, user, account)? {
        Some(row) if !row.deleted => Ok(false),
        Some(_) => {
            diesel::update(coordinators::table.find((user, account)))
                .set((
                    coordinators::deleted.eq(false),
                    coordinators::mod_time.eq(now),
                ))
                .execute(conn)?;
            Ok(true)
        }
        None => {
            diesel::insert_into(coordinators::table)
                .values(&CoordRow {
                    user_name: user.to_string(),
                    account: account.to_string(),
                    creation_time: now,
                    mod_time: now,
                    deleted: false,
                })
                .execute(conn)?;
            Ok(true)
        }
    }
}

/// Marks the live grant of `user` over `account` deleted.
pub fn revoke(conn: &mut AnyConnection, user: &str, account: &str, now: i64) -> QueryResult<()> {
    diesel::update(
        coordinators::table
            .find((user, account))
            .filter(coordinators::deleted.eq(false)),
    )
    .set((
        coordinators::deleted.eq(true),
        coordinators::mod_time.eq(now),
    ))
    .execute(conn)?;
    Ok(())
}

/// Marks every live grant of `user`, or over `account`, deleted (the user or account is gone).
pub fn revoke_all_of(
    conn: &mut AnyConnection,
    user: Option<&str>,
    account: Option<&str>,
    now: i64,
) -> QueryResult<usize> {
    let mut q = diesel::update(coordinators::table)
        .filter(coordinators::deleted.eq(false))
        .into_boxed();
    if let Some(u) = user {
        q = q.filter(coordinators::user_name.eq(u.to_string()));
    }
    if let Some(a) = account {
        q = q.filter(coordinators::account.eq(a.to_string()));
    }
    q.set((
        coordinators::deleted.eq(true),
        coordinators::mod_time.eq(now),
    ))
    .execute(conn)
}
