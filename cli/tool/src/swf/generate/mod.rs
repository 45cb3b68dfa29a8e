//! `sluice gen swf`: a synthetic Standard Workload Format trace — a year of a cluster's
//! history by default — for benchmarks and demonstrations (see [`model`] for the workload and
//! [`arrivals`] for when it is submitted).
//!
//! The trace is a function of the options and the seed: the same command writes the same
//! bytes (without `--start`, the start is midnight UTC `--days` days before today, so only the
//! header's start times move from one day to the next). It is streamed: memory stays flat
//! however many jobs are asked for.
//!
//! The machine's size follows the workload: without `--procs` it is sized so the trace keeps
//! it about 60% busy on average; with a `--procs` too small for that, requested and run times
//! are scaled down so it does.

mod arrivals;
mod model;
mod sample;
mod write;

use std::io::Write;
use std::path::PathBuf;

use rand::SeedableRng;
use rand::rngs::StdRng;

pub use model::{Job, Population};
pub use write::{GenStats, write_trace};

use super::SwfError;
use sluice_cli::timefmt::Zone;

/// Options of `sluice gen swf`.
#[derive(Debug, Clone, clap::Args)]
pub struct GenSwfArgs {
    /// Jobs to generate.
    #[arg(long)]
    pub jobs: u64,
    /// Users (Zipf-like activity: a few submit most jobs).
    #[arg(long, default_value_t = 200)]
    pub users: u32,
    /// Accounts (the users' groups).
    #[arg(long, default_value_t = 40)]
    pub accounts: u32,
    /// Partitions.
    #[arg(long, default_value_t = 4)]
    pub partitions: u32,
    /// Processors of the machine. [default: sized for ~60% utilization]
    #[arg(long)]
    pub procs: Option<u64>,
    /// When the trace starts (Slurm's time formats). [default: midnight UTC, --days days ago]
    #[arg(long)]
    pub start: Option<String>,
    /// Days over which jobs are submitted.
    #[arg(long, default_value_t = 365)]
    pub days: u32,
    /// Seed of the random generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file. [default: standard output]
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

/// A resolved generation request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenConfig {
    pub jobs: u64,
    pub users: u32,
    pub accounts: u32,
    pub partitions: u32,
    /// `None` = sized for the workload.
    pub procs: Option<u64>,
    /// Unix time of the trace's start.
    pub start: i64,
    pub days: u32,
    pub seed: u64,
}

/// Average share of the machine the trace keeps busy.
const TARGET_UTILIZATION: f64 = 0.6;
/// Jobs drawn (spread over the users) to estimate the workload's mean CPU-seconds per job.
const PROBE_JOBS: usize = 200_000;
/// Processors per node of a machine sized by the generator.
pub const PROCS_PER_NODE: u64 = 32;

/// The population and machine a configuration describes, and the factor applied to times.
pub fn plan(cfg: &GenConfig, rng: &mut StdRng) -> (Population, f64) {
    let mut population = Population::new(
        rng,
        cfg.users,
        cfg.accounts,
        cfg.partitions,
        cfg.procs.unwrap_or(1 << 16),
    );
    let span = f64::from(cfg.days) * 86_400.0;
    let jobs = cfg.jobs as f64;
    let mean_cpu_secs = |p: &Population| {
        let mut probe = StdRng::seed_from_u64(cfg.seed ^ 0x5157_f00d_cafe_0001);
        p.mean_cpu_secs(&mut probe, PROBE_JOBS / p.users.len().max(1))
    };
    if cfg.procs.is_none() {
        // Twice: the size cap depends on the machine, the machine on the sizes.
        for _ in 0..2 {
            let need = jobs * mean_cpu_secs(&population) / (TARGET_UTILIZATION * span.max(1.0));
            let procs = (need.ceil() as u64).div_ceil(PROCS_PER_NODE) * PROCS_PER_NODE;
            population.procs = procs.max(PROCS_PER_NODE);
        }
    }
    let busy = jobs * mean_cpu_secs(&population);
    let room = TARGET_UTILIZATION * population.procs as f64 * span;
    let scale = if busy > room && busy > 0.0 {
        room / busy
    } else {
        1.0
    };
    (population, scale)
}

/// Runs `sluice gen swf`, writing the trace and a summary line on stderr.
pub fn run(args: &GenSwfArgs) -> Result<(), SwfError> {
    if args.days == 0 {
        return Err(SwfError::BadOption {
            option: "--days",
            reason: "must be at least 1",
        });
    }
    if args.procs == Some(0) || args.users == 0 || args.accounts == 0 || args.partitions == 0 {
        return Err(SwfError::BadOption {
            option: "--procs/--users/--accounts/--partitions",
            reason: "must be at least 1",
        });
    }
    let now = sluice_cli::cmdutil::now();
    let start = match &args.start {
        Some(spec) => sluice_cli::timespec::parse(spec, now, Zone::Local)?,
        None => now - now.rem_euclid(86_400) - i64::from(args.days) * 86_400,
    };
    let cfg = GenConfig {
        jobs: args.jobs,
        users: args.users,
        accounts: args.accounts,
        partitions: args.partitions,
        procs: args.procs,
        start,
        days: args.days,
        seed: args.seed,
    };
    let (path, sink): (PathBuf, Box<dyn Write>) = match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|source| SwfError::Write {
                path: path.clone(),
                source,
            })?;
            (path.clone(), Box::new(file))
        }
        None => (
            PathBuf::from("<stdout>"),
            Box::new(std::io::stdout().lock()),
        ),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, sink);
    let write_err = |source| SwfError::Write {
        path: path.clone(),
        source,
    };
    let stats = write_trace(&cfg, &mut out).map_err(write_err)?;
    out.flush().map_err(write_err)?;
    eprintln!(
        "sluice: wrote {} jobs to {} ({} CPUs on {} nodes, {} days from {}, {:.0}% average utilization)",
        stats.jobs,
        path.display(),
        stats.procs,
        stats.nodes,
        cfg.days,
        sluice_cli::timefmt::timestamp(cfg.start, Zone::Utc),
        stats.utilization(cfg.days) * 100.0
    );
    Ok(())
}
