//! The node daemon's error type: everything that can stop it from starting or serving, and the
//! reasons a request is refused.

use std::path::PathBuf;

use sluice_vocab::conf::ConfError;
use sluice_wire::auth::AuthError;
use sluice_wire::daemon::ProcessError;

/// Why the node daemon could not start, stopped, or refused a request.
#[derive(Debug, thiserror::Error)]
pub enum NodedError {
    /// `slurm.conf` is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfError),
    /// `slurm.conf` has no `NodeName=` line for this node.
    #[error("{path}: no NodeName line for node {node}")]
    UnknownNode { path: PathBuf, node: String },
    /// `SlurmUser` names no user of this host.
    #[error("{path}: SlurmUser {user} is not a known user")]
    UnknownSlurmUser { path: PathBuf, user: String },
    /// The key next to `slurm.conf` is missing, unreadable or readable by others.
    #[error(transparent)]
    Key(#[from] AuthError),
    /// The host name could not be found (no `-N` given).
    #[error("cannot find this host's name: {0}")]
    Hostname(#[source] std::io::Error),
    /// The listening address could not be resolved or bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// A spool, pid, port or log file could not be written or read.
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The controller's address is not a valid endpoint.
    #[error("controller address {addr}: {source}")]
    CtldAddr {
        addr: String,
        #[source]
        source: tonic::transport::Error,
    },
    /// The listener, a pid, port or log file, the runtime or the signal handlers could not be
    /// set up.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// The gRPC server failed.
    #[error("server: {0}")]
    Serve(#[from] tonic::transport::Error),
    /// The caller may not launch or signal jobs on this node.
    #[error("Access/permission denied")]
    AccessDenied { uid: u32 },
    /// A launch without a valid job credential for it (Slurm's "Invalid job credential").
    #[error(transparent)]
    Credential(AuthError),
    /// No such step runs here (`sattach` to a step that ended or runs elsewhere).
    #[error("StepId={job}.{step} has no tasks running on this node")]
    NoSuchStep { job: u32, step: u32 },
    /// A request lacks something needed to run it.
    #[error("invalid request: {why}")]
    BadRequest { why: String },
    /// A job's processes could not be started.
    #[error("cannot start job {job_id}: {source}")]
    Spawn {
        job_id: u32,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot start job {job_id}: {why}")]
    Supervisor { job_id: u32, why: String },

    #[error(
        "{path}: the batch job supervisor is missing (it is installed next to sluice-noded; \
         SLUICE_STEPD names another)"
    )]
    NoSupervisor { path: PathBuf },
}

impl NodedError {
    /// A [`NodedError::File`] for `path`.
    pub fn file(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::File {
            path: path.into(),
            source,
        }
    }
}

impl From<NodedError> for tonic::Status {
    fn from(e: NodedError) -> Self {
        match &e {
            NodedError::AccessDenied { .. } | NodedError::Credential(_) => {
                tonic::Status::permission_denied(e.to_string())
            }
            NodedError::BadRequest { .. } => tonic::Status::invalid_argument(e.to_string()),
            NodedError::NoSuchStep { .. } => tonic::Status::not_found(e.to_string()),
            _ => tonic::Status::internal(e.to_string()),
        }
    }
}
