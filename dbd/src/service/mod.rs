//! The `Accounting` gRPC service. It only decodes, checks permissions, calls the store on a
//! blocking thread, and encodes; the rules live in [`crate::store`].
//!
//! Callers are identified by the `Verifier` interceptor the daemon mounts in front of it.
//! Change RPCs and job-id leases need an admin: a uid in `admin_uids` (root and SlurmUser) or
//! the login name of a user with AdminLevel=Administrator. Lists and Ping are open to every
//! authenticated caller.

mod accounting;
pub mod assoc_watch;
mod convert;
mod coord;
mod federation;
mod limits;
pub mod private;
mod qos;
mod records;
mod reports;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use sluice_wire::auth;
use sluice_wire::proto::{self, accounting_server::AccountingServer};
use tonic::{Request, Response, Status};

use crate::store::{AdminLevel, Apply, Change, Store, StoreError};
use sluice_vocab::private_data::PrivateData;

pub use federation::FederationService;
pub use records::RecordsService;
pub use reports::{Clock, ReportsService};

/// Slurm's text for a refused request.
const ACCESS_DENIED: &str = "Access/permission denied";

/// The accounting daemon's gRPC service.
#[derive(Debug, Clone)]
pub struct AccountingService {
    store: Arc<Store>,
    admin_uids: Vec<u32>,
    private: PrivateData,
    changes: assoc_watch::ChangeSignal,
}

/// Runs a store call on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Status> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(Status::from),
        Err(e) => {
            tracing::error!(error = %e, "store task failed");
            Err(Status::internal("store task failed"))
        }
    }
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A store change as a plain function, so every change RPC shares one path.
type ChangeFn<D> = fn(&Store, &D, Apply, i64) -> Result<Change, StoreError>;

impl AccountingService {
    /// A service over `store`; `admin_uids` are always admins (root and the SlurmUser).
    pub fn new(store: Arc<Store>, admin_uids: Vec<u32>) -> Self {
        Self {
            store,
            admin_uids,
            private: PrivateData::default(),
            changes: assoc_watch::ChangeSignal::default(),
        }
    }

    /// What tells controllers of committed changes (`WatchAssociations`); the daemon ends
    /// its streams at shutdown.
    pub fn change_signal(&self) -> assoc_watch::ChangeSignal {
        self.changes.clone()
    }

    /// Applies slurmdbd.conf's `PrivateData` to what callers may read.
    pub fn with_private_data(mut self, private: PrivateData) -> Self {
        self.private = private;
        self
    }

    /// What the sender of `req` may read.
    async fn privacy<T>(&self, req: &Request<T>) -> Result<private::Privacy, Status> {
        let uid = auth::identity(req)?.uid;
        private::privacy(&self.store, &self.admin_uids, self.private, uid).await
    }

    /// The tonic server to mount (behind the `Verifier` interceptor).
    pub fn into_server(self) -> AccountingServer<Self> {
        AccountingServer::new(self)
    }

    /// Whether `uid` may change the database.
    async fn is_admin(&self, uid: u32) -> Result<bool, Status> {
        if self.admin_uids.contains(&uid) {
            return Ok(true);
        }
        let store = Arc::clone(&self.store);
        let level = blocking(move || {
            // A uid without a login name cannot be a named Administrator.
            match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
                Ok(Some(user)) => store.admin_level(&user.name),
                _ => Ok(None),
            }
        })
        .await?;
        Ok(level == Some(AdminLevel::Administrator))
    }

    /// The caller's uid if it is an admin, else `permission_denied`.
    async fn require_admin<T>(&self, req: &Request<T>) -> Result<u32, Status> {
        let uid = auth::identity(req)?.uid;
        if self.is_admin(uid).await? {
            Ok(uid)
        } else {
            tracing::warn!(uid, "refused a change from a non-admin");
            Err(Status::permission_denied(ACCESS_DENIED))
        }
    }

    /// Checks permission (administrators only), decodes, runs `run` on the store and encodes
    /// the outcome.
    async fn change<M, D: Send + Sync + 'static>(
        &self,
        req: Request<M>,
        what: &'static str,
        decode: impl FnOnce(M) -> convert::Decoded<D>,
        run: ChangeFn<D>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change_in_realm(req, what, decode, None, run).await
    }

    /// [`Self::change`] that an account coordinator may also make when `realm` names the
    /// accounts the change touches and the caller coordinates them all.
    async fn change_in_realm<M, D: Send + Sync + 'static>(
        &self,
        req: Request<M>,
        what: &'static str,
        decode: impl FnOnce(M) -> convert::Decoded<D>,
        realm: Option<coord::RealmOf<D>>,
        run: ChangeFn<D>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        let (uid, domain, apply) = self.authorize(req, decode, realm).await?;
        // A change whose client gives up before it could hear the answer (the request sat in
        // a stopped daemon's socket) is told it failed: it must not be made.
        let deadline = sluice_wire::deadline::current();
        if sluice_wire::deadline::too_late(deadline, std::time::SystemTime::now()) {
            tracing::warn!(
                uid,
                what,
                "a change taken too late for its client's deadline was not made"
            );
            return Err(Status::deadline_exceeded(
                "the request reached the accounting daemon too late for its client's deadline",
            ));
        }
        let store = Arc::clone(&self.store);
        let change = blocking(move || run(&store, &domain, apply, now())).await?;
        if change.committed {
            tracing::info!(uid, what, names = ?change.names, "accounting change committed");
            self.changes.bump();
        } else {
            tracing::debug!(uid, what, names = ?change.names, "accounting change previewed");
        }
        Ok(Response::new(convert::change_reply(change)))
    }

    /// Checks the caller is authenticated and runs a read on the store.
    async fn list<T: Send + 'static, R>(
        &self,
        uid_of: Result<auth::Identity, Status>,
        read: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
        encode: impl FnOnce(T) -> R,
    ) -> Result<Response<R>, Status> {
        uid_of?;
        let store = Arc::clone(&self.store);
        let rows = blocking(move || read(&store)).await?;
        Ok(Response::new(encode(rows)))
    }
}
