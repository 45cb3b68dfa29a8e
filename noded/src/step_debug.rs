//! `srun --slurmd-debug=<level>`: the node daemon tells srun, on the step's stderr, what it
//! does with the step's tasks, as Slurm's step daemon sends its log there: each line
//! `slurmstepd-<node>: ...`, at Slurm's info level (shown from level 1 on): the tasks it
//! starts, each task's start with its process and time, and each end.
//!
//! The process named is the one the daemon started for the task (its supervisor, which runs
//! the task as its child), not the task's own as in Slurm.

use sluice_wire::proto::StepOutput;
use tokio::sync::mpsc;

/// Where the lines go, when the step asked for them.
#[derive(Debug, Clone)]
pub struct StepDebug {
    prefix: String,
    tx: mpsc::Sender<Result<StepOutput, tonic::Status>>,
}

impl StepDebug {
    /// The step's reporter on `host`; `None` when `level` is 0 (not asked).
    pub fn new(
        level: u32,
        host: &str,
        tx: &mpsc::Sender<Result<StepOutput, tonic::Status>>,
    ) -> Option<Self> {
        (level > 0).then(|| Self {
            prefix: format!("slurmstepd-{host}: "),
            tx: tx.clone(),
        })
    }

    /// Sends one line, on the stderr of task `task`, as not the task's own output.
    pub async fn line(&self, task: u32, text: &str) {
        let msg = StepOutput {
            task,
            data: format!("{}{text}\n", self.prefix).into_bytes(),
            stderr: true,
            injected: true,
            ..Default::default()
        };
        let _ = self.tx.send(Ok(msg)).await;
    }
}

/// `task 0 (123) started 2026-11-28T03:33:36`.
pub fn started(rank: u32, pid: i32, at: chrono::DateTime<chrono::Local>) -> String {
    format!(
        "task {rank} ({pid}) started {}",
        at.format("%Y-%m-%dT%H:%M:%S")
    )
}

/// `task 0 (123) exited with exit code 0.` or `task 0 (123) exited. Killed by signal 9.`
pub fn ended(rank: u32, pid: i32, exit_code: i32, signal: i32) -> String {
    if signal > 0 {
        format!("task {rank} ({pid}) exited. Killed by signal {signal}.")
    } else {
        format!("task {rank} ({pid}) exited with exit code {exit_code}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn lines_as_slurms_step_daemon_words_them() {
        let at = chrono::Local
            .with_ymd_and_hms(2026, 11, 28, 3, 33, 36)
            .unwrap();
        assert_eq!(
            started(0, 12231, at),
            "task 0 (12231) started 2026-11-28T03:33:36"
        );
        assert_eq!(
            ended(0, 12231, 0, 0),
            "task 0 (12231) exited with exit code 0."
        );
        assert_eq!(ended(2, 7, 0, 9), "task 2 (7) exited. Killed by signal 9.");
    }

    #[tokio::test]
    async fn nothing_is_sent_unless_asked() {
        let (tx, mut rx) = mpsc::channel(4);
        assert!(StepDebug::new(0, "n1", &tx).is_none());
        let debug = StepDebug::new(2, "n1", &tx).unwrap();
        debug.line(1, "starting 2 tasks").await;
        let msg = rx.recv().await.unwrap().unwrap();
        assert_eq!(msg.data, b"slurmstepd-n1: starting 2 tasks\n");
        assert!(msg.stderr && msg.injected);
    }
}
