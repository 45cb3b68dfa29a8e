//! The controller's federation client: the tasks that talk to the dbd's `FedArbiter` on the
//! core's behalf. The rules live in the pure core ([`crate::core::federation`]); these tasks only
//! call the dbd and feed its answers back into the core's handlers through the [`CoreHandle`].
//!
//! - [`register`]: registration at start (host, port, rpc version, start time) and the
//!   `WatchFederation` stream that keeps the core's view current;
//! - [`events`]: this cluster's event log, applied in batches; the cursor is committed with
//!   the changes, then the events are acknowledged;
//! - [`requests`]: what the core asks ([`FedRequest`]): the start (lock and commit in one
//!   request, then launch or release), run ends, offers, withdrawals, refusals;
//! - [`route`]: the `Controller` service's federated paths (submission, cancel, sibling
//!   removal, updates, requeue, forwarding to the cluster that runs a job); [`commands`]
//!   splits scancel/scontrol requests between those paths and the usual handlers;
//! - [`filter`]: `scancel` by filters resolved to the matching federated jobs of every member;
//! - [`convert`]: wire ↔ core.
//!
//! Nothing here waits on the origin controller: everything goes through the dbd, so a job's
//! siblings start while its origin is down, and the origin catches up from its event log.
//!
//! The runtime does not know this client: [`spawn`] takes what the runtime's
//! [`FederationPort`](crate::runtime::federation::FederationPort) hands out, and the running
//! [`FedTasks`] are given back to the runtime as its
//! [`FederationClient`](crate::runtime::federation::FederationClient) (the server's wiring,
//! `service::server`, connects the two).

pub mod commands;
pub mod convert;
pub mod events;
pub mod filter;
pub mod register;
pub mod requests;
pub mod route;

use crate::core::federation::FedRequest;
use crate::runtime::CoreHandle;
use crate::runtime::federation::FederationClient;
use sluice_wire::auth::Key;
use sluice_wire::client::FedArbiterClient;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinHandle;

/// The protocol version sent at registration.
pub const RPC_VERSION: u32 = 1;
/// First and longest wait between attempts to reach the dbd.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(200), Duration::from_secs(5));

/// What the federation client needs to start.
pub struct FedSetup {
    /// This cluster's name.
    pub cluster: String,
    /// Where this controller listens (registered at the dbd, shown to siblings).
    pub control_host: String,
    /// Its port.
    pub control_port: u32,
    /// When this controller process started (unix seconds): a new value releases the start
    /// locks an earlier process held.
    pub start_time: i64,
    /// A signed client of the dbd's `FedArbiter`.
    pub client: FedArbiterClient,
    /// The key shared by the daemons (to forward a user's request to another controller).
    pub key: Key,
}

/// What the service needs to take federated paths. Cheap to clone.
#[derive(Clone)]
pub struct FedHandle {
    pub(crate) client: FedArbiterClient,
    pub(crate) cluster: String,
    pub(crate) key: Key,
}

impl FedHandle {
    /// This cluster's name.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }
}

/// The running client's tasks; dropping it stops them.
pub struct FedTasks {
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for FedTasks {
    fn drop(&mut self) {
        self.stop();
    }
}

impl FederationClient for FedTasks {
    fn stop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Starts the federation client for the core behind `core`; `reqs` carries what the core asks
/// (after each commit). Call from within a tokio runtime.
pub fn spawn(
    setup: FedSetup,
    core: CoreHandle,
    reqs: UnboundedReceiver<FedRequest>,
) -> (FedHandle, FedTasks) {
    let handle = FedHandle {
        client: setup.client.clone(),
        cluster: setup.cluster.clone(),
        key: setup.key.clone(),
    };
    let (sender, executor) = requests::Executor::new(handle.clone(), core.clone());
    let tasks = vec![
        tokio::spawn(register::run(
            handle.clone(),
            core.clone(),
            setup,
            sender.clone(),
        )),
        tokio::spawn(events::run(handle.clone(), core.clone())),
        tokio::spawn(executor.run(reqs)),
    ];
    (handle, FedTasks { tasks })
}

/// Exponential backoff between attempts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff(Duration);

impl Backoff {
    pub(crate) fn new() -> Self {
        Self(BACKOFF.0)
    }

    /// Waits, then lengthens the next wait.
    pub(crate) async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(BACKOFF.1);
    }

    pub(crate) fn reset(&mut self) {
        self.0 = BACKOFF.0;
    }
}
