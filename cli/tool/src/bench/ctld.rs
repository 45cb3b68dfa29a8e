//! The controller's speed targets, on real daemons: Submit RPCs accepted per second, the
//! `sbatch` process round trip (also with 30 options and a 200-line script), 10,000 one-second jobs on 4 nodes x 64 CPUs with the
//! controller's CPU share, and the controller's memory with 16,384 nodes and 100,000 jobs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sluice_vocab::JobState;
use sluice_wire::client::CtldClient;
use sluice_wire::proto::ListJobsRequest;

use super::gauge::{self, Gauge};
use super::load::{edit_conf, job, list, sbatch_round_trip, submit_many, with_cpus};
use super::{BenchError, work_dir};
use crate::up::daemons::Daemon;
use crate::up::{self, DownArgs, UpArgs, plan, process};
use sluice_cli::slurm_conf::SlurmConf;

/// Options of `sluice bench ctld`.
#[derive(Debug, Clone, clap::Args)]
pub struct CtldBenchArgs {
    /// Which parts to run (comma separated). [default: all]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Part>,
    /// Held jobs submitted for the submission rate.
    #[arg(long, default_value_t = 5000)]
    pub rate_jobs: usize,
    /// Concurrent Submit RPCs.
    #[arg(long, default_value_t = 64)]
    pub workers: usize,
    /// `sbatch` runs to take the median of.
    #[arg(long, default_value_t = 50)]
    pub runs: usize,
    /// One-second jobs run on the 4 x 64-CPU cluster.
    #[arg(long, default_value_t = 10_000)]
    pub load_jobs: usize,
    /// Configured nodes of the memory benchmark's controller.
    #[arg(long, default_value_t = 16_384)]
    pub mem_nodes: u32,
    /// Held jobs of the memory benchmark.
    #[arg(long, default_value_t = 100_000)]
    pub mem_jobs: usize,
    /// Keep the daemons' directories here instead of a temporary one.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// A part of the controller benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Submit RPCs accepted per second.
    Rate,
    /// `sbatch --wrap true -H` round trip.
    Sbatch,
    /// `sbatch` with 30 options and a 200-line script.
    SbatchOpts,
    /// One-second jobs on 4 x 64 CPUs, and the controller's CPU share.
    Load,
    /// Resident memory with many nodes and held jobs.
    Memory,
}

/// Node daemons of the load cluster, and CPUs each.
const NODES: u32 = 4;
const CPUS: u32 = 64;
/// Room for every job of a run (Slurm's default `MaxJobCount` is 10,000).
const MAX_JOB_COUNT: &str = "MaxJobCount=1000000";
/// Issue 14's submission-rate target for one controller.
const RATE_TARGET: f64 = 20_000.0;
/// How often the load run looks at the job list.
const POLL: Duration = Duration::from_secs(2);

/// Runs the parts asked for and prints their table.
pub async fn run(args: &CtldBenchArgs) -> Result<(), BenchError> {
    let (dir, _tmp) = work_dir(args.dir.as_ref())?;
    let wants = |p| args.only.is_empty() || args.only.contains(&p);
    let mut gauges = Vec::new();
    if wants(Part::Rate) || wants(Part::Sbatch) || wants(Part::SbatchOpts) || wants(Part::Load) {
        let up_dir = dir.join("load");
        let conf = start_load_cluster(&up_dir).await?;
        let result = load_parts(args, &conf, &up_dir, &wants, &mut gauges).await;
        up::down(&DownArgs { dir: up_dir }).await?;
        result?;
    }
    if wants(Part::Memory) {
        let up_dir = dir.join("memory");
        let result = memory(args, &up_dir).await;
        up::down(&DownArgs { dir: up_dir }).await?;
        gauges.extend(result?);
    }
    println!("{}", gauge::render(&gauges));
    Ok(())
}

/// One cluster of 4 node daemons with 64 CPUs each, CPUs allocated one by one.
async fn start_load_cluster(up_dir: &Path) -> Result<PathBuf, BenchError> {
    let up_args = UpArgs {
        detach: true,
        nodes: Some(NODES),
        ..UpArgs::new(up_dir.to_path_buf())
    };
    let prepared = plan::prepare(&up_args, &[])?;
    let path = prepared.clusters[0].path.clone();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if !text.contains("SelectType=") {
        let extra = [
            "SelectType=select/cons_tres".to_string(),
            "SelectTypeParameters=CR_CPU".to_string(),
            MAX_JOB_COUNT.to_string(),
        ];
        edit_conf(&path, |l| with_cpus(l, CPUS), &extra)?;
    }
    up::up(&up_args).await?;
    Ok(path)
}

async fn load_parts(
    args: &CtldBenchArgs,
    conf_path: &Path,
    up_dir: &Path,
    wants: &dyn Fn(Part) -> bool,
    gauges: &mut Vec<Gauge>,
) -> Result<(), BenchError> {
    let conf = SlurmConf::read(conf_path)?;
    let client = conf.connect_ctld().await?;
    let name = conf.cluster_name.clone().unwrap_or_default();
    let pid_file = up::layout::Layout::new(up_dir)?.pid_file(&format!("ctld-{name}"));
    let pid = process::read_pid(&pid_file).ok_or_else(|| BenchError::Command {
        command: "reading the controller's pid file".to_string(),
        detail: pid_file.display().to_string(),
    })?;
    let work = up_dir.join("work");
    std::fs::create_dir_all(&work).map_err(BenchError::TempDir)?;
    // The load first: the held jobs of the other parts would sit in its queue.
    if wants(Part::Load) {
        gauges.extend(load(&client, pid, &work, args.load_jobs, args.workers).await?);
    }
    if wants(Part::Rate) {
        let request = job(&work, "true", true);
        let (ids, took) = submit_many(&client, &request, args.rate_jobs, args.workers).await?;
        let rate = ids.len() as f64 / took.as_secs_f64().max(1e-9);
        gauges.push(
            Gauge::at_least("Submit RPCs accepted", rate, RATE_TARGET, "jobs/s").with(format!(
                "{} held jobs, {} concurrent RPCs, {:.2} s",
                ids.len(),
                args.workers,
                took.as_secs_f64()
            )),
        );
    }
    if wants(Part::Sbatch) {
        let took = sbatch_round_trip(conf_path, &work, args.runs)?;
        gauges.push(
            Gauge::millis("sbatch --wrap true -H", took, Duration::from_millis(10))
                .with(format!("median of {}, process start included", args.runs)),
        );
    }
    if wants(Part::SbatchOpts) {
        let took = super::sbatch_opts::median(conf_path, &work, args.runs)?;
        gauges.push(
            Gauge::millis(
                "sbatch, 30 options, 200-line script",
                took,
                Duration::from_millis(10),
            )
            .with(format!("median of {}, process start included", args.runs)),
        );
    }
    Ok(())
}

/// `count` one-second jobs, one CPU each; the controller's CPU time over the run's wall time.
async fn load(
    client: &CtldClient,
    pid: i32,
    work: &Path,
    count: usize,
    workers: usize,
) -> Result<Vec<Gauge>, BenchError> {
    let cpu_before = gauge::cpu_time(pid).unwrap_or_default();
    let started = Instant::now();
    let (ids, submitted) =
        submit_many(client, &job(work, "sleep 1", false), count, workers).await?;
    let mut poller = client.clone();
    let wanted: std::collections::HashSet<u32> = ids.iter().copied().collect();
    // Bounded: 256 run at once, so the run takes count/256 seconds plus overheads.
    let deadline = started + Duration::from_secs(600 + count as u64 / 10);
    loop {
        let live = list(&mut poller, ListJobsRequest::default()).await?;
        if live.iter().all(|j| !wanted.contains(&j.job_id)) || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    let wall = started.elapsed();
    let cpu = gauge::cpu_time(pid)
        .unwrap_or_default()
        .saturating_sub(cpu_before);
    let finished = list(
        &mut poller,
        ListJobsRequest {
            include_finished: true,
            states: vec![JobState::Completed.stored()],
            ..Default::default()
        },
    )
    .await?;
    let completed = finished
        .iter()
        .filter(|j| wanted.contains(&j.job_id))
        .count();
    let share = 100.0 * cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9);
    Ok(vec![
        Gauge::at_least(
            format!("{count} one-second jobs completed"),
            completed as f64,
            count as f64,
            "jobs",
        )
        .with(format!(
            "{:.1} jobs/s over {:.1} s (submitted in {:.1} s); {NODES} nodes x {CPUS} CPUs",
            completed as f64 / wall.as_secs_f64().max(1e-9),
            wall.as_secs_f64(),
            submitted.as_secs_f64()
        )),
        Gauge::below("controller CPU during that run", share, 30.0, "% of a core").with(format!(
            "utime+stime {:.2} s over {:.1} s wall, submission and a job-list poll every {} s included",
            cpu.as_secs_f64(),
            wall.as_secs_f64(),
            POLL.as_secs()
        )),
    ])
}

/// A controller alone (no node daemons) with `mem_nodes` configured nodes and `mem_jobs`
/// held jobs: its resident memory.
async fn memory(args: &CtldBenchArgs, up_dir: &Path) -> Result<Vec<Gauge>, BenchError> {
    let up_args = UpArgs {
        detach: true,
        dbd_only: true,
        nodes: Some(1),
        clusters: Some("mem".to_string()),
        ..UpArgs::new(up_dir.to_path_buf())
    };
    let prepared = plan::prepare(&up_args, &[])?;
    let first = prepared.clusters[0].clone();
    let nodes = args.mem_nodes.max(1);
    if first.nodes.len() == 1 {
        // Unregistered nodes are never contacted, so their names need not resolve.
        let many = |line: &str| match line.starts_with("NodeName=") && !line.contains("DEFAULT") {
            false => vec![line.to_string()],
            true => {
                let mut words = vec![format!("NodeName=memn[1-{nodes}]")];
                words.extend(
                    line.split_whitespace()
                        .filter(|w| !w.starts_with("NodeName=") && !w.starts_with("NodeAddr="))
                        .map(str::to_string),
                );
                vec![words.join(" ")]
            }
        };
        edit_conf(&first.path, many, &[MAX_JOB_COUNT.to_string()])?;
    }
    up::up(&up_args).await?;
    let cluster = up::cluster_conf::ClusterConf::read(&first.path)?;
    let daemon = Daemon::ctld(&cluster);
    let log = prepared.layout.log_file(&daemon.id);
    let program = process::binary(&process::bin_dir()?, daemon.kind.program())?;
    let daemon_args: Vec<&str> = daemon.args.iter().map(String::as_str).collect();
    let mut child = process::spawn(&program, &daemon_args, &log)?;
    let pid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .unwrap_or_default();
    // `sluice down` stops it through its pid file.
    std::fs::write(prepared.layout.pid_file(&daemon.id), format!("{pid}\n")).map_err(|e| {
        BenchError::Command {
            command: "writing the controller's pid file".to_string(),
            detail: e.to_string(),
        }
    })?;
    let client = up::ctld::wait_ready(
        &cluster,
        &prepared.key,
        Some(&mut child),
        &log,
        up::ctld::READY_TIMEOUT,
    )
    .await?;
    let idle = gauge::rss_mb(pid).unwrap_or_default();
    let work = up_dir.join("work");
    std::fs::create_dir_all(&work).map_err(BenchError::TempDir)?;
    let request = job(&work, "true", true);
    let (ids, took) = submit_many(&client, &request, args.mem_jobs, args.workers).await?;
    let rss = gauge::rss_mb(pid).unwrap_or_default();
    Ok(vec![
        Gauge::below(
            format!("controller memory, {nodes} nodes + {} jobs", ids.len()),
            rss,
            200.0,
            "MB",
        )
        .with(format!(
            "VmRSS; {idle:.1} MB before the jobs; jobs held, submitted at {:.0} jobs/s",
            ids.len() as f64 / took.as_secs_f64().max(1e-9)
        )),
    ])
}
