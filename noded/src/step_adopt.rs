//! srun step tasks that outlive a restart of the node daemon. Each task's supervisor (see
//! [`crate::supervise_task`]) keeps its launch record in the spool (`launches/step.<job>.
//! <step>.<rank>`: process group, launch count, supervisor pid, uid) and leaves the task's
//! status beside it (`.status`). A daemon starting over adopts the tasks it finds: they are
//! listed as running, can be signalled, and are watched to their end; once every adopted task
//! of a step here ended, their exits wait for srun, which lost its stream with the old daemon
//! and asks for them again (`AwaitStep`). A task whose supervisor was killed before it wrote
//! the status is reported with exit code [`crate::adopt::UNKNOWN_EXIT_CODE`].
//!
//! The records, statuses and spill files stay until srun has the step's output and exits (or
//! the controller ends the job here): a daemon restarted again before srun came back adopts the
//! ended tasks anew, from their statuses, and srun still gets everything.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_wire::proto::{StepOutput, TaskExit, TaskReceived};
use tokio::sync::mpsc;
use tokio::sync::watch;

use nix::sys::signal::Signal;

use crate::adopt::{UNKNOWN_EXIT_CODE, scan_group};
use crate::jobs::{Part, signal_group};
use crate::node::Node;
use crate::spawn::Supervisor;
use crate::supervise::Ended;
use crate::task_output::{SpillReader, spill_path};

/// The prefix of a task's launch record in `launches/`.
const PREFIX: &str = "step";
/// How often an adopted task's process group is looked for.
const WATCH_INTERVAL: Duration = Duration::from_millis(250);

/// The spool files of one step task: its launch record and its status.
#[derive(Debug, Clone)]
pub struct TaskFiles {
    record: PathBuf,
    status: PathBuf,
}

impl TaskFiles {
    /// The files of task `rank` of step `job.step` on `node`.
    pub fn new(node: &Node, job: u32, step: u32, rank: u32) -> Self {
        let record = node
            .spool
            .launches_dir()
            .join(format!("{PREFIX}.{job}.{step}.{rank}"));
        let mut status = record.clone().into_os_string();
        status.push(".status");
        Self {
            record,
            status: status.into(),
        }
    }

    /// The supervisor that writes them, for a task of run `run` of its job.
    pub fn supervisor<'a>(&'a self, node: &'a Node, run: u32) -> Supervisor<'a> {
        Supervisor {
            program: &node.config.stepd,
            sync: node.config.fsync(),
            status: &self.status,
            record: &self.record,
            restart: run,
        }
    }

    /// The task's status, once its supervisor wrote it.
    pub fn status(&self) -> Option<Ended> {
        Ended::read(&self.status)
    }

    /// Removes them all, the spill files too (a new launch, or the end srun was told).
    pub fn clear(&self) {
        self.clear_launch();
        self.clear_kept();
    }

    /// Removes the spill files (their output reached srun, or the job ended here).
    pub fn clear_kept(&self) {
        for stderr in [false, true] {
            let path = spill_path(&self.record, stderr);
            if let Err(e) = std::fs::remove_file(&path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!("cannot remove {}: {e}", path.display());
            }
        }
    }

    /// Removes the record and the status (the task's end was read).
    pub fn clear_launch(&self) {
        for path in [&self.record, &self.status] {
            if let Err(e) = std::fs::remove_file(path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!("cannot remove {}: {e}", path.display());
            }
        }
    }
}

/// A task's launch record: its process group, its supervisor and its user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TaskRecord {
    pgid: i32,
    run: u32,
    stepd: u32,
    uid: u32,
}

fn parse_record(text: &str) -> Option<TaskRecord> {
    let f: Vec<&str> = text.split_whitespace().collect();
    let [pgid, run, stepd, uid] = f.as_slice() else {
        return None;
    };
    Some(TaskRecord {
        pgid: pgid.parse().ok()?,
        run: run.parse().ok()?,
        stepd: stepd.parse().ok()?,
        uid: uid.parse().ok()?,
    })
}

/// `(job, step, rank)` of a launch record's file name.
fn parse_name(name: &str) -> Option<(u32, u32, u32)> {
    let mut parts = name.strip_prefix(PREFIX)?.strip_prefix('.')?.split('.');
    let ids = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    parts.next().is_none().then_some(ids)
}

/// An adopted step's tasks on this node: whose they are, their ranks and, once all ended,
/// their exits.
#[derive(Debug, Clone)]
struct Adopted {
    uid: u32,
    /// The run of its job the tasks belong to.
    run: u32,
    ranks: Vec<u32>,
    exits: watch::Receiver<Option<Vec<TaskExit>>>,
}

/// The steps adopted at start, until srun has their exits or the job ends here.
#[derive(Debug, Default)]
pub struct AdoptedSteps(Mutex<HashMap<(u32, u32), Adopted>>);

/// Why an adopted step's exits cannot be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwaitError {
    /// No task of that step was adopted here.
    Unknown,
    /// The step is another user's.
    NotOwner,
}

impl AdoptedSteps {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<(u32, u32), Adopted>) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The ranks of adopted step `job.step` here and the watch of its exits, for `caller`
    /// (`admin`: any step).
    fn claim(&self, job: u32, step: u32, caller: u32, admin: bool) -> Result<Adopted, AwaitError> {
        let adopted = self
            .with(|m| m.get(&(job, step)).cloned())
            .ok_or(AwaitError::Unknown)?;
        if adopted.uid != caller && !admin {
            return Err(AwaitError::NotOwner);
        }
        Ok(adopted)
    }

    /// Waits for the exits of adopted step `job.step`, asked by `caller` (`admin`: any step).
    pub async fn wait(
        &self,
        job: u32,
        step: u32,
        caller: u32,
        admin: bool,
    ) -> Result<Vec<TaskExit>, AwaitError> {
        let mut rx = self.claim(job, step, caller, admin)?.exits;
        let exits = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| AwaitError::Unknown)?;
        Ok(exits.clone().unwrap_or_default())
    }

    /// Forgets step `job.step` once srun has its exits.
    pub fn delivered(&self, job: u32, step: u32) {
        self.with(|m| m.remove(&(job, step)));
    }

    /// Forgets every step of `job` (of its run `run`, or of any run) (it ended here); the
    /// steps forgotten whose tasks all ended, with their ranks (the others' files go when they
    /// end, in [`watch_step`]).
    fn forget_job(&self, job: u32, run: Option<u32>) -> Vec<(u32, Vec<u32>)> {
        self.with(|m| {
            let steps: Vec<(u32, u32)> = m
                .iter()
                .filter(|((j, _), a)| *j == job && run.is_none_or(|r| r == a.run))
                .map(|(&key, _)| key)
                .collect();
            let mut ended = Vec::new();
            for key in steps {
                if let Some(a) = m.remove(&key)
                    && a.exits.borrow().is_some()
                {
                    ended.push((key.1, a.ranks));
                }
            }
            ended
        })
    }

    /// Whether step `job.step` is still adopted here (srun has not had its exits).
    fn holds(&self, job: u32, step: u32) -> bool {
        self.with(|m| m.contains_key(&(job, step)))
    }
}

/// Adopts the step tasks of an earlier run of this daemon (see the module doc).
pub async fn adopt_steps(node: &Arc<Node>) {
    let Ok(mut entries) = tokio::fs::read_dir(node.spool.launches_dir()).await else {
        return;
    };
    let mut steps: BTreeMap<(u32, u32), Vec<(u32, TaskRecord)>> = BTreeMap::new();
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((job, step, rank)) = parse_name(&name) else {
            continue;
        };
        let text = tokio::fs::read_to_string(entry.path())
            .await
            .unwrap_or_default();
        match parse_record(&text) {
            Some(record) => steps.entry((job, step)).or_default().push((rank, record)),
            None => {
                tracing::warn!(
                    "{}: not a task's launch record, removed",
                    entry.path().display()
                );
                TaskFiles::new(node, job, step, rank).clear();
            }
        }
    }
    for ((job, step), tasks) in steps {
        let (uid, run) = tasks.first().map_or((0, 0), |(_, r)| (r.uid, r.run));
        for (_, record) in &tasks {
            node.jobs.note_run(job, record.run);
            node.jobs.add_group(job, Part::Step(step), record.pgid);
        }
        let (tx, exits) = watch::channel(None);
        let ranks = tasks.iter().map(|(rank, _)| *rank).collect();
        node.steps.with(|m| {
            m.insert(
                (job, step),
                Adopted {
                    uid,
                    run,
                    ranks,
                    exits,
                },
            )
        });
        tracing::info!(
            job,
            step,
            tasks = tasks.len(),
            "adopted step tasks started before this daemon's restart"
        );
        tokio::spawn(watch_step(Arc::clone(node), job, step, tasks, tx));
    }
}

async fn watch_step(
    node: Arc<Node>,
    job: u32,
    step: u32,
    tasks: Vec<(u32, TaskRecord)>,
    tx: watch::Sender<Option<Vec<TaskExit>>>,
) {
    let ranks: Vec<u32> = tasks.iter().map(|(rank, _)| *rank).collect();
    let mut exits = Vec::new();
    for (rank, record) in tasks {
        let files = TaskFiles::new(&node, job, step, rank);
        let ended = task_end(&files, record).await;
        let Ended { exit_code, signal } = ended.unwrap_or_else(|| {
            tracing::warn!(
                job,
                step,
                task = rank,
                "its supervisor is gone without its status; reported as exit code {UNKNOWN_EXIT_CODE}"
            );
            Ended {
                exit_code: UNKNOWN_EXIT_CODE,
                signal: 0,
            }
        });
        // The record, status and spill files wait for srun ([`stream_kept`]): a daemon
        // restarted before srun comes back finds the ended task again.
        exits.push(TaskExit {
            task: rank,
            exit_code,
            signal,
        });
    }
    exits.sort_by_key(|e| e.task);
    tracing::info!(job, step, ?exits, "adopted step tasks ended");
    node.jobs.remove_part(job, Part::Step(step));
    tx.send_replace(Some(exits));
    // The job ended here meanwhile: nobody will ask for the step.
    if !node.steps.holds(job, step) {
        for rank in ranks {
            TaskFiles::new(&node, job, step, rank).clear();
        }
    }
}

/// Waits for an adopted task's end: its supervisor gone after writing the status (what the
/// task left running in its group ends with it, as when this daemon started the step), or,
/// without a status, its whole group gone (`None`).
async fn task_end(files: &TaskFiles, record: TaskRecord) -> Option<Ended> {
    loop {
        let (pgid, stepd) = (record.pgid, record.stepd);
        let (stepd_alive, group_alive) = tokio::task::spawn_blocking(move || {
            (stepd_alive(stepd), scan_group(Path::new("/proc"), pgid))
        })
        .await
        .unwrap_or((false, false));
        if !stepd_alive {
            if let Some(status) = files.status() {
                // Found again after another restart, the task's group is long gone: its
                // number may be someone else's now.
                if group_alive {
                    signal_group(pgid, Some(Signal::SIGKILL));
                }
                return Some(status);
            }
            if !group_alive {
                return files.status();
            }
        }
        tokio::time::sleep(WATCH_INTERVAL).await;
    }
}

/// Whether supervisor `pid` still runs (it writes the status just before it exits).
fn stepd_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_string())
        })
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

/// How often a spill file is read again while its task runs.
const TAIL_INTERVAL: Duration = Duration::from_millis(100);
/// Largest chunk of kept output sent in one message.
const KEPT_CHUNK: usize = 16 * 1024;

/// What srun asks of an adopted step: `caller`'s (`admin`: anyone's) step `job.step`, the
/// output bytes it has of each task (`received`).
#[derive(Debug, Clone)]
pub struct KeptRequest {
    /// The job.
    pub job: u32,
    /// The step.
    pub step: u32,
    /// Who asks.
    pub caller: u32,
    /// Whether the caller is an administrator.
    pub admin: bool,
    /// The bytes of each task's stdout and stderr srun has.
    pub received: Vec<TaskReceived>,
}

/// Streams to srun what the supervisors of adopted step `req.job.step` kept of its tasks'
/// output while no daemon read it (from the bytes srun has on), then, once every task ended and
/// its output is out, their exits; the spill files go once delivered.
pub fn stream_kept(
    node: &Arc<Node>,
    req: KeptRequest,
    tx: mpsc::Sender<Result<StepOutput, tonic::Status>>,
) -> Result<(), AwaitError> {
    let adopted = node.steps.claim(req.job, req.step, req.caller, req.admin)?;
    let node = Arc::clone(node);
    tokio::spawn(async move {
        let mut tails = tokio::task::JoinSet::new();
        for &rank in &adopted.ranks {
            let files = TaskFiles::new(&node, req.job, req.step, rank);
            let got = req.received.iter().find(|r| r.task == rank);
            for stderr in [false, true] {
                let from = got.map_or(0, |g| if stderr { g.stderr } else { g.stdout });
                let (tx, exits) = (tx.clone(), adopted.exits.clone());
                let path = spill_path(&files.record, stderr);
                tails.spawn_blocking(move || tail(&path, (rank, stderr), from, &exits, &tx));
            }
        }
        let mut complete = true;
        while let Some(done) = tails.join_next().await {
            complete &= done.unwrap_or(false);
        }
        if !complete {
            return; // srun went away: it may ask again
        }
        let Ok(exits) = node
            .steps
            .wait(req.job, req.step, req.caller, req.admin)
            .await
        else {
            return;
        };
        let last = StepOutput {
            exits,
            ..Default::default()
        };
        if tx.send(Ok(last)).await.is_ok() {
            node.steps.delivered(req.job, req.step);
            for &rank in &adopted.ranks {
                TaskFiles::new(&node, req.job, req.step, rank).clear();
            }
            tracing::info!(
                job = req.job,
                step = req.step,
                "adopted step's kept output and exits given to srun"
            );
        }
    });
    Ok(())
}

/// Sends a spill file's bytes from byte `from` of its stream as they come, until the step's
/// tasks all ended (`exits` set) and it is read to its end; `false` when srun went away.
fn tail(
    path: &Path,
    (task, stderr): (u32, bool),
    from: u64,
    exits: &watch::Receiver<Option<Vec<TaskExit>>>,
    tx: &mpsc::Sender<Result<StepOutput, tonic::Status>>,
) -> bool {
    let mut reader = None;
    loop {
        let ended = exits.borrow().is_some();
        if reader.is_none() {
            reader = SpillReader::open(path, from);
        }
        if let Some(r) = &mut reader {
            loop {
                let data = match r.read_more(KEPT_CHUNK) {
                    Ok(d) if !d.is_empty() => d,
                    _ => break,
                };
                let msg = StepOutput {
                    task,
                    data,
                    stderr,
                    ..Default::default()
                };
                if tx.blocking_send(Ok(msg)).is_err() {
                    return false;
                }
            }
        }
        if ended {
            return true;
        }
        std::thread::sleep(TAIL_INTERVAL);
    }
}

/// The controller ended `job` here (its run `run`, or the job whatever its run): forgets its
/// adopted steps with their files (srun will not ask for them); for the whole job, removes the
/// spill files of all its steps too.
pub fn forget_job(node: &Node, job: u32, run: Option<u32>) {
    for (step, ranks) in node.steps.forget_job(job, run) {
        for rank in ranks {
            TaskFiles::new(node, job, step, rank).clear();
        }
    }
    if run.is_none() {
        remove_job_spills(node, job);
    }
}

/// Removes the spill files of every step of `job` here (it ended here).
fn remove_job_spills(node: &Node, job: u32) {
    let Ok(entries) = std::fs::read_dir(node.spool.launches_dir()) else {
        return;
    };
    let prefix = format!("{PREFIX}.{job}.");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && (name.ends_with(".out") || name.ends_with(".err")) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_names_of_step_tasks() {
        assert_eq!(parse_name("step.12.0.3"), Some((12, 0, 3)));
        assert_eq!(parse_name("step.12.0.3.status"), None);
        assert_eq!(parse_name("12"), None);
        assert_eq!(parse_name("step.12.0"), None);
        assert_eq!(
            parse_record("77 2 78 1000\n"),
            Some(TaskRecord {
                pgid: 77,
                run: 2,
                stepd: 78,
                uid: 1000
            })
        );
        assert_eq!(parse_record("77 0 78"), None, "a batch script's record");
        assert_eq!(parse_record("77 0 x 1"), None);
    }

    #[tokio::test]
    async fn an_adopted_steps_exits_go_to_its_owner_once() {
        let steps = AdoptedSteps::default();
        let (tx, exits) = watch::channel(None);
        steps.with(|m| {
            m.insert(
                (5, 0),
                Adopted {
                    uid: 1000,
                    run: 0,
                    ranks: vec![0],
                    exits,
                },
            )
        });
        assert_eq!(
            steps.wait(5, 1, 1000, false).await,
            Err(AwaitError::Unknown)
        );
        assert_eq!(
            steps.wait(5, 0, 1001, false).await,
            Err(AwaitError::NotOwner)
        );
        let exit = || TaskExit {
            task: 0,
            exit_code: 7,
            signal: 0,
        };
        tx.send_replace(Some(vec![exit()]));
        assert_eq!(steps.wait(5, 0, 1000, false).await, Ok(vec![exit()]));
        assert_eq!(
            steps.wait(5, 0, 0, true).await,
            Ok(vec![exit()]),
            "an admin"
        );
        steps.delivered(5, 0);
        assert_eq!(steps.wait(5, 0, 0, true).await, Err(AwaitError::Unknown));
    }
}
