//! The `sluice import swf` command: its options, and the summary it prints (jobs loaded,
//! lines skipped, time span, capacity, ingest rate). Malformed lines are reported on stderr as
//! they are found, the first hundred in full.

use std::path::PathBuf;
use std::time::Instant;

use super::SwfError;
use super::format::LineError;
use super::import::{ImportOptions, ImportSummary, import_swf};
use sluice_cli::slurm_conf::SlurmConf;
use sluice_cli::timefmt::{Zone, timestamp};

/// Options of `sluice import swf`.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportSwfArgs {
    /// The trace file.
    pub file: PathBuf,
    /// The cluster the jobs ran on (it must exist in the accounting database).
    #[arg(long)]
    pub cluster: String,
    /// When the trace starts (Slurm's time formats), instead of its UnixStartTime header.
    #[arg(long)]
    pub start: Option<String>,
    /// Records per RecordBatch request (jobs are never split across batches).
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
}

/// Malformed lines printed before the rest are only counted.
const SHOWN_MALFORMED: u64 = 100;

/// Runs `sluice import swf` against the dbd `SLURM_CONF` names, printing the summary.
pub async fn run(args: &ImportSwfArgs) -> Result<(), SwfError> {
    let start = match &args.start {
        Some(spec) => Some(sluice_cli::timespec::parse(
            spec,
            sluice_cli::cmdutil::now(),
            Zone::Local,
        )?),
        None => None,
    };
    let read_err = |source| SwfError::Read {
        path: args.file.clone(),
        source,
    };
    let file = std::fs::File::open(&args.file).map_err(read_err)?;
    let input = std::io::BufReader::with_capacity(1 << 20, file);
    let conf = SlurmConf::from_env()?;
    let mut dbd = conf.connect_dbd().await?;
    let mut records = conf.connect_records().await?;
    let opts = ImportOptions {
        cluster: args.cluster.clone(),
        start,
        batch_records: args.batch.max(1),
        stream_id: rand::random::<u64>().max(1),
    };
    let name = args.file.display().to_string();
    let mut shown = 0u64;
    let mut report = |e: &LineError| {
        shown += 1;
        if shown <= SHOWN_MALFORMED {
            eprintln!("sluice: {name}: {e} (skipped)");
        }
    };
    let began = Instant::now();
    let sum = import_swf(
        input,
        args.file.clone(),
        &opts,
        &mut dbd,
        &mut records,
        &mut report,
    )
    .await?;
    let secs = began.elapsed().as_secs_f64().max(1e-9);
    if sum.malformed > SHOWN_MALFORMED {
        eprintln!(
            "sluice: {name}: {} more malformed lines not shown",
            sum.malformed - SHOWN_MALFORMED
        );
    }
    for problem in &sum.header.problems {
        eprintln!("sluice: {name}: warning: header {problem}");
    }
    print!("{}", render_summary(&sum, &name, &opts.cluster, secs));
    Ok(())
}

/// The summary `sluice import swf` prints.
pub fn render_summary(sum: &ImportSummary, name: &str, cluster: &str, secs: f64) -> String {
    let mut out = format!(
        "Imported {} jobs ({} records) from {name} into cluster {cluster} in {secs:.1} s: \
         {:.0} jobs/s, {:.0} records/s\n",
        sum.jobs,
        sum.records,
        sum.jobs as f64 / secs,
        sum.records as f64 / secs
    );
    out += &format!(
        "Skipped {} malformed lines and {} partial-execution lines (status 2-4) of {} lines\n",
        sum.malformed, sum.partial, sum.lines
    );
    if let Some((first, last)) = sum.span {
        out += &format!(
            "Time span: {} - {} (first submission to last end)\n",
            timestamp(first, Zone::Local),
            timestamp(last, Zone::Local)
        );
    }
    out += &format!(
        "CPU time allocated: {} CPU-seconds ({:.1} CPU-hours)\n",
        sum.cpu_secs,
        sum.cpu_secs as f64 / 3600.0
    );
    match (sum.capacity, sum.start) {
        (Some((cpus, nodes)), Some(at)) => {
            out += &format!(
                "Capacity: {cpus} CPUs on {nodes} nodes from {}\n",
                timestamp(at, Zone::Local)
            );
        }
        _ if sum.jobs > 0 => {
            out += "Capacity: unknown (no MaxProcs or MaxNodes header): none recorded, \
                    utilization reports will lack the cluster's size\n";
        }
        _ => {}
    }
    out
}
