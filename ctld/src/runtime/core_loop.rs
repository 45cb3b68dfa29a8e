//! The core's thread: start-up (store, restore, helpers) and the batch loop with its group
//! commit. The thread runs inside the tokio runtime's context so it can spawn the tasks that
//! send node commands and fetch leases, but it never awaits: a commit blocks only this thread.

use super::admins::{self, DbdAdmins};
use super::batch::{self, Batch, Outcome};
use super::dispatch::Dispatcher;
use super::federation::FederationPort;
use super::leases::Leaser;
use super::persist::StateSink;
use super::programs::Programs;
use super::subscribers::Subscribers;
use super::waiters::Waiters;
use super::{CoreHandle, Ctx, Kick, Msg, NodeAddrs, Runtime, RuntimeConfig};
use crate::conf::CtldConf;
use crate::core::restore::{self, RestoreNote};
use crate::core::snapshot::Snapshot;
use crate::core::{
    BATCH_STEP, Caller, CancelRequest, Core, IdLease, JobIdSource, JobRef, RunReport, SimTime,
    on_cancel, on_controller_stalled, on_launch_failed, on_tick, schedule, schedule_fresh,
};
use crate::error::CtldError;
use crate::shipper::{Shipper, ShipperHandle};
use crate::store::{StateStore, StoreError};
use sluice_vocab::LocalJobId;
use sluice_wire::auth::Signer;
use sluice_wire::auth::credential::CredentialKey;
use sluice_wire::client::connect_lazy;
use sluice_wire::daemon::fault::FaultEpisodes;
use sluice_wire::proto::accounting_records_client::AccountingRecordsClient;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often the core's timers and a full scheduling pass run.
const TICK: Duration = Duration::from_secs(1);
/// A tick this late means the loop itself was held up (see `Loop::note_stall`).
const STALL: Duration = Duration::from_secs(3);
/// Most requests handled in one batch (one commit).
const MAX_BATCH: usize = 4096;

/// Why the runtime could not start.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The controller store could not be opened or read.
    #[error("state store: {0}")]
    Store(#[from] StoreError),
    /// The saved state does not fit the configuration.
    #[error(transparent)]
    Core(#[from] CtldError),
    /// A peer address is not usable.
    #[error("{0}")]
    Transport(#[from] tonic::transport::Error),
    /// The core's thread could not be started, or the listener is unusable.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// `SlurmUser` names no user of this host.
    #[error("SlurmUser {0}: no such user")]
    UnknownSlurmUser(String),
    /// The state under `StateSaveLocation` belongs to another cluster (Slurm's safety check).
    #[error(
        "CLUSTER NAME MISMATCH: sluice-ctld has been started with \"ClusterName={conf}\", but read \"{saved}\" from the state files in StateSaveLocation. Running multiple clusters from a shared StateSaveLocation WILL CAUSE CORRUPTION. Remove {path} to override this safety check if this is intentional (e.g., the ClusterName has changed)."
    )]
    ClusterMismatch {
        conf: String,
        saved: String,
        path: String,
    },
    /// What the restore dropped could not be committed.
    #[error("state store: {0}")]
    Commit(String),
    /// The core's thread stopped.
    #[error("the controller core stopped")]
    Stopped,
}

/// The real clock, as the core's time. Read only here.
fn wall_now() -> SimTime {
    SimTime::from_secs(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// The group ids of `AllowGroups` names, from the system's group database.
pub(super) fn group_id(name: &str) -> Option<u32> {
    nix::unistd::Group::from_name(name)
        .ok()
        .flatten()
        .map(|g| g.gid.as_raw())
        .or_else(|| name.parse().ok())
}

/// Opens the store under `StateSaveLocation`, restores the core and starts its thread (call
/// from within a tokio runtime).
pub fn start(cfg: RuntimeConfig) -> Result<Runtime, RuntimeError> {
    let dir = cfg.conf.state_save_location.clone();
    std::fs::create_dir_all(&dir)?;
    let store = StateStore::open_with(&dir, cfg.conf.state_sync)?;
    let snap = store.load()?;
    // Before the shipper sends anything of another cluster's outbox under this name.
    check_cluster(&cfg.conf, &snap)?;
    let shipper = match &cfg.conf.accounting_storage_host {
        Some(host) => {
            let signer = Signer::for_current_user(cfg.key.clone());
            let channel = connect_lazy(host, cfg.conf.accounting_storage_port, signer)?;
            Some(Shipper::spawn(
                &dir,
                cfg.conf.cluster_name.clone(),
                AccountingRecordsClient::new(channel),
            ))
        }
        None => None,
    };
    start_with(cfg, Box::new(store), snap, shipper)
}

/// Refuses the state of another cluster, as Slurm's controller does: sharing a
/// StateSaveLocation between clusters would mix their jobs.
fn check_cluster(conf: &CtldConf, snap: &Snapshot) -> Result<(), RuntimeError> {
    match &snap.cluster {
        Some(saved) if *saved != conf.cluster_name => Err(RuntimeError::ClusterMismatch {
            conf: conf.cluster_name.clone(),
            saved: saved.clone(),
            path: StateStore::file(&conf.state_save_location)
                .display()
                .to_string(),
        }),
        _ => Ok(()),
    }
}

/// The core as `snap` (and, with a dbd, the saved federation view of `sink`) has it: the
/// job-id source as saved, else a lease to come from the dbd, else `FirstJobId`. Used at start
/// and to put the core back as the store has it after a failed commit.
fn rebuild(
    conf: &CtldConf,
    snap: Snapshot,
    sink: &dyn StateSink,
    accounting: bool,
    now: SimTime,
) -> Result<(Core, Vec<RestoreNote>), CtldError> {
    let ids: Box<dyn JobIdSource> = match snap.id_lease(None) {
        Some(lease) => Box::new(lease),
        None if accounting => Box::new(IdLease::new(None)),
        None => {
            let first =
                LocalJobId::new(conf.first_job_id).map_err(|_| CtldError::JobIdsExhausted)?;
            Box::new(IdLease::counter(None, first))
        }
    };
    let (mut core, notes) = Core::restore_noted(conf, snap, ids, &group_id, now)?;
    // The saved federation view (job ids keep their origin bits until the dbd is heard from);
    // without a dbd the cluster is in no federation.
    if accounting && let Some((view, cursor)) = sink.fed_state() {
        core.restore_fed(view, cursor);
    }
    // The dbd's associations and users as last fetched: enforced until the dbd answers.
    if accounting && let Some(cache) = sink.dbd_cache() {
        crate::core::assoc::cache::restore(&mut core, cache);
    }
    Ok((core, notes))
}

/// [`start`] over an already opened store (tests put a failing one here).
pub fn start_with(
    cfg: RuntimeConfig,
    mut sink: Box<dyn StateSink>,
    snap: Snapshot,
    shipper: Option<ShipperHandle>,
) -> Result<Runtime, RuntimeError> {
    let conf = &cfg.conf;
    let accounting = conf.accounting_storage_host.is_some();
    check_cluster(conf, &snap)?;
    let now = wall_now();
    let (mut core, notes) = rebuild(conf, snap, sink.as_ref(), accounting, now)?;
    // What the configuration no longer allows leaves the store now, with the accounting end of
    // each dropped job's run, before anything else happens.
    for note in &notes {
        match note {
            RestoreNote::UnknownNode { name } => {
                tracing::warn!("saved node {name} is no longer configured: its state is ignored");
            }
            RestoreNote::BadJob { id, why } => {
                tracing::error!("saved job {id} is unreadable ({why}): left out");
            }
            RestoreNote::JobDropped { job, why, .. } => {
                tracing::warn!("job {job} dropped from the saved state: {why}");
            }
        }
    }
    let (saves, mut acct) = restore::followups(&notes);
    // The cluster's size, for the usage reports' capacity (the dbd ignores a repeat).
    let nodes = conf.nodes.iter().map(|n| (n.cpus, n.real_memory_mb));
    acct.push(crate::core::AcctRecord::capacity(nodes, now));
    let acct = if accounting { acct } else { Vec::new() };
    if !saves.is_empty() || !acct.is_empty() {
        sink.commit(&core, &saves, &acct)
            .map_err(RuntimeError::Commit)?;
    }
    let addrs: NodeAddrs = Arc::new(RwLock::new(
        conf.nodes
            .iter()
            .map(|n| (n.name.clone(), (n.addr.clone(), n.port)))
            .collect(),
    ));
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = CoreHandle { tx };
    let signer = Signer::for_current_user(cfg.key.clone());
    let dbd = match &conf.accounting_storage_host {
        Some(host) => Some(Leaser::connect(
            host,
            conf.accounting_storage_port,
            signer.clone(),
        )?),
        None => None,
    };
    // With a dbd, the core's federation requests wait in this channel for the client that the
    // server's wiring connects to the port.
    let (fed_tx, fed_port) = if accounting {
        let (tx, requests) = tokio::sync::mpsc::unbounded_channel();
        let port = FederationPort {
            requests,
            core: handle.clone(),
            started: now,
            control_addr: cfg.ctld_addr.clone(),
        };
        (Some(tx), Some(port))
    } else {
        (None, None)
    };
    let admins = DbdAdmins::default();
    // Until the dbd answers, its users as saved (administrators, default accounts,
    // coordinators).
    if accounting {
        let view = admins::view_of(crate::core::assoc::cache::users(&core));
        crate::core::coordinators::set(&mut core, view.coordinators.clone());
        admins.replace_view(view);
    }
    let changed = Arc::new(tokio::sync::Notify::new());
    let admins_refresh = dbd.clone().map(|dbd| {
        let every = admins::REFRESH;
        admins::spawn_refresh(dbd, admins.clone(), handle.clone(), every, changed.clone())
    });
    let assoc_watch = dbd
        .clone()
        .map(|dbd| super::assoc_watch::spawn(dbd, conf.cluster_name.clone(), changed.clone()));
    let fairshare_refresh = dbd
        .clone()
        .map(|dbd| super::fairshare::spawn_refresh(dbd, handle.clone()));
    let state = Loop {
        programs: Programs::new(&conf.power, &conf.state_save_location),
        conf_seen: core.conf().clone(),
        conf_saved: core.conf().clone(),
        faults: FaultEpisodes::new("state commit"),
        stale: false,
        unsaved: Vec::new(),
        dispatcher: Dispatcher::new(
            signer,
            CredentialKey::derive(&cfg.key),
            addrs.clone(),
            handle.clone(),
            conf.cluster_name.clone(),
            cfg.ctld_addr.clone(),
            std::time::Duration::from_secs(u64::from(conf.message_timeout)),
        ),
        leaser: Leaser::new(dbd, conf.cluster_name.clone()),
        core,
        sink,
        batch: Batch::new(accounting),
        waiters: Waiters::default(),
        subscribers: Subscribers::default(),
        addrs: addrs.clone(),
        shipper,
        handle: handle.clone(),
        accounting,
        kick: Kick::Full,
        fed_tx,
    };
    let rt = tokio::runtime::Handle::current();
    let thread = std::thread::Builder::new()
        .name("sluice-core".into())
        .spawn(move || {
            let _guard = rt.enter();
            state.run(rx);
        })?;
    Ok(Runtime {
        handle,
        thread: Some(thread),
        addrs,
        admins,
        admins_refresh,
        assoc_watch,
        fairshare_refresh,
        fed_port,
        fed_client: None,
    })
}

struct Loop {
    core: Core,
    /// The configuration the programs were set up from (a reconfiguration replaces the core's).
    conf_seen: Arc<CtldConf>,
    /// The core's configuration as of the last commit (what a rebuilt core is built for).
    conf_saved: Arc<CtldConf>,
    /// Failed commits, logged once per episode.
    faults: FaultEpisodes,
    /// A commit failed and the store could not be read back yet: the core holds changes the
    /// store does not, so nothing is answered but refusals until it is rebuilt.
    stale: bool,
    /// The controller's own events of the batch (leases, failed launches): they happened
    /// whatever becomes of the batch, so a rebuilt core is told again.
    unsaved: Vec<Msg>,
    sink: Box<dyn StateSink>,
    batch: Batch,
    waiters: Waiters,
    subscribers: Subscribers,
    addrs: NodeAddrs,
    dispatcher: Dispatcher,
    programs: Programs,
    leaser: Leaser,
    shipper: Option<ShipperHandle>,
    handle: CoreHandle,
    accounting: bool,
    /// The pass the batch's requests asked for.
    kick: Kick,
    /// Where requests for the federation arbiter go (none without a dbd).
    fed_tx: Option<tokio::sync::mpsc::UnboundedSender<crate::core::federation::FedRequest>>,
}

impl Loop {
    fn run(mut self, rx: Receiver<Msg>) {
        // The node daemons learn of this start now, not at their next heartbeat.
        self.dispatcher.request_registrations(&self.core);
        let mut next_tick = Instant::now();
        let mut last_tick = Instant::now();
        let mut stop = false;
        while !stop {
            let wait = next_tick.saturating_duration_since(Instant::now());
            let first = match rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    stop = true;
                    None
                }
            };
            let now = wall_now();
            if self.stale {
                self.roll_back(now);
            }
            if let Some(m) = first {
                let mut msgs = batch::gather(m, || rx.try_recv().ok(), MAX_BATCH);
                // Reads first: they see only durable state, so they are answered even if the
                // batch's commit fails (see `Batch::reply`).
                msgs.sort_by_key(|m| {
                    !matches!(
                        m,
                        Msg::Call {
                            kick: Kick::None,
                            ..
                        }
                    )
                });
                for m in msgs {
                    stop |= self.handle(m, now);
                }
            }
            if self.stale {
                // Nothing done on a core that is not the store's can be kept.
                for (reply, _) in self.batch.discard() {
                    reply(Outcome::Refused);
                }
                next_tick = Instant::now() + TICK;
                continue;
            }
            if Instant::now() >= next_tick {
                self.note_stall(last_tick.elapsed(), now);
                last_tick = Instant::now();
                self.tick(now);
                next_tick = Instant::now() + TICK;
            } else {
                match std::mem::replace(&mut self.kick, Kick::None) {
                    Kick::None => {}
                    Kick::Submitted => {
                        schedule_fresh(&mut self.core, &mut self.batch, now);
                    }
                    Kick::Full => {
                        schedule(&mut self.core, &mut self.batch, now);
                    }
                }
            }
            // Offers due at the end of a pass are all sent by it; a batch without a pass
            // (none was asked for) still sends any, rather than keep them for the next one.
            crate::core::federation::start::send_due_offers(&mut self.core, &mut self.batch);
            self.commit(now);
            self.leaser.check(&self.core, &self.handle);
        }
        tracing::info!("controller core stopped");
    }

    /// Handles one message; `true` asks the loop to stop after this batch.
    fn handle(&mut self, msg: Msg, now: SimTime) -> bool {
        match msg {
            Msg::Call { job, kick } => {
                self.kick = self.kick.max(kick);
                let mut cx = Ctx {
                    core: &mut self.core,
                    out: &mut self.batch,
                    now,
                    waiters: &mut self.waiters,
                    subscribers: &mut self.subscribers,
                    addrs: &self.addrs,
                    accounting: self.accounting,
                    kick: &mut self.kick,
                };
                let reply = job(&mut cx);
                self.batch.reply(reply);
            }
            Msg::LeaseGranted(ranges) => {
                self.unsaved.push(Msg::LeaseGranted(ranges.clone()));
                self.leaser.granted(&mut self.core, &ranges);
                // Saved with the batch; no pass: new ids change no queued job (a submission
                // that found none was refused), and under a burst of submissions a lease
                // comes every thousand jobs.
                self.batch.touch();
            }
            Msg::LeaseFailed => self.leaser.failed(),
            Msg::LaunchFailed { job, node, run } => {
                self.unsaved.push(Msg::LaunchFailed {
                    job,
                    node: node.clone(),
                    run,
                });
                let from = RunReport {
                    node: node.clone(),
                    run,
                    step: BATCH_STEP,
                };
                match on_launch_failed(&mut self.core, &mut self.batch, now, job, &from) {
                    Ok(()) => tracing::warn!(%job, %node, "launch failed: job requeued, node DOWN"),
                    Err(e @ CtldError::StaleReport { .. }) => {
                        tracing::warn!(%node, "launch failure: {e}")
                    }
                    Err(e) => tracing::debug!(%job, %node, "late launch failure ignored: {e}"),
                }
                self.kick = Kick::Full;
            }
            Msg::Shutdown => return true,
        }
        false
    }

    /// Puts the core back as the store has it (after a failed commit), then replays the
    /// controller's own events of the failed batch into the next one. When the store cannot
    /// be read the loop stays stale and tries again with the next batch.
    fn roll_back(&mut self, now: SimTime) {
        let rebuilt = self.sink.load().and_then(|snap| {
            rebuild(
                &self.conf_saved,
                snap,
                self.sink.as_ref(),
                self.accounting,
                now,
            )
            .map_err(|e| e.to_string())
        });
        match rebuilt {
            Ok((core, notes)) => {
                for note in notes {
                    tracing::warn!("rebuilding the core from the store: {note:?}");
                }
                if self.stale {
                    tracing::info!("state store read back: requests are taken again");
                }
                self.core = core;
                self.stale = false;
                self.kick = Kick::Full;
                for msg in std::mem::take(&mut self.unsaved) {
                    self.handle(msg, now);
                }
            }
            Err(e) => {
                if !self.stale {
                    tracing::error!(
                        "cannot read the state store back after a failed commit: {e} (every \
                         request is refused until it can)"
                    );
                }
                self.stale = true;
            }
        }
    }

    /// A tick `since` after the last one: when the loop was held up well past its tick (the
    /// process was stopped, or the host froze), the nodes are not blamed for that silence and
    /// are asked to register at once, so that the ends of runs they could not report arrive
    /// before anything is decided about them.
    fn note_stall(&mut self, since: Duration, now: SimTime) {
        if since < STALL {
            return;
        }
        let secs = since.saturating_sub(TICK).as_secs();
        tracing::warn!(
            "the controller did not run for {secs} s (stopped, or its host froze): nodes are not \
             held to that silence, and are asked to register again"
        );
        on_controller_stalled(&mut self.core, now, secs);
        self.dispatcher.request_registrations(&self.core);
    }

    fn tick(&mut self, now: SimTime) {
        for job in self.waiters.abandoned() {
            let req = CancelRequest {
                job: JobRef::Job(job),
                signal: None,
            };
            if on_cancel(&mut self.core, &mut self.batch, now, Caller::admin(), req).is_ok() {
                tracing::info!(%job, "srun went away: allocation cancelled");
            }
        }
        on_tick(&mut self.core, &mut self.batch, now);
        self.kick = Kick::None;
    }

    /// Commits the batch, then releases its replies and node commands. A failed commit
    /// throws the batch away: the core is rebuilt from the store, then the batch's requests
    /// are refused (reads of durable state answered).
    fn commit(&mut self, now: SimTime) {
        let records = self.batch.acct().len();
        // Someone waits for a job's end in sacct (a workflow that saw it leave the queue).
        let ends = self
            .batch
            .acct()
            .iter()
            .any(|r| matches!(r, crate::core::outbox::AcctRecord::JobEnded { .. }));
        let writes = self.batch.needs_commit();
        let (sink, core) = (&mut self.sink, &self.core);
        let (replies, cmds) = match batch::commit_batch(&mut self.batch, |b| {
            sink.commit(core, b.saves(), b.acct())
        }) {
            Ok(released) => released,
            Err(failed) => {
                if let Some(line) = self.faults.failed(&failed.reason, Instant::now()) {
                    tracing::error!("{line}");
                }
                self.roll_back(now);
                failed.answer();
                return;
            }
        };
        // Only a commit that wrote says the store works again.
        if writes && let Some(line) = self.faults.succeeded(Instant::now()) {
            tracing::info!("{line}");
        }
        self.unsaved.clear();
        self.conf_saved = self.core.conf().clone();
        if records > 0
            && let Some(s) = &self.shipper
        {
            if ends { s.notify_now() } else { s.notify() }
        }
        for reply in replies {
            reply(Outcome::Done);
        }
        for cmd in cmds {
            self.dispatcher.dispatch(&self.core, cmd);
        }
        if !Arc::ptr_eq(&self.conf_seen, self.core.conf()) {
            self.conf_seen = self.core.conf().clone();
            self.programs.reconfigure(&self.conf_seen.power);
        }
        for cmd in self.batch.release_power() {
            self.programs.run(cmd);
        }
        for run in self.batch.release_scripts() {
            tokio::spawn(super::ctld_scripts::execute(run, self.handle.clone()));
        }
        for req in self.batch.release_fed() {
            if let Some(tx) = &self.fed_tx {
                let _ = tx.send(req);
            }
        }
        if !self.waiters.is_empty() {
            self.waiters.report(&self.core, &self.addrs);
        }
        let events = self.batch.release_nonstop();
        if !events.is_empty() {
            self.subscribers.publish(events);
        }
    }
}
