//! Why a federation request failed, with Slurm's texts for Slurm's errors, and the one mapping
//! to gRPC statuses. A failed request has changed nothing.

use super::types::LockRefusal;
use super::viable::ViableError;
use crate::store::StoreError;

/// The longest start-lock lease a controller may ask for, in seconds.
pub const MAX_LEASE_SECS: u32 = 3_600;

/// Why a federation request failed.
#[derive(Debug, thiserror::Error)]
pub enum FedError {
    /// A storage failure (or an unknown cluster, as the admin store words it).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The calling cluster is in no federation.
    #[error("Not a valid federated job")]
    NotInFederation { cluster: String },
    /// No federated job with this id in the caller's federation (`ESLURM_INVALID_JOB_ID`).
    #[error("Invalid job id specified")]
    InvalidJobId { job_id: u32 },
    /// A job id whose origin bits do not name the submitting cluster (`ESLURM_INVALID_JOB_ID`).
    #[error("Invalid job id specified")]
    ForeignJobId { job_id: u32, origin: String },
    /// A second, different submission of a live job id (`ESLURM_DUPLICATE_JOB_ID`).
    #[error("Duplicate job id")]
    DuplicateJobId { job_id: u32 },
    /// The viable set could not be computed.
    #[error(transparent)]
    Viable(#[from] ViableError),
    /// The origin is draining or inactive (`ESLURM_SUBMISSIONS_DISABLED`).
    #[error("System submissions disabled")]
    SubmissionsDisabled { cluster: String },
    /// The job started or is being started (`ESLURM_JOB_NOT_PENDING`).
    #[error("Job is no longer pending execution")]
    NotPending { job_id: u32 },
    /// A requeue of a job that is pending (`ESLURM_JOB_PENDING`).
    #[error("Job is pending execution")]
    StillPending { job_id: u32 },
    /// The job already ended or was cancelled (`ESLURM_ALREADY_DONE`).
    #[error("Job/step already completing or completed")]
    AlreadyDone { job_id: u32 },
    /// A sibling name that is not a member of the job's federation (`ESLURM_INVALID_CLUSTER_NAME`).
    #[error("Invalid cluster name")]
    InvalidClusterName { name: String },
    /// A hold or release that did not come from the job's origin.
    #[error("Only the origin cluster {origin} may hold or release job {job_id}")]
    NotOrigin { job_id: u32, origin: String },
    /// An end report from a cluster the job does not run on.
    #[error("Job {job_id} is not running on cluster {cluster}")]
    NotRunningHere { job_id: u32, cluster: String },
    /// An end report whose state is not a final job state.
    #[error("Job state {state} is not a final state")]
    NotFinalState { state: u32 },
    /// A one-step start (`StartFedJob`) refused for `refusal`: nothing changed, and the caller
    /// gives its allocation back. Not a failure of the request: the service answers it.
    #[error("start of job {job_id} refused: {refusal:?}")]
    StartRefused { job_id: u32, refusal: LockRefusal },
    /// A start-lock lease outside 1..=[`MAX_LEASE_SECS`].
    #[error("start lock lease of {secs} s is out of range 1..={MAX_LEASE_SECS}")]
    InvalidLease { secs: u32 },
}

impl From<diesel::result::Error> for FedError {
    fn from(e: diesel::result::Error) -> Self {
        Self::Store(StoreError::Db(e))
    }
}

impl FedError {
    /// Whether a concurrent transaction caused the failure, so running the request again may
    /// succeed (deadlock, serialization failure, SQLite busy, a racing insert of one key).
    pub(crate) fn is_transient(&self) -> bool {
        use diesel::result::{DatabaseErrorKind as K, Error as E};
        let Self::Store(StoreError::Db(E::DatabaseError(kind, info))) = self else {
            return false;
        };
        match kind {
            K::SerializationFailure | K::UniqueViolation => true,
            _ => {
                let msg = info.message().to_ascii_lowercase();
                [
                    "deadlock",
                    "database is locked",
                    "lock wait timeout",
                    "could not serialize",
                ]
                .iter()
                .any(|m| msg.contains(m))
            }
        }
    }
}

impl From<FedError> for tonic::Status {
    fn from(e: FedError) -> Self {
        use FedError as E;
        let msg = e.to_string();
        match e {
            E::Store(inner) => inner.into(),
            E::InvalidJobId { .. } | E::ForeignJobId { .. } => tonic::Status::not_found(msg),
            E::DuplicateJobId { .. } => tonic::Status::already_exists(msg),
            E::Viable(_)
            | E::InvalidClusterName { .. }
            | E::NotFinalState { .. }
            | E::InvalidLease { .. } => tonic::Status::invalid_argument(msg),
            E::NotInFederation { .. }
            | E::SubmissionsDisabled { .. }
            | E::NotPending { .. }
            | E::StillPending { .. }
            | E::AlreadyDone { .. }
            | E::NotOrigin { .. }
            | E::NotRunningHere { .. }
            | E::StartRefused { .. } => tonic::Status::failed_precondition(msg),
        }
    }
}
