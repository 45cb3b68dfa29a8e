//! The `Accounting` trait's RPCs, one per sacctmgr action (and Ping, job-id leases): each
//! names its decoder, its store call and its permission rule; the shared steps are
//! [`AccountingService`]'s (`change`, `change_in_realm`, `list`).

use std::sync::Arc;

use sluice_wire::auth;
use sluice_wire::proto::{self, accounting_server::Accounting};
use tonic::{Request, Response, Status};

use super::{ACCESS_DENIED, AccountingService, blocking, convert, coord, limits, now, qos};
use crate::store::Store;

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
