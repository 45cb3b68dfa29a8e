//! Workload traces in the Standard Workload Format (v2.2, the Parallel Workloads Archive's):
//! `sluice import swf` loads one into the accounting daemon as finished jobs, through the same
//! `RecordBatch` ingest a controller uses, so real workloads can be analysed with sacct and
//! sreport; `sluice gen swf` writes a synthetic but realistic one for the benchmarks.
//!
//! * [`format`]: the line format (fields, statuses, `-1` = unknown) and its parser;
//! * [`reader`]: streaming a trace, gathering the header comments;
//! * [`mapping`]: what a job line becomes in accounting (pure);
//! * [`import`]: sending the records to the dbd in batches; [`command`]: `sluice import swf`;
//! * [`generate`]: the synthetic trace generator.

pub mod command;
pub mod format;
pub mod generate;
pub mod import;
pub mod mapping;
pub mod reader;

use std::path::PathBuf;

pub use command::ImportSwfArgs;
pub use format::{LineError, LineProblem, Status, SwfJob, parse_line};
pub use generate::GenSwfArgs;
pub use import::{ImportOptions, ImportSummary, import_swf};
pub use mapping::{Mapped, Mapping, map_job};
pub use reader::{Event, Header, Reader};

/// `sluice import`: what to import.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// The trace's format.
    #[command(subcommand)]
    pub format: ImportFormat,
}

/// The trace formats `sluice import` reads.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ImportFormat {
    /// A Standard Workload Format (v2.2) trace, loaded as finished jobs of a cluster.
    Swf(ImportSwfArgs),
}

/// `sluice gen`: what to generate.
#[derive(Debug, Clone, clap::Args)]
pub struct GenArgs {
    /// The trace's format.
    #[command(subcommand)]
    pub format: GenFormat,
}

/// The trace formats `sluice gen` writes.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum GenFormat {
    /// A synthetic Standard Workload Format (v2.2) trace.
    Swf(GenSwfArgs),
}

/// Runs `sluice import`.
pub async fn run_import(args: &ImportArgs) -> Result<(), SwfError> {
    match &args.format {
        ImportFormat::Swf(a) => command::run(a).await,
    }
}

/// Runs `sluice gen`.
pub fn run_gen(args: &GenArgs) -> Result<(), SwfError> {
    match &args.format {
        GenFormat::Swf(a) => generate::run(a),
    }
}

/// Why an import or a generation failed.
#[derive(Debug, thiserror::Error)]
pub enum SwfError {
    /// The trace could not be opened or read.
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The output could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `slurm.conf` or the key could not be read, or the dbd could not be reached.
    #[error(transparent)]
    Cli(#[from] sluice_cli::slurm_conf::CliError),
    /// The cluster named by `--cluster` is not in the accounting database.
    #[error(
        "cluster '{name}' does not exist in the accounting database; add it first (sacctmgr add cluster {name})"
    )]
    UnknownCluster { name: String },
    /// The caller may not send job records.
    #[error(
        "importing job records needs an accounting administrator (SlurmUser, root, or AdminLevel=Admin)"
    )]
    NotAdmin,
    /// A request to the dbd failed; `loaded` jobs were stored before it.
    #[error("{what} failed after {loaded} jobs were loaded: {status}")]
    Rpc {
        what: &'static str,
        loaded: u64,
        status: Box<tonic::Status>,
    },
    /// The dbd acknowledged less than the batch it was sent.
    #[error("the dbd applied records up to {applied} of a batch ending at {sent}")]
    NotApplied { applied: u64, sent: u64 },
    /// Neither `--start` nor the header's `UnixStartTime` says when the trace starts.
    #[error("the trace has no UnixStartTime header: give its start with --start")]
    NoStartTime,
    /// `--start` is not a time Slurm reads.
    #[error(transparent)]
    BadStart(#[from] sluice_cli::timespec::TimeSpecError),
    /// A generator option out of its range.
    #[error("{option}: {reason}")]
    BadOption {
        option: &'static str,
        reason: &'static str,
    },
}
