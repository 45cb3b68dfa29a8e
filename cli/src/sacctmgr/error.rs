//! sacctmgr's errors. Each one displays as the exact text Slurm's sacctmgr prints on stderr
//! (without the final newline); every one makes the command exit 1.

use crate::rpc_error::database_problem;
use crate::slurm_conf::CliError;

/// Why a sacctmgr command failed.
#[derive(Debug, thiserror::Error)]
pub enum SacctmgrError {
    /// The configuration or key could not be loaded, or the dbd did not answer.
    #[error("sacctmgr: error: {}", setup_text(.0))]
    Setup(#[from] CliError),
    /// An unknown short option.
    #[error("sacctmgr: invalid option -- '{0}'\nTry \"sacctmgr --help\" for more information")]
    InvalidOption(String),
    /// An unknown long option.
    #[error("sacctmgr: unrecognized option '{0}'\nTry \"sacctmgr --help\" for more information")]
    UnrecognizedOption(String),
    /// The first word is not a command.
    #[error("invalid keyword: {0}")]
    InvalidKeyword(String),
    /// A command word with extra arguments (`quit x`).
    #[error("too many arguments for keyword:{0}")]
    TooManyArguments(String),
    /// The entity after add/modify/delete/list is missing or unknown.
    #[error(
        "No valid entity in {verb} command\nInput line must include \"Account\", \"Cluster\", \"Federation\" or \"User\""
    )]
    NoEntity { verb: &'static str },
    /// An unknown `format=` field.
    #[error("Unknown field '{0}'")]
    UnknownField(String),
    /// An unknown word in a condition (`where`) part.
    #[error(" Unknown condition: {0}\n Use keyword 'set' to modify value")]
    UnknownCondition(String),
    /// An unknown word in a setting (`set`) part.
    #[error(" Unknown option: {0}\n Use keyword 'where' to modify condition")]
    UnknownOption(String),
    /// `x=a,+b` or `x=a x+=b`.
    #[error("sacctmgr: error: You can't use '=' and '+' or '-' in the same line")]
    MixedListModes,
    /// `features+=a features-=b` over clusters whose features differ (one edit per request).
    #[error(" Can't add and remove features in one command on clusters whose features differ.")]
    MixedFeatureEdit,
    /// A fedstate that is none of Active, Inactive, DRAIN, DRAIN+REMOVE.
    #[error("Invalid FedState {0}.")]
    InvalidFedState(String),
    /// An admin level that is none of None, Operator, Administrator.
    #[error(" Invalid AdminLevel {0}, must be None, Operator or Administrator.")]
    InvalidAdminLevel(String),
    /// A `Fairshare=` that is neither a number nor `parent`.
    #[error(" Bad Fairshare value: {0}")]
    InvalidFairshare(String),
    /// `x+=` / `x-=` with nothing after it.
    #[error(" You didn't specify any {what} to {action}")]
    EmptyEdit {
        what: &'static str,
        action: &'static str,
    },
    /// modify without `set`.
    #[error(" You didn't give me anything to set")]
    NothingToSet,
    /// add without a name.
    #[error(" Need name of {0} to add.")]
    NeedName(&'static str),
    /// add user without an account.
    #[error(" Need name of account to add user to.")]
    NeedAccount,
    /// delete without conditions.
    #[error(" No conditions given to remove, not executing.")]
    NoConditions,
    /// Clusters named in a federation change that are not in the database.
    #[error("{}", .0.iter().map(|c| format!(" The cluster {c} doesn't exist. Please add first.")).collect::<Vec<_>>().join("\n"))]
    ClustersMissing(Vec<String>),
    /// A federation that is not in the database.
    #[error("{}", .0.iter().map(|f| format!(" The federation {f} doesn't exist.")).collect::<Vec<_>>().join("\n"))]
    FederationsMissing(Vec<String>),
    /// Clusters given for more than one federation.
    #[error(" Can't assign clusters to multiple federations.")]
    MultipleFederations,
    /// An account that is not in the database.
    #[error(" This account '{0}' doesn't exist.\n        Contact your admin to add this account.")]
    AccountMissing(String),
    /// A parent account without an association on a cluster.
    #[error(
        " Parent account '{parent}' doesn't exist on cluster {cluster}\n        Contact your admin to add this account."
    )]
    ParentMissing { parent: String, cluster: String },
    /// Accounts or users cannot be added before any cluster.
    #[error("  Can't add {0}, no cluster defined yet.\n Please contact your administrator.")]
    NoClusters(&'static str),
    /// A parent account named in a modify that does not exist.
    #[error(" Parent Account {0} doesn't exist.")]
    ParentAccountMissing(String),
    /// An account without an association on a cluster a user is added on.
    #[error(
        " This account '{account}' doesn't exist on cluster {cluster}\n        Contact your admin to add this account."
    )]
    AccountNotOnCluster { account: String, cluster: String },
    /// A cluster named by `cluster=` that is not in the database.
    #[error(
        " This cluster {0} doesn't exist.\n        Contact your admin to add it to accounting."
    )]
    ClusterUnknown(String),
    /// `delete account root`.
    #[error(" You are not allowed to remove the root account.\n Use remove cluster instead.")]
    RootAccount,
    /// A limit value sacctmgr cannot read (`MaxJobs=x`, `GrpTRES=gpu=1`).
    #[error(" Invalid limit {0}")]
    InvalidLimit(String),
    /// Association limits and user or account settings in one `modify`.
    #[error(" Set association limits and {0} settings in separate commands")]
    MixedLimits(&'static str),
    /// QOS and other user or account settings in one `modify`.
    #[error(" Set QOS and other {0} settings in separate commands")]
    MixedQos(&'static str),
    /// A blank name in an add.
    #[error(" No blank names are allowed when adding.")]
    BlankName,
    /// The dbd refused a change; `action` is Slurm's lead-in ("Problem adding clusters").
    #[error(" {action}: {message}")]
    Request {
        action: &'static str,
        message: String,
    },
    /// A coordinator command's own check failed (Slurm prints these lines bare).
    #[error(" {0}")]
    Coordinator(String),
    /// The dbd refused a query.
    #[error(" Problem with query: {0}")]
    Query(String),
}

/// The setup error, followed for an unreachable dbd by Slurm's "Problem talking" line.
fn setup_text(e: &CliError) -> String {
    match e {
        CliError::Connect { reason, .. } => {
            format!("{e}\n{}", database_problem("sacctmgr", reason))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_slurms_text() {
        assert_eq!(
            SacctmgrError::InvalidFedState("bogus".into()).to_string(),
            "Invalid FedState bogus."
        );
        assert_eq!(
            SacctmgrError::ClustersMissing(vec!["a".into(), "b".into()]).to_string(),
            " The cluster a doesn't exist. Please add first.\n The cluster b doesn't exist. Please add first."
        );
        assert_eq!(
            SacctmgrError::Request {
                action: "Problem adding clusters",
                message: "Too many clusters in federation".into()
            }
            .to_string(),
            " Problem adding clusters: Too many clusters in federation"
        );
        assert_eq!(
            SacctmgrError::EmptyEdit {
                what: "clusters",
                action: "add"
            }
            .to_string(),
            " You didn't specify any clusters to add"
        );
    }
}
