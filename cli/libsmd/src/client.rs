//! [`Client`]: the blocking API over the controller's `Nonstop` service. It owns a small
//! runtime (one worker thread, so an event stream keeps flowing while the caller does other
//! calls) and a signed channel to the first address of the [`Endpoint`] that answers.

use std::sync::Arc;

use sluice_wire::auth::Signer;
use sluice_wire::client::{SignedChannel, connect_bounded};
use sluice_wire::proto::nonstop_client::NonstopClient;
use sluice_wire::proto::{
    DrainNodeRequest, ExtendTimeRequest, NodeChangeRequest, NonstopEvent, NonstopJobRequest,
};
use tokio::runtime::Runtime;

use crate::endpoint::Endpoint;
use crate::error::SmdError;
use crate::model::{Allocation, Event, EventKind};

/// A connection to the failure management service. Calls block until the reply (each bounded
/// by `MessageTimeout`; an event stream only until it starts). Being blocking, it is not for use
/// on an async runtime's thread: call it from plain threads (or `spawn_blocking`).
#[derive(Debug)]
pub struct Client {
    runtime: Arc<Runtime>,
    rpc: NonstopClient<SignedChannel>,
}

/// A job's event stream ([`Client::subscribe`]); [`Subscription::next`] blocks for the next one.
#[derive(Debug)]
pub struct Subscription {
    runtime: Arc<Runtime>,
    stream: tonic::Streaming<NonstopEvent>,
    ended: bool,
}

impl Client {
    /// Connects to the cluster `SLURM_CONF` names (see [`Endpoint::from_env`]).
    pub fn from_env() -> Result<Self, SmdError> {
        Self::connect(&Endpoint::from_env()?)
    }

    /// Connects to the first of `endpoint`'s addresses that answers, signing as the caller.
    pub fn connect(endpoint: &Endpoint) -> Result<Self, SmdError> {
        let signer = Signer::for_caller_with(&endpoint.conf_dir, &endpoint.auth)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("smd")
            .enable_all()
            .build()
            .map_err(|e| SmdError::Connect {
                host: String::new(),
                port: 0,
                reason: format!("cannot start the client runtime: {e}"),
            })?;
        let mut last = None;
        for (host, port) in &endpoint.targets {
            let connected = runtime.block_on(connect_bounded(
                host,
                *port,
                signer.clone(),
                endpoint.timeout,
            ));
            match connected {
                Ok(channel) => {
                    return Ok(Self {
                        runtime: Arc::new(runtime),
                        rpc: NonstopClient::new(channel),
                    });
                }
                Err(e) => {
                    last = Some(SmdError::Connect {
                        host: host.clone(),
                        port: *port,
                        reason: root_cause(&e),
                    });
                }
            }
        }
        Err(last.unwrap_or_else(|| SmdError::BadInput("no controller address".to_string())))
    }

    /// The job's allocation and which of its nodes failed or are failing.
    pub fn job_nodes(&self, job_id: u32) -> Result<Allocation, SmdError> {
        let mut rpc = self.rpc.clone();
        let reply = self
            .runtime
            .block_on(rpc.job_nodes(NonstopJobRequest { job_id }))?;
        Ok(reply.into_inner().into())
    }

    /// Replaces `node` of the job by a spare; `Refused` ("Failed to replace the node") when
    /// none is free.
    pub fn replace_node(&self, job_id: u32, node: &str) -> Result<Allocation, SmdError> {
        let mut rpc = self.rpc.clone();
        let request = NodeChangeRequest {
            job_id,
            node: node.to_string(),
        };
        let reply = self.runtime.block_on(rpc.replace_node(request))?;
        Ok(reply.into_inner().into())
    }

    /// Removes `node` from the job's allocation.
    pub fn drop_node(&self, job_id: u32, node: &str) -> Result<Allocation, SmdError> {
        let mut rpc = self.rpc.clone();
        let request = NodeChangeRequest {
            job_id,
            node: node.to_string(),
        };
        let reply = self.runtime.block_on(rpc.drop_node(request))?;
        Ok(reply.into_inner().into())
    }

    /// Drains `node` of the job's allocation with `reason`; it becomes failing.
    pub fn drain_node(
        &self,
        job_id: u32,
        node: &str,
        reason: &str,
    ) -> Result<Allocation, SmdError> {
        let mut rpc = self.rpc.clone();
        let request = DrainNodeRequest {
            job_id,
            node: node.to_string(),
            reason: reason.to_string(),
        };
        let reply = self.runtime.block_on(rpc.drain_node(request))?;
        Ok(reply.into_inner().into())
    }

    /// Extends the job's time limit by `minutes`.
    pub fn extend_time(&self, job_id: u32, minutes: u32) -> Result<Allocation, SmdError> {
        let mut rpc = self.rpc.clone();
        let reply = self
            .runtime
            .block_on(rpc.extend_time(ExtendTimeRequest { job_id, minutes }))?;
        Ok(reply.into_inner().into())
    }

    /// Subscribes to the job's node events: first its current failed and failing nodes, then
    /// each change until the job ends.
    pub fn subscribe(&self, job_id: u32) -> Result<Subscription, SmdError> {
        let mut rpc = self.rpc.clone();
        let reply = self
            .runtime
            .block_on(rpc.watch_job(NonstopJobRequest { job_id }))?;
        Ok(Subscription {
            runtime: self.runtime.clone(),
            stream: reply.into_inner(),
            ended: false,
        })
    }
}

impl Subscription {
    /// Blocks for the next event; [`SmdError::StreamEnded`] once the stream is over (after the
    /// job's `JobEnded` event, or when the controller closed it).
    pub fn next_event(&mut self) -> Result<Event, SmdError> {
        if self.ended {
            return Err(SmdError::StreamEnded);
        }
        match self.runtime.block_on(self.stream.message()) {
            Ok(Some(message)) => {
                let event = Event::from(message);
                self.ended = event.kind == EventKind::JobEnded;
                Ok(event)
            }
            Ok(None) => {
                self.ended = true;
                Err(SmdError::StreamEnded)
            }
            Err(status) => {
                self.ended = true;
                Err(status.into())
            }
        }
    }
}

/// The innermost error's text ("Connection refused"), without the OS error number.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let text = cur.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
