//! `sluice bench`: measures Sluice against the speed targets its issues name, on real daemons
//! started in a temporary directory, and prints the figures as a table.
//!
//! Benchmarks are the only place that reads wall time to judge speed; tests never do.

pub mod ctld;
pub mod dbd;
pub mod fed;
pub mod gauge;
pub mod load;
pub mod report;
pub mod sbatch_opts;
pub mod vs_slurm;

use std::path::PathBuf;

/// Options of `sluice bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Which benchmark to run.
    #[command(subcommand)]
    pub which: Which,
}

/// The benchmarks.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Which {
    /// The accounting daemon: admin changes through the RPC, and `sacctmgr show` of a full federation.
    Dbd(dbd::DbdBenchArgs),
    /// The controller: Submit RPC rate, `sbatch` round trip, 10,000 one-second jobs (CPU
    /// share), memory with 16,384 nodes and 100,000 jobs.
    Ctld(ctld::CtldBenchArgs),
    /// A federation of 3 clusters: federated submission rate, submit-to-start, revocation,
    /// sacctmgr changes reaching every controller.
    Fed(fed::FedBenchArgs),
    /// The commands a user types (sbatch, squeue, sinfo, scontrol, sacct, sacctmgr), whole
    /// processes, against a running `sluice up` directory and, given `ORACLE_DIR`, real Slurm in
    /// the same run: one markdown table with the ratios.
    VsSlurm(vs_slurm::VsSlurmArgs),
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Starting or stopping the daemons failed.
    #[error(transparent)]
    Up(#[from] crate::up::UpError),
    /// The work directory could not be made.
    #[error("cannot create a work directory: {0}")]
    TempDir(std::io::Error),
    /// A request failed.
    #[error("{what}: {status}")]
    Rpc {
        what: String,
        status: Box<tonic::Status>,
    },
    /// The dbd could not be reached.
    #[error(transparent)]
    Cli(#[from] sluice_cli::slurm_conf::CliError),
    /// A command run by the benchmark failed.
    #[error("{command} failed: {detail}")]
    Command { command: String, detail: String },
}

/// Runs the benchmark `args` names.
pub async fn run(args: &BenchArgs) -> Result<(), BenchError> {
    match &args.which {
        Which::Dbd(a) => dbd::run(a).await,
        Which::Ctld(a) => ctld::run(a).await,
        Which::Fed(a) => fed::run(a).await,
        Which::VsSlurm(a) => vs_slurm::run(a).await,
    }
}

/// A fresh directory for a benchmark's daemons, removed afterwards unless `keep` is given.
pub(crate) fn work_dir(
    keep: Option<&PathBuf>,
) -> Result<(PathBuf, Option<tempfile::TempDir>), BenchError> {
    match keep {
        Some(dir) => Ok((dir.clone(), None)),
        None => {
            let tmp = tempfile::Builder::new()
                .prefix("sluice-bench-")
                .tempdir()
                .map_err(BenchError::TempDir)?;
            Ok((tmp.path().to_path_buf(), Some(tmp)))
        }
    }
}
