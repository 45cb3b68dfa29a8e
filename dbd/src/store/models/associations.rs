//! The `associations` table: (cluster, account, user) triples, unique, soft-deleted.

use crate::db::schema::associations;
use diesel::prelude::*;

use crate::store::conn::AnyConnection;
use crate::store::types::Association;

/// One row of `associations`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = associations)]
pub struct AssociationRow {
    pub id: i64,
    pub cluster: String,
    pub account: String,
    pub user_name: String,
    pub parent_account: String,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
}

impl From<AssociationRow> for Association {
    fn from(r: AssociationRow) -> Self {
        Self {
            id: u64::try_from(r.id).unwrap_or(0),
            cluster: r.cluster,
            account: r.account,
            user: r.user_name,
            parent_account: r.parent_account,
            limits: Default::default(),
            qos: Vec::new(),
            default_qos: String::new(),
        }
    }
}

/// The key of an association.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    pub cluster: &'a str,
    pub account: &'a str,
    /// `""` for the account's own association.
    pub user: &'a str,
}

fn get(conn: &mut AnyConnection, key: Key<'_>) -> QueryResult<Option<AssociationRow>> {
    associations::table
        .filter(associations::cluster.eq(key.cluster))
        .filter(associations::account.eq(key.account))
        .filter(associations::user_name.eq(key.user))
        .select(AssociationRow::as_select())
        .get_result(conn)
        .optional()
}

/// Whether the association exists and is live.
pub fn is_live(conn: &mut AnyConnection, key: Key<'_>) -> QueryResult<bool> {
    Ok(get(conn, key)?.is_some_and(|r| !r.deleted))
}

/// Creates the association, or revives a deleted one; returns whether anything changed.
pub fn ensure(conn: &mut AnyConnection, key: Key<'_>, parent: &str, now: i64) -> QueryResult<bool> {
    match get(conn, key)? {
        Some(row) if !row.deleted => Ok(false),
        Some(row) => {
            diesel::update(associations::table.find(row.id))
                .set((
                    associations::deleted.eq(false),
                    associations::parent_account.eq(parent),
                    associations::mod_time.eq(now),
                ))
                .execute(conn)?;
            Ok(true)
        }
        None => {
            diesel::insert_into(associations::table)
                .values((
                    associations::cluster.eq(key.cluster),
                    associations::account.eq(key.account),
                    associations::user_name.eq(key.user),
                    associations::parent_account.eq(parent),
                    associations::creation_time.eq(now),
                    associations::mod_time.eq(now),
                    associations::deleted.eq(false),
                ))
                .execute(conn)?;
            Ok(true)
        }
    }
}

/// Of `clusters`, those where `account`'s own association is live, in the order given.
pub fn clusters_with_account(
    conn: &mut AnyConnection,
    clusters: &[String],
    account: &str,
) -> QueryResult<Vec<String>> {
    let live: std::collections::HashSet<String> = associations::table
        .filter(associations::cluster.eq_any(clusters))
        .filter(associations::account.eq(account))
        .filter(associations::user_name.eq(""))
        .filter(associations::deleted.eq(false))
        .select(associations::cluster)
        .load(conn)?
        .into_iter()
        .collect();
    Ok(clusters
        .iter()
        .filter(|c| live.contains(*c))
        .cloned()
        .collect())
}

/// Creates (or revives) the association of `account`/`user` on each of `clusters` in a few
/// statements whatever the number of clusters; returns how many changed.
pub fn ensure_on(
    conn: &mut AnyConnection,
    clusters: &[String],
    account: &str,
    user: &str,
    parent: &str,
    now: i64,
) -> QueryResult<usize> {
    if clusters.is_empty() {
        return Ok(0);
    }
    let existing: Vec<AssociationRow> = associations::table
        .filter(associations::cluster.eq_any(clusters))
        .filter(associations::account.eq(account))
        .filter(associations::user_name.eq(user))
        .select(AssociationRow::as_select())
        .load(conn)?;
    let revive: Vec<i64> = existing
        .iter()
        .filter(|r| r.deleted)
        .map(|r| r.id)
        .collect();
    if !revive.is_empty() {
        diesel::update(associations::table.filter(associations::id.eq_any(&revive)))
            .set((
                associations::deleted.eq(false),
                associations::parent_account.eq(parent),
                associations::mod_time.eq(now),
            ))
            .execute(conn)?;
    }
    let missing: Vec<_> = clusters
        .iter()
        .filter(|c| !existing.iter().any(|r| &r.cluster == *c))
        .map(|cluster| {
            (
                associations::cluster.eq(cluster.as_str()),
                associations::account.eq(account),
                associations::user_name.eq(user),
                associations::parent_account.eq(parent),
                associations::creation_time.eq(now),
                associations::mod_time.eq(now),
                associations::deleted.eq(false),
            )
        })
        .collect();
    if !missing.is_empty() {
        crate::store::models::bulk::insert_rows!(conn, associations::table, &missing)?;
    }
    Ok(revive.len() + missing.len())
}

/// The live associations matching every non-empty condition, by cluster, account, user.
pub fn live(
    conn: &mut AnyConnection,
    clusters: &[String],
    accounts: &[String],
    users: &[String],
) -> QueryResult<Vec<AssociationRow>> {
    let mut q = associations::table
        .filter(associations::deleted.eq(false))
        .select(AssociationRow::as_select())
        .order((
            associations::cluster,
            associations::account,
            associations::user_name,
        ))
        .into_boxed();
    if !clusters.is_empty() {
        q = q.filter(associations::cluster.eq_any(clusters));
    }
    if !accounts.is_empty() {
        q = q.filter(associations::account.eq_any(accounts));
    }
    if !users.is_empty() {
        q = q.filter(associations::user_name.eq_any(users));
    }
    q.load(conn)
}

/// Marks deleted the live associations of `cluster`; returns how many.
pub fn delete_of_cluster(conn: &mut AnyConnection, cluster: &str, now: i64) -> QueryResult<usize> {
    diesel::update(
        associations::table
            .filter(associations::cluster.eq(cluster))
            .filter(associations::deleted.eq(false)),
    )
    .set((
        associations::deleted.eq(true),
        associations::mod_time.eq(now),
    ))
    .execute(conn)
}

/// Marks deleted the live associations of `account` (its own and its users'); returns how many.
pub fn delete_of_account(conn: &mut AnyConnection, account: &str, now: i64) -> QueryResult<usize> {
    diesel::update(
        associations::table
            .filter(associations::account.eq(account))
            .filter(associations::deleted.eq(false)),
    )
    .set((
        associations::deleted.eq(true),
        associations::mod_time.eq(now),
    ))
    .execute(conn)
}

/// Marks deleted the live associations of `user` (with `account` only, when given); returns
/// how many.
pub fn delete_of_user(
    conn: &mut AnyConnection,
    user: &str,
    account: Option<&str>,
    now: i64,
) -> QueryResult<usize> {
    let mut q = diesel::update(associations::table)
        .filter(associations::user_name.eq(user))
        .filter(associations::deleted.eq(false))
        .into_boxed();
    if let Some(account) = account {
        q = q.filter(associations::account.eq(account));
    }
    q.set((
        associations::deleted.eq(true),
        associations::mod_time.eq(now),
    ))
    .execute(conn)
}

/// Sets the parent of `account`'s live account associations; returns how many changed.
pub fn set_parent(
    conn: &mut AnyConnection,
    account: &str,
    parent: &str,
    now: i64,
) -> QueryResult<usize> {
    diesel::update(
        associations::table
            .filter(associations::account.eq(account))
            .filter(associations::user_name.eq(""))
            .filter(associations::deleted.eq(false)),
    )
    .set((
        associations::parent_account.eq(parent),
        associations::mod_time.eq(now),
    ))
    .execute(conn)
}
