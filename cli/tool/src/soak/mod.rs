//! `sluice soak`: the fault suite. A local site under a steady stream of jobs with known exit
//! codes (some `afterok` dependants, some with an `srun` step), with faults injected at random
//! points from a seed: `kill -9` of the accounting daemon, a controller or a node daemon (then
//! `sluice up` starts what is missing), SIGSTOP of one past its peers' timeouts, then SIGCONT.
//! At the end every accepted job must have ended exactly once with its true exit code and have
//! reached sacct, no submission a client was told failed may have run, and no daemon may have
//! died on its own ([`verdict`] states the rules).
//!
//! * [`site`]: the site and its daemons; [`load`]: the jobs and the ledger of submissions;
//!   [`faults`]: the faults; [`driver`]: the loop; [`verdict`]: the judgement.

pub mod driver;
pub mod faults;
pub mod load;
pub mod site;
pub mod verdict;

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

pub use driver::{Budget, SoakReport, soak};
pub use site::Site;

/// Options of `sluice soak`.
#[derive(Debug, Clone, clap::Args)]
pub struct SoakArgs {
    /// How long to inject faults, in minutes (then every job is waited for and checked).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub minutes: u64,
    /// The seed of the jobs and faults (printed first; give it again to replay a run).
    /// [default: random]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Run the site in this directory and keep it afterwards (daemons stopped) instead of a
    /// temporary one (but for the controllers' state, on tmpfs mounts while the soak runs).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Clusters of the site (more than one form a federation).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=8))]
    pub clusters: u64,
    /// Node daemons per cluster.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub nodes: u32,
}

/// Why a soak could not run, or what it found.
#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    /// Preparing the site failed.
    #[error(transparent)]
    Up(#[from] crate::up::UpError),
    /// `sluice up` failed to bring the site (back) up.
    #[error("sluice up failed: {detail}")]
    Start {
        /// What it printed.
        detail: String,
    },
    /// A file or program could not be used.
    #[error("{path}: {source}")]
    Io {
        /// Which.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Something the driver waits for never happened.
    #[error("gave up waiting for {what}")]
    Stuck {
        /// What.
        what: String,
    },
    /// The soak found violations (printed above).
    #[error("the soak with seed {seed} found violations (replay with --seed {seed})")]
    Violations {
        /// Its seed.
        seed: u64,
    },
}

/// The exit code, or 128+signal for a process killed by a signal (as a shell reports it).
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Prints a report: the seed, rounds, faults by kind, the verdict.
pub fn render(report: &SoakReport) -> String {
    let mut text = format!("seed: {}\nrounds: {}\n", report.seed, report.rounds);
    let total: usize = report.faults.values().sum();
    text.push_str(&format!("faults injected: {total}"));
    for (kind, n) in &report.faults {
        text.push_str(&format!(", {kind}: {n}"));
    }
    text.push('\n');
    text.push_str(&format!(
        "srun steps running through a node daemon kill: {}\n",
        report.steps_cut
    ));
    text.push_str(&report.verdict.to_string());
    text
}

/// `sluice soak`: prints the seed, runs the soak for `--minutes`, prints its counts; an error
/// if any rule was broken.
pub fn run(args: &SoakArgs) -> Result<(), SoakError> {
    use std::io::Write;
    let seed = args.seed.unwrap_or_else(rand::random);
    println!("sluice soak: seed {seed}");
    let _ = std::io::stdout().flush();
    let tmp;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("sluice-soak-")
                .tempdir()
                .map_err(|source| SoakError::Io {
                    path: std::env::temp_dir(),
                    source,
                })?;
            tmp.path().join("site")
        }
    };
    let bin_dir = crate::up::process::bin_dir()?;
    let clusters = usize::try_from(args.clusters).unwrap_or(1);
    let site = Site::prepare(
        &dir,
        clusters,
        args.nodes,
        bin_dir,
        &mut crate::up::ports::free_ports,
    )?;
    if site.state_tmpfs.is_empty() {
        println!(
            "no disk-full faults: the controllers' state directories can be made small tmpfs \
             mounts only by root"
        );
    }
    let budget = Budget::For(Duration::from_secs(args.minutes * 60));
    let result = soak(&site, seed, budget, &mut |line| println!("{line}"));
    let stopped = site.down();
    site.release();
    let report = result?;
    stopped?;
    println!("{}", render(&report));
    if report.verdict.ok() {
        Ok(())
    } else {
        Err(SoakError::Violations { seed })
    }
}
