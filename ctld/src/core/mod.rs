//! The controller's pure core: the state of one cluster and the handlers that change it.
//!
//! Every handler is a plain function `on_x(core, out, now, msg)`: `now` is simulated time given
//! by the caller (only the runtime loop reads the clock) and `out` is the [`Outbox`] through
//! which the core asks the world to act (launch, signal, record, save). One task owns the core;
//! nothing here locks, sleeps or touches a socket.
//!
//! Map of the core:
//! - [`nodes`], [`registration`]: the node manager (node table and bitmaps; registration,
//!   heartbeats, admin updates, DOWN); [`node_scripts`]: a node's failed prolog or epilog;
//! - [`partitions`]: the partition manager (node bitmaps, limits, access);
//! - [`jobs`], [`request`], [`submit`], [`lifecycle`], [`cancel`] (`scancel`'s selection and
//!   order), [`completion`], [`kill`], [`update`],
//!   [`launch`], [`will_run`], [`signal`]: the job manager; [`steps`]: steps' CPUs within
//!   their job's allocation;
//! - [`deps`], [`arrays`], [`het`], [`features`]: dependency, job-array, heterogeneous-job
//!   and `--constraint` rules;
//! - [`sched`] and [`backfill`]: one scheduling pass; [`select`]: node selection on bitmaps;
//!   [`alloc`]: what each job holds on its nodes (whole nodes, CPUs or cores, memory) so
//!   jobs can share nodes; [`gang`]: timesliced gang scheduling of jobs sharing resources;
//! - [`nonstop`]: failure management (hot spares, a job's failed and failing nodes, replace,
//!   drop, user drains, time extensions, `--no-kill`, events for subscribers);
//! - [`power`]: power save and cloud nodes (suspend, resume, their timers and programs);
//! - [`priority`]: job priority (`priority/basic`, `priority/multifactor`) and the queue's order;
//! - [`reconfig`]: `scontrol reconfigure`, a new `slurm.conf` applied to the running core;
//! - [`federation`]: the federation rules: view, per-job sibling state, the start lock, the dbd's events;
//! - [`timers`]: the periodic tick (node timeouts, time limits, KillWait, MinJobAge);
//! - [`outbox`] and [`ids`]: the ports to the world; [`ctld_scripts`]: `EpilogSlurmctld` asked of
//!   the runtime;
//! - [`snapshot`] and [`restore`]: what the controller store saves, and the core rebuilt from it.
//!
//! Without `SelectType`, allocation follows `select/linear`: a job gets whole nodes, so a node
//! runs at most one job unless jobs share it (`OverSubscribe=FORCE`, or `YES` and the jobs ask
//! with `--oversubscribe`); CPU counts decide how many nodes a job needs (`ntasks *
//! cpus_per_task` task slots, `cpus / cpus_per_task` per node) and `--mem` is per node. `select/cons_tres` hands out CPUs or cores (see [`alloc`]).

pub mod alloc;
pub mod alloc_prologs;
pub mod arrays;
pub mod assoc;
pub mod backfill;
pub mod cancel;
pub mod completion;
pub mod coordinators;
pub mod ctld_scripts;
pub mod deps;
pub mod expiry;
pub mod features;
pub mod federation;
pub mod fresh;
pub mod gang;
pub mod het;
pub mod ids;
pub mod jobs;
pub mod kill;
pub mod launch;
pub mod lifecycle;
pub mod mail;
pub mod node_runs;
pub mod node_scripts;
pub mod nodes;
pub mod nonstop;
pub mod outbox;
pub mod partitions;
pub mod power;
pub mod priority;
pub mod private;
pub mod qos;
pub mod reconfig;
pub mod registration;
pub mod request;
pub mod restore;
pub mod sched;
pub mod select;
pub mod signal;
pub mod snapshot;
pub mod steps;
pub mod submit;
pub mod timers;
pub mod update;
pub mod will_run;

pub use alloc_prologs::on_node_prolog_done;
pub use cancel::{CancelFilter, Scancel, ScancelOutcome, on_scancel};
pub use completion::{BATCH_STEP, JobExit, RunReport, Stale, on_job_exited};
pub use ctld_scripts::{ScriptContext, ScriptRun, on_prolog_slurmctld_done};
pub use fresh::schedule_fresh;
pub use het::on_submit_het;
pub use ids::{IdLease, JobIdSource};
pub use jobs::{ArrayTask, HetMember, HoldKind, Job, JobReason, JobRef, LaunchSpec};
pub use launch::{on_allocation_complete, on_allocation_done, on_launch_failed};
pub use lifecycle::{
    CancelRequest, on_cancel, on_hold, on_release, on_requeue, on_resume, on_suspend,
};
pub use node_runs::NodeRun;
pub use node_scripts::NodeScript;
pub use nodes::{Node, NodeBase, Topo};
pub use outbox::{AcctRecord, NodeCommand, NodeEventKind, Outbox, RecordingOutbox, SaveHint};
pub use partitions::{PartIdx, Partition, on_partition_state};
pub use power::{
    NodePower, PowerCommand, PowerRequest, PowerStatus, ResumeFile, ResumeJob, SuspendExcKey,
    UpdateMode, on_node_comm, on_node_power, on_power_tick, on_suspend_exc_update,
};
pub use reconfig::on_reconfigure;
pub use registration::{
    NodeRegistration, NodeUpdate, on_node_heartbeat, on_node_registered, on_node_update,
};
pub use request::{
    JobShare, NodeCountPref, PlaceOpts, SubmitReply, SubmitRequest, TopoAsk, WarnSignal,
};
pub use sched::{PassStats, schedule};
pub use signal::{JobPart, on_signal_part};
pub use steps::{StepEnd, StepGrant, StepRequest, StepStart, on_step_create, on_step_done};
pub use submit::on_submit;
pub use timers::{on_controller_stalled, on_tick};
pub use update::{JobChange, on_requeue_hold, on_update_job};
pub use will_run::{WillRun, on_will_run, on_will_run_het};

use crate::conf::{CtldConf, SchedulerType};
use crate::error::CtldError;
use jobs::JobTable;
use nodes::NodeTable;
use sluice_vocab::FedJobId;
use sluice_vocab::cluster_conf::BackfillEvery;
use std::fmt;

/// Simulated time: seconds since the Unix epoch, passed into every handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(u64);

impl SimTime {
    /// A time that never comes (the end of an unlimited job).
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// The time `secs` seconds after the epoch.
    pub const fn from_secs(secs: u64) -> Self {
        Self(secs)
    }

    /// Seconds since the epoch.
    pub const fn secs(self) -> u64 {
        self.0
    }

    /// This time plus `secs` (saturating at [`SimTime::NEVER`]).
    pub const fn plus(self, secs: u64) -> Self {
        Self(self.0.saturating_add(secs))
    }

    /// Seconds from `earlier` to this time (0 when `earlier` is later).
    pub const fn since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Who is asking: the authenticated uid, and whether it is an administrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The caller's uid (from `auth::identity`).
    pub uid: u32,
    /// Whether the caller may act on every job and on nodes (SlurmUser, root, admins).
    pub admin: bool,
    /// Whether the caller sees what `PrivateData` hides (administrators and the dbd's
    /// `AdminLevel=Operator`).
    pub operator: bool,
}

impl Caller {
    /// An administrator.
    pub const fn admin() -> Self {
        Self {
            uid: 0,
            admin: true,
            operator: true,
        }
    }

    /// An ordinary user.
    pub const fn user(uid: u32) -> Self {
        Self {
            uid,
            admin: false,
            operator: false,
        }
    }
}

/// The core's tunables, taken from the configuration.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// `ClusterName`.
    pub cluster_name: String,
    /// Seconds between SIGTERM and SIGKILL.
    pub kill_wait: u64,
    /// Seconds a finished job stays in the core.
    pub min_job_age: u64,
    /// Seconds of silence before a node is DOWN (0: never).
    pub slurmd_timeout: u64,
    /// Most jobs held at once, finished ones included.
    pub max_job_count: u32,
    /// Array task ids must be below this.
    pub max_array_size: u32,
    /// `EnforcePartLimits` other than `NO`: refuse what the partition can never run.
    pub enforce_part_limits: bool,
    /// Slurm's `ReturnToService` (0, 1 or 2).
    pub return_to_service: u8,
    /// Whether backfill runs after the FIFO pass.
    pub backfill: bool,
    /// How far ahead backfill plans a reservation (`SchedulerParameters=bf_window`, in
    /// minutes there; default 1 day).
    pub bf_window_secs: u64,
    /// Most lower-priority jobs backfill tries per pass (`SchedulerParameters=bf_max_job_test`,
    /// default 500).
    pub bf_max_job_test: usize,
    /// How often backfill runs (`SchedulerParameters=bf_interval`; default every pass).
    pub bf_interval: BackfillEvery,
    /// Jobs a pass considers for starting (`SchedulerParameters=default_queue_depth`; default
    /// all); the whole queue is still tested every [`sched::FULL_PASS_SECS`].
    pub queue_depth: Option<usize>,
}

impl CoreConfig {
    /// The tunables of `conf`.
    pub fn from_conf(conf: &CtldConf) -> Self {
        Self {
            cluster_name: conf.cluster_name.clone(),
            kill_wait: u64::from(conf.kill_wait),
            min_job_age: u64::from(conf.min_job_age),
            slurmd_timeout: u64::from(conf.slurmd_timeout),
            max_job_count: conf.max_job_count,
            max_array_size: conf.max_array_size,
            enforce_part_limits: conf.enforce_part_limits,
            return_to_service: conf.return_to_service,
            backfill: conf.scheduler == SchedulerType::Backfill,
            bf_window_secs: conf.sched.bf_window_secs(),
            bf_max_job_test: usize::try_from(conf.sched.bf_max_job_test).unwrap_or(usize::MAX),
            bf_interval: conf.sched.bf_interval,
            queue_depth: conf
                .sched
                .default_queue_depth
                .map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
        }
    }
}

/// The state of one cluster. Fields are reached through the accessors; the handlers in the
/// submodules are the only writers.
pub struct Core {
    pub(crate) cfg: CoreConfig,
    pub(crate) nodes: NodeTable,
    pub(crate) parts: Vec<Partition>,
    pub(crate) jobs: JobTable,
    pub(crate) ids: Box<dyn JobIdSource>,
    /// Selection rules (`SelectType`, `SelectTypeParameters`, default memory).
    pub(crate) policy: alloc::Policy,
    /// What each job holding nodes holds on them.
    pub(crate) allocs: std::collections::HashMap<FedJobId, alloc::JobAlloc>,
    /// The CPUs each running job's steps hold within its allocation.
    pub(crate) steps: std::collections::HashMap<FedJobId, steps::JobSteps>,
    /// Gang scheduling (timeslices) and administrator suspensions.
    pub(crate) gang: gang::Gang,
    /// Power save: settings, rate counters, jobs waiting for nodes to boot.
    pub(crate) power: power::PowerState,
    /// The federation view and event cursor.
    pub(crate) fed: federation::FedCore,
    /// When backfill and a whole-queue pass last ran (for `bf_interval`, `default_queue_depth`).
    pub(crate) passes: sched::PassTimes,
    /// Jobs submitted since the last pass, and what the last whole pass left blocked.
    pub(crate) fresh: fresh::Fresh,
    /// The configuration in force: as read at start, then as `scontrol reconfigure` and
    /// runtime updates (`SuspendExc*`) left it.
    pub(crate) conf: std::sync::Arc<CtldConf>,
    /// Account coordinators' realms (from the dbd; not saved: fetched again at start).
    pub(crate) coordinators: coordinators::Realms,
    /// Failure management, with `SlurmctldPlugin=slurmctld/nonstop`.
    pub(crate) nonstop: Option<nonstop::NonstopState>,
    /// This cluster's associations and limits (from the dbd; `None` until listed once).
    pub(crate) assocs: Option<assoc::AssocTable>,
    /// The dbd's QOS (`None` until listed once).
    pub(crate) qos: Option<qos::QosTable>,
    /// What running jobs hold per association, during a scheduling pass.
    pub(crate) assoc_usage: Option<assoc::Usage>,
    /// TRES-seconds each user association has used (decayed; from the dbd with the fair-share
    /// table), for `GrpTRESMins`.
    pub(crate) assoc_used: std::collections::HashMap<assoc::AssocKey, assoc::TresSecs>,
    /// TRES-seconds the jobs of each QOS have used on this cluster (decayed; from the dbd with
    /// the fair-share table), for QOS `GrpTRESMins`.
    pub(crate) qos_used: std::collections::HashMap<String, assoc::TresSecs>,
    /// The dbd's users as last fetched, and the generation of what is kept for a restart.
    pub(crate) dbd_kept: assoc::cache::Kept,
    /// Job priority: the fair-share table and when priorities were last computed.
    pub(crate) prio: priority::PriorityState,
}

impl Core {
    /// Builds the core for `conf` at time `now`. `ids` hands out job ids; `group_id` resolves
    /// the group names of `AllowGroups` (an unknown group is an error naming the key).
    pub fn new(
        conf: &CtldConf,
        ids: Box<dyn JobIdSource>,
        group_id: &dyn Fn(&str) -> Option<u32>,
        now: SimTime,
    ) -> Result<Self, CtldError> {
        let nodes = NodeTable::from_conf(&conf.nodes, now);
        let parts = partitions::build(conf, &nodes, group_id)?;
        let policy = alloc::Policy::from_conf(&conf.select);
        let gang = gang::Gang::new(
            &nodes,
            parts.len(),
            policy.unit,
            conf.select.gang(),
            u64::from(conf.select.time_slice_secs),
        );
        let power = power::PowerState::new(power::PowerSettings::build(conf, &nodes, &parts));
        let mut core = Self {
            cfg: CoreConfig::from_conf(conf),
            nodes,
            parts,
            jobs: JobTable::default(),
            ids,
            policy,
            allocs: std::collections::HashMap::new(),
            steps: std::collections::HashMap::new(),
            gang,
            power,
            fed: federation::FedCore::default(),
            passes: sched::PassTimes::default(),
            fresh: fresh::Fresh::default(),
            conf: std::sync::Arc::new(conf.clone()),
            coordinators: coordinators::Realms::new(),
            assocs: None,
            assoc_usage: None,
            qos: None,
            assoc_used: std::collections::HashMap::new(),
            qos_used: std::collections::HashMap::new(),
            dbd_kept: assoc::cache::Kept::default(),
            nonstop: None,
            prio: priority::PriorityState::default(),
        };
        nonstop::install(&mut core);
        Ok(core)
    }

    /// The tunables (tests may adjust them through [`Core::config_mut`]).
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// The configuration in force (what `scontrol show config` prints).
    pub fn conf(&self) -> &std::sync::Arc<CtldConf> {
        &self.conf
    }

    /// Mutable tunables, e.g. to change backfill bounds.
    pub fn config_mut(&mut self) -> &mut CoreConfig {
        &mut self.cfg
    }

    /// A job still held by the core.
    pub fn job(&self, id: FedJobId) -> Option<&Job> {
        self.jobs.map.get(&id)
    }

    /// Every job held by the core, in no particular order.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.map.values()
    }

    /// Number of jobs held (finished ones until purged included).
    pub fn job_count(&self) -> usize {
        self.jobs.map.len()
    }

    /// Pending jobs in priority order.
    pub fn pending(&self) -> impl Iterator<Item = FedJobId> + '_ {
        self.jobs.queue.iter().map(|k| k.id)
    }

    /// The nodes, in allocation preference order (lowest `Weight` first, then file order).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes.nodes
    }

    /// A node by name.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes
            .by_name
            .get(name)
            .map(|i| &self.nodes.nodes[i.get() as usize])
    }

    /// The partitions, in configuration order.
    pub fn partitions(&self) -> &[Partition] {
        &self.parts
    }

    /// The job-id source, e.g. to add a freshly leased range.
    pub fn job_ids_mut(&mut self) -> &mut dyn JobIdSource {
        self.ids.as_mut()
    }

    /// The compressed hostlist of `nodes` (`n[1-4]`).
    pub fn hostlist(&self, nodes: &[sluice_vocab::NodeIdx]) -> String {
        self.nodes.hostlist(nodes)
    }
}
