//! The `FedArbiter` gRPC service: the controllers' side of the federation (registration and
//! the federation view, federated job requests, the start lock, the per-cluster event log).
//! It only decodes, checks the caller, calls the store on a blocking thread and encodes; the
//! rules live in [`crate::store::fed`]. The two server streams live in [`streams`]; the
//! submission path's writes (`SubmitFedJob`, `OfferFedJob`) are group-committed ([`group`]).
//!
//! Every RPC needs an admin (the controllers run as root or the SlurmUser), except
//! `GetFederationView` and `GetFedJob`, open to every authenticated caller.

mod convert;
mod group;
mod streams;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use sluice_wire::auth;
use sluice_wire::proto::{
    self,
    fed_arbiter_server::{FedArbiter, FedArbiterServer},
};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::AccountingService;
use crate::store::Store;
use crate::store::fed::error::FedError;
use crate::store::fed::group::{FedWrite, RunEnd, start_outcome};
use crate::store::fed::types::FedView;

/// The dbd's clock (the only place this service reads it).
fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Runs a federation store call on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, FedError> + Send + 'static,
) -> Result<T, Status> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(Status::from),
        Err(e) => {
            tracing::error!(error = %e, "federation store task failed");
            Err(Status::internal("store task failed"))
        }
    }
}

/// Clusters with an open event stream to this dbd (how many each), for the views'
/// `connected` flags.
#[derive(Debug, Default)]
pub(crate) struct Connected(Mutex<BTreeMap<String, usize>>);

impl Connected {
    fn is_connected(&self, cluster: &str) -> bool {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(cluster).is_some_and(|n| *n > 0)
    }

    fn add(&self, cluster: &str, delta: isize) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = map.entry(cluster.to_string()).or_default();
        *n = n.saturating_add_signed(delta);
        if *n == 0 {
            map.remove(cluster);
        }
    }
}

/// The federation service.
#[derive(Debug, Clone)]
pub struct FederationService {
    accounting: AccountingService,
    connected: Arc<Connected>,
    /// Groups concurrent submissions and offers into one transaction.
    writer: group::GroupWriter,
    /// Set when the daemon shuts down: the endless streams end, so the server can drain.
    stop: Arc<tokio::sync::watch::Sender<bool>>,
}

impl FederationService {
    /// A service over `store`; `admin_uids` (root and the SlurmUser) are the controllers.
    pub fn new(store: Arc<Store>, admin_uids: Vec<u32>) -> Self {
        Self {
            writer: group::GroupWriter::new(Arc::clone(&store)),
            accounting: AccountingService::new(store, admin_uids),
            connected: Arc::new(Connected::default()),
            stop: Arc::new(tokio::sync::watch::Sender::new(false)),
        }
    }

    /// Ends every open stream (at shutdown: a graceful stop waits for open streams).
    pub fn stop_streams(&self) {
        self.stop.send_replace(true);
    }

    /// The tonic server to mount (behind the `Verifier` interceptor).
    pub fn into_server(self) -> FedArbiterServer<Self> {
        FedArbiterServer::new(self)
    }

    fn store(&self) -> Arc<Store> {
        Arc::clone(&self.accounting.store)
    }

    fn wire_view(&self, v: FedView) -> proto::FederationView {
        convert::view(v, |c| self.connected.is_connected(c))
    }

    /// Finishes draining clusters every `period` until the returned task is aborted (DRAIN →
    /// DRAINED, DRAIN+REMOVE → leaves), for clusters that had no federated job to wait for.
    pub fn spawn_settler(&self, period: std::time::Duration) -> tokio::task::JoinHandle<()> {
        let store = self.store();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                let s = Arc::clone(&store);
                if let Err(status) = blocking(move || s.fed_settle(now())).await {
                    tracing::warn!(%status, "settling draining clusters failed");
                }
            }
        })
    }

    /// Checks that the caller is an admin, then runs `f` on the store.
    async fn admin_call<M, T: Send + 'static>(
        &self,
        req: Request<M>,
        f: impl FnOnce(&Store, M, i64) -> Result<T, FedError> + Send + 'static,
    ) -> Result<T, Status>
    where
        M: Send + 'static,
    {
        self.accounting.require_admin(&req).await?;
        let store = self.store();
        let m = req.into_inner();
        blocking(move || f(&store, m, now())).await
    }
}

type JobReply = Result<Response<proto::FedJobInfo>, Status>;

fn job_reply(j: crate::store::fed::types::FedJob) -> JobReply {
    Ok(Response::new(convert::job(j)))
}

#[tonic::async_trait]
impl FedArbiter for FederationService {
    async fn register(
        &self,
        req: Request<proto::FedRegisterRequest>,
    ) -> Result<Response<proto::FederationView>, Status> {
        let view = self
            .admin_call(req, |s, m, now| {
                s.fed_register(&convert::registration(m), now)
            })
            .await?;
        tracing::info!(cluster = %view.cluster, federation = %view.federation, "controller registered");
        Ok(Response::new(self.wire_view(view)))
    }

    type WatchFederationStream = ReceiverStream<Result<proto::FederationView, Status>>;

    async fn watch_federation(
        &self,
        req: Request<proto::FedClusterRequest>,
    ) -> Result<Response<Self::WatchFederationStream>, Status> {
        self.accounting.require_admin(&req).await?;
        let cluster = req.into_inner().cluster;
        Ok(Response::new(streams::watch(self.clone(), cluster)))
    }

    async fn get_federation_view(
        &self,
        req: Request<proto::FedClusterRequest>,
    ) -> Result<Response<proto::FederationView>, Status> {
        auth::identity(&req)?;
        let store = self.store();
        let cluster = req.into_inner().cluster;
        let view = blocking(move || store.fed_view(&cluster)).await?;
        Ok(Response::new(self.wire_view(view)))
    }

    async fn submit_fed_job(&self, req: Request<proto::FedSubmitRequest>) -> JobReply {
        self.accounting.require_admin(&req).await?;
        let write = FedWrite::Submit(convert::submit(req.into_inner()));
        let job = self.writer.write(write).await?;
        tracing::debug!(job = job.job_id, origin = %job.origin, viable = ?job.viable, "federated job recorded");
        job_reply(job)
    }

    async fn withdraw_fed_submission(&self, req: Request<proto::FedSubmitRequest>) -> JobReply {
        let job = self
            .admin_call(req, |s, m, now| {
                s.fed_withdraw_submission(&convert::submit(m), now)
            })
            .await?;
        tracing::info!(job = job.job_id, origin = %job.origin, "federated submission withdrawn");
        job_reply(job)
    }

    async fn offer_fed_job(&self, req: Request<proto::FedOfferRequest>) -> JobReply {
        self.accounting.require_admin(&req).await?;
        let m = req.into_inner();
        let write = FedWrite::Offer {
            job_id: m.job_id,
            caller: m.cluster,
            desc: m.desc,
        };
        job_reply(self.writer.write(write).await?)
    }

    async fn withdraw_fed_job(&self, req: Request<proto::FedJobRequest>) -> JobReply {
        job_reply(
            self.admin_call(req, |s, m, now| s.fed_withdraw(m.job_id, &m.cluster, now))
                .await?,
        )
    }

    async fn acquire_start_lock(
        &self,
        req: Request<proto::StartLockRequest>,
    ) -> Result<Response<proto::StartLockReply>, Status> {
        let outcome = self
            .admin_call(req, |s, m, now| {
                s.fed_acquire_start_lock(m.job_id, &m.cluster, m.lease_secs, now)
            })
            .await?;
        Ok(Response::new(convert::lock_reply(outcome)))
    }

    async fn commit_start(
        &self,
        req: Request<proto::CommitStartRequest>,
    ) -> Result<Response<proto::CommitStartReply>, Status> {
        let outcome = self
            .admin_call(req, |s, m, now| {
                s.fed_commit_start(m.job_id, &m.cluster, m.token, now)
            })
            .await?;
        Ok(Response::new(convert::commit_reply(outcome)))
    }

    async fn start_fed_job(
        &self,
        req: Request<proto::FedStartRequest>,
    ) -> Result<Response<proto::CommitStartReply>, Status> {
        self.accounting.require_admin(&req).await?;
        let m = req.into_inner();
        let write = FedWrite::Start {
            job_id: m.job_id,
            caller: m.cluster,
            offer: m.offer,
        };
        let outcome = start_outcome(self.writer.write_answer(write).await?)?;
        Ok(Response::new(convert::commit_reply(outcome)))
    }

    async fn release_start_lock(
        &self,
        req: Request<proto::ReleaseStartLockRequest>,
    ) -> Result<Response<proto::ReleaseStartLockReply>, Status> {
        let released = self
            .admin_call(req, |s, m, now| {
                s.fed_release_start_lock(m.job_id, &m.cluster, m.token, now)
            })
            .await?;
        Ok(Response::new(proto::ReleaseStartLockReply { released }))
    }

    async fn cancel_fed_job(
        &self,
        req: Request<proto::FedCancelRequest>,
    ) -> Result<Response<proto::FedCancelReply>, Status> {
        let outcome = self
            .admin_call(req, |s, m, now| {
                s.fed_cancel(m.job_id, &m.cluster, m.requester_uid, now)
            })
            .await?;
        Ok(Response::new(convert::cancel_reply(outcome)))
    }

    async fn remove_sibling(&self, req: Request<proto::RemoveSiblingRequest>) -> JobReply {
        job_reply(
            self.admin_call(req, |s, m, now| {
                s.fed_remove_sibling(m.job_id, &m.cluster, &m.sibling, now)
            })
            .await?,
        )
    }

    async fn update_fed_job(&self, req: Request<proto::FedUpdateRequest>) -> JobReply {
        job_reply(
            self.admin_call(req, |s, m, now| s.fed_update(&convert::update(m), now))
                .await?,
        )
    }

    async fn requeue_fed_job(
        &self,
        req: Request<proto::FedRequeueRequest>,
    ) -> Result<Response<proto::FedRequeueReply>, Status> {
        let running_on = self
            .admin_call(req, |s, m, now| {
                s.fed_requeue(m.job_id, &m.cluster, m.hold, now)
            })
            .await?;
        Ok(Response::new(proto::FedRequeueReply { running_on }))
    }

    async fn fed_job_ended(&self, req: Request<proto::FedJobEndedRequest>) -> JobReply {
        self.accounting.require_admin(&req).await?;
        let m = req.into_inner();
        let write = FedWrite::Ended {
            job_id: m.job_id,
            caller: m.cluster,
            end: RunEnd {
                state: m.state,
                exit_code: m.exit_code,
                requeue: convert::requeue_mode(m.requeue),
            },
        };
        job_reply(self.writer.write(write).await?)
    }

    async fn reject_sibling(&self, req: Request<proto::FedJobRequest>) -> JobReply {
        job_reply(
            self.admin_call(req, |s, m, now| {
                s.fed_reject_sibling(m.job_id, &m.cluster, now)
            })
            .await?,
        )
    }

    async fn get_fed_job(&self, req: Request<proto::FedJobRequest>) -> JobReply {
        auth::identity(&req)?;
        let store = self.store();
        let m = req.into_inner();
        job_reply(blocking(move || store.fed_job(m.job_id, &m.cluster)).await?)
    }

    type EventsStream = ReceiverStream<Result<proto::FedEvent, Status>>;

    async fn events(
        &self,
        req: Request<proto::FedEventsRequest>,
    ) -> Result<Response<Self::EventsStream>, Status> {
        self.accounting.require_admin(&req).await?;
        let m = req.into_inner();
        // Fail now (not inside the stream) for an unknown cluster.
        let store = self.store();
        let cluster = m.cluster.clone();
        blocking(move || store.fed_events(&cluster, m.after, 0)).await?;
        Ok(Response::new(streams::events(
            self.clone(),
            m.cluster,
            m.after,
        )))
    }

    async fn ack_events(
        &self,
        req: Request<proto::FedAckRequest>,
    ) -> Result<Response<proto::FedAckReply>, Status> {
        let acked = self
            .admin_call(req, |s, m, _| s.fed_ack_events(&m.cluster, m.seq))
            .await?;
        Ok(Response::new(proto::FedAckReply { acked }))
    }
}
