//! The second readers of running steps' output (`sattach`, the paper's attach mode): while a
//! step's tasks run here, every chunk they write goes to srun's stream and to each attached
//! `AttachStep` stream too, and the step's last message (its exits) ends them. Only the step's
//! owner or an admin may attach.
//!
//! An attached reader never slows the tasks: chunks are offered without waiting, and a reader
//! that falls [`DEPTH`] messages behind is dropped (its stream ends before the exits, which
//! `sattach` reports), as srun's own stream is the one the step waits for.

use std::collections::HashMap;
use std::sync::Mutex;

use sluice_wire::proto::{AttachedStep, StepOutput};
use tokio::sync::mpsc;

use crate::error::NodedError;

/// Messages an attached reader may fall behind before it is dropped.
pub const DEPTH: usize = 1024;

/// An attached reader's stream of the step's output.
pub type Reader = mpsc::Receiver<Result<StepOutput, tonic::Status>>;

/// One running step's owner and attached readers.
#[derive(Debug)]
struct Attachable {
    uid: u32,
    layout: AttachedStep,
    readers: Vec<mpsc::Sender<Result<StepOutput, tonic::Status>>>,
}

/// The steps running here that readers may attach to, by (job, step).
#[derive(Debug, Default)]
pub struct AttachTable {
    steps: Mutex<HashMap<(u32, u32), Attachable>>,
}

impl AttachTable {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<(u32, u32), Attachable>) -> R) -> R {
        let mut guard = self.steps.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Records that `job.step`'s tasks, owned by `uid`, run here as `layout` says.
    pub fn open(&self, job: u32, step: u32, uid: u32, layout: AttachedStep) {
        self.with(|steps| {
            steps.insert(
                (job, step),
                Attachable {
                    uid,
                    layout,
                    readers: Vec::new(),
                },
            )
        });
    }

    /// Forgets `job.step` (its tasks ended): the readers' streams end.
    pub fn close(&self, job: u32, step: u32) {
        self.with(|steps| steps.remove(&(job, step)));
    }

    /// Whether `uid` owns a step of `job` running here.
    pub fn owns_step(&self, job: u32, step: u32, uid: u32) -> bool {
        self.with(|steps| steps.get(&(job, step)).is_some_and(|s| s.uid == uid))
    }

    /// Attaches a reader to `job.step` for `caller` (`admin`: whatever the owner); its first
    /// message tells where the step's tasks here sit.
    pub fn attach(
        &self,
        job: u32,
        step: u32,
        caller: u32,
        admin: bool,
    ) -> Result<Reader, NodedError> {
        self.with(|steps| {
            let Some(s) = steps.get_mut(&(job, step)) else {
                return Err(NodedError::NoSuchStep { job, step });
            };
            if s.uid != caller && !admin {
                return Err(NodedError::AccessDenied { uid: caller });
            }
            let (tx, rx) = mpsc::channel(DEPTH);
            let first = StepOutput {
                attached: Some(s.layout.clone()),
                ..Default::default()
            };
            // A fresh channel has room for it.
            let _ = tx.try_send(Ok(first));
            s.readers.push(tx);
            Ok(rx)
        })
    }

    /// Offers `msg` of `job.step` to every reader; drops the ones gone or too far behind.
    pub fn publish(&self, job: u32, step: u32, msg: &StepOutput) {
        self.with(|steps| {
            if let Some(s) = steps.get_mut(&(job, step)) {
                s.readers.retain(|r| r.try_send(Ok(msg.clone())).is_ok());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> AttachedStep {
        AttachedStep {
            node_list: "n[1-2]".into(),
            node_index: 1,
            ntasks: 4,
            first_task: 2,
            tasks_here: 2,
            pty: false,
            task_ranks: Vec::new(),
            step_layout: Vec::new(),
        }
    }

    fn chunk(text: &str) -> StepOutput {
        StepOutput {
            data: text.as_bytes().to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn readers_see_chunks_after_they_attach_until_the_step_ends() {
        let t = AttachTable::default();
        assert!(matches!(
            t.attach(1, 0, 1000, false),
            Err(NodedError::NoSuchStep { job: 1, step: 0 })
        ));
        t.open(1, 0, 1000, layout());
        t.publish(1, 0, &chunk("before"));
        let mut r = t.attach(1, 0, 1000, false).unwrap();
        let first = r.try_recv().unwrap().unwrap();
        assert_eq!(first.attached, Some(layout()));
        t.publish(1, 0, &chunk("after"));
        t.close(1, 0);
        assert_eq!(r.try_recv().unwrap().unwrap().data, b"after");
        assert!(matches!(
            r.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
    }

    #[test]
    fn only_the_owner_or_an_admin_attaches() {
        let t = AttachTable::default();
        t.open(1, 0, 1000, layout());
        assert!(matches!(
            t.attach(1, 0, 1001, false),
            Err(NodedError::AccessDenied { uid: 1001 })
        ));
        assert!(t.attach(1, 0, 0, true).is_ok());
        assert!(t.owns_step(1, 0, 1000) && !t.owns_step(1, 0, 1001));
    }

    #[test]
    fn a_reader_too_far_behind_is_dropped() {
        let t = AttachTable::default();
        t.open(1, 0, 1000, layout());
        let mut slow = t.attach(1, 0, 1000, false).unwrap();
        for _ in 0..DEPTH {
            t.publish(1, 0, &chunk("x"));
        }
        let got = std::iter::from_fn(|| slow.try_recv().ok()).count();
        assert_eq!(got, DEPTH, "the layout and the chunks that fitted");
        assert!(matches!(
            slow.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
    }
}
