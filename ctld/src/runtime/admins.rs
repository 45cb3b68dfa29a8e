//! Administrators known to the accounting daemon. Besides root and `SlurmUser`, Slurm's
//! controller treats users with `AdminLevel=Administrator` in the dbd as administrators, from a
//! copy it keeps of the dbd's list. Here a task fetches that list (`ListUsers`) at start and
//! every [`REFRESH`]; while the dbd is away the last list stays, and a controller without a dbd
//! has none (only root and SlurmUser are administrators then).

use sluice_wire::client::DbdClient;
use sluice_wire::proto::ListUsersRequest;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How often the dbd's administrators are fetched again.
pub const REFRESH: Duration = Duration::from_secs(30);
/// How long one fetch may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);
/// The dbd's name of the level that makes a user an administrator of the controller.
const ADMINISTRATOR: &str = "Administrator";

/// The uids of the dbd's administrators, as last fetched. Cheap to clone; clones share it.
#[derive(Debug, Clone, Default)]
pub struct DbdAdmins(Arc<RwLock<HashSet<u32>>>);

impl DbdAdmins {
    /// Whether `uid` is an administrator in the dbd.
    pub fn contains(&self, uid: u32) -> bool {
        self.0.read().is_ok_and(|set| set.contains(&uid))
    }

    /// Replaces the list with a fresh one.
    pub fn replace(&self, uids: HashSet<u32>) {
        if let Ok(mut set) = self.0.write() {
            *set = uids;
        }
    }
}

/// The uids of the users the dbd lists with `AdminLevel=Administrator` (names this host does
/// not know are left out: nobody can send a request as them).
pub async fn fetch(dbd: &mut DbdClient) -> Result<HashSet<u32>, tonic::Status> {
    let mut req = tonic::Request::new(ListUsersRequest {
        admin_levels: vec![ADMINISTRATOR.to_string()],
        ..Default::default()
    });
    req.set_timeout(RPC_TIMEOUT);
    let users = dbd.list_users(req).await?.into_inner().users;
    let names: Vec<String> = users
        .into_iter()
        .filter(|u| !u.deleted && u.admin_level == ADMINISTRATOR)
        .map(|u| u.name)
        .collect();
    // The system's user database may be slow (NSS): off the runtime's workers.
    let uids = tokio::task::spawn_blocking(move || {
        names
            .iter()
            .filter_map(|n| nix::unistd::User::from_name(n).ok().flatten())
            .map(|u| u.uid.as_raw())
            .collect()
    })
    .await
    .unwrap_or_default();
    Ok(uids)
}

/// Keeps `admins` up to date from `dbd`: a fetch now, then one every `every` (call from within
/// a tokio runtime). Aborting the handle stops it.
pub fn spawn_refresh(mut dbd: DbdClient, admins: DbdAdmins, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match fetch(&mut dbd).await {
                Ok(uids) => {
                    tracing::debug!(count = uids.len(), "administrators from the dbd");
                    admins.replace(uids);
                }
                Err(e) => tracing::debug!(
                    "cannot list the dbd's administrators (keeping the last list): {}",
                    e.message()
                ),
            }
        }
    })
}
