//! srun's stdin for a step's tasks (`srun -i all|<task>`, the default): `RunStep` leaves the
//! tasks' stdin pipes here (with `--pty`, task 0's terminal, which srun's window changes also
//! resize), srun's `StepInput` stream writes every chunk to each task, and its
//! end closes the pipes, so the tasks read EOF. An attached `sattach` writes to the same pipes
//! (to every task, or to its `--input-filter` task) while the step runs; its end closes
//! nothing. A step that ends first takes its pipes back.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use sluice_wire::proto::StepStdin;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio_stream::{Stream, StreamExt};

use crate::pty;

/// Where a task's stdin is written: its pipe, or its terminal's master.
pub type Pipe = Box<dyn AsyncWrite + Send + Unpin>;

/// One step's stdin, shared by srun and attached writers.
pub type Shared = Arc<tokio::sync::Mutex<Pipes>>;

/// The tasks' stdin, with their ranks, and task 0's terminal when it has one.
#[derive(Default)]
pub struct Pipes {
    /// Each reading task's pipe.
    pub pipes: Vec<(u32, Pipe)>,
    /// `srun --pty`: the terminal's master, to resize it.
    pub tty: Option<OwnedFd>,
}

impl std::fmt::Debug for Pipes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ranks: Vec<u32> = self.pipes.iter().map(|(rank, _)| *rank).collect();
        f.debug_struct("Pipes")
            .field("tasks", &ranks)
            .field("tty", &self.tty)
            .finish()
    }
}

/// Stdin pipes of running steps, by (job, step).
#[derive(Debug, Default)]
pub struct StdinTable {
    steps: Mutex<HashMap<(u32, u32), Entry>>,
}

#[derive(Debug)]
struct Entry {
    uid: u32,
    pipes: Shared,
    /// srun's stream came (there is only one).
    srun_came: bool,
}

/// One step's pipes and whose they are.
#[derive(Debug)]
pub struct Waiting {
    /// The step's user: only they (or an admin) may feed it.
    pub uid: u32,
    /// The tasks' stdin.
    pub pipes: Pipes,
}

/// Who writes to a step's stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// srun: once; its end closes the pipes; it alone resizes the terminal.
    Srun,
    /// An attached reader (`sattach`), to every task or to one (`--input-filter`).
    Attached { task: Option<u32> },
}

impl StdinTable {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<(u32, u32), Entry>) -> R) -> R {
        let mut guard = self.steps.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Keeps `waiting`'s pipes for the writers of `job.step`.
    pub fn register(&self, job: u32, step: u32, waiting: Waiting) {
        let entry = Entry {
            uid: waiting.uid,
            pipes: Arc::new(tokio::sync::Mutex::new(waiting.pipes)),
            srun_came: false,
        };
        self.with(|steps| steps.insert((job, step), entry));
    }

    /// The pipes of `job.step` for `writer`, with the step's owner; `None` when the step reads
    /// no stdin here (or srun's stream already came, for srun).
    pub fn open(&self, job: u32, step: u32, writer: Writer) -> Option<(u32, Shared)> {
        self.with(|steps| {
            let entry = steps.get_mut(&(job, step))?;
            if writer == Writer::Srun {
                if entry.srun_came {
                    return None;
                }
                entry.srun_came = true;
            }
            Some((entry.uid, Arc::clone(&entry.pipes)))
        })
    }

    /// Forgets `job.step` (it ended): the pipes close once no writer holds them.
    pub fn remove(&self, job: u32, step: u32) {
        self.with(|steps| steps.remove(&(job, step)));
    }
}

/// Writes each chunk of `stream` (after `first`) to the pipes `writer` feeds; a task that
/// stopped reading is left out. When srun's stream ends, the pipes are closed (the tasks'
/// EOF); an attached writer's end closes nothing.
pub async fn pump<S, E>(pipes: Shared, writer: Writer, first: Vec<u8>, mut stream: S)
where
    S: Stream<Item = Result<StepStdin, E>> + Unpin,
{
    let only = match writer {
        Writer::Srun => None,
        Writer::Attached { task } => task,
    };
    write_all(&pipes, only, &first).await;
    while let Some(Ok(msg)) = stream.next().await {
        if let (Writer::Srun, Some(size)) = (writer, &msg.window)
            && let Some(tty) = &pipes.lock().await.tty
            && let Err(e) = pty::resize(tty, size.rows, size.cols)
        {
            tracing::warn!("cannot resize a step's terminal: {e}");
        }
        if !write_all(&pipes, only, &msg.data).await {
            break;
        }
    }
    if writer == Writer::Srun {
        *pipes.lock().await = Pipes::default();
    }
}

/// Writes `data` to every pipe (or task `only`'s); `false` once none is left to write to.
async fn write_all(pipes: &Shared, only: Option<u32>, data: &[u8]) -> bool {
    let mut guard = pipes.lock().await;
    let pipes = &mut guard.pipes;
    if !data.is_empty() {
        let mut open = Vec::with_capacity(pipes.len());
        for (rank, mut pipe) in pipes.drain(..) {
            // A task this writer does not feed keeps its pipe; a fed one that fails is left out.
            let other = only.is_some_and(|t| t != rank);
            if other || (pipe.write_all(data).await.is_ok() && pipe.flush().await.is_ok()) {
                open.push((rank, pipe));
            }
        }
        *pipes = open;
    }
    pipes
        .iter()
        .any(|(rank, _)| only.is_none_or(|t| t == *rank))
}
