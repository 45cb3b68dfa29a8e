//! Account rules: a tree under `root`; adding an account creates its association on every
//! (given or all) cluster under its parent's; deleting marks its associations deleted.

use super::conn::AnyConnection;
use super::error::{ObjectKind, StoreError};
use super::models::accounts::{self as account_rows, AccountRow};
use super::models::associations::{self as assoc_rows, Key};
use super::models::clusters as cluster_rows;
use super::models::users::{self as user_rows, UserRow};
use super::requests::{AccountFilter, AddAccounts, ModifyAccounts, checked_names};
use super::types::{Account, AdminLevel};

/// The root account and user every Slurm database starts with.
pub(super) const ROOT: &str = "root";

/// Creates the `root` account and user on a fresh database.
pub(super) fn ensure_root(conn: &mut AnyConnection, now: i64) -> Result<(), StoreError> {
    if account_rows::get(conn, ROOT)?.is_none() {
        account_rows::insert(
            conn,
            &AccountRow {
                name: ROOT.into(),
                description: "default root account".into(),
                organization: "root".into(),
                parent: String::new(),
                creation_time: now,
                mod_time: now,
                deleted: false,
            },
        )?;
    }
    if user_rows::get(conn, ROOT)?.is_none() {
        user_rows::insert(
            conn,
            &UserRow {
                name: ROOT.into(),
                default_account: ROOT.into(),
                admin_level: AdminLevel::Administrator.stored(),
                creation_time: now,
                mod_time: now,
                deleted: false,
            },
        )?;
    }
    Ok(())
}

/// The live clusters named (each must exist), or every live cluster when none are.
pub(super) fn clusters_or_all(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<String>, StoreError> {
    if names.is_empty() {
        return Ok(cluster_rows::all(conn, false)?
            .into_iter()
            .map(|r| r.name)
            .collect());
    }
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if cluster_rows::get_live(conn, name)?.is_none() {
            return Err(StoreError::UnknownCluster { name: name.clone() });
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}

/// The live account `name`, or `UnknownAccount`.
pub(super) fn live_account(conn: &mut AnyConnection, name: &str) -> Result<AccountRow, StoreError> {
    account_rows::get_live(conn, name)?.ok_or_else(|| StoreError::UnknownAccount {
        name: name.to_string(),
    })
}

/// Creates `account`'s associations on `clusters` under its parent's; returns whether any is
/// new. The parent must be on every one of them.
fn ensure_account_assocs(
    conn: &mut AnyConnection,
    clusters: &[String],
    account: &str,
    parent: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let parent_on = assoc_rows::clusters_with_account(conn, clusters, parent)?;
    if let Some(missing) = clusters.iter().find(|c| !parent_on.contains(*c)) {
        return Err(StoreError::AccountNotOnCluster {
            account: parent.to_string(),
            cluster: missing.clone(),
        });
    }
    Ok(assoc_rows::ensure_on(conn, clusters, account, "", parent, now)? > 0)
}

pub(super) fn add(
    conn: &mut AnyConnection,
    req: &AddAccounts,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let names = checked_names(ObjectKind::Account, &req.names)?;
    let parent = req.parent.as_deref().unwrap_or(ROOT);
    live_account(conn, parent)?;
    if names.iter().any(|n| n == parent) {
        return Err(StoreError::ParentLoop {
            account: parent.to_string(),
            parent: parent.to_string(),
        });
    }
    let clusters = clusters_or_all(conn, &req.clusters)?;
    let mut added = Vec::new();
    for name in &names {
        let existing = account_rows::get(conn, name)?;
        let row = match existing {
            // An existing account only gains associations on clusters it is not on yet.
            Some(row) if !row.deleted => row,
            revived => {
                let row = AccountRow {
                    name: name.clone(),
                    description: req.description.clone().unwrap_or_else(|| name.clone()),
                    organization: req.organization.clone().unwrap_or_else(|| {
                        if parent == ROOT {
                            name.clone()
                        } else {
                            parent.to_string()
                        }
                    }),
                    parent: parent.to_string(),
                    creation_time: now,
                    mod_time: now,
                    deleted: false,
                };
                if revived.is_some() {
                    account_rows::update(conn, &row)?;
                } else {
                    account_rows::insert(conn, &row)?;
                }
                added.push(name.clone());
                row
            }
        };
        let new_assoc = ensure_account_assocs(conn, &clusters, name, &row.parent, now)?;
        if let Some(shares) = req.fairshare {
            super::fairshare::set(conn, &clusters, std::slice::from_ref(name), "", shares)?;
        }
        let own = std::slice::from_ref(name);
        super::limits::set_on(conn, &clusters, own, "", &req.limits, now)?;
        if !added.contains(name) {
            if !new_assoc {
                return Err(StoreError::AlreadyExists {
                    kind: ObjectKind::Account,
                    name: name.clone(),
                });
            }
            added.push(name.clone());
        }
    }
    Ok(added)
}

/// Whether `ancestor` is `account` or above it in the tree.
fn is_ancestor(
    conn: &mut AnyConnection,
    ancestor: &str,
    account: &str,
) -> Result<bool, StoreError> {
    let mut cur = account.to_string();
    // The tree is acyclic by construction; the bound guards against a corrupted database.
    for _ in 0..10_000 {
        if cur == ancestor {
            return Ok(true);
        }
        match account_rows::get(conn, &cur)? {
            Some(row) if !row.parent.is_empty() => cur = row.parent,
            _ => return Ok(false),
        }
    }
    Ok(true)
}

pub(super) fn modify(
    conn: &mut AnyConnection,
    req: &ModifyAccounts,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    for name in &req.names {
        live_account(conn, name)?;
    }
    if let Some(parent) = &req.parent {
        live_account(conn, parent)?;
    }
    let targets: Vec<AccountRow> = account_rows::all(conn, false)?
        .into_iter()
        .filter(|r| req.names.is_empty() || req.names.contains(&r.name))
        .filter(|r| {
            req.where_description
                .as_ref()
                .is_none_or(|d| &r.description == d)
        })
        .filter(|r| {
            req.where_organization
                .as_ref()
                .is_none_or(|o| &r.organization == o)
        })
        .collect();
    let mut changed = Vec::new();
    for old in targets {
        let mut row = old.clone();
        if let Some(d) = &req.description {
            row.description.clone_from(d);
        }
        if let Some(o) = &req.organization {
            row.organization.clone_from(o);
        }
        if let Some(parent) = req.parent.as_ref().filter(|p| **p != old.parent) {
            if old.name == ROOT {
                return Err(StoreError::RootAccount);
            }
            if is_ancestor(conn, &old.name, parent)? {
                return Err(StoreError::ParentLoop {
                    account: old.name.clone(),
                    parent: parent.clone(),
                });
            }
            row.parent.clone_from(parent);
            for assoc in
                assoc_rows::live(conn, &[], std::slice::from_ref(&old.name), &[String::new()])?
            {
                let parent_key = Key {
                    cluster: &assoc.cluster,
                    account: parent,
                    user: "",
                };
                if !assoc_rows::is_live(conn, parent_key)? {
                    return Err(StoreError::AccountNotOnCluster {
                        account: parent.clone(),
                        cluster: assoc.cluster,
                    });
                }
            }
            assoc_rows::set_parent(conn, &old.name, parent, now)?;
        }
        let shares_changed = match req.fairshare {
            Some(s) => super::fairshare::set(conn, &[], std::slice::from_ref(&old.name), "", s)?,
            None => false,
        };
        if row != old {
            row.mod_time = now;
            account_rows::update(conn, &row)?;
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
    names: &[String],
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if names.is_empty() {
        return Err(StoreError::NoConditions);
    }
    let mut deleted: Vec<String> = Vec::new();
    for name in names {
        if name == ROOT {
            return Err(StoreError::RootAccount);
        }
        live_account(conn, name)?;
        if account_rows::children(conn, name)?
            .iter()
            .any(|c| !names.contains(&c.name))
        {
            return Err(StoreError::AccountHasChildren {
                account: name.clone(),
            });
        }
        if !deleted.contains(name) {
            deleted.push(name.clone());
        }
    }
    if let Some(user) = user_rows::with_default_in(conn, &deleted)?
        .into_iter()
        .next()
    {
        return Err(StoreError::DefaultAccountInUse {
            account: user.default_account,
            user: user.name,
        });
    }
    for name in &deleted {
        let mut row = live_account(conn, name)?;
        row.deleted = true;
        row.mod_time = now;
        account_rows::update(conn, &row)?;
        assoc_rows::delete_of_account(conn, name, now)?;
        super::models::coordinators::revoke_all_of(conn, None, Some(name), now)?;
    }
    Ok(deleted)
}

pub(super) fn list(
    conn: &mut AnyConnection,
    filter: &AccountFilter,
) -> Result<Vec<Account>, StoreError> {
    let realms = super::coords::realms(conn)?;
    let coordinators = super::coords::by_account(&realms);
    Ok(account_rows::all(conn, filter.with_deleted)?
        .into_iter()
        .filter(|r| filter.names.is_empty() || filter.names.contains(&r.name))
        .filter(|r| filter.descriptions.is_empty() || filter.descriptions.contains(&r.description))
        .filter(|r| {
            filter.organizations.is_empty() || filter.organizations.contains(&r.organization)
        })
        .map(|r| {
            let mut account = Account::from(r);
            if !account.deleted {
                account.coordinators = coordinators
                    .get(account.name.as_str())
                    .cloned()
                    .unwrap_or_default();
            }
            account
        })
        .collect())
}
