//! srun's stdin for a step's tasks (`srun -i all|<task>`, the default): `RunStep` leaves the
//! tasks' stdin pipes here, srun's `StepInput` stream takes them and writes every chunk to each
//! task, and its end closes the pipes, so the tasks read EOF. A step that ends first takes its
//! pipes back.

use std::collections::HashMap;
use std::sync::Mutex;

use sluice_wire::proto::StepStdin;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio_stream::{Stream, StreamExt};

/// Stdin pipes of steps waiting for srun's stream, by (job, step).
#[derive(Debug, Default)]
pub struct StdinTable {
    steps: Mutex<HashMap<(u32, u32), Waiting>>,
}

/// One step's pipes and whose they are.
#[derive(Debug)]
pub struct Waiting {
    /// The step's user: only they (or an admin) may feed it.
    pub uid: u32,
    /// The tasks' stdin.
    pub pipes: Vec<ChildStdin>,
}

impl StdinTable {
    /// Keeps `pipes` for srun's stream of `job.step`.
    pub fn register(&self, job: u32, step: u32, waiting: Waiting) {
        if let Ok(mut steps) = self.steps.lock() {
            steps.insert((job, step), waiting);
        }
    }

    /// Hands `job.step`'s pipes out (once).
    pub fn take(&self, job: u32, step: u32) -> Option<Waiting> {
        self.steps.lock().ok()?.remove(&(job, step))
    }
}

/// Writes each chunk of `stream` (after `first`) to every pipe; a task that stopped reading is
/// left out. Returns when the stream ends, dropping (closing) the pipes.
pub async fn pump<S, E>(mut pipes: Vec<ChildStdin>, first: Vec<u8>, mut stream: S)
where
    S: Stream<Item = Result<StepStdin, E>> + Unpin,
{
    write_all(&mut pipes, &first).await;
    while let Some(Ok(msg)) = stream.next().await {
        write_all(&mut pipes, &msg.data).await;
        if pipes.is_empty() {
            return;
        }
    }
}

async fn write_all(pipes: &mut Vec<ChildStdin>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let mut open = Vec::with_capacity(pipes.len());
    for mut pipe in pipes.drain(..) {
        if pipe.write_all(data).await.is_ok() && pipe.flush().await.is_ok() {
            open.push(pipe);
        }
    }
    *pipes = open;
}
