//! sreport's errors: each displays as the text Slurm's sreport prints on stderr (without the
//! final newline). Every one makes the command's exit code 1.

use crate::rpc_error::database_problem;
use crate::slurm_conf::CliError;

/// Why an sreport command (or part of one) failed.
#[derive(Debug, thiserror::Error)]
pub enum SreportError {
    /// The configuration or key could not be loaded.
    #[error("sreport: error: {0}")]
    Setup(#[from] CliError),
    /// The accounting daemon refused or did not answer a query.
    #[error("{}", database_problem("sreport", .0))]
    Database(String),
    /// A command-line mistake, with the full text to print (getopt's message and hint).
    #[error("{0}")]
    Usage(String),
    /// `-M`, `-a` and `--local` together.
    #[error("Only one cluster option can be used (--all_clusters OR --cluster OR --local)")]
    ClusterOptions,
    /// `-t` with a word that is no time format.
    #[error("unknown time format {0}")]
    TimeFormat(String),
    /// `-s` with a word that is no sort order.
    #[error("unknown timesort format {0}")]
    SortFormat(String),
    /// The first word of a command is not a command.
    #[error("invalid keyword: {0}")]
    InvalidKeyword(String),
    /// A report type without a report name (`sreport cluster`).
    #[error("too few arguments for keyword:{0}")]
    TooFewArguments(String),
    /// A command word with extra words (`quit now`).
    #[error("too many arguments for keyword:{0}")]
    TooManyArguments(String),
    /// A report name the report type does not have.
    #[error("Not valid report {name}\nValid {kind} reports are, {valid}")]
    InvalidReport {
        name: String,
        kind: &'static str,
        valid: &'static str,
    },
    /// A report Slurm has but Sluice does not keep the data for (WCKeys, QOS, reservations).
    #[error("{0} report is not supported by Sluice")]
    Unsupported(String),
    /// A condition Slurm accepts whose data Sluice does not keep for this report.
    #[error("sreport: error: {0}= is not supported by Sluice for this report")]
    UnsupportedCondition(String),
    /// A job report with more than one TRES.
    #[error(
        " Job report only support a single --tres type.\n Generate a separate report for each TRES type."
    )]
    SingleTres,
    /// `start=`/`end=` that is no time.
    #[error("sreport: error: {0}")]
    BadTime(String),
    /// `TopCount=` that is no number.
    #[error("sreport: error: Invalid value for TopCount ({0})")]
    BadTopCount(String),
    /// `Users=` naming no user (Slurm's `_string_to_uid`).
    #[error("Invalid user id: {0}")]
    InvalidUser(String),
    /// A job report without size groups: `Grouping=individual` and no job ran.
    #[error(" We need a grouping list to set up the print.")]
    NoGrouping,
    /// `Grouping=individual` together with a list of groups.
    #[error("sreport: error: Grouping=individual cannot be combined with a grouping list")]
    IndividualWithList,
}
