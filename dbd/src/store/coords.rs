//! Coordinator rules (`sacctmgr add|delete coordinator`): a user granted an account coordinates
//! it and every account below it, including accounts added later, so only the direct grants are
//! stored and the realm is worked out from the live account tree when asked.

use std::collections::{BTreeMap, BTreeSet};

use super::conn::AnyConnection;
use super::error::StoreError;
use super::models::accounts as account_rows;
use super::models::coordinators as coord_rows;
use super::models::users as user_rows;
use super::requests::Coordinators;

/// Each coordinator's realm: user name -> the accounts granted and all accounts below them.
pub type Realms = BTreeMap<String, BTreeSet<String>>;

fn live_accounts(conn: &mut AnyConnection, names: &[String]) -> Result<(), StoreError> {
    for name in names {
        if account_rows::get_live(conn, name)?.is_none() {
            return Err(StoreError::CoordUnknownAccount { name: name.clone() });
        }
    }
    Ok(())
}

fn live_users(conn: &mut AnyConnection, names: &[String]) -> Result<(), StoreError> {
    for name in names {
        if user_rows::get_live(conn, name)?.is_none() {
            return Err(StoreError::CoordUnknownUser { name: name.clone() });
        }
    }
    Ok(())
}

/// Grants every user of `req` every account of `req`; returns the users. Granting a grant that
/// exists is not an error (sacctmgr reports the same lines).
pub(super) fn add(
    conn: &mut AnyConnection,
    req: &Coordinators,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if req.accounts.is_empty() {
        return Err(StoreError::NoCoordAccounts);
    }
    if req.names.is_empty() {
        return Err(StoreError::NoCoordUsers);
    }
    live_accounts(conn, &req.accounts)?;
    live_users(conn, &req.names)?;
    for user in &req.names {
        for account in &req.accounts {
            coord_rows::grant(conn, user, account, now)?;
        }
    }
    Ok(req.names.clone())
}

/// Revokes the direct grants of `req`'s users (all when none named) over `req`'s accounts (all
/// when none named); returns the (user, account) pairs revoked, none when nothing matched. Accounts coordinated only
/// through a parent cannot be revoked on their own: nothing matches them.
pub(super) fn delete(
    conn: &mut AnyConnection,
    req: &Coordinators,
    now: i64,
) -> Result<Vec<(String, String)>, StoreError> {
    if req.accounts.is_empty() && req.names.is_empty() {
        return Err(StoreError::NoCoordConditions);
    }
    live_accounts(conn, &req.accounts)?;
    live_users(conn, &req.names)?;
    let revoked: Vec<(String, String)> = coord_rows::live(conn)?
        .into_iter()
        .filter(|r| req.names.is_empty() || req.names.contains(&r.user_name))
        .filter(|r| req.accounts.is_empty() || req.accounts.contains(&r.account))
        .map(|r| (r.user_name, r.account))
        .collect();
    for (user, account) in &revoked {
        coord_rows::revoke(conn, user, account, now)?;
    }
    Ok(revoked)
}

/// Every coordinator's realm, from the live grants of live users over the live account tree.
pub(super) fn realms(conn: &mut AnyConnection) -> Result<Realms, StoreError> {
    let grants = coord_rows::live(conn)?;
    if grants.is_empty() {
        return Ok(Realms::new());
    }
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut live = BTreeSet::new();
    for a in account_rows::all(conn, false)? {
        children
            .entry(a.parent.clone())
            .or_default()
            .push(a.name.clone());
        live.insert(a.name);
    }
    let users: BTreeSet<String> = user_rows::all(conn, false)?
        .into_iter()
        .map(|u| u.name)
        .collect();
    let mut realms = Realms::new();
    for g in grants {
        if !users.contains(&g.user_name) || !live.contains(&g.account) {
            continue;
        }
        let realm = realms.entry(g.user_name).or_default();
        let mut todo = vec![g.account];
        while let Some(account) = todo.pop() {
            if realm.insert(account.clone())
                && let Some(kids) = children.get(&account)
            {
                todo.extend(kids.iter().cloned());
            }
        }
    }
    Ok(realms)
}

/// The coordinators of each account (by name), from `realms`.
pub(super) fn by_account(realms: &Realms) -> BTreeMap<&str, Vec<String>> {
    let mut out: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (user, accounts) in realms {
        for account in accounts {
            out.entry(account.as_str()).or_default().push(user.clone());
        }
    }
    out
}

/// What a `delete coordinator` did (or, in a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordChange {
    /// Whether it was committed.
    pub committed: bool,
    /// The (user, account) grants revoked, by user then account.
    pub revoked: Vec<(String, String)>,
}

impl super::Store {
    /// `sacctmgr add coordinator`.
    pub fn add_coordinators(
        &self,
        req: &Coordinators,
        apply: super::Apply,
        now: i64,
    ) -> Result<super::Change, StoreError> {
        self.changed(apply, |c| add(c, req, now))
    }

    /// `sacctmgr delete coordinator`.
    pub fn delete_coordinators(
        &self,
        req: &Coordinators,
        apply: super::Apply,
        now: i64,
    ) -> Result<CoordChange, StoreError> {
        let revoked = self.change(apply, |c| delete(c, req, now))?;
        Ok(CoordChange {
            committed: apply == super::Apply::Commit,
            revoked,
        })
    }

    /// Every coordinator's realm (see [`realms`]).
    pub fn coordinator_realms(&self) -> Result<Realms, StoreError> {
        self.read(realms)
    }
}
