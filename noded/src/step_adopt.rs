//! srun step tasks that outlive a restart of the node daemon. Each task's supervisor (see
//! [`crate::supervise_task`]) keeps its launch record in the spool (`launches/step.<job>.
//! <step>.<rank>`: process group, launch count, supervisor pid, uid) and leaves the task's
//! status beside it (`.status`). A daemon starting over adopts the tasks it finds: they are
//! listed as running, can be signalled, and are watched to their end; once every adopted task
//! of a step here ended, their exits wait for srun, which lost its stream with the old daemon
//! and asks for them again (`AwaitStep`). A task whose supervisor was killed before it wrote
//! the status is reported with exit code [`crate::adopt::UNKNOWN_EXIT_CODE`].

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_wire::proto::TaskExit;
use tokio::sync::watch;

use nix::sys::signal::Signal;

use crate::adopt::{UNKNOWN_EXIT_CODE, scan_group};
use crate::jobs::{Part, signal_group};
use crate::node::Node;
use crate::spawn::Supervisor;
use crate::supervise::Ended;

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

    /// The supervisor that writes them.
    pub fn supervisor<'a>(&'a self, node: &'a Node) -> Supervisor<'a> {
        Supervisor {
            program: &node.config.stepd,
            status: &self.status,
            record: &self.record,
            restart: 0,
        }
    }

    /// The task's status, once its supervisor wrote it.
    pub fn status(&self) -> Option<Ended> {
        Ended::read(&self.status)
    }

    /// Removes both (the task's end was read).
    pub fn clear(&self) {
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
    stepd: u32,
    uid: u32,
}

fn parse_record(text: &str) -> Option<TaskRecord> {
    let f: Vec<&str> = text.split_whitespace().collect();
    let [pgid, _restart, stepd, uid] = f.as_slice() else {
        return None;
    };
    Some(TaskRecord {
        pgid: pgid.parse().ok()?,
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

/// An adopted step's tasks on this node: whose they are and, once all ended, their exits.
#[derive(Debug, Clone)]
struct Adopted {
    uid: u32,
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

    /// Waits for the exits of adopted step `job.step`, asked by `caller` (`admin`: any step).
    pub async fn wait(
        &self,
        job: u32,
        step: u32,
        caller: u32,
        admin: bool,
    ) -> Result<Vec<TaskExit>, AwaitError> {
        let adopted = self
            .with(|m| m.get(&(job, step)).cloned())
            .ok_or(AwaitError::Unknown)?;
        if adopted.uid != caller && !admin {
            return Err(AwaitError::NotOwner);
        }
        let mut rx = adopted.exits;
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

    /// Forgets every step of `job` (it ended here).
    pub fn forget_job(&self, job: u32) {
        self.with(|m| m.retain(|(j, _), _| *j != job));
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
        let uid = tasks.first().map_or(0, |(_, r)| r.uid);
        for (_, record) in &tasks {
            node.jobs.add_group(job, Part::Step(step), record.pgid);
        }
        let (tx, exits) = watch::channel(None);
        node.steps
            .with(|m| m.insert((job, step), Adopted { uid, exits }));
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
        files.clear();
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
                signal_group(pgid, Some(Signal::SIGKILL));
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
            parse_record("77 0 78 1000\n"),
            Some(TaskRecord {
                pgid: 77,
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
        steps.with(|m| m.insert((5, 0), Adopted { uid: 1000, exits }));
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
