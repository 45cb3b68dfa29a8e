//! Changes of the accounting daemon's associations, users and limits reach the controller
//! within a second instead of at its next periodic refresh: a task keeps a `WatchAssociations`
//! stream open to the dbd, which sends a message whenever a committed change may touch them
//! (and one when the stream opens, so a dbd that comes back is read again at once); each
//! message wakes the refresh task of [`super::admins`]. A broken stream is opened again after
//! [`RETRY`].

use std::sync::Arc;
use std::time::Duration;

use sluice_wire::client::DbdClient;
use sluice_wire::proto::WatchAssociationsRequest;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How long to wait before opening a broken or refused stream again.
pub const RETRY: Duration = Duration::from_secs(1);

/// Wakes `changed` on every change the dbd announces (call from within a tokio runtime).
/// Aborting the handle stops it.
pub fn spawn(mut dbd: DbdClient, cluster: String, changed: Arc<Notify>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let req = WatchAssociationsRequest {
                cluster: cluster.clone(),
            };
            match dbd.watch_associations(req).await {
                Ok(reply) => {
                    let mut stream = reply.into_inner();
                    while let Ok(Some(_)) = stream.message().await {
                        changed.notify_one();
                    }
                }
                Err(e) => tracing::debug!(
                    "cannot watch the dbd's associations (periodic refresh only): {}",
                    e.message()
                ),
            }
            tokio::time::sleep(RETRY).await;
        }
    })
}
