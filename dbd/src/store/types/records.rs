//! The accounting records a controller sends (the domain side of `AcctRecord`), and what the
//! store hands back for sacct: job runs with their steps, and node events.

/// One record of a controller's accounting outbox, numbered by the cluster's sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The per-cluster sequence number; records are applied in ascending order, once.
    pub seq: u64,
    /// What happened.
    pub kind: RecordKind,
}

/// The kinds of accounting records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordKind {
    /// Boxed: a submission (with its text fields) is the largest of the others by far.
    JobSubmitted(Box<JobSubmitted>),
    JobStarted(JobStarted),
    JobEnded(JobEnded),
    JobSuspended(JobSuspended),
    /// A running job's nodes changed (failure management replaced or dropped one).
    JobResized(JobResized),
    /// Boxed: a step record (with its usage) is twice the size of any other.
    Step(Box<Step>),
    NodeEvent(NodeEvent),
    /// The cluster's size changed (kept as a capacity event by the usage rollups).
    ClusterCapacity(ClusterCapacity),
}

/// The cluster's registered size from `at` on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterCapacity {
    pub at: i64,
    pub cpus: u64,
    pub mem_mb: u64,
    pub nodes: u32,
}

/// A job (or array task) run accepted by the controller; creates the run. `req_nodes` and
/// `constraint` are not stored yet (sacct shows neither; a run row is at diesel's 32 columns).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobSubmitted {
    pub job_id: u32,
    /// 0 when not an array task.
    pub array_job_id: u32,
    pub array_task_id: Option<u32>,
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub user: String,
    /// `""` means the user's default account, resolved by the dbd.
    pub account: String,
    pub partition: String,
    pub submit: i64,
    pub eligible: i64,
    /// -1 = UNLIMITED.
    pub time_limit_min: i64,
    pub req_nodes: u32,
    pub req_cpus: u32,
    pub req_mem_mb: u64,
    pub workdir: String,
    pub constraint: String,
    /// 0 for the first run, one more at each requeue.
    pub run: u32,
    pub comment: String,
    /// The job's QOS (`""`: none recorded).
    pub qos: String,
    /// `--wckey` ("" = none).
    pub wckey: String,
    /// A heterogeneous job's component: the job's id (its leader's; 0 = none).
    pub het_job_id: u32,
    /// A heterogeneous job's component: its offset.
    pub het_offset: u32,
}

/// A run got its nodes and started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobStarted {
    pub job_id: u32,
    pub run: u32,
    pub start: i64,
    pub node_list: String,
    pub node_count: u32,
    pub cpus: u32,
    pub mem_mb: u64,
    /// 0 = unchanged.
    pub eligible: i64,
}

/// A running run's allocation changed at `at` to the one given: the allocation before it is
/// kept as an earlier record of the run (Slurm's RESIZING record), so usage on each side of
/// the change counts at its own size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobResized {
    pub job_id: u32,
    pub run: u32,
    pub at: i64,
    pub node_list: String,
    pub node_count: u32,
    pub cpus: u32,
    pub mem_mb: u64,
}

/// A run ended; `state` is a stored `JobState` value (`REQUEUED` for a requeued run).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobEnded {
    pub job_id: u32,
    pub run: u32,
    pub end: i64,
    pub state: u32,
    pub exit_code: i32,
    pub signal: i32,
    pub reason: String,
    /// Who cancelled the job, when a user did.
    pub requester_uid: Option<u32>,
}

/// A run was suspended (`suspended`) or resumed at `at`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobSuspended {
    pub job_id: u32,
    pub run: u32,
    pub at: i64,
    pub suspended: bool,
}

/// A step of a run, as last reported (a record with the same key replaces it, keeping the start,
/// name and nodes when the later record leaves them empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    pub job_id: u32,
    pub run: u32,
    /// The step number, or -4 (batch) / -5 (extern) as Slurm numbers them.
    pub step_id: i32,
    pub name: String,
    pub start: i64,
    /// 0 while running.
    pub end: i64,
    pub state: u32,
    pub exit_code: i32,
    pub signal: i32,
    pub node_list: String,
    pub node_count: u32,
    pub ntasks: u32,
    pub cpus: u32,
    /// What the step's tasks used, when measured (its end record carries it).
    pub usage: Option<sluice_vocab::jobacct::StepUsage>,
}

/// A node changed state: `down`, `drain`, `fail` and `power_down` open an event for the node,
/// `up` closes every open event of the node, `power_up` its open `power_down` event. Other
/// kinds open an event too, so nothing a newer controller sends is lost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeEvent {
    pub node: String,
    pub at: i64,
    pub kind: String,
    pub reason: String,
    pub reason_uid: u32,
    pub cpus: u32,
}

/// What a node event does to the node's open events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventEffect {
    /// Opens an event of this kind (or refreshes the open one).
    Open,
    /// Closes every open event of the node.
    CloseAll,
    /// Closes the node's open `power_down` event.
    ClosePowerDown,
}

impl NodeEvent {
    /// The kind that opens a power-saving event and the kind that closes it.
    pub const POWER_DOWN: &'static str = "power_down";

    pub(crate) fn effect(&self) -> EventEffect {
        match self.kind.as_str() {
            "up" => EventEffect::CloseAll,
            "power_up" => EventEffect::ClosePowerDown,
            _ => EventEffect::Open,
        }
    }
}

/// One run of a job as stored, with its steps (sacct's rows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobRun {
    pub cluster: String,
    pub job_id: u32,
    pub array_job_id: u32,
    pub array_task_id: Option<u32>,
    pub run: u32,
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub user: String,
    pub account: String,
    pub partition: String,
    /// A stored `JobState` value.
    pub state: u32,
    pub exit_code: i32,
    pub signal: i32,
    pub submit: i64,
    pub eligible: i64,
    pub start: i64,
    pub end: i64,
    /// Seconds spent suspended, including a suspension still going on at `end`.
    pub suspended_secs: i64,
    pub time_limit_min: i64,
    pub node_list: String,
    pub node_count: u32,
    pub cpus: u32,
    pub mem_mb: u64,
    pub req_cpus: u32,
    pub req_mem_mb: u64,
    pub workdir: String,
    pub reason: String,
    pub comment: String,
    /// The job's `--wckey` ("" = none), kept in `job_wckeys`.
    pub wckey: String,
    /// Its heterogeneous job's id (0: none) and its offset there, kept in `job_het`.
    pub het_job_id: u32,
    pub het_offset: u32,
    /// Who cancelled the run, when known.
    pub requester_uid: Option<u32>,
    /// The job's QOS (`""`: none recorded).
    pub qos: String,
    /// Batch step first, then extern, then numbered steps in order.
    pub steps: Vec<Step>,
}

/// A stored node event; `end` is 0 while it is open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeEventInfo {
    pub cluster: String,
    pub node: String,
    pub start: i64,
    pub end: i64,
    pub kind: String,
    pub reason: String,
    pub reason_uid: u32,
    pub cpus: u32,
}
