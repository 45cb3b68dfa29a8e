//! The soak loop: rounds of submissions with faults injected between and during them, then
//! the wait for every job to end and every record to reach the accounting, then the verdict.
//!
//! Pauses between rounds and the time a daemon is held stopped are the fault schedule, drawn
//! from the seed; every wait for a state is bounded polling of the commands.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::SoakError;
use super::faults::{self, Blow, Fault, FaultKind};
use super::load::{self, Ledger};
use super::site::{DaemonId, Site};
use super::verdict::{self, Verdict};
use crate::up::daemons::Kind;

/// How long the soak lasts.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// This many rounds (CI).
    Rounds(u32),
    /// Rounds until this much time has passed.
    For(Duration),
}

/// What the soak did and found.
#[derive(Debug, Clone)]
pub struct SoakReport {
    /// The seed that replays it.
    pub seed: u64,
    /// Rounds run.
    pub rounds: u32,
    /// Faults injected, by kind.
    pub faults: BTreeMap<FaultKind, usize>,
    /// `srun` steps that ran while their node daemon was killed (and started again).
    pub steps_cut: usize,
    /// The verdict.
    pub verdict: Verdict,
}

/// How long every job may take to end once the faults stop.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the accounting may take to hold every record once the jobs ended.
const RECORDS_TIMEOUT: Duration = Duration::from_secs(180);
/// How long a killed daemon may take to be gone.
const GONE_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause between polls.
const POLL: Duration = Duration::from_millis(500);

/// Runs a soak on `site` (started with `sluice up` first), telling progress to `say`.
pub fn soak(
    site: &Site,
    seed: u64,
    budget: Budget,
    say: &mut dyn FnMut(&str),
) -> Result<SoakReport, SoakError> {
    site.up()?;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ledger = Ledger::default();
    let mut faults_done = BTreeMap::new();
    let mut died = Vec::new();
    let started = Instant::now();
    let mut rounds = 0;
    while match budget {
        Budget::Rounds(n) => rounds < n,
        Budget::For(d) => started.elapsed() < d,
    } {
        rounds += 1;
        check_alive(site, &mut died)?;
        for _ in 0..round_submissions(&mut rng) {
            submit(site, &mut rng, &mut ledger)?;
        }
        if fault_this_round(&mut rng) {
            let fault = faults::draw(&mut rng, site);
            say(&format!(
                "round {rounds}: {} {} ({:?})",
                fault.kind(),
                fault.daemon.id,
                fault.hold
            ));
            if inject(site, &fault, &mut rng, &mut ledger, &mut died)? {
                *faults_done.entry(fault.kind()).or_insert(0) += 1;
            }
        }
        std::thread::sleep(pause(&mut rng));
    }
    check_alive(site, &mut died)?;
    say(&format!(
        "{rounds} rounds, {} submissions; waiting for every job to end",
        ledger.submitted()
    ));
    let queued = wait_drained(site)?;
    let records = wait_records(site, &ledger)?;
    check_alive(site, &mut died)?;
    let mut verdict = verdict::judge(&ledger, &records, &queued, &read_runs(site));
    verdict.died = died;
    Ok(SoakReport {
        seed,
        rounds,
        faults: faults_done,
        steps_cut: ledger.steps_cut,
        verdict,
    })
}

/// Submits one drawn job and writes down what `sbatch` said.
fn submit(site: &Site, rng: &mut StdRng, ledger: &mut Ledger) -> Result<(), SoakError> {
    let seq = u32::try_from(ledger.submitted()).unwrap_or(u32::MAX);
    let spec = load::draw(rng, seq, site.clusters.len(), ledger);
    let args = spec.sbatch_args(&site.work.join("runs"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = site.cmd(spec.cluster, "sbatch", &args)?;
    match (out.code, load::parse_job_id(&out.stdout)) {
        (Some(0), Some(id)) => {
            ledger.accepted.insert(id, (seq, spec.exit));
            ledger.dependants += usize::from(spec.after.is_some());
            ledger.with_steps += usize::from(spec.srun);
        }
        (Some(code), _) if code != 0 => {
            ledger.refused.insert(seq, out.stderr.trim().to_string());
        }
        _ => {
            ledger.unknown.insert(seq);
        }
    }
    Ok(())
}

/// Injects `fault`; false if its daemon was not running. Jobs are submitted while a daemon
/// is held stopped. Daemons found dead meanwhile go to `died`.
fn inject(
    site: &Site,
    fault: &Fault,
    rng: &mut StdRng,
    ledger: &mut Ledger,
    died: &mut Vec<(String, String)>,
) -> Result<bool, SoakError> {
    match fault.blow {
        Blow::Kill => {
            let Some(pid) = site.pid(&fault.daemon) else {
                return Ok(false);
            };
            if fault.daemon.kind == Kind::Noded && step_running_on(site, &fault.daemon, ledger)? {
                ledger.steps_cut += 1;
            }
            site.signal(&fault.daemon, Signal::SIGKILL);
            // Gone means reaped: while the threads of a killed daemon still tear down, its
            // main thread already shows as a zombie but its listening socket is still open
            // (a node daemon restarted then fails with "Address already in use").
            let deadline = Instant::now() + GONE_TIMEOUT;
            while exists_as(pid, fault.daemon.kind.program()) {
                if Instant::now() > deadline {
                    return Err(SoakError::Stuck {
                        what: format!("{} to die of kill -9", fault.daemon.id),
                    });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            // `up` restarts every missing daemon: first note any that died on its own.
            note_dead(site, Some(&fault.daemon), died);
            site.up()?;
        }
        Blow::Stop => {
            let until = Instant::now() + fault.hold;
            if !site.signal(&fault.daemon, Signal::SIGSTOP) {
                return Ok(false);
            }
            let result = (0..held_submissions(rng)).try_for_each(|_| submit(site, rng, ledger));
            if let Some(rest) = until.checked_duration_since(Instant::now()) {
                std::thread::sleep(rest);
            }
            site.signal(&fault.daemon, Signal::SIGCONT);
            result?;
        }
        Blow::Fill => {
            let Some(dir) = site.state_dir(&fault.daemon) else {
                return Ok(false);
            };
            let filler = dir.join(FILLER);
            let until = Instant::now() + fault.hold;
            let filled = fill(&filler);
            // Submissions meet the full disk: refused at once, or accepted if the
            // controller still had the room (and then they must run).
            let result = filled.and_then(|()| {
                (0..held_submissions(rng)).try_for_each(|_| submit(site, rng, ledger))
            });
            if let Some(rest) = until.checked_duration_since(Instant::now()) {
                std::thread::sleep(rest);
            }
            let freed = std::fs::remove_file(&filler).map_err(|source| SoakError::Io {
                path: filler.clone(),
                source,
            });
            result?;
            freed?;
        }
    }
    Ok(true)
}

// The driver's draws besides the jobs and faults themselves, shared with `planned_faults`
// so that it replays them exactly.

/// How many jobs a round submits.
fn round_submissions(rng: &mut StdRng) -> u32 {
    rng.random_range(1..=3)
}

/// Whether a round injects a fault.
fn fault_this_round(rng: &mut StdRng) -> bool {
    rng.random_bool(0.5)
}

/// How many jobs are submitted while a daemon is stopped or a disk full.
fn held_submissions(rng: &mut StdRng) -> u32 {
    rng.random_range(1..=2)
}

/// The pause after a round.
fn pause(rng: &mut StdRng) -> Duration {
    Duration::from_millis(rng.random_range(0..800))
}

/// The faults a soak of `rounds` rounds from `seed` injects on `site`, in order, worked out
/// without running anything: the driver's draws replayed. (A stop drawn for a daemon that
/// is not running at that moment is skipped by the driver, which then draws differently.)
pub fn planned_faults(site: &Site, seed: u64, rounds: u32) -> Vec<Fault> {
    let mut rng = StdRng::seed_from_u64(seed);
    let ledger = Ledger::default();
    let clusters = site.clusters.len();
    let mut faults = Vec::new();
    for _ in 0..rounds {
        for _ in 0..round_submissions(&mut rng) {
            load::draw(&mut rng, 0, clusters, &ledger);
        }
        if fault_this_round(&mut rng) {
            let fault = faults::draw(&mut rng, site);
            if fault.blow != Blow::Kill {
                for _ in 0..held_submissions(&mut rng) {
                    load::draw(&mut rng, 0, clusters, &ledger);
                }
            }
            faults.push(fault);
        }
        pause(&mut rng);
    }
    faults
}

/// The file that fills a controller's state directory.
const FILLER: &str = "soak-filler";

/// Writes zeros to `path` until its file system is full.
fn fill(path: &Path) -> Result<(), SoakError> {
    use std::io::Write;
    let io = |source| SoakError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::create(path).map_err(io)?;
    // Big blocks until the first refusal, then smaller ones for what is left, to the byte.
    for size in [1 << 20, 1 << 12, 1] {
        let block = vec![0u8; size];
        loop {
            match f.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                Err(e) => return Err(io(e)),
            }
        }
    }
    Ok(())
}

/// How long a long step may take to start on the node whose daemon is about to be killed.
const STEP_START_TIMEOUT: Duration = Duration::from_secs(30);

/// Starts a job whose `srun` step runs on `noded`'s node (see [`load::long_step_args`]) and
/// waits until the step runs; whether it does (the node may be busy or down).
fn step_running_on(site: &Site, noded: &DaemonId, ledger: &mut Ledger) -> Result<bool, SoakError> {
    let Some((cluster, node)) =
        site.clusters
            .iter()
            .enumerate()
            .find_map(|(i, (name, _, nodes))| {
                let node = noded.id.strip_prefix(&format!("noded-{name}-"))?;
                nodes
                    .iter()
                    .any(|n| n == node)
                    .then(|| (i, node.to_string()))
            })
    else {
        return Ok(false);
    };
    let seq = u32::try_from(ledger.submitted()).unwrap_or(u32::MAX);
    let (spec, args) = load::long_step_args(seq, cluster, &node, &site.work);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _ = std::fs::create_dir_all(site.work.join("steps"));
    let out = site.cmd(cluster, "sbatch", &args)?;
    match (out.code, load::parse_job_id(&out.stdout)) {
        (Some(0), Some(id)) => {
            ledger.accepted.insert(id, (seq, spec.exit));
            ledger.with_steps += 1;
        }
        (Some(code), _) if code != 0 => {
            ledger.refused.insert(seq, out.stderr.trim().to_string());
            return Ok(false);
        }
        _ => {
            ledger.unknown.insert(seq);
            return Ok(false);
        }
    }
    let marker = load::step_marker(&site.work, seq);
    let deadline = Instant::now() + STEP_START_TIMEOUT;
    while !marker.exists() {
        if Instant::now() > deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(true)
}

/// Whether process `pid` still exists (a zombie included) as `program` (not a reused pid).
fn exists_as(pid: i32, program: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.split_once('(')
            .and_then(|(_, rest)| rest.rsplit_once(')'))
            .is_some_and(|(comm, _)| program.starts_with(comm) && !comm.is_empty())
    })
}

/// Notes every daemon that is gone though the driver did not kill it, and starts it again.
fn check_alive(site: &Site, died: &mut Vec<(String, String)>) -> Result<(), SoakError> {
    if note_dead(site, None, died) {
        site.up()?;
    }
    Ok(())
}

/// Notes every daemon but `killed` that is gone; whether any was.
fn note_dead(site: &Site, killed: Option<&DaemonId>, died: &mut Vec<(String, String)>) -> bool {
    let gone: Vec<_> = site
        .daemons()
        .into_iter()
        .filter(|d| Some(d) != killed && site.pid(d).is_none())
        .collect();
    for d in &gone {
        died.push((d.id.clone(), site.log_tail(d)));
    }
    !gone.is_empty()
}

/// Waits until no soak job is queued any more; returns what is still queued at the timeout
/// (`id|name|state|reason`).
fn wait_drained(site: &Site) -> Result<Vec<String>, SoakError> {
    let mut args = vec![
        "-h",
        "-t",
        "pending,running,suspended,completing,configuring",
        "-o",
        "%i|%j|%T|%r",
    ];
    if site.federated() {
        args.push("--federation");
    }
    let deadline = Instant::now() + DRAIN_TIMEOUT;
    loop {
        let out = site.cmd(0, "squeue", &args)?;
        let queued: Vec<String> = out.stdout.lines().map(str::to_string).collect();
        if out.code == Some(0) && queued.is_empty() {
            return Ok(queued);
        }
        if Instant::now() > deadline {
            return Ok(queued);
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until the accounting holds a final record of every accepted job (the controllers'
/// outboxes drained); returns every record, or what there is at the timeout.
fn wait_records(site: &Site, ledger: &Ledger) -> Result<Vec<verdict::Record>, SoakError> {
    let mut args = vec![
        "-D",
        "-X",
        "-n",
        "-P",
        "-S",
        "2000-01-01T00:00:00",
        "-o",
        "JobIDRaw,JobName,State,ExitCode",
    ];
    if site.federated() {
        args.push("--federation");
    }
    let deadline = Instant::now() + RECORDS_TIMEOUT;
    loop {
        let out = site.cmd(0, "sacct", &args)?;
        let records = verdict::parse_records(&out.stdout);
        let complete = ledger.accepted.keys().all(|id| {
            records
                .iter()
                .any(|r| r.id == *id && verdict::is_final(&r.state))
        });
        if (out.code == Some(0) && complete) || Instant::now() > deadline {
            return Ok(records);
        }
        std::thread::sleep(POLL);
    }
}

/// The run markers: seq → the job id of every run its script started.
fn read_runs(site: &Site) -> BTreeMap<u32, Vec<u32>> {
    let mut runs = BTreeMap::new();
    for entry in std::fs::read_dir(site.work.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(seq) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        runs.insert(
            seq,
            text.lines().filter_map(|l| l.trim().parse().ok()).collect(),
        );
    }
    runs
}
