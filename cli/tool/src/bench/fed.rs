//! The federation's speed targets on real clusters (3 by default, 2 node daemons each):
//! federated Submit RPCs accepted per second, the real `sbatch` run one process after another
//! into the federation (wall time per submission and jobs per second; the jobs run),
//! submit-to-start on an idle federation, how soon after the start every sibling copy is
//! revoked, and how soon a `sacctmgr` change reaches every controller ([`propagate`]).
//!
//! `JobInfo.start` holds whole seconds, so start and revocation are measured from the client:
//! after the Submit RPC returns, all three controllers are asked for the job together, round
//! after round (each round is a few milliseconds), until one copy is RUNNING (the start) and no
//! other copy is PENDING any more (the revocation: a sibling drops its copy, the origin keeps a
//! REVOKED tracker). The figures are therefore upper bounds within one polling round.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sluice_vocab::JobState;
use sluice_wire::auth::Key;
use sluice_wire::client::CtldClient;
use sluice_wire::proto::{GetFederationRequest, ListJobsRequest};

use super::gauge::{self, Gauge};
use super::load::{job, list, rpc, submit_many};
use super::{BenchError, report, work_dir};
use crate::up::{self, DownArgs, UpArgs, plan};
use sluice_cli::slurm_conf::SlurmConf;

mod propagate;

/// Options of `sluice bench fed`.
#[derive(Debug, Clone, clap::Args)]
pub struct FedBenchArgs {
    /// Which parts to run (comma separated). [default: all]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<FedPart>,
    /// Clusters of the federation (at least 2).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=63))]
    pub clusters: u32,
    /// `sbatch` processes run one after another for the serial submission measure.
    #[arg(long, default_value_t = 300)]
    pub sbatch_jobs: usize,
    /// Jobs submitted for the submission rate with concurrent RPCs.
    #[arg(long, default_value_t = 2000)]
    pub rate_jobs: usize,
    /// Jobs submitted for the submission rate with one RPC at a time (0: not measured).
    #[arg(long, default_value_t = 500)]
    pub serial_jobs: usize,
    /// Concurrent Submit RPCs.
    #[arg(long, default_value_t = 64)]
    pub workers: usize,
    /// Jobs started one at a time for submit-to-start and revocation.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Cluster changes timed until every controller shows them.
    #[arg(long, default_value_t = 10)]
    pub changes: usize,
    /// Keep the daemons' directory here instead of a temporary one.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// A part of the federation benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FedPart {
    /// Federated Submit RPCs accepted per second: one at a time, then concurrent.
    Rate,
    /// `sbatch -o /dev/null --wrap true`, one process after another, into the federation.
    Sbatch,
    /// Submit-to-start on an idle federation, and the revocation of the other copies.
    Start,
    /// A cluster change made with sacctmgr until every controller shows it.
    Propagate,
}

/// How long one job may take to start, be revoked elsewhere, or end.
const JOB_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the parts asked for and prints their table.
pub async fn run(args: &FedBenchArgs) -> Result<(), BenchError> {
    let (dir, _tmp) = work_dir(args.dir.as_ref())?;
    let up_args = UpArgs {
        detach: true,
        clusters: Some(args.clusters.to_string()),
        nodes: Some(2),
        federation: Some("benchfed".to_string()),
        ..UpArgs::new(dir.clone())
    };
    up::up(&up_args).await?;
    let result = measure(args, &up_args).await;
    up::down(&DownArgs { dir }).await?;
    let gauges = result?;
    println!("{}", gauge::render(&gauges));
    Ok(())
}

async fn measure(args: &FedBenchArgs, up_args: &UpArgs) -> Result<Vec<Gauge>, BenchError> {
    let prepared = plan::prepare(up_args, &[])?;
    let mut clients = Vec::new();
    let mut confs = Vec::new();
    for cluster in &prepared.clusters {
        let conf = SlurmConf::read(&cluster.path)?;
        wait_federated(&conf, &prepared.key, prepared.clusters.len() - 1).await?;
        clients.push(conf.connect_ctld().await?);
        confs.push(conf);
    }
    let work = up_args.dir.join("work");
    std::fs::create_dir_all(&work).map_err(BenchError::TempDir)?;
    let wants = |p| args.only.is_empty() || args.only.contains(&p);
    let mut gauges = Vec::new();
    // Start first: the rate's jobs would keep the federation busy.
    if wants(FedPart::Start) {
        gauges.extend(start_and_revoke(&clients, &work, args.runs).await?);
    }
    if wants(FedPart::Propagate) {
        gauges.push(propagate::propagation(&confs, &prepared.key, args.changes).await?);
    }
    if wants(FedPart::Sbatch) {
        gauges.extend(serial_sbatch(
            &prepared.clusters[0].path,
            &work,
            args.sbatch_jobs,
        )?);
    }
    if wants(FedPart::Rate) {
        let request = job(&work, "true", false);
        let runs = [(args.serial_jobs, 1), (args.rate_jobs, args.workers)];
        for (count, workers) in runs.into_iter().filter(|r| r.0 > 0) {
            let (ids, took) = submit_many(&clients[0], &request, count, workers).await?;
            let rate = ids.len() as f64 / took.as_secs_f64().max(1e-9);
            let what = if workers == 1 {
                "federated Submit RPCs accepted, serial".to_string()
            } else {
                format!("federated Submit RPCs accepted, {workers} callers")
            };
            gauges.push(Gauge::at_least(what, rate, 5000.0, "jobs/s").with(format!(
                "{} jobs viable on all {} clusters, {} concurrent RPCs, {:.2} s",
                ids.len(),
                clients.len(),
                workers,
                took.as_secs_f64()
            )));
        }
    }
    Ok(gauges)
}

/// `runs` real `sbatch -o /dev/null --wrap true` processes into the federation through the
/// first cluster, one after another (the jobs run meanwhile, as in a user's loop): the median
/// wall time of one, and the submissions per second over the whole loop.
fn serial_sbatch(conf: &Path, work: &Path, runs: usize) -> Result<Vec<Gauge>, BenchError> {
    let args = ["-o", "/dev/null", "--wrap", "true"];
    let started = Instant::now();
    let mut samples = super::load::sbatch_runs(conf, work, &args, runs)?;
    let took = started.elapsed();
    let n = samples.len();
    let rate = n as f64 / took.as_secs_f64().max(1e-9);
    Ok(vec![
        Gauge::millis(
            "federated sbatch, serial",
            report::median(&mut samples),
            Duration::from_millis(3),
        )
        .with(format!(
            "median of {n}, process start included (issue 14: < 3 ms)"
        )),
        Gauge::at_least("federated sbatch, serial", rate, 363.0, "jobs/s").with(format!(
            "{n} processes one after another, {:.2} s (3x Slurm's ~121/s)",
            took.as_secs_f64()
        )),
    ])
}

/// Waits until the controller of `conf` sees `siblings` connected siblings.
async fn wait_federated(conf: &SlurmConf, key: &Key, siblings: usize) -> Result<(), BenchError> {
    let mut client = propagate::fed_client(conf, key).await?;
    let deadline = Instant::now() + JOB_TIMEOUT;
    loop {
        let view = rpc(
            "get federation",
            client.get_federation(GetFederationRequest {}).await,
        )?;
        let connected = view.siblings.iter().filter(|s| s.connected).count();
        if connected >= siblings {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(BenchError::Command {
                command: "waiting for the federation".to_string(),
                detail: format!("{} sees {connected} of {siblings} siblings", view.cluster),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One job at a time on the idle federation: submit-to-start (median) and start-to-revoked
/// (worst and median).
async fn start_and_revoke(
    clients: &[CtldClient],
    work: &Path,
    runs: usize,
) -> Result<Vec<Gauge>, BenchError> {
    let request = job(work, "sleep 1", false);
    let mut starts = Vec::with_capacity(runs);
    let mut revokes = Vec::with_capacity(runs);
    let mut rounds = Vec::new();
    for _ in 0..runs.max(1) {
        let mut origin = clients[0].clone();
        let submitted = Instant::now();
        let id = rpc("submit", origin.submit(request.clone()).await)?.job_id;
        let mut started: Option<(Duration, usize)> = None;
        loop {
            let round = Instant::now();
            let states = states(clients, id).await?;
            rounds.push(round.elapsed());
            let now = submitted.elapsed();
            if started.is_none() {
                let runner = states.iter().position(|s| *s == Some(JobState::Running));
                started = runner.map(|r| (now, r));
            }
            if let Some((at, runner)) = started {
                let pending = states
                    .iter()
                    .enumerate()
                    .any(|(i, s)| i != runner && *s == Some(JobState::Pending));
                if !pending {
                    starts.push(at);
                    revokes.push(now.saturating_sub(at));
                    break;
                }
            }
            if now > JOB_TIMEOUT {
                return Err(BenchError::Command {
                    command: format!("federated job {id}"),
                    detail: format!("not started and revoked after {now:?}: {states:?}"),
                });
            }
        }
        wait_ended(clients, id).await?;
    }
    let worst = revokes.iter().max().copied().unwrap_or_default();
    let round = report::median(&mut rounds);
    let n = starts.len();
    Ok(vec![
        Gauge::millis(
            "federated submit to start (idle)",
            report::median(&mut starts),
            Duration::from_millis(100),
        )
        .with(format!(
            "median of {n}; client side, polling all 3 controllers (round {:.2} ms)",
            gauge::ms(round)
        )),
        Gauge::millis(
            "all siblings revoked after the start",
            worst,
            Duration::from_millis(200),
        )
        .with(format!(
            "worst of {n} (median {:.2} ms); no copy but the runner's PENDING (an origin \
             that starts the job itself never offers it: 0)",
            gauge::ms(report::median(&mut revokes))
        )),
    ])
}

/// Each controller's copy of job `id`: its state, or `None` when it holds none.
async fn states(clients: &[CtldClient], id: u32) -> Result<Vec<Option<JobState>>, BenchError> {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, client) in clients.iter().enumerate() {
        let mut client = client.clone();
        tasks.spawn(async move {
            let request = ListJobsRequest {
                job_ids: vec![id],
                include_finished: true,
                ..Default::default()
            };
            (i, list(&mut client, request).await)
        });
    }
    let mut out = vec![None; clients.len()];
    while let Some(done) = tasks.join_next().await {
        let (i, jobs) = done.map_err(|e| BenchError::Command {
            command: "list task".to_string(),
            detail: e.to_string(),
        })?;
        out[i] = jobs?
            .iter()
            .find(|j| j.job_id == id)
            .and_then(|j| JobState::from_stored(j.state));
    }
    Ok(out)
}

/// Waits until no controller holds job `id` pending or running, so the next run finds the
/// federation idle.
async fn wait_ended(clients: &[CtldClient], id: u32) -> Result<(), BenchError> {
    let deadline = Instant::now() + JOB_TIMEOUT;
    loop {
        let states = states(clients, id).await?;
        let live = states
            .iter()
            .flatten()
            .any(|s| matches!(s, JobState::Pending | JobState::Running));
        if !live {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(BenchError::Command {
                command: format!("federated job {id}"),
                detail: format!("still live after {JOB_TIMEOUT:?}: {states:?}"),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
