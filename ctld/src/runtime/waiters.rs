//! `srun` and `salloc` allocations waiting for their job: after each commit the loop tells each
//! waiting command why its job still waits (when the reason changed), then hands it the
//! allocation once the job runs, or the reason it ended. A command that went away before its
//! grant leaves its job to be cancelled, as Slurm does when an allocation's `srun` stops
//! answering. `salloc` follows its allocation to the end (`follow_end`): it is told when the
//! granted job ends (scancel, time limit), to tell its user and signal its command.

use super::NodeAddrs;
use crate::core::{Core, JobReason};
use sluice_vocab::{FedJobId, JobState};
use sluice_wire::proto::{Allocation, AllocationEvent, NodeAddr, allocation_event::Event};
use std::collections::HashMap;
use tokio::sync::mpsc;
use tonic::Status;

/// Where a waiting `srun`'s events go (the Allocate stream).
pub type EventSender = mpsc::Sender<Result<AllocationEvent, Status>>;

struct Waiter {
    events: EventSender,
    last_reason: Option<JobReason>,
    /// Told the end of the granted allocation too.
    follow_end: bool,
    /// The allocation was handed over (only a follower is still here then).
    granted: bool,
}

/// The waiting allocations by job.
#[derive(Default)]
pub struct Waiters {
    map: HashMap<FedJobId, Waiter>,
}

impl Waiters {
    /// Starts reporting on `job` to `events` (with `follow_end`, until the job ends).
    pub fn add(&mut self, job: FedJobId, events: EventSender, follow_end: bool) {
        self.map.insert(
            job,
            Waiter {
                events,
                last_reason: None,
                follow_end,
                granted: false,
            },
        );
    }

    /// Whether nobody waits.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Reports every waiter's progress (after a commit); finished waiters are dropped.
    pub fn report(&mut self, core: &Core, addrs: &NodeAddrs) {
        self.map.retain(|&id, w| {
            let event = if w.granted {
                ended(core, id)
            } else {
                progress(core, addrs, id, w)
            };
            let Some(event) = event else {
                // A follower that went away after its grant: nothing more to tell.
                return !(w.granted && w.events.is_closed());
            };
            let granted = matches!(event, Event::Granted(_));
            let last = match event {
                Event::Queued(_) => false,
                Event::Granted(_) => !w.follow_end,
                _ => true,
            };
            w.granted |= granted;
            let msg = AllocationEvent {
                job_id: id.get(),
                event: Some(event),
            };
            // A full stream only delays a `queued` update; the final event must get through.
            match w.events.try_send(Ok(msg)) {
                Ok(()) => !last,
                Err(mpsc::error::TrySendError::Full(msg)) if last || granted => {
                    let tx = w.events.clone();
                    tokio::spawn(async move {
                        let _ = tx.send(msg).await;
                    });
                    !last
                }
                Err(_) => true,
            }
        });
    }

    /// Jobs whose command went away before it got its allocation; they are dropped here and
    /// should be cancelled.
    pub fn abandoned(&mut self) -> Vec<FedJobId> {
        let gone: Vec<FedJobId> = self
            .map
            .iter()
            .filter(|(_, w)| !w.granted && w.events.is_closed())
            .map(|(&id, _)| id)
            .collect();
        for id in &gone {
            self.map.remove(id);
        }
        gone
    }
}

/// What to tell a command still waiting for `id`: its queue reason when it changed, the
/// allocation once it runs, or why it ended first.
fn progress(core: &Core, addrs: &NodeAddrs, id: FedJobId, w: &mut Waiter) -> Option<Event> {
    let Some(job) = core.job(id) else {
        return Some(Event::Failed("Job no longer exists".into()));
    };
    // A job whose powered-down nodes are still booting (CONFIGURING) is not ready, unless
    // it need not wait for them (salloc's default: its steps wait instead).
    if job.state == JobState::Running && !job.completing && core.allocation_ready(id) {
        let nodes: Vec<NodeAddr> = job
            .nodes
            .iter()
            .filter_map(|&n| core.nodes().get(n.get() as usize))
            .map(|n| {
                let (addr, port) =
                    super::node_addr(core, addrs, &n.name).unwrap_or((n.addr.clone(), n.port));
                NodeAddr {
                    name: n.name.clone(),
                    addr,
                    port: u32::from(port),
                }
            })
            .collect();
        return Some(Event::Granted(Allocation {
            job_id: id.get(),
            node_list: core.hostlist(&job.nodes),
            nodes,
            ntasks: job.req.ntasks,
            cpus_per_task: job.req.cpus_per_task,
            cpus_per_node: core.cpus_held(id, &job.nodes),
            tasks_per_node: Vec::new(),
            het_env: core
                .het_env(id)
                .into_iter()
                .map(|(name, value)| sluice_wire::proto::EnvVar { name, value })
                .collect(),
        }));
    }
    if job.state == JobState::Pending && !job.completing {
        if w.last_reason == Some(job.reason) {
            return None;
        }
        w.last_reason = Some(job.reason);
        return Some(Event::Queued(job.reason.to_string()));
    }
    job.state
        .is_finished()
        .then(|| Event::Failed(format!("{} {}", job.state, job.reason)))
}

/// Whether granted allocation `id` has ended (or is ending): its state, for `salloc`.
fn ended(core: &Core, id: FedJobId) -> Option<Event> {
    match core.job(id) {
        None => Some(Event::Ended(JobState::Cancelled.to_string())),
        Some(job) if job.completing || job.state.is_finished() => {
            Some(Event::Ended(job.state.to_string()))
        }
        Some(_) => None,
    }
}
