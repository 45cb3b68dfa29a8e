//! One node's part of a running step: its `RunStep` stream passed on as [`Event`]s, and, when
//! the node daemon goes away mid-step, the wait for it to come back (`AwaitStep`) with the
//! output bytes srun already has, so that it sends only the rest.

use std::time::{Duration, Instant};

use sluice_vocab::jobacct::StepUsage;
use sluice_wire::client::NodedClient;
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{AwaitStepRequest, RunStepRequest, StepOutput, TaskExit, TaskReceived};
use tokio::sync::{mpsc, oneshot};

use super::stdio;
use super::watch::{JobWatch, Verdict};
use crate::rpc_error::{Asker, status_text};

/// What the node streams report.
pub(super) enum Event {
    Output {
        task: u32,
        stderr: bool,
        data: Vec<u8>,
    },
    Exits {
        node: usize,
        exits: Vec<TaskExit>,
        usage: Option<Box<StepUsage>>,
    },
    Failed {
        node: usize,
        text: String,
    },
    /// The node daemon went away mid-step (restarted): its tasks run on, srun waits for it.
    Lost {
        node: usize,
        text: String,
    },
    /// The node daemon is back and gives the tasks' output kept meanwhile, then their exits.
    Back {
        node: usize,
    },
    /// The node daemon came back without the step's tasks.
    Gone {
        node: usize,
        text: String,
    },
    /// While the node daemon was away the controller set its node DOWN or ended the job's
    /// run: srun waits no longer.
    Abandoned {
        node: usize,
        verdict: Verdict,
    },
    Closed {
        node: usize,
    },
}

/// Streams one node's part of the step into `tx`; once its tasks started, opens its stdin
/// stream into `stdin_slot`. `watch` (with the node's name) asks the controller about a
/// daemon that went away.
pub(super) async fn stream_node(
    node: usize,
    client: Option<NodedClient>,
    req: RunStepRequest,
    tx: &mpsc::UnboundedSender<Event>,
    stdin_slot: Option<oneshot::Sender<stdio::Sink>>,
    launches: &tokio::sync::Semaphore,
    mut watch: Option<(JobWatch, String)>,
) {
    let Some(mut client) = client else {
        let _ = tx.send(Event::Failed {
            node,
            text: "Can't find an address, check slurm.conf".to_string(),
        });
        return;
    };
    let (job, step) = (req.job_id, req.step_id);
    let mut got = Received::default();
    // `-T`: at most that many launch requests wait for their node's answer at once.
    let permit = launches.acquire().await.ok();
    let launched = client.run_step(req).await;
    drop(permit);
    let mut stream = match launched {
        Ok(resp) => {
            if let Some(slot) = stdin_slot {
                let _ = slot.send(stdio::open(&client, job, step));
            }
            resp.into_inner()
        }
        // The connection broke during the launch (the daemon killed once the tasks may have
        // started): whether they run is for the daemon back to say.
        Err(status) if cut(&status) => {
            let _ = tx.send(Event::Lost {
                node,
                text: status_text(&status, Asker::Jobs),
            });
            reattach(node, &mut client, (job, step), tx, watch.as_mut(), &mut got).await;
            return;
        }
        Err(status) => {
            let _ = tx.send(Event::Failed {
                node,
                text: status_text(&status, Asker::Jobs),
            });
            return;
        }
    };
    loop {
        match stream.message().await {
            Ok(Some(msg)) => forward(node, msg, tx, &mut got),
            Ok(None) => return,
            Err(status) => {
                // The daemon went away mid-step (killed, restarting): the tasks run on under
                // their supervisors, and the daemon back gives their exits.
                let _ = tx.send(Event::Lost {
                    node,
                    text: status_text(&status, Asker::Jobs),
                });
                reattach(node, &mut client, (job, step), tx, watch.as_mut(), &mut got).await;
                return;
            }
        }
    }
}

/// How long srun waits for a node daemon that went away mid-step to come back.
const REATTACH_FOR: Duration = Duration::from_secs(300);
/// The longest pause between two tries.
const REATTACH_PAUSE: Duration = Duration::from_secs(2);

/// Asks the node daemon, once it is back, for the exits of the step's tasks it adopted.
/// Between tries it asks the controller (`watch`): a node set DOWN or a run that ended ends
/// the wait.
async fn reattach(
    node: usize,
    client: &mut NodedClient,
    (job_id, step_id): (u32, u32),
    tx: &mpsc::UnboundedSender<Event>,
    mut watch: Option<&mut (JobWatch, String)>,
    got: &mut Received,
) {
    let deadline = Instant::now() + REATTACH_FOR;
    let mut pause = Duration::from_millis(200);
    loop {
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(REATTACH_PAUSE);
        if let Some((w, name)) = watch.as_deref_mut() {
            let verdict = w.check(name).await;
            if verdict != Verdict::Wait {
                let _ = tx.send(Event::Abandoned { node, verdict });
                return;
            }
        }
        let request = AwaitStepRequest {
            job_id,
            step_id,
            received: got.to_wire(),
        };
        match client.await_step(request).await {
            Ok(resp) => {
                let _ = tx.send(Event::Back { node });
                let mut stream = resp.into_inner();
                loop {
                    match stream.message().await {
                        Ok(Some(msg)) => forward(node, msg, tx, got),
                        Ok(None) => return,
                        // Gone again (killed once more) before the tasks ended: wait again.
                        Err(s) => {
                            let _ = tx.send(Event::Lost {
                                node,
                                text: status_text(&s, Asker::Jobs),
                            });
                            break;
                        }
                    }
                }
            }
            Err(s) if away(&s) && Instant::now() < deadline => {}
            Err(s) => {
                let _ = tx.send(Event::Gone {
                    node,
                    text: status_text(&s, Asker::Jobs),
                });
                return;
            }
        }
    }
}

/// Whether `status` says an established connection broke (rather than none being made, or
/// the daemon answering no).
fn cut(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(
        status.code(),
        Code::Unknown | Code::Cancelled | Code::Internal | Code::OutOfRange | Code::Aborted
    )
}

/// Whether `status` says the node daemon is not there (yet), or went away again while asked:
/// anything but its answer about the step.
fn away(status: &tonic::Status) -> bool {
    use tonic::Code;
    !matches!(
        status.code(),
        Code::NotFound
            | Code::PermissionDenied
            | Code::InvalidArgument
            | Code::FailedPrecondition
            | Code::Unimplemented
            | Code::Unauthenticated
    )
}

/// The output bytes srun has of each task of a node (the tasks' own, not injected lines), so
/// that a node daemon back sends what its tasks' supervisors kept from there on.
#[derive(Debug, Default)]
struct Received(std::collections::BTreeMap<u32, (u64, u64)>);

impl Received {
    fn add(&mut self, msg: &StepOutput) {
        if msg.injected || msg.data.is_empty() {
            return;
        }
        let got = self.0.entry(msg.task).or_default();
        let n = msg.data.len() as u64;
        if msg.stderr {
            got.1 += n;
        } else {
            got.0 += n;
        }
    }

    fn to_wire(&self) -> Vec<TaskReceived> {
        self.0
            .iter()
            .map(|(&task, &(stdout, stderr))| TaskReceived {
                task,
                stdout,
                stderr,
            })
            .collect()
    }
}

/// Passes one message of a node's stream on as events, counting the bytes in `got`.
fn forward(node: usize, msg: StepOutput, tx: &mpsc::UnboundedSender<Event>, got: &mut Received) {
    got.add(&msg);
    if !msg.data.is_empty() {
        let _ = tx.send(Event::Output {
            task: msg.task,
            stderr: msg.stderr,
            data: msg.data,
        });
    }
    // A task's end told as it happened (the final message repeats it: srun keeps the first).
    if !msg.ended.is_empty() {
        let _ = tx.send(Event::Exits {
            node,
            exits: msg.ended,
            usage: None,
        });
    }
    if !msg.exits.is_empty() {
        let _ = tx.send(Event::Exits {
            node,
            exits: msg.exits,
            usage: msg
                .usage
                .as_ref()
                .and_then(StepUsage::from_proto)
                .map(Box::new),
        });
    }
}
