//! Account coordinators in the accounting service: who besides administrators may make a
//! change. A coordinator of an account (granted it or an account above it) may add users to
//! accounts of that realm, remove users' associations with them, add sub-accounts below them,
//! and grant or revoke coordination of them; everything else stays with administrators.

use std::sync::Arc;

use sluice_wire::auth;
use sluice_wire::proto;
use tonic::{Request, Response, Status};

use super::{ACCESS_DENIED, AccountingService, blocking, convert, now};
use crate::store::{AddAccounts, AddUsers, Apply, Coordinators, DeleteUsers};

/// The accounts a decoded change touches, when a coordinator may make it at all.
pub(super) type RealmOf<D> = fn(&D) -> Option<Vec<String>>;

/// `add user`: the accounts its associations go under; never when it sets an admin level.
pub(super) fn add_users(req: &AddUsers) -> Option<Vec<String>> {
    if req.admin_level.is_some() {
        return None;
    }
    let mut accounts = req.accounts.clone();
    accounts.extend(req.default_account.iter().cloned());
    Some(accounts)
}

/// `delete user ... account=`: the accounts left; removing a whole user is not a coordinator's.
pub(super) fn delete_users(req: &DeleteUsers) -> Option<Vec<String>> {
    (!req.accounts.is_empty()).then(|| req.accounts.clone())
}

/// `add account`: its parent (root when none is given, which no coordinator holds).
pub(super) fn add_accounts(req: &AddAccounts) -> Option<Vec<String>> {
    Some(vec![req.parent.clone().unwrap_or_else(|| "root".into())])
}

/// `add|delete coordinator`: the accounts named; revoking by user alone is not a coordinator's.
pub(super) fn coordinators(req: &Coordinators) -> Option<Vec<String>> {
    (!req.accounts.is_empty()).then(|| req.accounts.clone())
}

impl AccountingService {
    /// The caller's uid and the decoded change, if the caller may make it: an administrator,
    /// or, with `realm`, a coordinator of every account the change touches.
    pub(super) async fn authorize<M, D>(
        &self,
        req: Request<M>,
        decode: impl FnOnce(M) -> convert::Decoded<D>,
        realm: Option<RealmOf<D>>,
    ) -> Result<(u32, D, Apply), Status> {
        let uid = auth::identity(&req)?.uid;
        let admin = self.is_admin(uid).await?;
        let denied = || {
            tracing::warn!(uid, "refused a change from a non-admin");
            Status::permission_denied(ACCESS_DENIED)
        };
        if !admin && realm.is_none() {
            return Err(denied());
        }
        let (domain, apply) = decode(req.into_inner())?;
        if !admin {
            let accounts = realm.and_then(|r| r(&domain)).ok_or_else(denied)?;
            if !self.coordinates(uid, accounts).await? {
                return Err(denied());
            }
        }
        Ok((uid, domain, apply))
    }

    /// Whether the user of `uid` coordinates every one of `accounts` (none: no).
    async fn coordinates(&self, uid: u32, accounts: Vec<String>) -> Result<bool, Status> {
        if accounts.is_empty() {
            return Ok(false);
        }
        let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) else {
            return Ok(false);
        };
        let store = Arc::clone(&self.store);
        let realms = blocking(move || store.coordinator_realms()).await?;
        Ok(realms
            .get(&user.name)
            .is_some_and(|realm| accounts.iter().all(|a| realm.contains(a))))
    }

    /// `sacctmgr add coordinator`.
    pub(super) async fn add_coordinators_rpc(
        &self,
        req: Request<proto::CoordinatorsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change_in_realm(
            req,
            "add coordinators",
            convert::coordinators,
            Some(coordinators),
            |s, req, apply, now| s.add_coordinators(req, apply, now),
        )
        .await
    }

    /// `sacctmgr delete coordinator`: the reply lists the grants revoked.
    pub(super) async fn delete_coordinators_rpc(
        &self,
        req: Request<proto::CoordinatorsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        let (uid, domain, apply) = self
            .authorize(req, convert::coordinators, Some(coordinators))
            .await?;
        let store = Arc::clone(&self.store);
        let change = blocking(move || store.delete_coordinators(&domain, apply, now())).await?;
        if change.committed {
            self.changes.bump();
        }
        tracing::info!(uid, committed = change.committed, revoked = ?change.revoked, "delete coordinators");
        Ok(Response::new(convert::coord_change_reply(change)))
    }
}
