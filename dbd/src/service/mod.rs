//! The `Accounting` gRPC service. It only decodes, checks permissions, calls the store on a
//! blocking thread, and encodes; the rules live in [`crate::store`].
//!
//! Callers are identified by the `Verifier` interceptor the daemon mounts in front of it.
//! Change RPCs and job-id leases need an admin: a uid in `admin_uids` (root and SlurmUser) or
//! the login name of a user with AdminLevel=Administrator. Lists and Ping are open to every
//! authenticated caller.

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
use sluice_wire::proto::{
    self,
    accounting_server::{Accounting, AccountingServer},
};
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

#[tonic::async_trait]
impl Accounting for AccountingService {
    async fn ping(
        &self,
        req: Request<proto::PingRequest>,
    ) -> Result<Response<proto::PingReply>, Status> {
        let uid = auth::identity(&req)?.uid;
        Ok(Response::new(proto::PingReply {
            version: env!("CARGO_PKG_VERSION").to_string(),
            caller_uid: uid,
            caller_is_admin: self.is_admin(uid).await?,
        }))
    }

    async fn add_clusters(
        &self,
        req: Request<proto::AddClustersRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "add clusters",
            convert::add_clusters,
            Store::add_clusters,
        )
        .await
    }

    async fn modify_clusters(
        &self,
        req: Request<proto::ModifyClustersRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "modify clusters",
            convert::modify_clusters,
            Store::modify_clusters,
        )
        .await
    }

    async fn delete_clusters(
        &self,
        req: Request<proto::DeleteClustersRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "delete clusters",
            convert::delete_clusters,
            Store::delete_clusters,
        )
        .await
    }

    async fn list_clusters(
        &self,
        req: Request<proto::ListClustersRequest>,
    ) -> Result<Response<proto::ListClustersReply>, Status> {
        let filter = convert::cluster_filter(req.get_ref().clone());
        self.list(
            auth::identity(&req),
            move |s| s.list_clusters(&filter),
            |rows| proto::ListClustersReply {
                clusters: rows.into_iter().map(convert::cluster).collect(),
            },
        )
        .await
    }

    async fn add_federations(
        &self,
        req: Request<proto::AddFederationsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "add federations",
            convert::add_federations,
            Store::add_federations,
        )
        .await
    }

    async fn modify_federations(
        &self,
        req: Request<proto::ModifyFederationsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "modify federations",
            convert::modify_federations,
            Store::modify_federations,
        )
        .await
    }

    async fn delete_federations(
        &self,
        req: Request<proto::DeleteFederationsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "delete federations",
            convert::delete_federations,
            |s, names, apply, now| s.delete_federations(names, apply, now),
        )
        .await
    }

    async fn list_federations(
        &self,
        req: Request<proto::ListFederationsRequest>,
    ) -> Result<Response<proto::ListFederationsReply>, Status> {
        let filter = convert::federation_filter(req.get_ref().clone());
        self.list(
            auth::identity(&req),
            move |s| s.list_federations(&filter),
            |rows| proto::ListFederationsReply {
                federations: rows.into_iter().map(convert::federation).collect(),
            },
        )
        .await
    }

    async fn add_accounts(
        &self,
        req: Request<proto::AddAccountsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change_in_realm(
            req,
            "add accounts",
            convert::add_accounts,
            Some(coord::add_accounts),
            Store::add_accounts,
        )
        .await
    }

    async fn modify_accounts(
        &self,
        req: Request<proto::ModifyAccountsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "modify accounts",
            convert::modify_accounts,
            Store::modify_accounts,
        )
        .await
    }

    async fn delete_accounts(
        &self,
        req: Request<proto::DeleteAccountsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "delete accounts",
            convert::delete_accounts,
            |s, names, apply, now| s.delete_accounts(names, apply, now),
        )
        .await
    }

    async fn list_accounts(
        &self,
        req: Request<proto::ListAccountsRequest>,
    ) -> Result<Response<proto::ListAccountsReply>, Status> {
        let filter = convert::account_filter(req.get_ref().clone());
        if !self.privacy(&req).await?.accounts() {
            return Err(Status::permission_denied(ACCESS_DENIED));
        }
        self.list(
            auth::identity(&req),
            move |s| s.list_accounts(&filter),
            |rows| proto::ListAccountsReply {
                accounts: rows.into_iter().map(convert::account).collect(),
            },
        )
        .await
    }

    async fn add_users(
        &self,
        req: Request<proto::AddUsersRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change_in_realm(
            req,
            "add users",
            convert::add_users,
            Some(coord::add_users),
            Store::add_users,
        )
        .await
    }

    async fn modify_users(
        &self,
        req: Request<proto::ModifyUsersRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "modify users",
            convert::modify_users,
            Store::modify_users,
        )
        .await
    }

    async fn delete_users(
        &self,
        req: Request<proto::DeleteUsersRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change_in_realm(
            req,
            "delete users",
            convert::delete_users,
            Some(coord::delete_users),
            Store::delete_users,
        )
        .await
    }

    async fn list_users(
        &self,
        req: Request<proto::ListUsersRequest>,
    ) -> Result<Response<proto::ListUsersReply>, Status> {
        let mut filter = convert::user_filter(req.get_ref().clone())?;
        let privacy = self.privacy(&req).await?;
        let visible = privacy.users(&mut filter);
        self.list(
            auth::identity(&req),
            move |s| {
                if !visible {
                    return Ok(Vec::new());
                }
                let mut rows = s.list_users(&filter)?;
                if !privacy.realm().is_empty() {
                    // A coordinator sees the users of the accounts it coordinates.
                    let in_realm = s
                        .list_associations(&crate::store::AssociationFilter {
                            accounts: privacy.realm().iter().cloned().collect(),
                            ..Default::default()
                        })?
                        .into_iter()
                        .map(|a| a.user)
                        .collect();
                    privacy.retain_users(&mut rows, &in_realm);
                }
                Ok(rows)
            },
            |rows| proto::ListUsersReply {
                users: rows.into_iter().map(convert::user).collect(),
            },
        )
        .await
    }

    async fn add_coordinators(
        &self,
        req: Request<proto::CoordinatorsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.add_coordinators_rpc(req).await
    }

    async fn delete_coordinators(
        &self,
        req: Request<proto::CoordinatorsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.delete_coordinators_rpc(req).await
    }

    async fn list_associations(
        &self,
        req: Request<proto::ListAssociationsRequest>,
    ) -> Result<Response<proto::ListAssociationsReply>, Status> {
        let mut filter = convert::association_filter(req.get_ref().clone());
        let privacy = self.privacy(&req).await?;
        let visible = privacy.associations(&mut filter);
        let m = req.get_ref();
        let window = m.with_usage.then(|| crate::store::fairshare::UsageWindow {
            now: now(),
            half_life: m.usage_half_life.max(0),
            since: m.usage_since.max(0),
        });
        self.list(
            auth::identity(&req),
            move |s| {
                if !visible {
                    return Ok(Vec::new());
                }
                let mut rows = s.list_association_shares(&filter, window)?;
                rows.retain(|r| privacy.shows_association(&r.assoc));
                Ok(rows)
            },
            |rows| proto::ListAssociationsReply {
                associations: rows.into_iter().map(convert::association_share).collect(),
            },
        )
        .await
    }

    async fn modify_assoc_limits(
        &self,
        req: Request<proto::ModifyAssocLimitsRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change_in_realm(
            req,
            "modify association limits",
            limits::modify,
            Some(limits::realm),
            Store::modify_assoc_limits,
        )
        .await
    }

    async fn add_qos(
        &self,
        req: Request<proto::AddQosRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(req, "add qos", qos::add, Store::add_qos).await
    }

    async fn modify_qos(
        &self,
        req: Request<proto::ModifyQosRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(req, "modify qos", qos::modify, Store::modify_qos)
            .await
    }

    async fn delete_qos(
        &self,
        req: Request<proto::DeleteQosRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(req, "delete qos", qos::delete, Store::delete_qos)
            .await
    }

    async fn list_qos(
        &self,
        req: Request<proto::ListQosRequest>,
    ) -> Result<Response<proto::ListQosReply>, Status> {
        let q = req.get_ref().clone();
        let window = (!q.usage_cluster.is_empty()).then(|| crate::store::fairshare::UsageWindow {
            now: now(),
            half_life: q.usage_half_life.max(0),
            since: q.usage_since.max(0),
        });
        self.list(
            auth::identity(&req),
            move |s| {
                let list = s.list_qos(&q.names, q.with_deleted)?;
                let used = match window {
                    Some(w) => s.qos_usage(&q.usage_cluster, w)?,
                    None => Default::default(),
                };
                Ok((list, used))
            },
            |(rows, used)| proto::ListQosReply {
                qos: rows
                    .into_iter()
                    .map(|e| {
                        let u = used.get(&e.qos.name).copied().unwrap_or_default();
                        proto::Qos {
                            raw_cpu_usage: u.cpu,
                            raw_mem_usage: u.mem,
                            raw_node_usage: u.node,
                            ..qos::encode(e)
                        }
                    })
                    .collect(),
            },
        )
        .await
    }

    async fn modify_assoc_qos(
        &self,
        req: Request<proto::ModifyAssocQosRequest>,
    ) -> Result<Response<proto::ChangeReply>, Status> {
        self.change(
            req,
            "modify association qos",
            qos::modify_assoc,
            Store::modify_assoc_qos,
        )
        .await
    }

    type WatchAssociationsStream =
        tokio_stream::wrappers::ReceiverStream<Result<proto::AssociationsChanged, Status>>;

    async fn watch_associations(
        &self,
        req: Request<proto::WatchAssociationsRequest>,
    ) -> Result<Response<Self::WatchAssociationsStream>, Status> {
        let uid = self.require_admin(&req).await?;
        tracing::debug!(
            uid,
            cluster = req.get_ref().cluster,
            "controller watches associations"
        );
        Ok(Response::new(self.changes.stream()))
    }

    async fn lease_job_ids(
        &self,
        req: Request<proto::LeaseJobIdsRequest>,
    ) -> Result<Response<proto::LeaseJobIdsReply>, Status> {
        let uid = self.require_admin(&req).await?;
        let m = req.into_inner();
        let store = Arc::clone(&self.store);
        let cluster = m.cluster.clone();
        let ranges = blocking(move || store.lease_job_ids(&m.cluster, m.count, &m.in_use)).await?;
        tracing::info!(uid, cluster, ranges = ?ranges, "leased job ids");
        Ok(Response::new(proto::LeaseJobIdsReply {
            ranges: ranges.into_iter().map(convert::job_id_range).collect(),
        }))
    }
}
