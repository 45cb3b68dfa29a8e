//! The `Nonstop` gRPC service (failure management, Slurm's `slurmctld/nonstop`): decodes each
//! request, runs it on the core ([`crate::core::nonstop`]) and encodes the allocation or the
//! event stream. Served on the controller's port, and on `nonstop.conf`'s `Port` when given.
//!
//! `ReadTimeout` bounds how long a request may take to be served, `WriteTimeout` how long one
//! event may wait for a slow `WatchJob` client (which is then dropped). Without the plugin
//! every call answers UNIMPLEMENTED.

use super::{ControllerService, Res};
use crate::core::nonstop::{
    self as ns, EventKind, Health, NonstopView, on_drain_node, on_drop_node, on_extend_time,
    on_job_nodes, on_replace_node,
};
use crate::core::{Caller, SimTime};
use crate::error::CtldError;
use crate::runtime::subscribers;
use sluice_vocab::FedJobId;
use sluice_wire::proto::nonstop_server::Nonstop;
use sluice_wire::proto::{
    DrainNodeRequest, ExtendTimeRequest, NodeChangeRequest, NonstopAllocation, NonstopEvent,
    NonstopEventKind, NonstopJobRequest, NonstopNode, NonstopNodeState,
};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

/// The allocation on the wire.
pub fn allocation(v: &NonstopView) -> NonstopAllocation {
    NonstopAllocation {
        job_id: v.job.get(),
        node_list: v.node_list.clone(),
        nodes: v
            .nodes
            .iter()
            .map(|n| NonstopNode {
                name: n.name.clone(),
                cpus: n.cpus,
                state: match n.health {
                    Health::Ok => NonstopNodeState::Ok,
                    Health::Failed => NonstopNodeState::Failed,
                    Health::Failing => NonstopNodeState::Failing,
                }
                .into(),
            })
            .collect(),
        cpus_per_node: v.cpus_per_node.clone(),
        time_limit_minutes: v.time_limit_min,
        extend_available_minutes: v.extend_available_min,
        spares_used: v.spares_used,
        spares_free: v.spares_free,
    }
}

/// An event on the wire.
pub fn event(e: &ns::NonstopEvent) -> NonstopEvent {
    NonstopEvent {
        kind: match e.kind {
            EventKind::Failed => NonstopEventKind::Failed,
            EventKind::Failing => NonstopEventKind::Failing,
            EventKind::Replaced => NonstopEventKind::Replaced,
            EventKind::Dropped => NonstopEventKind::Dropped,
            EventKind::Recovered => NonstopEventKind::Recovered,
            EventKind::TimeExtended => NonstopEventKind::TimeExtended,
            EventKind::JobEnded => NonstopEventKind::JobEnded,
        }
        .into(),
        node: e.node.clone(),
        replacement: e.replacement.clone().unwrap_or_default(),
        time: i64::try_from(e.at.secs()).unwrap_or(i64::MAX),
        allocation: Some(allocation(&e.view)),
    }
}

fn job_id(raw: u32) -> Result<FedJobId, Status> {
    FedJobId::from_raw(raw).map_err(|_| CtldError::InvalidJobId.into())
}

impl ControllerService {
    /// The caller of a failure management request, once the plugin is known to be on; and
    /// `ReadTimeout`.
    fn nonstop_caller<T>(&self, req: &Request<T>) -> Result<(Caller, Duration), Status> {
        let Some(conf) = &self.conf.nonstop else {
            return Err(CtldError::NonstopNotConfigured.into());
        };
        let read = Duration::from_millis(u64::from(conf.read_timeout_ms));
        Ok((self.caller(req)?, read))
    }

    /// Runs `f` on the core within `ReadTimeout`.
    async fn nonstop_call(
        &self,
        read: Duration,
        f: impl FnOnce(&mut crate::runtime::Ctx<'_>) -> Result<NonstopView, CtldError> + Send + 'static,
    ) -> Res<NonstopAllocation> {
        match tokio::time::timeout(read, self.core.call(f)).await {
            Ok(r) => Ok(Response::new(allocation(&r??))),
            Err(_) => Err(Status::deadline_exceeded(format!(
                "failure management request not served within {} ms (ReadTimeout)",
                read.as_millis()
            ))),
        }
    }
}

#[tonic::async_trait]
impl Nonstop for ControllerService {
    type WatchJobStream = ReceiverStream<Result<NonstopEvent, Status>>;

    async fn job_nodes(&self, req: Request<NonstopJobRequest>) -> Res<NonstopAllocation> {
        let (caller, read) = self.nonstop_caller(&req)?;
        let id = job_id(req.into_inner().job_id)?;
        self.nonstop_call(read, move |cx| on_job_nodes(cx.core, caller, id))
            .await
    }

    async fn replace_node(&self, req: Request<NodeChangeRequest>) -> Res<NonstopAllocation> {
        let (caller, read) = self.nonstop_caller(&req)?;
        let r = req.into_inner();
        let id = job_id(r.job_id)?;
        self.nonstop_call(read, move |cx| {
            on_replace_node(cx.core, cx.out, cx.now, caller, id, &r.node)
        })
        .await
    }

    async fn drop_node(&self, req: Request<NodeChangeRequest>) -> Res<NonstopAllocation> {
        let (caller, read) = self.nonstop_caller(&req)?;
        let r = req.into_inner();
        let id = job_id(r.job_id)?;
        self.nonstop_call(read, move |cx| {
            on_drop_node(cx.core, cx.out, cx.now, caller, id, &r.node)
        })
        .await
    }

    async fn drain_node(&self, req: Request<DrainNodeRequest>) -> Res<NonstopAllocation> {
        let (caller, read) = self.nonstop_caller(&req)?;
        let r = req.into_inner();
        let id = job_id(r.job_id)?;
        let user = self.users.name(caller.uid);
        self.nonstop_call(read, move |cx| {
            on_drain_node(
                cx.core, cx.out, cx.now, caller, &user, id, &r.node, &r.reason,
            )
        })
        .await
    }

    async fn extend_time(&self, req: Request<ExtendTimeRequest>) -> Res<NonstopAllocation> {
        let (caller, read) = self.nonstop_caller(&req)?;
        let r = req.into_inner();
        let id = job_id(r.job_id)?;
        self.nonstop_call(read, move |cx| {
            on_extend_time(cx.core, cx.out, cx.now, caller, id, r.minutes)
        })
        .await
    }

    async fn watch_job(&self, req: Request<NonstopJobRequest>) -> Res<Self::WatchJobStream> {
        let (caller, read) = self.nonstop_caller(&req)?;
        let id = job_id(req.into_inner().job_id)?;
        let write = self
            .conf
            .nonstop
            .as_ref()
            .map_or(Duration::from_secs(2), |c| {
                Duration::from_millis(u64::from(c.write_timeout_ms))
            });
        let (tx, mut rx) = mpsc::channel(subscribers::QUEUE);
        let subscribe = self.core.query(move |cx| {
            let view = on_job_nodes(cx.core, caller, id)?;
            // First the nodes that already failed or are failing, then each change.
            for n in view.nodes.iter().filter(|n| n.health != Health::Ok) {
                let kind = match n.health {
                    Health::Failing => EventKind::Failing,
                    _ => EventKind::Failed,
                };
                let _ = tx.try_send(ns::NonstopEvent {
                    kind,
                    node: n.name.clone(),
                    replacement: None,
                    at: cx.now,
                    view: view.clone(),
                });
            }
            cx.watch_nonstop(id, tx);
            Ok::<SimTime, CtldError>(cx.now)
        });
        match tokio::time::timeout(read, subscribe).await {
            Ok(r) => r??,
            Err(_) => {
                return Err(Status::deadline_exceeded(
                    "failure management subscription not served in time (ReadTimeout)",
                ));
            }
        };
        let (out_tx, out_rx) = mpsc::channel(16);
        tokio::spawn(async move {
            while let Some(e) = rx.recv().await {
                let sent = tokio::time::timeout(write, out_tx.send(Ok(event(&e)))).await;
                if !matches!(sent, Ok(Ok(()))) {
                    tracing::info!(target: "sluice::nonstop", job = %id,
                        "event subscriber dropped: not reading within WriteTimeout, or gone");
                    break;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(out_rx)))
    }
}
