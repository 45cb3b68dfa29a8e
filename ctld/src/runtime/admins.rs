//! Users known to the accounting daemon. Besides root and `SlurmUser`, Slurm's controller
//! treats users with `AdminLevel=Administrator` in the dbd as administrators and those with
//! `Operator` as operators (who see what `PrivateData` hides), and charges a job without
//! `--account` to the user's default account, from a copy it keeps of the dbd's users. Here a
//! task fetches that list (`ListUsers`) at start and every [`REFRESH`]; while the dbd is away
//! the last list stays, and a controller without a dbd has none (only root and SlurmUser are
//! administrators then, and no default account is known).

use sluice_wire::client::DbdClient;
use sluice_wire::proto::ListUsersRequest;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::task::JoinHandle;

use super::CoreHandle;
use crate::core::assoc::{self, cache::DbdUser};

/// How often the dbd's users are fetched again.
pub const REFRESH: Duration = Duration::from_secs(30);
/// How long one fetch may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);
/// The dbd's name of the level that makes a user an administrator of the controller.
const ADMINISTRATOR: &str = "Administrator";
/// The dbd's name of the level that makes a user an operator.
const OPERATOR: &str = "Operator";

/// What the controller keeps of the dbd's users, by uid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserView {
    /// `AdminLevel=Administrator`.
    pub admins: HashSet<u32>,
    /// `AdminLevel=Operator`.
    pub operators: HashSet<u32>,
    /// Each user's default account.
    pub default_accounts: HashMap<u32, String>,
    /// Account coordinators' realms (the accounts each coordinates, sub-accounts included).
    pub coordinators: crate::core::coordinators::Realms,
}

/// The dbd's users, as last fetched. Cheap to clone; clones share it.
#[derive(Debug, Clone, Default)]
pub struct DbdAdmins(Arc<RwLock<UserView>>);

impl DbdAdmins {
    /// Whether `uid` is an administrator in the dbd.
    pub fn contains(&self, uid: u32) -> bool {
        self.0.read().is_ok_and(|v| v.admins.contains(&uid))
    }

    /// Whether `uid` is an operator (or administrator) in the dbd.
    pub fn is_operator(&self, uid: u32) -> bool {
        self.0
            .read()
            .is_ok_and(|v| v.operators.contains(&uid) || v.admins.contains(&uid))
    }

    /// `uid`'s default account, when the dbd named one.
    pub fn default_account(&self, uid: u32) -> Option<String> {
        self.0
            .read()
            .ok()
            .and_then(|v| v.default_accounts.get(&uid).cloned())
    }

    /// Replaces the whole view with a fresh one.
    pub fn replace_view(&self, view: UserView) {
        if let Ok(mut v) = self.0.write() {
            *v = view;
        }
    }
}

/// The dbd's live users, as it lists them.
pub async fn fetch_users(dbd: &mut DbdClient) -> Result<Vec<DbdUser>, tonic::Status> {
    let mut req = tonic::Request::new(ListUsersRequest::default());
    req.set_timeout(RPC_TIMEOUT);
    Ok(dbd
        .list_users(req)
        .await?
        .into_inner()
        .users
        .into_iter()
        .filter(|u| !u.deleted)
        .map(|u| DbdUser {
            name: u.name,
            admin_level: u.admin_level,
            default_account: u.default_account,
            coord_accounts: u.coord_accounts,
        })
        .collect())
}

/// `users` as a [`UserView`] (names this host does not know are left out: nobody can send a
/// request as them). Looks each name up in the system's user database, which may be slow
/// (NSS): call it off the runtime's workers.
pub fn view_of(users: &[DbdUser]) -> UserView {
    let mut view = UserView::default();
    for user in users {
        let Some(u) = nix::unistd::User::from_name(&user.name).ok().flatten() else {
            continue;
        };
        let uid = u.uid.as_raw();
        match user.admin_level.as_str() {
            ADMINISTRATOR => _ = view.admins.insert(uid),
            OPERATOR => _ = view.operators.insert(uid),
            _ => {}
        }
        if !user.default_account.is_empty() {
            view.default_accounts
                .insert(uid, user.default_account.clone());
        }
        if !user.coord_accounts.is_empty() {
            view.coordinators
                .insert(uid, user.coord_accounts.iter().cloned().collect());
        }
    }
    view
}

/// The dbd's users as a [`UserView`], with the list it was made from.
pub async fn fetch(dbd: &mut DbdClient) -> Result<(UserView, Vec<DbdUser>), tonic::Status> {
    let users = fetch_users(dbd).await?;
    let view = tokio::task::spawn_blocking(move || (view_of(&users), users))
        .await
        .map_err(|e| tonic::Status::internal(e.to_string()))?;
    Ok(view)
}

/// Keeps `admins`, the core's account coordinators, its associations (see
/// [`super::assocs`]) and its QOS ([`super::qos`]) up to date from `dbd`: a fetch now, then
/// one every `every` and one whenever `changed` is notified (the dbd announced a change, see
/// [`super::assoc_watch`]) (call from within a tokio runtime). What the core keeps is saved
/// with its state, for a restart while the dbd is away. Aborting the handle stops it.
pub fn spawn_refresh(
    mut dbd: DbdClient,
    admins: DbdAdmins,
    core: CoreHandle,
    every: Duration,
    changed: Arc<tokio::sync::Notify>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let Ok(cluster) = core.query(|cx| cx.core.cfg.cluster_name.clone()).await else {
            return;
        };
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                () = changed.notified() => {}
            }
            let assocs = super::assocs::fetch(&mut dbd, &cluster).await;
            let users = fetch(&mut dbd).await;
            if let Err(e) = &assocs {
                tracing::debug!(
                    "cannot list the dbd's associations (keeping the last list): {}",
                    e.message()
                );
            }
            match super::qos::fetch(&mut dbd).await {
                Ok(table) => {
                    let posted = core
                        .query(move |cx| crate::core::qos::set(cx.core, table))
                        .await;
                    if posted.is_err() {
                        return;
                    }
                }
                Err(e) => tracing::debug!(
                    "cannot list the dbd's QOS (keeping the last list): {}",
                    e.message()
                ),
            }
            let users = match users {
                Ok((view, users)) => {
                    tracing::debug!(count = view.admins.len(), "administrators from the dbd");
                    admins.replace_view(view.clone());
                    Some((view.coordinators, users))
                }
                Err(e) => {
                    tracing::debug!(
                        "cannot list the dbd's users (keeping the last list): {}",
                        e.message()
                    );
                    None
                }
            };
            if assocs.is_err() && users.is_none() {
                continue;
            }
            // A changed list may let pending jobs start (or hold them): a whole pass follows,
            // and the commit after it saves the lists.
            let posted = core
                .call(move |cx| {
                    let before = assoc::cache::generation(cx.core);
                    if let Ok(table) = assocs {
                        assoc::set(cx.core, table);
                    }
                    if let Some((realms, users)) = users {
                        crate::core::coordinators::set(cx.core, realms);
                        assoc::set_users(cx.core, users);
                    }
                    if assoc::cache::generation(cx.core) != before {
                        cx.out.touch();
                    }
                })
                .await;
            if matches!(posted, Err(super::CallError::Gone)) {
                return;
            }
        }
    })
}
