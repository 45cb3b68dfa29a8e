//! Association limits (`sacctmgr modify user|account ... set MaxJobs=... GrpTRES=...`): each
//! association stores the limits it sets; when read, the per-job and per-association limits
//! (`MaxJobs`, `MaxSubmitJobs`, `MaxWall`, `MaxTRESPerJob`) it does not set come from the
//! nearest association above it that does (a user's from its account, an account's from its
//! parent), as Slurm's associations inherit them. Group limits (`Grp*`) cover everything
//! below the association that sets them and are not copied down.

use std::collections::HashMap;

use sluice_vocab::assoc_limits::{AssocLimits, AssocLimitsEdit};
use sluice_vocab::fairshare::Shares;

use super::conn::AnyConnection;
use super::error::StoreError;
use super::models::assoc_limits as limit_rows;
use super::models::associations::{self as assoc_rows, AssociationRow};
use super::models::users as user_rows;
use super::types::Association;

/// `sacctmgr modify user|account ... set <limits>`.
#[derive(Debug, Clone, Default)]
pub struct ModifyAssocLimits {
    /// User associations (of `users`, or every user when empty) rather than the accounts'
    /// own associations.
    pub user_associations: bool,
    pub users: Vec<String>,
    pub accounts: Vec<String>,
    /// Default: every cluster.
    pub clusters: Vec<String>,
    pub set: AssocLimitsEdit,
    /// `Fairshare=` set on the same associations in the same change.
    pub fairshare: Option<Shares>,
    /// `QOS=`, `QOS+=`, `QOS-=`, `DefaultQOS=` on the same associations in the same change
    /// (its own target fields are those of this request).
    pub qos: Option<super::qos::ModifyAssocQos>,
}

/// The name of a changed association in a change reply: cluster, account and user separated
/// by tabs (sacctmgr lays them out as `C = ... A = ... U = ...`).
fn assoc_name(r: &AssociationRow) -> String {
    format!("{}\t{}\t{}", r.cluster, r.account, r.user_name)
}

pub(super) fn modify(
    conn: &mut AnyConnection,
    req: &ModifyAssocLimits,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if req.set.is_empty() && req.fairshare.is_none() && req.qos.is_none() {
        return Err(StoreError::NothingToChange);
    }
    let mut changed = Vec::new();
    if let Some(q) = &req.qos {
        let q = super::qos::ModifyAssocQos {
            user_associations: req.user_associations,
            users: req.users.clone(),
            accounts: req.accounts.clone(),
            clusters: req.clusters.clone(),
            ..q.clone()
        };
        changed = super::qos::modify_assoc(conn, &q, now)?;
    }
    let targets = modify_targets(
        conn,
        &req.clusters,
        &req.accounts,
        &req.users,
        req.user_associations,
    )?;
    for row in targets {
        let own = limit_rows::get(conn, row.id)?;
        let new = req.set.applied(&own);
        let mut differs = new != own;
        if differs {
            limit_rows::put(conn, row.id, &new, now)?;
        }
        if let Some(shares) = req.fairshare {
            differs |= super::fairshare::set_one(conn, row.id, shares)?;
        }
        let name = assoc_name(&row);
        if differs && !changed.contains(&name) {
            changed.push(name);
        }
    }
    // Nothing matched or nothing differs: an empty list, which sacctmgr reports as
    // "Nothing modified".
    Ok(changed)
}

/// Applies `edit` to the live associations of `user` (`""`: the accounts' own) with
/// `accounts` on `clusters`: the limits given with `sacctmgr add user|account`.
pub(super) fn set_on(
    conn: &mut AnyConnection,
    clusters: &[String],
    accounts: &[String],
    user: &str,
    edit: &AssocLimitsEdit,
    now: i64,
) -> Result<(), StoreError> {
    if edit.is_empty() {
        return Ok(());
    }
    for row in assoc_rows::live(conn, clusters, accounts, &[user.to_string()])? {
        let own = limit_rows::get(conn, row.id)?;
        let new = edit.applied(&own);
        if new != own {
            limit_rows::put(conn, row.id, &new, now)?;
        }
    }
    Ok(())
}

/// `rows` with the limits in force on each (see the module doc).
pub(super) fn with_limits(
    conn: &mut AnyConnection,
    rows: Vec<AssociationRow>,
) -> Result<Vec<Association>, StoreError> {
    let own = limit_rows::all(conn)?;
    let mut clusters: Vec<String> = rows.iter().map(|r| r.cluster.clone()).collect();
    clusters.sort();
    clusters.dedup();
    // The account associations of those clusters: every ancestor a row may inherit from.
    let tree: HashMap<(String, String), AssociationRow> =
        assoc_rows::live(conn, &clusters, &[], &[String::new()])?
            .into_iter()
            .map(|r| ((r.cluster.clone(), r.account.clone()), r))
            .collect();
    let mut memo: HashMap<(String, String), AssocLimits> = HashMap::new();
    Ok(rows
        .into_iter()
        .map(|row| {
            let mine = own.get(&row.id).cloned().unwrap_or_default();
            let limits = if row.user_name.is_empty() {
                account_limits(&tree, &own, &mut memo, &row.cluster, &row.account)
            } else {
                let above = account_limits(&tree, &own, &mut memo, &row.cluster, &row.account);
                mine.inherit(&above)
            };
            let mut a = Association::from(row);
            a.limits = limits;
            a
        })
        .collect())
}

/// The limits in force on `account`'s own association on `cluster`.
fn account_limits(
    tree: &HashMap<(String, String), AssociationRow>,
    own: &HashMap<i64, AssocLimits>,
    memo: &mut HashMap<(String, String), AssocLimits>,
    cluster: &str,
    account: &str,
) -> AssocLimits {
    // Walk up to the root (or a level already worked out), then inherit on the way down.
    let mut chain: Vec<&AssociationRow> = Vec::new();
    let mut cur = account.to_string();
    let mut base = AssocLimits::default();
    // The tree is acyclic by construction; the bound guards against a corrupted database.
    for _ in 0..10_000 {
        let key = (cluster.to_string(), cur.clone());
        if let Some(done) = memo.get(&key) {
            base = done.clone();
            break;
        }
        let Some(row) = tree.get(&key) else { break };
        chain.push(row);
        if row.parent_account.is_empty() {
            break;
        }
        cur.clone_from(&row.parent_account);
    }
    // Only the Max* limits of `inherited` are read by `inherit`.
    let mut inherited = base;
    let mut result = AssocLimits::default();
    for row in chain.into_iter().rev() {
        let mine = own.get(&row.id).cloned().unwrap_or_default();
        result = mine.inherit(&inherited);
        memo.insert((cluster.to_string(), row.account.clone()), result.clone());
        inherited = result.clone();
    }
    memo.get(&(cluster.to_string(), account.to_string()))
        .cloned()
        .unwrap_or(result)
}

/// The live associations a `modify user|account` names: the users' associations (every user
/// must exist) or the accounts' own ones (an account is required); each cluster and account
/// named must exist.
pub(super) fn modify_targets(
    conn: &mut AnyConnection,
    clusters: &[String],
    accounts: &[String],
    users: &[String],
    user_associations: bool,
) -> Result<Vec<AssociationRow>, StoreError> {
    for name in clusters {
        super::accounts::clusters_or_all(conn, std::slice::from_ref(name))?;
    }
    for account in accounts {
        super::accounts::live_account(conn, account)?;
    }
    if user_associations {
        for user in users {
            if user_rows::get_live(conn, user)?.is_none() {
                return Err(StoreError::UnknownUser { name: user.clone() });
            }
        }
        Ok(assoc_rows::live(conn, clusters, accounts, users)?
            .into_iter()
            .filter(|r| !r.user_name.is_empty())
            .collect())
    } else {
        if accounts.is_empty() {
            return Err(StoreError::NoConditions);
        }
        Ok(assoc_rows::live(
            conn,
            clusters,
            accounts,
            &[String::new()],
        )?)
    }
}
