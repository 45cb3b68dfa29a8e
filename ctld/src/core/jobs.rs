//! Job records, the reasons a job waits or ended, and the job table with its indexes: the
//! pending queue in priority order, the active set, the purge queue and the reverse indexes
//! that dependencies, `singleton` and array throttles need.

use super::SimTime;
use super::arrays::ArrayMeta;
use super::deps::Dependencies;
use super::partitions::PartIdx;
use super::steps::StepStart;
use crate::conf::TimeLimit;
use fixedbitset::FixedBitSet;
use sluice_vocab::{FedJobId, JobState, NodeIdx};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

/// What a batch job runs; opaque to the core, shared by the tasks of an array. Saved whole
/// in the controller store (fields missing from an older save take their defaults).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LaunchSpec {
    /// The batch script.
    pub script: String,
    /// Working directory.
    pub workdir: String,
    /// Environment, in order.
    pub env: Vec<(String, String)>,
    /// `--output` pattern, if any.
    pub stdout: Option<String>,
    /// `--error` pattern, if any.
    pub stderr: Option<String>,
    /// sbatch `-i/--input` pattern: the script's stdin (`None`: `/dev/null`).
    pub stdin: Option<String>,
    /// An `srun` allocation: there is no batch script to launch; `srun` runs the steps.
    pub interactive: bool,
    /// `--account` as given ("" = the user's default account).
    pub account: String,
    /// The submitting user's login name (for accounting).
    pub user: String,
    /// The host the job was submitted from.
    pub submit_host: String,
    /// `--comment`.
    pub comment: String,
    /// sbatch: the arguments after the script's file name, given to the script (`$1`...).
    pub script_args: Vec<String>,
    /// Whether `-c` was given: only then does the job's environment carry
    /// `SLURM_CPUS_PER_TASK` (the core counts 1 CPU per task without it).
    pub cpus_per_task_given: bool,
    /// `--wckey` ("" = none).
    pub wckey: String,
    /// `--open-mode`: `Some(true)` append to the output files, `Some(false)` truncate them.
    pub open_append: Option<bool>,
    /// The job's QOS: `--qos` as given until submission resolves it (see [`super::qos`]);
    /// `""` in jobs saved before QOS existed.
    pub qos: String,
    /// `--bb` as given ("" = none). Kept and shown (`scontrol show job`'s `BurstBuffer=`), as
    /// by a Slurm without a burst buffer plugin: nothing stages data in or out.
    pub burst_buffer: String,
    /// `--reboot`: shown (`Reboot=1`); as in a Slurm without `RebootProgram`, whose
    /// controller cannot reboot nodes, the job starts on its nodes as they are.
    pub reboot: bool,
    /// `--container`: the OCI bundle asked for ("" = none). Shown (`Container=`) and given to
    /// the script as `SLURM_CONTAINER`; as in a Slurm without `oci.conf`, the script runs on
    /// the node directly, not inside a container runtime.
    pub container: String,
}

/// A job's place in its array: `array_job_id_task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayTask {
    /// The array's job id (the id of its first task).
    pub job: FedJobId,
    /// The task index.
    pub task: u32,
}

/// A job's place in its heterogeneous job: `leader+offset` (Slurm's `HetJobId`,
/// `HetJobOffset`). The leader (offset 0) runs the batch script; every component is a job of
/// its own, scheduled, started and ended with the others (see [`super::het`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HetMember {
    /// The heterogeneous job's id: its leader's job id.
    pub leader: FedJobId,
    /// The component's offset (0 for the leader).
    pub offset: u32,
}

/// Who held a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldKind {
    /// `--hold`, `scontrol uhold`, or `scontrol hold` by the owner: the owner may release it.
    User,
    /// `scontrol hold` by an administrator: only an administrator may release it.
    Admin,
}

/// Why a job waits, or why it ended (Slurm's `Reason` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobReason {
    /// Nothing to say.
    None,
    /// Waits behind a higher-priority job of its partition.
    Priority,
    /// The first job of its partition that does not fit now.
    Resources,
    /// Waits for its dependencies.
    Dependency,
    /// A dependency can never be met.
    DependencyNeverSatisfied,
    /// Held by its owner.
    JobHeldUser,
    /// Held by an administrator.
    JobHeldAdmin,
    /// Its partition is DOWN.
    PartitionDown,
    /// Its partition is INACTIVE.
    PartitionInactive,
    /// Its array has as many running tasks as its `%` throttle allows.
    JobArrayTaskLimit,
    /// It ended with a non-zero exit code or a signal.
    NonZeroExitCode,
    /// It reached its time limit.
    TimeLimit,
    /// A node it ran on failed.
    NodeDown,
    /// Federated: another sibling holds the start lock, or the lock was refused.
    FedJobLock,
    /// Its `--begin` time is still to come.
    BeginTime,
    /// Its partition's nodes can never satisfy it (`EnforcePartLimits=NO`).
    PartitionConfig,
    /// It asks for more nodes than its partition's `MaxNodes` (`EnforcePartLimits=NO`).
    PartitionNodeLimit,
    /// It asks for more time than its partition's `MaxTime` (`EnforcePartLimits=NO`).
    PartitionTimeLimit,
    /// Its account may not use its partition (`AllowAccounts`/`DenyAccounts`,
    /// `EnforcePartLimits=NO`).
    InvalidAccount,
    /// Its node's prolog failed: requeued and held (Slurm's `WAIT_MAX_REQUEUE`).
    LaunchFailedRequeuedHeld,
    /// An association limit (`AccountingStorageEnforce=limits`).
    Assoc(super::assoc::AssocReason),
    /// A QOS limit (`AccountingStorageEnforce=limits`).
    Qos(super::qos::QosReason),
    /// It could no longer end by its `--deadline` (state DEADLINE).
    DeadLine,
}

impl JobReason {
    /// Slurm's spelling (`squeue -o %r`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Priority => "Priority",
            Self::Resources => "Resources",
            Self::Dependency => "Dependency",
            Self::DependencyNeverSatisfied => "DependencyNeverSatisfied",
            Self::JobHeldUser => "JobHeldUser",
            Self::JobHeldAdmin => "JobHeldAdmin",
            Self::PartitionDown => "PartitionDown",
            Self::PartitionInactive => "PartitionInactive",
            Self::JobArrayTaskLimit => "JobArrayTaskLimit",
            Self::NonZeroExitCode => "NonZeroExitCode",
            Self::TimeLimit => "TimeLimit",
            Self::NodeDown => "NodeDown",
            Self::FedJobLock => "FedJobLock",
            Self::BeginTime => "BeginTime",
            Self::PartitionConfig => "PartitionConfig",
            Self::PartitionNodeLimit => "PartitionNodeLimit",
            Self::PartitionTimeLimit => "PartitionTimeLimit",
            Self::InvalidAccount => "InvalidAccount",
            Self::LaunchFailedRequeuedHeld => "launch failed requeued held",
            Self::Assoc(r) => r.as_str(),
            Self::Qos(r) => r.as_str(),
            Self::DeadLine => "DeadLine",
        }
    }
}

impl fmt::Display for JobReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a request names jobs: a job id (for an array job id: every task) or one array task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobRef {
    /// `1234`: the job, or every task of array 1234.
    Job(FedJobId),
    /// `1234_7`: one task of an array.
    Task(FedJobId, u32),
    /// `1234+1`: one component of a heterogeneous job.
    Het(FedJobId, u32),
}

/// A job's resource request, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRequest {
    /// Fewest nodes (`-N min`).
    pub min_nodes: u32,
    /// Most nodes (`-N min-max`, partition `MaxNodes`).
    pub max_nodes: u32,
    /// Tasks (`-n`).
    pub ntasks: u32,
    /// CPUs per task (`-c`).
    pub cpus_per_task: u32,
    /// Memory per node in MB (`--mem`); 0 when not asked.
    pub mem_per_node_mb: u64,
    /// `--constraint` as given.
    pub constraint: Option<String>,
    /// Time limit (the partition's `MaxTime` when not asked).
    pub time_limit: TimeLimit,
    /// `-s/--oversubscribe` or `--exclusive`, as asked.
    pub share: super::request::JobShare,
    /// `--ntasks-per-node`, `--mincpus`, `-w`, `-x`, `--begin`, `--nice`, `--signal`.
    pub place: super::request::PlaceOpts,
}

impl JobRequest {
    /// CPUs a node must have: `-c` and `--mincpus`.
    pub fn min_node_cpus(&self) -> u32 {
        self.cpus_per_task.max(self.place.mincpus.unwrap_or(0))
    }

    /// What the job asks of each node's memory.
    pub fn mem_ask(&self) -> super::alloc::MemAsk {
        use super::alloc::MemAsk;
        match (self.mem_per_node_mb, self.place.mem_per_cpu_mb) {
            (0, Some(per_cpu)) if per_cpu > 0 => MemAsk::PerCpu(per_cpu),
            (0, _) => MemAsk::Default,
            (per_node, _) => MemAsk::PerNode(per_node),
        }
    }

    /// The least memory a node must have to host the job: `--mem`, or `--mem-per-cpu` times
    /// the CPUs of one node's share (`-c`, `--mincpus`).
    pub fn min_node_mem_mb(&self) -> u64 {
        match self.mem_ask() {
            super::alloc::MemAsk::PerNode(mb) => mb,
            super::alloc::MemAsk::PerCpu(mb) => mb.saturating_mul(u64::from(self.min_node_cpus())),
            super::alloc::MemAsk::Default => 0,
        }
    }

    /// The memory the job is charged in accounting when it holds `nodes` nodes and `cpus`
    /// CPUs: `--mem` on each node, `--mem-per-cpu` on each CPU, else `node_mem` (the nodes'
    /// memory).
    pub fn mem_charged_mb(&self, nodes: usize, cpus: u64, node_mem: u64) -> u64 {
        match self.mem_ask() {
            super::alloc::MemAsk::PerNode(mb) => mb.saturating_mul(nodes as u64),
            super::alloc::MemAsk::PerCpu(mb) => mb.saturating_mul(cpus),
            super::alloc::MemAsk::Default => node_mem,
        }
    }

    /// Whether a node with `tmp_disk_mb` of `TmpDisk` has the `--tmp` the job asks.
    pub fn tmp_fits(&self, tmp_disk_mb: u64) -> bool {
        self.place.tmp_mb.is_none_or(|t| tmp_disk_mb >= t)
    }

    /// Tasks a node laid out as `t` can take: by `-c`, at most `--ntasks-per-node` (and
    /// within what the socket, core and thread options allow). An overcommitted job places one
    /// task's CPUs on each node (see [`JobRequest::alloc_tasks`]), so a node takes one.
    pub fn tasks_on(&self, t: super::nodes::Topo) -> u32 {
        let by_cpus = self.place.topo.tasks_on(t, self.cpus_per_task);
        if self.place.overcommit {
            return by_cpus.min(1);
        }
        self.place
            .ntasks_per_node
            .map_or(by_cpus, |n| by_cpus.min(n))
    }

    /// The tasks nodes are chosen for: `-n`, or with `-O/--overcommit` one per node of the
    /// minimum (Slurm allocates an overcommitted job as if it ran one task per node).
    pub fn alloc_tasks(&self) -> u32 {
        if self.place.overcommit {
            self.min_nodes.max(1)
        } else {
            self.ntasks
        }
    }

    /// The CPUs the job asks for at least: its tasks' (one task's per node when overcommitted).
    pub fn min_cpus(&self) -> u32 {
        self.alloc_tasks().saturating_mul(self.cpus_per_task)
    }

    /// How many nodes the job takes when enough are free (never fewer than `min_nodes` nor
    /// more than `max_nodes`): with a `-N` range as many as it may, as Slurm allocates "as
    /// many nodes as possible within the range without delaying the start", but no more
    /// nodes than tasks given with `-n` (unless overcommitted); the minimum under
    /// `--use-min-nodes` or without a range.
    pub fn want_nodes(&self) -> u32 {
        use super::request::NodeCountPref;
        let p = &self.place;
        let mut want = match p.node_pref {
            NodeCountPref::Fewest | NodeCountPref::UseMin => self.min_nodes,
            NodeCountPref::Range | NodeCountPref::Spread => self.max_nodes,
        };
        if p.ntasks_given && !p.overcommit {
            want = want.min(self.ntasks);
        }
        want.clamp(self.min_nodes, self.max_nodes.max(self.min_nodes))
    }
}

/// Node bitmaps of a job's `-w/--nodelist` (nodes it must get) and `-x/--exclude` (the
/// nodes it may get: every node but the excluded ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeMasks {
    /// The `-w` nodes (`None`: no `-w`).
    pub required: Option<FixedBitSet>,
    /// How many `-w` nodes there are.
    pub required_count: u32,
    /// Every node but the `-x` ones (`None`: no `-x`).
    pub allowed: Option<FixedBitSet>,
}

/// One job (or one array task).
#[derive(Debug, Clone)]
pub struct Job {
    /// Its id.
    pub id: FedJobId,
    /// Its array and task index, for array tasks.
    pub array: Option<ArrayTask>,
    /// Its heterogeneous job and offset, for components of one.
    pub het: Option<HetMember>,
    /// `--job-name`.
    pub name: String,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Its partition.
    pub partition: PartIdx,
    /// What it asked for.
    pub req: JobRequest,
    /// Nodes matching its constraint (shared between jobs with the same constraint).
    pub(crate) feature_nodes: Option<Arc<FixedBitSet>>,
    /// Its `-w`/`-x` node bitmaps (built from [`JobRequest::place`]).
    pub(crate) masks: Option<Arc<NodeMasks>>,
    /// Whether its `--signal` was sent in the current run.
    pub signal_sent: bool,
    /// The `--mail-type` time-limit shares mailed in the current run (not saved).
    pub mail_sent: u16,
    /// What its partition can never give it (`EnforcePartLimits=NO`): it pends for this.
    pub part_limit: Option<JobReason>,
    /// State.
    pub state: JobState,
    /// Why it waits, or why it ended.
    pub reason: JobReason,
    /// Hold, if held.
    pub hold: Option<HoldKind>,
    /// Its dependencies, if any.
    pub deps: Option<Box<Dependencies>>,
    /// Whether it may be requeued (`--requeue`, default yes).
    pub requeue: bool,
    /// `-k/--no-kill`: a failed node does not end it (see [`super::nonstop`]).
    pub no_kill: bool,
    /// Submission time (its age priority).
    pub submit_time: SimTime,
    /// Start of the current (or last) run.
    pub start_time: Option<SimTime>,
    /// End of the last run.
    pub end_time: Option<SimTime>,
    /// Seconds spent suspended in the current run (not counted against the time limit).
    pub suspended_secs: u64,
    /// Since when it is suspended.
    pub suspended_at: Option<SimTime>,
    /// Nodes of the current (or last) run.
    pub nodes: Vec<NodeIdx>,
    /// Exit code of the batch script.
    pub exit_code: i32,
    /// Signal that ended the batch script.
    pub exit_signal: i32,
    /// Its processes are being killed; its nodes stay allocated until it exits.
    pub completing: bool,
    /// When to send SIGKILL (KillWait after SIGTERM).
    pub kill_at: Option<SimTime>,
    /// How many times it was requeued.
    pub restarts: u32,
    /// Who cancelled the current run (Slurm's `requid`; sacct's `CANCELLED by <uid>`).
    pub requester_uid: Option<u32>,
    /// The next step id.
    pub next_step: u32,
    /// Steps given out and not yet done, by step id, with how each started (for the record
    /// of its end; saved with the job).
    pub open_steps: BTreeMap<u32, StepStart>,
    /// What it runs.
    pub launch: Arc<LaunchSpec>,
    /// Its federation state (`None` for a job that is not federated).
    pub fed: Option<Box<super::federation::FedJob>>,
    /// Its priority as last computed ([`super::priority`]); set while it is queued.
    pub priority: u32,
    /// Its partition's `PriorityTier` as last computed.
    pub tier: u16,
}

impl Job {
    /// Whether a run that fails or is killed may go back to the queue: `--requeue` (the
    /// default) on a batch job. An `srun` or `salloc` allocation never is, as in Slurm: its
    /// command is gone, so a second run would hold its nodes with nobody to end it.
    pub fn may_requeue(&self) -> bool {
        self.requeue && !self.launch.interactive
    }

    /// When the current run reaches its time limit (`NEVER` when unlimited or not running).
    pub fn deadline(&self) -> SimTime {
        match (self.start_time, self.req.time_limit.as_secs()) {
            (Some(start), Some(limit)) => start.plus(limit).plus(self.suspended_secs),
            _ => SimTime::NEVER,
        }
    }

    /// Whether it waits in the queue (pending, not completing a requeued run).
    pub fn is_queued(&self) -> bool {
        self.state == JobState::Pending && !self.completing
    }

    /// Slurm's display id: `123`, `100_7` or `100+1`.
    pub fn display_id(&self) -> String {
        match (self.array, self.het) {
            (Some(a), _) => format!("{}_{}", a.job, a.task),
            (None, Some(h)) => format!("{}+{}", h.leader, h.offset),
            (None, None) => self.id.to_string(),
        }
    }

    /// Whether a batch script runs for it on its first node: not for an `srun` or `salloc`
    /// allocation, nor for a heterogeneous component other than the leader.
    pub fn runs_batch_script(&self) -> bool {
        !self.launch.interactive && !self.het_follower()
    }

    /// Whether it is a component of a heterogeneous job other than the leader: it runs no
    /// batch script and starts, ends and is requeued with its leader.
    pub fn het_follower(&self) -> bool {
        self.het.is_some_and(|h| h.offset > 0)
    }

    /// How this job's own record is named: an array task by its task, a heterogeneous
    /// component by its offset, others by id (a plain id of an array's first task or of a
    /// heterogeneous leader would name every task or component).
    pub fn own_ref(&self) -> JobRef {
        match (self.array, self.het) {
            (Some(a), _) => JobRef::Task(a.job, a.task),
            (None, Some(h)) => JobRef::Het(h.leader, h.offset),
            (None, None) => JobRef::Job(self.id),
        }
    }
}

/// The priority-queue key: a higher partition tier first, then a higher priority, then a
/// lower `--nice`, then age (earlier submission first), then lower id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct QueueKey {
    tier: std::cmp::Reverse<u16>,
    priority: std::cmp::Reverse<u32>,
    nice: i32,
    submit: SimTime,
    /// The job.
    pub id: FedJobId,
}

/// All jobs and their indexes.
#[derive(Debug, Default)]
pub(crate) struct JobTable {
    pub map: HashMap<FedJobId, Job>,
    /// Pending jobs, in priority order.
    pub queue: BTreeSet<QueueKey>,
    /// Jobs holding nodes (running, suspended or completing).
    pub active: BTreeSet<FedJobId>,
    /// Finished jobs by end time, for the MinJobAge purge.
    pub finished: BTreeSet<(SimTime, FedJobId)>,
    /// For each job, the jobs whose dependencies name it.
    pub dependents: HashMap<FedJobId, Vec<FedJobId>>,
    /// Running or suspended jobs per (uid, name), for `singleton`.
    pub running_names: HashMap<(u32, String), u32>,
    /// Array metadata by array job id.
    pub arrays: HashMap<FedJobId, ArrayMeta>,
    /// The components of each heterogeneous job by leader id, in offset order.
    pub hets: HashMap<FedJobId, Vec<FedJobId>>,
    /// Node bitmaps of constraints seen so far, by constraint text.
    pub constraint_nodes: HashMap<String, Arc<FixedBitSet>>,
}

impl JobTable {
    pub fn queue_key(job: &Job) -> QueueKey {
        QueueKey {
            tier: std::cmp::Reverse(job.tier),
            priority: std::cmp::Reverse(job.priority),
            nice: job.req.place.nice,
            submit: job.submit_time,
            id: job.id,
        }
    }

    /// Whether commands may name job `id`: held, and not a federated submission being
    /// withdrawn (`sbatch` said it failed).
    fn known(&self, id: FedJobId) -> bool {
        self.map.get(&id).is_some_and(|j| !j.is_withdrawing())
    }

    /// Resolves a reference to job ids.
    pub fn resolve(&self, r: JobRef) -> Result<Vec<FedJobId>, crate::error::CtldError> {
        use crate::error::CtldError;
        match r {
            JobRef::Job(id) if self.hets.contains_key(&id) => {
                let ids: Vec<FedJobId> = self.hets[&id]
                    .iter()
                    .copied()
                    .filter(|c| self.known(*c))
                    .collect();
                if ids.is_empty() {
                    Err(CtldError::InvalidJobId)
                } else {
                    Ok(ids)
                }
            }
            JobRef::Het(leader, offset) => self
                .hets
                .get(&leader)
                .and_then(|c| c.get(offset as usize))
                .copied()
                .filter(|id| self.known(*id))
                .map(|id| vec![id])
                .ok_or(CtldError::InvalidJobId),
            JobRef::Job(id) => match self.arrays.get(&id) {
                Some(meta) => {
                    let ids: Vec<FedJobId> = meta
                        .tasks
                        .iter()
                        .map(|t| t.1)
                        .filter(|t| self.known(*t))
                        .collect();
                    if ids.is_empty() {
                        Err(CtldError::InvalidJobId)
                    } else {
                        Ok(ids)
                    }
                }
                None if self.known(id) => Ok(vec![id]),
                None => Err(CtldError::InvalidJobId),
            },
            JobRef::Task(array, task) => self
                .arrays
                .get(&array)
                .and_then(|m| m.tasks.iter().find(|t| t.0 == task))
                .map(|t| t.1)
                .filter(|id| self.known(*id))
                .map(|id| vec![id])
                .ok_or(CtldError::InvalidJobId),
        }
    }
}
