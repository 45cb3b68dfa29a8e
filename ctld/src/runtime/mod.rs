//! The controller's runtime around the pure core: one thread owns the [`Core`] and takes
//! requests from a channel; everything else (gRPC handlers, node-command senders, the lease
//! fetcher) talks to it through a [`CoreHandle`].
//!
//! The loop ([`core_loop`]) drains whatever is queued, runs each request against the core,
//! then commits ONE store transaction for the batch (group commit). Only after that commit does
//! it answer the callers and send node commands, so nothing is acknowledged or launched that a
//! `kill -9` could lose. A one-second tick (the only place the real clock is read) runs the
//! core's timers and a scheduling pass.
//!
//! - [`batch`]: the outbox a batch collects into, and what waits for its commit;
//! - [`dispatch`]: node commands to node daemons, one ordered queue per node, with retries;
//! - [`leases`]: job ids: leases from the accounting daemon, or the local counter without one;
//! - [`waiters`]: `srun` allocations waiting for their job to start; [`subscribers`]: clients
//!   following a job's failure management events;
//! - [`persist`]: the store behind the group commit;
//! - [`admins`]: the accounting daemon's administrators, fetched periodically;
//! - [`programs`]: power save programs (Resume/Suspend/ResumeFailProgram), run asynchronously;
//!   [`ctld_scripts`]: `EpilogSlurmctld`, likewise;
//! - [`reconfigure`]: `scontrol reconfigure`, slurm.conf read again and applied to the core;
//! - [`federation`]: the port a federation client connects to (the runtime does not know it).

pub mod admins;
pub mod assoc_watch;
pub mod assocs;
pub mod batch;
mod core_loop;
pub mod ctld_scripts;
pub mod dispatch;
pub mod fairshare;
pub mod federation;
pub mod leases;
pub mod persist;
pub mod programs;
pub mod qos;
pub mod reconfigure;
pub mod subscribers;
pub mod waiters;

use crate::conf::CtldConf;
use crate::core::{Core, SimTime};
use batch::Batch;
use sluice_vocab::FedJobId;
use sluice_wire::auth::Key;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::thread::JoinHandle;
use tokio::sync::oneshot;
use waiters::Waiters;

pub use core_loop::{RuntimeError, start, start_with};

/// What the runtime needs besides the configuration.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The cluster's configuration.
    pub conf: CtldConf,
    /// The key shared with node daemons and the accounting daemon.
    pub key: Key,
    /// `host:port` where node daemons reach this controller (sent with each launch).
    pub ctld_addr: String,
}

/// Where each node daemon listens, as it registered (else as configured).
pub type NodeAddrs = Arc<RwLock<HashMap<String, (String, u16)>>>;

/// What a request sees while it runs on the core's thread.
pub struct Ctx<'a> {
    /// The core.
    pub core: &'a mut Core,
    /// The batch's outbox: node commands, accounting records and save hints.
    pub out: &'a mut Batch,
    /// The batch's time.
    pub now: SimTime,
    pub(crate) waiters: &'a mut Waiters,
    pub(crate) subscribers: &'a mut subscribers::Subscribers,
    pub(crate) addrs: &'a NodeAddrs,
    pub(crate) accounting: bool,
    /// The pass the batch asks for so far (the requests' kicks, raised by [`Ctx::pass_after`]).
    pub(crate) kick: &'a mut Kick,
}

impl Ctx<'_> {
    /// Asks for at least pass `kick` after this batch: a request posted with a narrow kick
    /// (the pass over new jobs) widens it when what it did turns out to change more.
    pub(crate) fn pass_after(&mut self, kick: Kick) {
        *self.kick = (*self.kick).max(kick);
    }

    /// Reports the progress of allocation `job` on `events` until it starts or fails (with
    /// `follow_end`, until it ends).
    pub fn watch_allocation(
        &mut self,
        job: FedJobId,
        events: waiters::EventSender,
        follow_end: bool,
    ) {
        self.waiters.add(job, events, follow_end);
    }

    /// Sends job `job`'s failure management events to `events` from the next commit on, until
    /// the job ends.
    pub fn watch_nonstop(&mut self, job: FedJobId, events: subscribers::EventSender) {
        self.subscribers.add(job, events);
    }

    /// Records where node `name`'s daemon listens (from its registration).
    pub fn set_node_addr(&mut self, name: &str, addr: String, port: u16) {
        if let Ok(mut map) = self.addrs.write() {
            map.insert(name.to_string(), (addr, port));
        }
    }

    /// Where node `name`'s daemon listens.
    pub fn node_addr(&self, name: &str) -> Option<(String, u16)> {
        node_addr(self.core, self.addrs, name)
    }

    /// Whether accounting records are kept (an accounting daemon is configured).
    pub fn accounting(&self) -> bool {
        self.accounting
    }
}

/// Where node `name`'s daemon listens: as registered, else as configured.
pub(crate) fn node_addr(core: &Core, addrs: &NodeAddrs, name: &str) -> Option<(String, u16)> {
    if let Some(a) = addrs.read().ok().and_then(|m| m.get(name).cloned()) {
        return Some(a);
    }
    core.node(name).map(|n| (n.addr.clone(), n.port))
}

/// A request run on the core's thread; it returns what to do once the batch's commit is done
/// or failed.
pub(crate) type Job = Box<dyn FnOnce(&mut Ctx<'_>) -> batch::Reply + Send>;

/// Messages to the core's thread.
pub(crate) enum Msg {
    /// Run a request; `kick` says which scheduling pass it asks for after the batch.
    Call { job: Job, kick: Kick },
    /// Leased job ids arrived from the accounting daemon.
    LeaseGranted(Vec<(u32, u32)>),
    /// The lease request failed; try again later.
    LeaseFailed,
    /// A batch launch (of run `run`, the requeue count it was launched with) could not be
    /// delivered to its node.
    LaunchFailed {
        job: FedJobId,
        node: String,
        run: u32,
    },
    /// Commit what is pending and stop.
    Shutdown,
}

/// The scheduling pass a request asks for after its batch; a batch runs the largest asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kick {
    /// None: the request only reads (or changes nothing a pass looks at).
    None,
    /// The request only queued new jobs: the pass considers just the batch's new jobs
    /// (`core::fresh`), which is what a whole pass would do with them.
    Submitted,
    /// A pass over the whole queue.
    Full,
}

/// The caller's side of the core's channel. Cheap to clone.
#[derive(Clone)]
pub struct CoreHandle {
    tx: std::sync::mpsc::Sender<Msg>,
}

/// The runtime stopped; requests can no longer be served.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("Unable to contact slurm controller (connect failure)")]
pub struct RuntimeGone;

/// Slurm's words (`ESLURM_WRITING_TO_FILE`) for a controller that could not save a request.
pub const STORE_FAILED: &str = "I/O error writing script/environment to file";

/// Why a request to the core has no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The runtime stopped.
    #[error("{}", RuntimeGone)]
    Gone,
    /// The store could not commit the batch the request ran in (disk full, read-only, I/O
    /// error): nothing of the request was kept, and it will not be applied later.
    #[error("{}", STORE_FAILED)]
    Store,
    /// The core took the request too close to its client's deadline to answer in time (see
    /// `sluice_wire::deadline`): the client gives up and tells its user the request failed,
    /// so it was not applied.
    #[error("the request reached the controller's core too late for its client's deadline")]
    Late,
}

impl From<RuntimeGone> for CallError {
    fn from(_: RuntimeGone) -> Self {
        CallError::Gone
    }
}

impl CoreHandle {
    /// Runs `f` on the core and returns its result once the batch it ran in is durable. A
    /// scheduling pass follows the batch. Dropping the returned future before the core has
    /// taken the request withdraws it: `f` never runs. When the batch cannot be committed the
    /// result is [`CallError::Store`] and nothing `f` did is kept.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Ctx<'_>) -> R + Send + 'static,
    ) -> Result<R, CallError> {
        self.send(f, Kick::Full, sluice_wire::deadline::current())
            .await
    }

    /// Like [`CoreHandle::call`], for a request that only queues new jobs (a submission):
    /// the pass after its batch considers only the new jobs unless other requests of the batch
    /// asked for a whole pass.
    pub async fn submit<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Ctx<'_>) -> R + Send + 'static,
    ) -> Result<R, CallError> {
        self.send(f, Kick::Submitted, sluice_wire::deadline::current())
            .await
    }

    /// Like [`CoreHandle::call`], for requests that mostly read (no scheduling pass).
    pub async fn query<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Ctx<'_>) -> R + Send + 'static,
    ) -> Result<R, CallError> {
        self.send(f, Kick::None, sluice_wire::deadline::current())
            .await
    }

    /// [`CoreHandle::call`] for the controller's own requests, which have no client to tell:
    /// a batch that could not be committed is tried again (after `retry`) until it is, or
    /// the runtime stops. `f` runs once per try.
    pub async fn call_until_saved<R: Send + 'static>(
        &self,
        f: impl Fn(&mut Ctx<'_>) -> R + Clone + Send + 'static,
        retry: std::time::Duration,
    ) -> Result<R, RuntimeGone> {
        loop {
            // No client deadline: these are not given up.
            match self.send(f.clone(), Kick::Full, None).await {
                Ok(r) => return Ok(r),
                Err(CallError::Gone) => return Err(RuntimeGone),
                Err(CallError::Store | CallError::Late) => tokio::time::sleep(retry).await,
            }
        }
    }

    /// Sends `f` to the core; `deadline` is its client's (see `sluice_wire::deadline`).
    async fn send<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Ctx<'_>) -> R + Send + 'static,
        kick: Kick,
        deadline: Option<std::time::SystemTime>,
    ) -> Result<R, CallError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |cx| {
            // The caller gave up before the core took the request (its client's MessageTimeout
            // ran out, or it hung up, and the server dropped the call): it was told the request
            // failed, so the request is not applied.
            if tx.is_closed() {
                return Box::new(|_| {});
            }
            // Or its client is about to give up (the request sat in a stopped or busy
            // controller): it could not hear the answer in time, so nothing is applied either.
            if sluice_wire::deadline::too_late(deadline, std::time::SystemTime::now()) {
                tracing::warn!(
                    "a request taken too late for its client's deadline was not applied"
                );
                return Box::new(move |_| {
                    let _ = tx.send(Err(CallError::Late));
                });
            }
            let r = f(cx);
            Box::new(move |outcome| {
                let _ = tx.send(match outcome {
                    batch::Outcome::Done => Ok(r),
                    batch::Outcome::Refused => Err(CallError::Store),
                });
            })
        });
        self.tx
            .send(Msg::Call { job, kick })
            .map_err(|_| CallError::Gone)?;
        rx.await.map_err(|_| CallError::Gone)?
    }

    pub(crate) fn post(&self, msg: Msg) {
        let _ = self.tx.send(msg);
    }
}

/// A running core thread.
pub struct Runtime {
    handle: CoreHandle,
    thread: Option<JoinHandle<()>>,
    /// Where node daemons listen (shared with the dispatcher).
    pub addrs: NodeAddrs,
    admins: admins::DbdAdmins,
    admins_refresh: Option<tokio::task::JoinHandle<()>>,
    /// Wakes the refresh when the dbd announces a change of associations or users.
    assoc_watch: Option<tokio::task::JoinHandle<()>>,
    /// Keeps the fair-share table up to date from the dbd (with one).
    fairshare_refresh: Option<tokio::task::JoinHandle<()>>,
    /// The port for a federation client, with a dbd, until one is connected.
    fed_port: Option<federation::FederationPort>,
    /// The federation client connected to the port.
    fed_client: Option<Box<dyn federation::FederationClient>>,
}

impl Runtime {
    /// The port a federation client connects to: `Some` once, with a dbd (without one the
    /// cluster is in no federation).
    pub fn take_federation_port(&mut self) -> Option<federation::FederationPort> {
        self.fed_port.take()
    }

    /// Keeps `client`, connected to this runtime's port, until shutdown, which stops it first.
    pub fn attach_federation(&mut self, client: Box<dyn federation::FederationClient>) {
        self.fed_client = Some(client);
    }

    /// A handle for sending requests.
    pub fn handle(&self) -> CoreHandle {
        self.handle.clone()
    }

    /// The accounting daemon's administrators, kept up to date while the runtime runs (empty
    /// without a dbd).
    pub fn dbd_admins(&self) -> admins::DbdAdmins {
        self.admins.clone()
    }

    /// Commits what is pending and stops the core's thread.
    pub async fn shutdown(mut self) {
        if let Some(t) = self.admins_refresh.take() {
            t.abort();
        }
        if let Some(t) = self.assoc_watch.take() {
            t.abort();
        }
        if let Some(t) = self.fairshare_refresh.take() {
            t.abort();
        }
        // The federation client stops first: nothing it asks may reach a stopping core.
        if let Some(mut client) = self.fed_client.take() {
            client.stop();
        }
        self.fed_port = None;
        self.handle.post(Msg::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || t.join()).await;
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(t) = self.admins_refresh.take() {
            t.abort();
        }
        if let Some(t) = self.assoc_watch.take() {
            t.abort();
        }
        if let Some(t) = self.fairshare_refresh.take() {
            t.abort();
        }
        if let Some(mut client) = self.fed_client.take() {
            client.stop();
        }
        // Without an explicit shutdown the thread stops at its next message.
        self.handle.post(Msg::Shutdown);
    }
}
