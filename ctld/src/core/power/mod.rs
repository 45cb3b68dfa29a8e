//! Power save and cloud nodes (Slurm's `power_save.c`): which idle nodes to power down, which
//! powered-down nodes to resume for jobs, and the timers in between, all in simulated time.
//!
//! A node's power life: `On` → (idle for `SuspendTime`, or `scontrol ... power_down`)
//! `PoweringDown` (`%`, SuspendProgram runs) → after `SuspendTimeout` `Off` (`~`) → (a job is
//! allocated it, or `power_up`) `ResumeQueued` → within `ResumeRate` `PoweringUp` (`#`,
//! ResumeProgram runs) → it registers: `On`. A node not registered `ResumeTimeout` after its
//! ResumeProgram is set DOWN and `Off` (`down~`, reason "ResumeTimeout reached"), its job
//! requeued and ResumeFailProgram run. A job allocated nodes that are not yet up waits in
//! CONFIGURING (its launch is held) until they all registered.
//!
//! The core never runs a program: it asks the runtime through [`PowerCommand`]s.
//!
//! - [`settings`]: per-node timeouts and exclusions derived from the configuration;
//! - [`pass`]: the periodic power pass (timers, resumes, suspends, rate limits);
//! - [`boot`]: jobs on nodes that must boot (held launches, the `SLURM_RESUME_FILE` JSON);
//! - [`snap`]: the saved power state and CONFIGURING jobs after a restart;
//! - [`manual`]: `scontrol update nodename=... state=power_*|resume`, `nodeaddr=`;
//! - [`exclusions`]: `scontrol update SuspendExcNodes|SuspendExcParts|SuspendExcStates`.

pub mod boot;
pub mod exclusions;
pub mod manual;
pub mod pass;
pub mod settings;
pub mod snap;

pub use boot::{ResumeFile, ResumeJob};
pub use exclusions::{SuspendExcKey, UpdateMode, on_suspend_exc_update};
pub use manual::{PowerRequest, on_node_comm, on_node_power};
pub use pass::on_power_tick;
pub use settings::PowerSettings;
pub use snap::PowerSnap;

use super::SimTime;
use super::outbox::NodeCommand;
use sluice_vocab::{FedJobId, NodeIdx};
use std::collections::BTreeMap;

/// Where a node is in its power life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PowerStatus {
    /// Powered up (or never power-managed).
    #[default]
    On,
    /// Powered down (`~`): eligible for work, which will resume it.
    Off,
    /// Wanted up (for a job or `power_up`), waiting for the resume rate (`#`).
    ResumeQueued,
    /// ResumeProgram asked at `since`; waits for the node to register (`#`).
    PoweringUp {
        /// When the ResumeProgram was asked to run.
        since: SimTime,
    },
    /// SuspendProgram asked at `since` (`%`); not usable until `SuspendTimeout`.
    PoweringDown {
        /// When the SuspendProgram was asked to run.
        since: SimTime,
    },
}

/// A node's power save and cloud state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodePower {
    /// Where it is in its power life.
    pub status: PowerStatus,
    /// Configured `State=CLOUD`.
    pub cloud: bool,
    /// A power down was asked (`!`): done as soon as it has no job.
    pub down_requested: bool,
    /// When it last stopped running a job (or registered); `None` while powered down.
    pub last_busy: Option<SimTime>,
    /// `NodeHostName` as set by `scontrol update` (`None`: its name).
    pub hostname: Option<String>,
    /// It had a job at the last power pass (to notice when it becomes idle).
    pub(crate) busy: bool,
    /// Its last job came from a `PowerDownOnIdle` partition.
    pub(crate) down_on_idle: bool,
}

impl NodePower {
    /// The state of a node configured with `cloud` (`State=CLOUD`): cloud nodes start
    /// powered down.
    pub fn configured(cloud: bool) -> Self {
        Self {
            status: if cloud {
                PowerStatus::Off
            } else {
                PowerStatus::On
            },
            cloud,
            ..Self::default()
        }
    }

    /// Whether the scheduler may place new work on it (as far as power goes).
    pub fn schedulable(&self) -> bool {
        !self.down_requested && !matches!(self.status, PowerStatus::PoweringDown { .. })
    }

    /// Whether it is expected to be silent (powered down or between states), so that
    /// `SlurmdTimeout` does not apply.
    pub fn silent(&self) -> bool {
        self.status != PowerStatus::On
    }

    /// Powered down (`~`).
    pub fn powered_down(&self) -> bool {
        self.status == PowerStatus::Off
    }

    /// Powering up or queued to (`#`).
    pub fn powering_up(&self) -> bool {
        matches!(
            self.status,
            PowerStatus::ResumeQueued | PowerStatus::PoweringUp { .. }
        )
    }

    /// Powering down (`%`).
    pub fn powering_down(&self) -> bool {
        matches!(self.status, PowerStatus::PoweringDown { .. })
    }
}

/// A program for the runtime to run (asynchronously) with a hostlist argument.
#[derive(Debug, Clone, PartialEq)]
pub enum PowerCommand {
    /// Run `ResumeProgram` for `nodes`, with `SLURM_RESUME_FILE` holding `file` as JSON.
    Resume {
        /// The nodes, as table indexes.
        nodes: Vec<NodeIdx>,
        /// The same nodes as a compressed hostlist (the program's argument).
        hostlist: String,
        /// What the resume file says.
        file: ResumeFile,
    },
    /// Run `SuspendProgram` for `nodes`.
    Suspend {
        /// The nodes, as table indexes.
        nodes: Vec<NodeIdx>,
        /// The program's argument.
        hostlist: String,
    },
    /// Run `ResumeFailProgram` for nodes that did not register by `ResumeTimeout`.
    ResumeFailed {
        /// The nodes, as table indexes.
        nodes: Vec<NodeIdx>,
        /// The program's argument.
        hostlist: String,
    },
}

/// A job waiting in CONFIGURING for its nodes to boot.
#[derive(Debug, Clone)]
pub(crate) struct Configuring {
    /// The run (the job's restart count) it was allocated for.
    pub run: u32,
    /// Its batch launch, sent once every node registered (`None` for an `srun` allocation).
    pub launch: Option<NodeCommand>,
    /// `PrologSlurmctld` runs for it: the launch also waits for its success.
    pub prolog_running: bool,
    /// `PrologFlags=Alloc`: the nodes whose prolog has not reported success yet; the launch
    /// also waits for them (see [`crate::core::alloc_prologs`]).
    pub node_prologs: std::collections::BTreeSet<sluice_vocab::NodeIdx>,
    /// Those nodes were asked to run their prologs (once all of the job's nodes are up).
    pub prologs_asked: bool,
    /// Its batch script was launched on its batch host before the other nodes were up
    /// (`--wait-all-nodes=0`, Slurm's default): that host will report its end.
    pub launched: bool,
    /// A cloud node of its allocation was powered down or powering up when it was allocated:
    /// its script waits for every node, whatever it asked (Slurm's `allocate_nodes` sets
    /// `wait_all_nodes` for cloud nodes in power save: their addresses come with their boot).
    pub cloud_boot: bool,
}

/// The core's power save state: settings, rate counters and jobs waiting for nodes.
#[derive(Debug, Clone)]
pub(crate) struct PowerState {
    pub settings: PowerSettings,
    /// Nodes suspended/resumed in the sliding minute (Slurm's decaying counters).
    pub suspended_recently: f64,
    pub resumed_recently: f64,
    pub last_pass: Option<SimTime>,
    /// Jobs in CONFIGURING, by id (id order makes the resume file's order stable).
    pub configuring: BTreeMap<FedJobId, Configuring>,
    /// Jobs whose `PrologSlurmctld` was running when the controller stopped: run again.
    pub prolog_restart: Vec<FedJobId>,
}

impl PowerState {
    pub fn new(settings: PowerSettings) -> Self {
        Self {
            settings,
            suspended_recently: 0.0,
            resumed_recently: 0.0,
            last_pass: None,
            configuring: BTreeMap::new(),
            prolog_restart: Vec::new(),
        }
    }
}

impl super::Core {
    /// Whether job `id` waits in CONFIGURING for its nodes to power up.
    pub fn job_configuring(&self, id: FedJobId) -> bool {
        self.power.configuring.contains_key(&id)
    }

    /// Whether allocation `id` can be granted: not CONFIGURING, or CONFIGURING only for
    /// nodes it need not wait for (`salloc --wait-all-nodes=0`, Slurm's default).
    pub fn allocation_ready(&self, id: FedJobId) -> bool {
        !self.job_configuring(id) || boot::granted_early(self, id)
    }

    /// The power save settings in force.
    pub fn power_settings(&self) -> &PowerSettings {
        &self.power.settings
    }
}
