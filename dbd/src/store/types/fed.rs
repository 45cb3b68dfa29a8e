//! The federation arbiter's domain types: a federated job as the dbd records it, the events
//! it sends to each cluster, the federation view a controller gets, and the requests.

use std::collections::BTreeSet;

/// Where a federated job is in its life, as the arbiter sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FedPhase {
    /// Waiting to start on one of its active siblings (or held on the origin).
    Pending,
    /// Committed as started on its winner.
    Started,
    /// Its run ended (the winner reported the final state).
    Ended,
    /// Cancelled while pending.
    Cancelled,
    /// No longer federated: a cluster it depended on left the federation (Slurm's removal rules).
    Detached,
}

impl FedPhase {
    /// The stored value.
    pub const fn stored(self) -> i32 {
        match self {
            Self::Pending => 0,
            Self::Started => 1,
            Self::Ended => 2,
            Self::Cancelled => 3,
            Self::Detached => 4,
        }
    }

    /// The phase a stored value denotes; an unknown value reads as `Detached` (left alone).
    pub fn from_stored(v: i32) -> Self {
        match v {
            0 => Self::Pending,
            1 => Self::Started,
            2 => Self::Ended,
            3 => Self::Cancelled,
            _ => Self::Detached,
        }
    }

    /// Whether the arbiter is done with the job.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Ended | Self::Cancelled | Self::Detached)
    }

    /// A display name for logs and `GetJob`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Started => "STARTED",
            Self::Ended => "ENDED",
            Self::Cancelled => "CANCELLED",
            Self::Detached => "DETACHED",
        }
    }
}

/// A requeue of a running federated job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RequeueMode {
    /// No requeue: the run ends for good.
    #[default]
    None,
    /// Requeue and offer the job to every viable sibling again.
    Requeue,
    /// Requeue held: the job stays on the origin only.
    RequeueHold,
}

impl RequeueMode {
    /// The stored (and wire) value.
    pub const fn stored(self) -> i32 {
        match self {
            Self::None => 0,
            Self::Requeue => 1,
            Self::RequeueHold => 2,
        }
    }

    /// The mode a stored value denotes; unknown values read as `None`.
    pub fn from_stored(v: i32) -> Self {
        match v {
            1 => Self::Requeue,
            2 => Self::RequeueHold,
            _ => Self::None,
        }
    }
}

/// The start lock of a pending job: held by `cluster` until `expires` (dbd clock, unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartLock {
    pub cluster: String,
    pub token: u64,
    pub expires: i64,
}

/// A federated job as the arbiter records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FedJob {
    pub federation: String,
    pub job_id: u32,
    pub origin: String,
    pub phase: FedPhase,
    /// Held or dependent: kept on the origin until offered.
    pub held: bool,
    pub is_array: bool,
    /// The `-M/--clusters` list as given (`""` = all).
    pub req_clusters: String,
    /// The `--cluster-constraint` as given.
    pub cluster_features: String,
    pub viable: BTreeSet<String>,
    /// The clusters that hold a copy of the job (the origin included when it is viable).
    pub active: BTreeSet<String>,
    /// The start lock (kept by the winner once started).
    pub lock: Option<StartLock>,
    pub winner: Option<String>,
    /// A requeue asked of the running cluster, applied when it reports the end.
    pub requeue: RequeueMode,
    /// The final job state (`sluice_vocab::JobState::stored`) once ended or cancelled.
    pub final_state: u32,
    pub exit_code: i32,
    /// Grows at every change.
    pub version: u64,
    pub submit_time: i64,
    pub start_time: i64,
    pub end_time: i64,
    /// The origin's serialized submit request (opaque to the dbd).
    pub desc: Vec<u8>,
}

impl FedJob {
    /// The live lock at `now`, if any.
    pub fn live_lock(&self, now: i64) -> Option<&StartLock> {
        self.lock.as_ref().filter(|l| l.expires > now)
    }
}

/// What a cluster learns through its event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FedEventKind {
    /// Hold a sibling copy of `job` (replace any older copy with that id).
    SiblingOffered {
        job_id: u32,
        origin: String,
        viable: BTreeSet<String>,
        desc: Vec<u8>,
    },
    /// Drop the sibling copy: it started on `winner`, or was withdrawn (`winner` `None`).
    SiblingRevoked { job_id: u32, winner: Option<String> },
    /// The job was cancelled (the running cluster kills it; with a requeue mode it requeues it).
    /// `requester_uid`: the user who cancelled it (a cancel, not a requeue), when known.
    SiblingCancelled {
        job_id: u32,
        requeue: RequeueMode,
        requester_uid: Option<u32>,
    },
    /// The pending job's description changed.
    SiblingUpdated { job_id: u32, desc: Vec<u8> },
    /// To the origin: the job started on `cluster` (the origin keeps a revoked tracker).
    JobStartedElsewhere { job_id: u32, cluster: String },
    /// To the origin: the run on `cluster` ended in `state`.
    JobEnded {
        job_id: u32,
        cluster: String,
        state: u32,
        exit_code: i32,
    },
    /// To the origin: the job is pending again after a requeue (held: offered to nobody else).
    JobRequeued {
        job_id: u32,
        held: bool,
        origin_viable: bool,
    },
    /// The job is no longer federated here: keep a running or pending copy as a local job,
    /// drop a revoked tracker (Slurm's removal rules).
    JobLeftFederation { job_id: u32 },
    /// The federation (members, fed states, features) changed: fetch the view again.
    FederationChanged,
}

impl FedEventKind {
    /// The job the event is about (0 for `FederationChanged`).
    pub fn job_id(&self) -> u32 {
        match self {
            Self::SiblingOffered { job_id, .. }
            | Self::SiblingRevoked { job_id, .. }
            | Self::SiblingCancelled { job_id, .. }
            | Self::SiblingUpdated { job_id, .. }
            | Self::JobStartedElsewhere { job_id, .. }
            | Self::JobEnded { job_id, .. }
            | Self::JobRequeued { job_id, .. }
            | Self::JobLeftFederation { job_id } => *job_id,
            Self::FederationChanged => 0,
        }
    }
}

/// One event of a cluster's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FedEvent {
    pub seq: u64,
    pub federation: String,
    pub kind: FedEventKind,
    pub created: i64,
}

/// A page of a cluster's event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    /// Events after the cursor asked for (and after the acknowledged cursor), in seq order.
    pub events: Vec<FedEvent>,
    /// The cluster's acknowledged cursor.
    pub acked: u64,
}

/// A federation member as a controller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FedMember {
    pub name: String,
    pub fed_id: u32,
    pub fed_state: u32,
    pub features: Vec<String>,
    pub control_host: String,
    pub control_port: u32,
    pub rpc_version: u32,
}

/// A controller's federation: itself and its siblings (by name). Empty `federation` when the
/// cluster is in none (then it issues plain job ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FedView {
    pub cluster: String,
    pub federation: String,
    /// This cluster as a member (fed id 0 and NA outside a federation).
    pub this: FedMember,
    /// The other live members, by name.
    pub siblings: Vec<FedMember>,
}

/// A controller announcing itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub cluster: String,
    pub control_host: String,
    pub control_port: u32,
    pub rpc_version: u32,
    /// When the controller process started (unix seconds): a newer one than recorded means a
    /// restart, which releases the start locks the old process held.
    pub start_time: i64,
}

/// The origin recording a federated job it validated locally.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubmitFedJob {
    pub origin: String,
    pub job_id: u32,
    pub desc: Vec<u8>,
    pub req_clusters: String,
    pub cluster_features: String,
    /// Held (priority 0) or dependent: stays on the origin.
    pub held: bool,
    pub is_array: bool,
}

/// A change of a pending job's clusters, features or description.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdateFedJob {
    pub job_id: u32,
    pub caller: String,
    /// New `-M` list (`Some("")` clears it).
    pub req_clusters: Option<String>,
    /// New constraint (`Some("")` clears it).
    pub cluster_features: Option<String>,
    /// New description, pushed to every active sibling.
    pub desc: Option<Vec<u8>>,
}

/// The outcome of a start-lock request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockOutcome {
    Granted { token: u64, expires: i64 },
    Refused { reason: LockRefusal },
}

/// Why a start lock or commit was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockRefusal {
    /// Another cluster holds a live lease.
    HeldBy { cluster: String, expires: i64 },
    /// The job is no longer pending (started, ended, cancelled or left the federation).
    NotPending,
    /// The caller holds no copy of the job (never offered, revoked or withdrawn).
    NotActiveHere,
    /// Held on the origin: nobody may start it.
    Held,
    /// Commit only: the caller's lease expired or was taken ("lost lock").
    LostLock,
}

/// What a cancel did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelOutcome {
    /// The pending job is cancelled everywhere.
    Cancelled,
    /// The job runs on `cluster`, which was told to kill it (or is the caller); its end report
    /// finishes the job.
    Running { cluster: String },
}
