//! The controller's errors. Request errors carry Slurm's error texts (`slurm_strerror`), which
//! the commands print as Slurm's do (`sbatch: error: Batch job submission failed: <text>`).

use sluice_vocab::FedJobId;
use sluice_vocab::conf::ConfError;

/// Everything a controller operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CtldError {
    /// The configuration is unusable.
    #[error(transparent)]
    Conf(#[from] ConfError),
    /// `ESLURM_INVALID_PARTITION_NAME`.
    #[error("Invalid partition name specified")]
    InvalidPartitionName { name: String },
    /// `ESLURM_DEFAULT_PARTITION_NOT_SET`.
    #[error("No partition specified or system default partition")]
    DefaultPartitionNotSet,
    /// `ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP`.
    #[error("User's group not permitted to use this partition")]
    PartitionGroupDenied { partition: String },
    /// `ESLURM_INVALID_ACCOUNT`: the job's account is not allowed in the partition
    /// (`AllowAccounts`/`DenyAccounts`, refused at submission with `EnforcePartLimits`).
    #[error("Invalid account or account/partition combination specified")]
    InvalidAccount { partition: String },
    /// `ESLURM_ACCOUNTING_POLICY`: the job breaks an association limit
    /// (`AccountingStorageEnforce=limits`).
    #[error(
        "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
    )]
    AccountingPolicy,
    /// `ESLURM_INVALID_QOS`: an unknown QOS, one the job's association may not use
    /// (`AccountingStorageEnforce=qos`), or one the partition's `AllowQos`/`DenyQos` refuses.
    #[error("Invalid qos specification")]
    InvalidQos,
    /// `ESLURM_PARTITION_NOT_AVAIL`: the partition is INACTIVE or DRAIN.
    #[error("Required partition not available (inactive or drain)")]
    PartitionNotAvailable { partition: String },
    /// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`: no nodes of the partition could ever run it.
    #[error("Requested node configuration is not available")]
    NodeConfigUnavailable,
    /// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE` for memory per node above every node of the
    /// partition: refused at submission whatever `EnforcePartLimits` (as Slurm refuses it).
    #[error("Requested node configuration is not available")]
    MemoryUnsatisfiable,
    /// The same for `--tmp` above every node's `TmpDisk`.
    #[error("Requested node configuration is not available")]
    TmpDiskUnsatisfiable,
    /// `ESLURM_INVALID_TIME_LIMIT`: above the partition's `MaxTime`.
    #[error("Requested time limit is invalid (missing or exceeds some limit)")]
    InvalidTimeLimit,
    /// `ESLURM_USER_ID_MISSING`: a submission for another user from somebody other than root
    /// or the SlurmUser.
    #[error("Invalid user id")]
    InvalidUserId,
    /// `ESLURM_INVALID_TIME_MIN_LIMIT`: `--time-min` that does not parse or exceeds the job's
    /// time limit.
    #[error("Invalid time-min specification (exceeds job's time or other limits)")]
    InvalidTimeMin,
    /// `ESLURM_INVALID_NODE_COUNT`: zero, min above max, or above the partition's `MaxNodes`.
    #[error("Node count specification invalid")]
    InvalidNodeCount,
    /// `ESLURM_BAD_TASK_COUNT`.
    #[error("Task count specification invalid")]
    InvalidTaskCount,
    /// `ESLURM_INVALID_CPU_COUNT`.
    #[error("CPU count specification invalid")]
    InvalidCpuCount,
    /// `ESLURM_INVALID_FEATURE`: a malformed `--constraint` or a feature no node has.
    #[error("Invalid feature specification")]
    InvalidFeature { spec: String },
    /// `sbatch --batch` malformed, or naming a feature the job's `--constraint` does not.
    #[error("Job --batch option is invalid or not a subset of --constraints")]
    InvalidBatchFeatures { spec: String },
    /// `ESLURM_DEPENDENCY`: a malformed `--dependency` or one naming an unknown job.
    #[error("Job dependency problem")]
    Dependency { spec: String },
    /// `ESLURM_INVALID_ARRAY`.
    #[error("Invalid job array specification")]
    InvalidArray { spec: String },
    /// A sharing request (`--oversubscribe`/`--exclusive`) this controller does not know, from
    /// a newer client (worded as Slurm's commands word a bad `--exclusive`).
    #[error("Invalid --exclusive specification")]
    InvalidShare { value: i32 },
    /// `EAGAIN` when `MaxJobCount` is reached (sbatch retries on it).
    #[error("Resource temporarily unavailable")]
    MaxJobCount { limit: u32 },
    /// `EAGAIN` when the leased job ids are used up (sbatch retries on it).
    #[error("Resource temporarily unavailable")]
    JobIdsExhausted,
    /// `ESLURM_NODES_BUSY`: a step's CPUs are held by the job's other steps (srun retries).
    #[error("Requested nodes are busy")]
    NodesBusy,
    /// `ESLURM_TOO_MANY_REQUESTED_CPUS`: a step larger than its job's allocation.
    #[error("More processors requested than permitted")]
    TooManyProcessors,
    /// `--signal` with a signal number out of range.
    #[error("Invalid signal specified")]
    InvalidSignal,
    /// `--mail-type` with a name Slurm does not know.
    #[error("--mail-type={spec} invalid")]
    InvalidMailType { spec: String },
    /// `ESLURM_INVALID_JOB_ID`.
    #[error("Invalid job id specified")]
    InvalidJobId,
    /// `ESLURM_INVALID_NODE_NAME`.
    #[error("Invalid node name specified")]
    InvalidNodeName { name: String },
    /// A heartbeat from a node set DOWN for not responding: it must register again, so that
    /// `ReturnToService` decides whether it comes back.
    #[error("node {name} is DOWN (Not responding): register again")]
    NodeMustRegister { name: String },
    /// A node's heartbeat names a run of a job that is over (it missed the requeue): it
    /// registers again and is told to kill that run.
    #[error("node {name} holds run {run} of job {job}, which is over: register again")]
    StaleRun {
        name: String,
        job: FedJobId,
        run: u32,
    },
    /// `ESLURM_ACCESS_DENIED`.
    #[error("Access/permission denied")]
    AccessDenied,
    /// `ESLURM_ALREADY_DONE`.
    #[error("Job/step already completing or completed")]
    AlreadyDone,
    /// A node's report about a run, node or step that is not the job's current one: dropped.
    #[error("stale report for job {job} dropped: {stale}")]
    StaleReport {
        job: sluice_vocab::FedJobId,
        stale: crate::core::Stale,
    },
    /// `ESLURM_JOB_PENDING`.
    #[error("Job is pending execution")]
    JobPending,
    /// `ESLURM_JOB_NOT_PENDING`.
    #[error("Job is no longer pending execution")]
    JobNotPending,
    /// `ESLURM_JOB_NOT_RUNNING`.
    #[error("Job is not running")]
    JobNotRunning,
    /// `ESLURM_JOB_NOT_SUSPENDED`.
    #[error("Job is not suspended")]
    JobNotSuspended,
    /// `ESLURM_DISABLED`: e.g. requeue of a `--no-requeue` job.
    #[error("Requested operation is presently disabled")]
    Disabled,
    /// `ESLURM_BATCH_ONLY`: e.g. requeue of an `srun` or `salloc` allocation.
    #[error("Only batch jobs are accepted or processed")]
    BatchOnly,
    /// `ESLURM_NOT_HET_JOB_LEADER`: e.g. requeue of a heterogeneous component other than the
    /// leader.
    #[error("Job not heterogeneous job leader")]
    NotHetLeader,
    /// `ESLURM_NOT_WHOLE_HET_JOB`: e.g. cancelling one pending component of a heterogeneous
    /// job.
    #[error("Operation not permitted on individual component of heterogeneous job")]
    NotWholeHetJob,
    /// `ESLURM_TRANSITION_STATE_NO_UPDATE`: the job is still completing.
    #[error("Job can not be altered now, try again later")]
    TransitionState,
    /// `ESLURM_SUBMISSIONS_DISABLED`: the cluster's fedstate takes no new federated jobs.
    #[error("System submissions disabled")]
    SubmissionsDisabled,
    /// `ESLURM_JOB_NOT_FEDERATED`.
    #[error("Not a valid federated job")]
    JobNotFederated,
    /// `scontrol reconfigure` with changes the running controller cannot take; nothing of the
    /// new file was applied.
    #[error(
        "slurm.conf changes need a controller restart: {} (nothing was changed)",
        .changes.join("; ")
    )]
    RestartNeeded { changes: Vec<String> },
    /// `SuspendExcNodes+=` or `-=` with a `:count` (Slurm's wording).
    #[error(
        "Append and remove from SuspendExcNodes with ':' is not supported. Please use direct assignment instead."
    )]
    SuspendExcCountUpdate,
    /// `SuspendExcNodes+=` or `-=` while the current value has counts (Slurm's wording).
    #[error(
        "SuspendExcNodes may have ':' in it. Append and remove are not supported in this case. Please use direct assignment instead."
    )]
    SuspendExcHasCounts,
    /// A failure management request to a controller without `SlurmctldPlugin=slurmctld/nonstop`.
    #[error("failure management (SlurmctldPlugin=slurmctld/nonstop) is not configured")]
    NonstopNotConfigured,
    /// No spare node could replace a job's node (Slurm's smd wording).
    #[error("Failed to replace the node")]
    NoSpareNode {
        job: sluice_vocab::FedJobId,
        node: String,
    },
    /// A failure management request naming a node outside the job's allocation.
    #[error("node {node} is not in the allocation of job {job}")]
    NodeNotInJob {
        job: sluice_vocab::FedJobId,
        node: String,
    },
    /// A replacement asked for a node that is neither failed nor failing.
    #[error("node {node} of job {job} is neither failed nor failing")]
    NodeNotFailed {
        job: sluice_vocab::FedJobId,
        node: String,
    },
    /// The job used all the replacements `MaxSpareNodeCount` allows.
    #[error("job {job} already used its {max} spare nodes (MaxSpareNodeCount)")]
    SpareLimit {
        job: sluice_vocab::FedJobId,
        max: u32,
    },
    /// Dropping the node would leave the job without its only node or its batch script.
    #[error("node {node} can not be dropped from job {job}: {why}")]
    NodeNotDroppable {
        job: sluice_vocab::FedJobId,
        node: String,
        why: &'static str,
    },
    /// A time limit extension beyond what the job's replacements, drops and waits earned.
    #[error(
        "time limit extension of {asked} minutes refused: job {job} may extend by {available} minutes"
    )]
    ExtensionRefused {
        job: sluice_vocab::FedJobId,
        asked: u32,
        available: u32,
    },
    /// A state `SuspendExcStates` does not know.
    #[error("Invalid SuspendExcState {state}")]
    InvalidSuspendExcState { state: String },
}

impl CtldError {
    /// The line Slurm's controller sends with some refusals (its `err_msg`), which the commands
    /// print before the error itself: `sbatch: error: invalid partition specified: nope`.
    pub fn note(&self) -> Option<String> {
        match self {
            Self::InvalidPartitionName { name } => {
                Some(format!("invalid partition specified: {name}"))
            }
            Self::MemoryUnsatisfiable => Some("Memory specification can not be satisfied".into()),
            Self::TmpDiskUnsatisfiable => {
                Some("Temporary disk specification can not be satisfied".into())
            }
            _ => None,
        }
    }
}
