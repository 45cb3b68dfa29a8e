//! User rules: a user has a default account it is associated with; adding a user with
//! accounts creates (cluster, account, user) associations under each account's association.

use super::accounts::{clusters_or_all, live_account};
use super::conn::AnyConnection;
use super::error::{ObjectKind, StoreError};
use super::models::associations as assoc_rows;
use super::models::users::{self as user_rows, UserRow};
use super::requests::{AddUsers, DeleteUsers, ModifyUsers, UserFilter, checked_names};
use super::types::User;

/// The accounts of an add request: the listed ones (deduplicated) plus the default account.
fn requested_accounts(req: &AddUsers) -> Result<(Vec<String>, String), StoreError> {
    let mut accounts: Vec<String> = Vec::new();
    for a in &req.accounts {
        if !accounts.contains(a) {
            accounts.push(a.clone());
        }
    }
    let default = match (&req.default_account, accounts.first()) {
        (Some(d), _) => d.clone(),
        (None, Some(first)) => first.clone(),
        (None, None) => return Err(StoreError::NoDefaultAccount),
    };
    if !accounts.contains(&default) {
        accounts.push(default.clone());
    }
    Ok((accounts, default))
}

/// Creates `user`'s associations with `accounts` on `clusters`. With explicit clusters every
/// account must be on each; otherwise clusters an account is not on are skipped, as sacctmgr
/// does. Returns how many associations are new.
fn ensure_user_assocs(
    conn: &mut AnyConnection,
    user: &str,
    accounts: &[String],
    clusters: &[String],
    explicit_clusters: bool,
    now: i64,
) -> Result<usize, StoreError> {
    let mut live = Vec::with_capacity(accounts.len());
    for account in accounts {
        live.push(assoc_rows::clusters_with_account(conn, clusters, account)?);
    }
    if explicit_clusters {
        // The first (cluster, account) pair without the account, in cluster-major order.
        for cluster in clusters {
            if let Some((account, _)) = accounts
                .iter()
                .zip(&live)
                .find(|(_, on)| !on.contains(cluster))
            {
                return Err(StoreError::AccountNotOnCluster {
                    account: account.clone(),
                    cluster: cluster.clone(),
                });
            }
        }
    }
    let mut created = 0;
    for (account, on) in accounts.iter().zip(&live) {
        created += assoc_rows::ensure_on(conn, on, account, user, "", now)?;
    }
    Ok(created)
}

pub(super) fn add(
    conn: &mut AnyConnection,
    req: &AddUsers,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let names = checked_names(ObjectKind::User, &req.names)?;
    let (accounts, default) = requested_accounts(req)?;
    for account in &accounts {
        live_account(conn, account)?;
    }
    let clusters = clusters_or_all(conn, &req.clusters)?;
    let explicit = !req.clusters.is_empty();
    let mut added = Vec::new();
    for name in &names {
        let existing = user_rows::get(conn, name)?;
        let is_live = existing.as_ref().is_some_and(|r| !r.deleted);
        if !is_live {
            let row = UserRow {
                name: name.clone(),
                default_account: default.clone(),
                admin_level: req.admin_level.unwrap_or_default().stored(),
                creation_time: now,
                mod_time: now,
                deleted: false,
            };
            if existing.is_some() {
                user_rows::update(conn, &row)?;
            } else {
                user_rows::insert(conn, &row)?;
            }
        }
        let created = ensure_user_assocs(conn, name, &accounts, &clusters, explicit, now)?;
        if let Some(shares) = req.fairshare {
            super::fairshare::set(conn, &clusters, &accounts, name, shares)?;
        }
        super::limits::set_on(conn, &clusters, &accounts, name, &req.limits, now)?;
        // An existing user only gains associations it does not have yet.
        if is_live && created == 0 {
            return Err(StoreError::AlreadyExists {
                kind: ObjectKind::User,
                name: name.clone(),
            });
        }
        added.push(name.clone());
    }
    Ok(added)
}

/// Whether `user` has a live association with `account` on some cluster.
fn has_account(conn: &mut AnyConnection, user: &str, account: &str) -> Result<bool, StoreError> {
    let rows = assoc_rows::live(conn, &[], &[account.to_string()], &[user.to_string()])?;
    Ok(!rows.is_empty())
}

pub(super) fn modify(
    conn: &mut AnyConnection,
    req: &ModifyUsers,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    for name in &req.names {
        if user_rows::get_live(conn, name)?.is_none() {
            return Err(StoreError::UnknownUser { name: name.clone() });
        }
    }
    if let Some(account) = &req.default_account {
        live_account(conn, account)?;
    }
    let mut changed = Vec::new();
    for old in user_rows::all(conn, false)? {
        if !req.names.is_empty() && !req.names.contains(&old.name) {
            continue;
        }
        if !req.where_admin_levels.is_empty() && !req.where_admin_levels.contains(&old.level()) {
            continue;
        }
        if !req.where_accounts.is_empty()
            && assoc_rows::live(
                conn,
                &[],
                &req.where_accounts,
                std::slice::from_ref(&old.name),
            )?
            .is_empty()
        {
            continue;
        }
        let mut row = old.clone();
        if let Some(account) = req
            .default_account
            .as_ref()
            .filter(|a| **a != old.default_account)
        {
            if !has_account(conn, &old.name, account)? {
                return Err(StoreError::NoAssociation {
                    user: old.name.clone(),
                    account: account.clone(),
                });
            }
            row.default_account.clone_from(account);
        }
        if let Some(level) = req.admin_level {
            row.admin_level = level.stored();
        }
        let shares_changed = match req.fairshare {
            Some(s) => super::fairshare::set(conn, &[], &req.where_accounts, &old.name, s)?,
            None => false,
        };
        if row != old {
            row.mod_time = now;
            user_rows::update(conn, &row)?;
        }
        if row != old || shares_changed {
            changed.push(row.name);
        }
    }
    if changed.is_empty() {
        return Err(StoreError::NothingToChange);
    }
    Ok(changed)
}

pub(super) fn delete(
    conn: &mut AnyConnection,
    req: &DeleteUsers,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if req.names.is_empty() {
        return Err(StoreError::NoConditions);
    }
    let mut deleted: Vec<String> = Vec::new();
    for name in &req.names {
        let Some(mut row) = user_rows::get_live(conn, name)? else {
            return Err(StoreError::UnknownUser { name: name.clone() });
        };
        let whole = if req.accounts.is_empty() {
            true
        } else {
            let mut removed = 0;
            for account in &req.accounts {
                removed += assoc_rows::delete_of_user(conn, name, Some(account), now)?;
            }
            let left = assoc_rows::live(conn, &[], &[], std::slice::from_ref(name))?;
            if removed == 0 {
                continue;
            }
            // Losing the default account is refused while other accounts remain; losing every
            // association removes the user, as sacctmgr does.
            if left.is_empty() {
                true
            } else if !left.iter().any(|a| a.account == row.default_account) {
                return Err(StoreError::DefaultAccountInUse {
                    account: row.default_account,
                    user: row.name,
                });
            } else {
                false
            }
        };
        if whole {
            assoc_rows::delete_of_user(conn, name, None, now)?;
            row.deleted = true;
            row.mod_time = now;
            user_rows::update(conn, &row)?;
            super::models::coordinators::revoke_all_of(conn, Some(name), None, now)?;
        }
        if !deleted.contains(name) {
            deleted.push(name.clone());
        }
    }
    Ok(deleted)
}

pub(super) fn list(conn: &mut AnyConnection, filter: &UserFilter) -> Result<Vec<User>, StoreError> {
    let mut realms = super::coords::realms(conn)?;
    Ok(user_rows::all(conn, filter.with_deleted)?
        .into_iter()
        .filter(|r| filter.names.is_empty() || filter.names.contains(&r.name))
        .filter(|r| {
            filter.default_accounts.is_empty()
                || filter.default_accounts.contains(&r.default_account)
        })
        .filter(|r| filter.admin_levels.is_empty() || filter.admin_levels.contains(&r.level()))
        .map(|r| {
            let realm = realms.remove(&r.name).filter(|_| !r.deleted);
            let mut user = User::from(r);
            user.coord_accounts = realm.into_iter().flatten().collect();
            user
        })
        .collect())
}
