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

/// The dbd's users as a [`UserView`] (names this host does not know are left out: nobody can
/// send a request as them).
pub async fn fetch(dbd: &mut DbdClient) -> Result<UserView, tonic::Status> {
    let mut req = tonic::Request::new(ListUsersRequest::default());
    req.set_timeout(RPC_TIMEOUT);
    let users: Vec<(String, String, String, Vec<String>)> = dbd
        .list_users(req)
        .await?
        .into_inner()
        .users
        .into_iter()
        .filter(|u| !u.deleted)
        .map(|u| (u.name, u.admin_level, u.default_account, u.coord_accounts))
        .collect();
    // The system's user database may be slow (NSS): off the runtime's workers.
    let view = tokio::task::spawn_blocking(move || {
        let mut view = UserView::default();
        for (name, level, account, coordinates) in users {
            let Some(u) = nix::unistd::User::from_name(&name).ok().flatten() else {
                continue;
            };
            let uid = u.uid.as_raw();
            match level.as_str() {
                ADMINISTRATOR => _ = view.admins.insert(uid),
                OPERATOR => _ = view.operators.insert(uid),
                _ => {}
            }
            if !account.is_empty() {
                view.default_accounts.insert(uid, account);
            }
            if !coordinates.is_empty() {
                view.coordinators
                    .insert(uid, coordinates.into_iter().collect());
            }
        }
        view
    })
    .await
    .unwrap_or_default();
    Ok(view)
}

/// Keeps `admins`, the core's account coordinators, its associations (see
/// [`super::assocs`]) and its QOS ([`super::qos`]) up to date from `dbd`: a fetch now, then
/// one every `every` (call from within a tokio runtime). Aborting the handle stops it.
pub fn spawn_refresh(
    mut dbd: DbdClient,
    admins: DbdAdmins,
    core: CoreHandle,
    every: Duration,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let Ok(cluster) = core.query(|cx| cx.core.cfg.cluster_name.clone()).await else {
            return;
        };
        loop {
            ticks.tick().await;
            match super::assocs::fetch(&mut dbd, &cluster).await {
                Ok(table) => {
                    let posted = core
                        .query(move |cx| crate::core::assoc::set(cx.core, table))
                        .await;
                    if posted.is_err() {
                        return;
                    }
                }
                Err(e) => tracing::debug!(
                    "cannot list the dbd's associations (keeping the last list): {}",
                    e.message()
                ),
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
            match fetch(&mut dbd).await {
                Ok(view) => {
                    tracing::debug!(count = view.admins.len(), "administrators from the dbd");
                    let realms = view.coordinators.clone();
                    admins.replace_view(view);
                    let posted = core
                        .query(move |cx| crate::core::coordinators::set(cx.core, realms))
                        .await;
                    if posted.is_err() {
                        return;
                    }
                }
                Err(e) => tracing::debug!(
                    "cannot list the dbd's users (keeping the last list): {}",
                    e.message()
                ),
            }
        }
    })
}
