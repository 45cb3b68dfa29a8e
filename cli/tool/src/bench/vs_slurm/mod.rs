//! `sluice bench vs-slurm`: the commands a user types, timed as whole processes against a
//! running `sluice up` directory and, given the oracle's directory (real Slurm beside Sluice,
//! `ORACLE_DIR`), against Slurm in the same run: A B A B ..., one warm-up each, the median of
//! each side, one markdown table with the ratios.
//!
//! Both sides get the same command lines and `SLURM_CONF` of the same cluster name: the
//! plain cluster (`--cluster`, outside any federation) and, with `--fed-cluster`, a federation
//! member for the federated submission. The job the queries ask about is submitted held while
//! setting up and cancelled at the end.

pub mod table;
mod throughput;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::BenchError;
use crate::up::process;
use table::{Case, Row, System, Target};

/// Options of `sluice bench vs-slurm`.
#[derive(Debug, Clone, clap::Args)]
pub struct VsSlurmArgs {
    /// A running `sluice up` directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// The cluster outside any federation that the queries and the plain submission go to
    /// (the same name on both sides).
    #[arg(long, default_value = "c3")]
    pub cluster: String,
    /// A federation member for the federated submission row (none: no such row).
    #[arg(long)]
    pub fed_cluster: Option<String>,
    /// The oracle's directory (real Slurm, see shared/oracle); without it only Sluice is timed.
    #[arg(long, env = "ORACLE_DIR")]
    pub oracle_dir: Option<PathBuf>,
    /// Where Slurm's commands are.
    #[arg(long, default_value = "/usr/bin")]
    pub slurm_bin: PathBuf,
    /// Timed runs of each command on each side (after one warm-up each).
    #[arg(long, default_value_t = 21)]
    pub runs: usize,
    /// Also time `sacct -M NAME -X -n -P -o JobID,State` over this history cluster's window
    /// (`sluice import swf` on Sluice's side, the oracle's synth.sh on Slurm's).
    #[arg(long)]
    pub history: Option<String>,
    /// The history window's start.
    #[arg(long, default_value = "2026-11-01T00:00:00")]
    pub history_start: String,
    /// The history window's end.
    #[arg(long, default_value = "2026-11-11T00:00:00")]
    pub history_end: String,
    /// Also measure submission throughput: this many jobs (`sbatch -o /dev/null --wrap true`,
    /// one process each) one at a time and four at a time, to the plain cluster and to the
    /// federation member; 0 leaves it out.
    #[arg(long, default_value_t = 0)]
    pub rate_jobs: usize,
    /// Runs of each throughput measure on each side.
    #[arg(long, default_value_t = 3)]
    pub rate_runs: usize,
}

/// Longest a single command may take before it is killed and its side reported failed.
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// One side: its commands and configuration directory, and the job the queries ask about.
struct Side {
    system: System,
    bin: PathBuf,
    etc: PathBuf,
    job: String,
}

impl Side {
    fn conf(&self, cluster: &str) -> PathBuf {
        self.etc.join(cluster).join("slurm.conf")
    }

    /// Runs `program args` against `cluster`; the wall time and stdout, or the failure.
    fn run(
        &self,
        program: &str,
        args: &[String],
        cluster: &str,
    ) -> Result<(Duration, String), String> {
        let mut cmd = Command::new(self.bin.join(program));
        cmd.args(args)
            .env("SLURM_CONF", self.conf(cluster))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The watchdog thread is started before the clock: only the command is timed.
        let watchdog = Watchdog::start();
        let started = Instant::now();
        let child = cmd.spawn().map_err(|e| format!("{program}: {e}"))?;
        let (out, took) = watchdog.wait(child, started);
        let out = out?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(err.lines().next().unwrap_or("failed").to_string());
        }
        Ok((took, String::from_utf8_lossy(&out.stdout).into_owned()))
    }
}

/// A thread that kills one command if it runs longer than [`COMMAND_LIMIT`].
struct Watchdog {
    pid: mpsc::Sender<nix::unistd::Pid>,
    done: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Watchdog {
    fn start() -> Self {
        let (pid, pid_rx) = mpsc::channel::<nix::unistd::Pid>();
        let (done, watch) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let Ok(pid) = pid_rx.recv() else { return };
            if watch.recv_timeout(COMMAND_LIMIT) == Err(mpsc::RecvTimeoutError::Timeout) {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        });
        Self { pid, done, thread }
    }

    /// Waits for `child`'s output, killing it after [`COMMAND_LIMIT`]; the output and the
    /// time from `started` to the command's end (the watchdog is stopped after the clock).
    fn wait(
        self,
        child: std::process::Child,
        started: Instant,
    ) -> (Result<std::process::Output, String>, Duration) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
        let _ = self.pid.send(pid);
        let out = child.wait_with_output().map_err(|e| e.to_string());
        let took = started.elapsed();
        let _ = self.done.send(());
        let _ = self.thread.join();
        (out, took)
    }
}

/// Runs the comparison and prints its table.
pub async fn run(args: &VsSlurmArgs) -> Result<(), BenchError> {
    let args = args.clone();
    tokio::task::spawn_blocking(move || measure(&args))
        .await
        .map_err(|e| BenchError::Command {
            command: "vs-slurm".into(),
            detail: e.to_string(),
        })?
}

fn measure(args: &VsSlurmArgs) -> Result<(), BenchError> {
    let mut sides = vec![setup(System::Sluice, process::bin_dir()?, &args.dir, args)?];
    if let Some(oracle) = &args.oracle_dir {
        let etc = oracle.join("run").join("etc");
        sides.push(setup(System::Slurm, args.slurm_bin.clone(), &etc, args)?);
    }
    let shapes = shapes(&sides, args);
    let mut cases = table::mix(args.fed_cluster.is_some());
    if let Some(h) = &args.history {
        let a = [
            "-M",
            h,
            "-X",
            "-n",
            "-P",
            "-S",
            &args.history_start,
            "-E",
            &args.history_end,
            "-o",
            "JobID,State",
        ];
        cases.push(Case {
            label: format!("sacct {}", a.join(" ")),
            program: "sacct",
            args: a.iter().map(|s| (*s).to_string()).collect(),
            target: Target::Single,
        });
    }
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for case in &cases {
        let cluster = match case.target {
            Target::Single => args.cluster.as_str(),
            Target::Federated => args.fed_cluster.as_deref().unwrap_or(&args.cluster),
        };
        let (row, out_lines) = time_case(case, cluster, &sides, args.runs);
        lines.push(out_lines);
        rows.push(row);
    }
    let mut rates = Vec::new();
    if args.rate_jobs > 0 {
        let mut targets = vec![(args.cluster.clone(), "")];
        if let Some(fed) = &args.fed_cluster {
            targets.push((fed.clone(), ", federated"));
        }
        for (cluster, what) in targets {
            for parallel in [1, 4] {
                let rate = throughput::Rate {
                    label: format!("{} jobs, {parallel} at a time{what}", args.rate_jobs),
                    cluster: cluster.clone(),
                    jobs: args.rate_jobs,
                    parallel,
                };
                rates.push((
                    rate.label.clone(),
                    throughput::measure(&rate, &sides, args.rate_runs),
                ));
            }
        }
    }
    for side in &sides {
        let _ = side.run("scancel", std::slice::from_ref(&side.job), &args.cluster);
    }
    println!(
        "sluice bench vs-slurm, {}, {} cores, {}\n",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ"),
        std::thread::available_parallelism().map_or(0, usize::from),
        if sides.len() > 1 {
            "A = Sluice, B = Slurm, alternating"
        } else {
            "Sluice only (no ORACLE_DIR)"
        }
    );
    println!("{}", shapes.join("\n"));
    if shapes.len() > 1 && !same_shape(&shapes) {
        println!(
            "the two sides' clusters differ in shape: the throughput rows do not compare alike"
        );
    }
    println!();
    print!("{}", table::markdown(&rows, args.runs));
    if !rates.is_empty() {
        print!("{}", throughput::markdown(&rates, args.rate_runs));
    }
    if args.history.is_some()
        && let (Some(row), Some(n)) = (rows.last(), lines.last())
    {
        let (sluice, slurm, _) = row.figures();
        let rate = |d: Duration, n: usize| n as f64 / d.as_secs_f64().max(1e-9);
        println!(
            "\nhistory: {} rows from Sluice, {:.0} rows/s; {} rows from Slurm{}",
            n.0,
            rate(sluice, n.0),
            n.1,
            slurm.map_or(String::new(), |d| format!(", {:.0} rows/s", rate(d, n.1)))
        );
    }
    Ok(())
}

/// Each side's clusters as `sinfo` shows them (node count and CPUs per node) and how they
/// allocate (`SelectType` and its parameters from `scontrol show config`: whole nodes or
/// CPUs), one line per side: throughput depends on how many jobs a cluster runs at once, so
/// the table says it.
fn shapes(sides: &[Side], args: &VsSlurmArgs) -> Vec<String> {
    let mut clusters = vec![args.cluster.as_str()];
    clusters.extend(args.fed_cluster.as_deref());
    let format = ["-h".to_string(), "-o".to_string(), "%D x %c".to_string()];
    let config = ["show".to_string(), "config".to_string()];
    sides
        .iter()
        .map(|side| {
            let each: Vec<String> = clusters
                .iter()
                .map(|c| {
                    let nodes = match side.run("sinfo", &format, c) {
                        Ok((_, out)) => format!("{} CPUs", out.trim().replace('\n', " + ")),
                        Err(e) => format!("sinfo failed ({e})"),
                    };
                    let select = match side.run("scontrol", &config, c) {
                        Ok((_, out)) => selection(&out),
                        Err(e) => format!("scontrol failed ({e})"),
                    };
                    format!("{c}: {nodes}, {select}")
                })
                .collect();
            let name = match side.system {
                System::Sluice => "Sluice",
                System::Slurm => "Slurm",
            };
            format!("{name} nodes: {}", each.join("; "))
        })
        .collect()
}

/// `SelectType` and `SelectTypeParameters` from `scontrol show config` output, as
/// `select/cons_tres (CR_CPU)`.
fn selection(config: &str) -> String {
    let value = |key: &str| {
        config.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let kind = value("SelectType").unwrap_or_else(|| "SelectType unknown".to_string());
    match value("SelectTypeParameters") {
        Some(p) if p != "NONE" => format!("{kind} ({p})"),
        _ => kind,
    }
}

/// Whether every side's line names the same shapes (the text after the side's name).
fn same_shape(shapes: &[String]) -> bool {
    let rest = |l: &String| l.split_once(" nodes: ").map(|(_, r)| r.to_string());
    shapes.windows(2).all(|w| rest(&w[0]) == rest(&w[1]))
}

/// Submits the held job the queries ask about.
fn setup(system: System, bin: PathBuf, etc: &Path, args: &VsSlurmArgs) -> Result<Side, BenchError> {
    let mut side = Side {
        system,
        bin,
        etc: etc.to_path_buf(),
        job: String::new(),
    };
    let submit: Vec<String> = ["--parsable", "-H", "-o", "/dev/null", "--wrap", "true"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let failed = |detail: String| BenchError::Command {
        command: format!("{system:?} sbatch --parsable -H"),
        detail,
    };
    let (_, out) = side.run("sbatch", &submit, &args.cluster).map_err(failed)?;
    let id = table::parsable_job_id(&out).ok_or_else(|| failed(format!("printed {out:?}")))?;
    side.job = id.to_string();
    Ok(side)
}

/// Times `case` on every side in turn; the row and each side's output line count.
fn time_case(case: &Case, cluster: &str, sides: &[Side], runs: usize) -> (Row, (usize, usize)) {
    let mut row = Row {
        label: case.label.clone(),
        ..Row::default()
    };
    let mut lines = (0, 0);
    let mut failed = [false, false];
    for round in 0..=runs {
        for (i, side) in sides.iter().enumerate() {
            if failed[i] {
                continue;
            }
            match side.run(case.program, &case.args_for(&side.job), cluster) {
                Ok((took, out)) => {
                    let n = out.lines().count();
                    let (samples, count) = match side.system {
                        System::Sluice => (&mut row.sluice, &mut lines.0),
                        System::Slurm => (&mut row.slurm, &mut lines.1),
                    };
                    *count = n;
                    // Round 0 is the warm-up.
                    if round > 0 {
                        samples.push(took);
                    }
                }
                Err(why) => {
                    failed[i] = true;
                    row.failure = Some(format!("{:?}: {why}", side.system));
                }
            }
        }
    }
    (row, lines)
}

#[cfg(test)]
mod tests {
    use super::{same_shape, selection};

    #[test]
    fn the_selection_is_read_from_show_config() {
        let conf = "SchedulerType           = sched/backfill\nSelectType              = select/cons_tres\nSelectTypeParameters    = CR_CPU\n";
        assert_eq!(selection(conf), "select/cons_tres (CR_CPU)");
        let linear = "SelectType              = select/linear\nSelectTypeParameters    = NONE\n";
        assert_eq!(selection(linear), "select/linear");
        assert_eq!(selection(""), "SelectType unknown");
    }

    #[test]
    fn shapes_compare_by_what_follows_the_sides_name() {
        let line = |side: &str, cpus: u32| format!("{side} nodes: c3: 1 x {cpus} CPUs");
        assert!(same_shape(&[line("Sluice", 8), line("Slurm", 8)]));
        assert!(!same_shape(&[line("Sluice", 2), line("Slurm", 8)]));
        assert!(same_shape(&[line("Sluice", 2)]));
    }
}
