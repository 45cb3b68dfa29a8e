//! The store's error type and its one mapping to gRPC statuses, whose messages are the texts
//! Slurm prints for the same failures.

use std::fmt;

/// The kind of object an error names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Cluster,
    Federation,
    Account,
    User,
    Qos,
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cluster => "cluster",
            Self::Federation => "federation",
            Self::Account => "account",
            Self::User => "user",
            Self::Qos => "qos",
        })
    }
}

/// Why a store operation failed. A failed change request has changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL names no backend we support.
    #[error(
        "unsupported database URL {url:?}: use sqlite://, mysql://, mariadb://, postgres:// or a path"
    )]
    UnsupportedUrl { url: String },
    /// The database could not be reached (`url` has any password masked).
    #[error("cannot connect to {url}: {source}")]
    Connect {
        url: String,
        #[source]
        source: diesel::ConnectionError,
    },
    /// The SQLite file (or its WAL/shared-memory file) could not be created or made private.
    #[error("{path}: {source}")]
    DbFile {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The embedded migrations failed.
    #[error("database migration failed: {message}")]
    Migration { message: String },
    /// A query failed.
    #[error("database error: {0}")]
    Db(#[from] diesel::result::Error),
    /// A read on a SQLite reader connection (sacct's stream) failed.
    #[error("database error: {0}")]
    Read(#[from] rusqlite::Error),
    /// A named cluster does not exist (or was deleted).
    #[error("The cluster {name} doesn't exist. Please add first.")]
    UnknownCluster { name: String },
    /// A named federation does not exist (or was deleted).
    #[error("The federation {name} doesn't exist.")]
    UnknownFederation { name: String },
    /// A named account does not exist (or was deleted).
    #[error("The account {name} doesn't exist.")]
    UnknownAccount { name: String },
    /// `add coordinator` without `Account=`.
    #[error("You need to specify an account list here.")]
    NoCoordAccounts,
    /// `add coordinator` without users.
    #[error("You need to specify a user list here.")]
    NoCoordUsers,
    /// `delete coordinator` with neither users nor accounts.
    #[error("You need to specify a user list or account list here.")]
    NoCoordConditions,
    /// A coordinator request names an account that does not exist.
    #[error("You specified a non-existent account '{name}'.")]
    CoordUnknownAccount { name: String },
    /// A coordinator request names a user that does not exist.
    #[error("You specified a non-existent user '{name}'.")]
    CoordUnknownUser { name: String },
    /// A named user does not exist (or was deleted).
    #[error("The user {name} doesn't exist.")]
    UnknownUser { name: String },
    /// Adding an object that exists and is not deleted.
    #[error("This {kind} {name} already exists.")]
    AlreadyExists { kind: ObjectKind, name: String },
    /// An object name that is empty or holds characters Slurm's lists cannot carry.
    #[error("Invalid {kind} name '{name}'")]
    InvalidName { kind: ObjectKind, name: String },
    /// An add request without names.
    #[error("Need name of {kind} to add.")]
    NoNames { kind: ObjectKind },
    /// A delete request without conditions.
    #[error("No conditions given to remove, not executing.")]
    NoConditions,
    /// A federation would get a 64th cluster.
    #[error("Too many clusters in federation")]
    TooManyClusters { federation: String },
    /// A cluster list given for several federations at once.
    #[error("Clusters can only be assigned to one federation")]
    MultipleAssignment,
    /// A cluster list mixing `c` with `+c`/`-c`.
    #[error("You can't use '=' and '+' or '-' in the same line")]
    MixedListModes,
    /// A modify request that would change nothing.
    #[error("Nothing to change")]
    NothingToChange,
    /// A fed state a client may not set (only ACTIVE, INACTIVE, DRAIN, DRAIN+REMOVE).
    #[error("Invalid FedState {value}.")]
    InvalidFedState { value: u32 },
    /// A fed state for a cluster that is in no federation.
    #[error("The cluster {cluster} isn't assigned to a federation, can't set its FedState.")]
    NotInFederation { cluster: String },
    /// An admin level other than None, Operator, Administrator.
    #[error("Invalid AdminLevel {value}")]
    InvalidAdminLevel { value: String },
    /// A `Fairshare=` that is neither a number of shares nor `parent`.
    #[error("Invalid Fairshare value {value}: expected a number or parent")]
    InvalidFairshare { value: String },
    /// An account without an association on a cluster that needs one (the parent of an added
    /// account, or the account of an added user).
    #[error("The account {account} doesn't exist on cluster {cluster}")]
    AccountNotOnCluster { account: String, cluster: String },
    /// An account that would become its own ancestor.
    #[error("Account {account} can't be moved under {parent}: that would make a loop")]
    ParentLoop { account: String, parent: String },
    /// An account with live child accounts cannot be deleted.
    #[error("Account {account} has child accounts; delete or move them first")]
    AccountHasChildren { account: String },
    /// The root account cannot be deleted or moved.
    #[error("The root account can't be removed or moved")]
    RootAccount,
    /// Users need a default account.
    #[error("Need a default account for these users to add.")]
    NoDefaultAccount,
    /// A default account the user has no association with.
    #[error("User {user} has no association with account {account}")]
    NoAssociation { user: String, account: String },
    /// Removing the account some user has as default.
    #[error("Can't remove account {account}: it is the default account of user {user}")]
    DefaultAccountInUse { account: String, user: String },
    /// A job-id lease count outside 1..=1,000,000.
    #[error("job id lease count {count} is out of range 1..={max}")]
    InvalidLeaseCount { count: u32, max: u32 },
    /// Every job id is listed as in use.
    #[error("No job ids left to lease for cluster {cluster}")]
    JobIdsExhausted { cluster: String },
    /// Another dbd kept moving the lease cursor; the caller may retry.
    #[error("Job id lease of cluster {cluster} is contended, try again")]
    LeaseContention { cluster: String },
    /// A named QOS does not exist (or was deleted).
    #[error("Unknown QOS name: {name}")]
    UnknownQos { name: String },
    /// A default QOS outside the association's QOS list.
    #[error("You are not allowed to have a default QOS that is not in the list of QOS")]
    DefaultQosNotInList,
    /// Deleting what unfinished jobs still use.
    #[error("Job(s) active, cancel job(s) before remove")]
    ActiveJobs,
    /// The caller may not make this request.
    #[error("Access/permission denied")]
    AccessDenied,
}

impl From<StoreError> for tonic::Status {
    fn from(e: StoreError) -> Self {
        use StoreError as E;
        let msg = e.to_string();
        match e {
            E::UnsupportedUrl { .. }
            | E::Connect { .. }
            | E::DbFile { .. }
            | E::Migration { .. } => {
                tracing::error!(error = %msg, "accounting storage unavailable");
                tonic::Status::unavailable("Unable to contact slurm database")
            }
            E::Db(_) | E::Read(_) => {
                // Logged by the store, once per episode of failures.
                tracing::debug!(error = %msg, "accounting database error");
                tonic::Status::internal("Database error")
            }
            E::UnknownCluster { .. }
            | E::UnknownFederation { .. }
            | E::UnknownAccount { .. }
            | E::UnknownUser { .. }
            | E::CoordUnknownAccount { .. }
            | E::CoordUnknownUser { .. }
            | E::UnknownQos { .. } => tonic::Status::not_found(msg),
            E::AlreadyExists { .. } => tonic::Status::already_exists(msg),
            E::InvalidName { .. }
            | E::NoNames { .. }
            | E::NoConditions
            | E::NoCoordAccounts
            | E::NoCoordUsers
            | E::NoCoordConditions
            | E::MultipleAssignment
            | E::MixedListModes
            | E::InvalidFedState { .. }
            | E::InvalidAdminLevel { .. }
            | E::InvalidFairshare { .. }
            | E::InvalidLeaseCount { .. }
            | E::ParentLoop { .. }
            | E::NoDefaultAccount => tonic::Status::invalid_argument(msg),
            E::NothingToChange
            | E::NotInFederation { .. }
            | E::AccountNotOnCluster { .. }
            | E::AccountHasChildren { .. }
            | E::RootAccount
            | E::NoAssociation { .. }
            | E::DefaultAccountInUse { .. }
            | E::DefaultQosNotInList
            | E::ActiveJobs => tonic::Status::failed_precondition(msg),
            E::TooManyClusters { .. } | E::JobIdsExhausted { .. } => {
                tonic::Status::resource_exhausted(msg)
            }
            E::LeaseContention { .. } => tonic::Status::aborted(msg),
            E::AccessDenied => tonic::Status::permission_denied(msg),
        }
    }
}
