//! `srun` allocations waiting for their job: after each commit the loop tells each waiting
//! `srun` why its job still waits (when the reason changed), then hands it the allocation once
//! the job runs, or the reason it ended. An `srun` that went away leaves its job to be
//! cancelled, as Slurm does when an allocation's `srun` stops answering.

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
}

/// The waiting allocations by job.
#[derive(Default)]
pub struct Waiters {
    map: HashMap<FedJobId, Waiter>,
}

impl Waiters {
    /// Starts reporting on `job` to `events`.
    pub fn add(&mut self, job: FedJobId, events: EventSender) {
        self.map.insert(
            job,
            Waiter {
                events,
                last_reason: None,
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
            let id_raw = id.get();
            let event = match core.job(id) {
                None => Some(Event::Failed("Job no longer exists".into())),
                // A job whose powered-down nodes are still booting (CONFIGURING) is not ready.
                Some(job)
                    if job.state == JobState::Running
                        && !job.completing
                        && !core.job_configuring(id) =>
                {
                    let nodes: Vec<NodeAddr> = job
                        .nodes
                        .iter()
                        .filter_map(|&n| core.nodes().get(n.get() as usize))
                        .map(|n| {
                            let (addr, port) = super::node_addr(core, addrs, &n.name)
                                .unwrap_or((n.addr.clone(), n.port));
                            NodeAddr {
                                name: n.name.clone(),
                                addr,
                                port: u32::from(port),
                            }
                        })
                        .collect();
                    let cpus_per_node = core.cpus_held(id, &job.nodes);
                    Some(Event::Granted(Allocation {
                        job_id: id_raw,
                        node_list: core.hostlist(&job.nodes),
                        nodes,
                        ntasks: job.req.ntasks,
                        cpus_per_task: job.req.cpus_per_task,
                        cpus_per_node,
                        tasks_per_node: Vec::new(),
                    }))
                }
                Some(job) if job.state == JobState::Pending && !job.completing => {
                    if w.last_reason == Some(job.reason) {
                        None
                    } else {
                        w.last_reason = Some(job.reason);
                        Some(Event::Queued(job.reason.to_string()))
                    }
                }
                Some(job) if job.state.is_finished() => {
                    Some(Event::Failed(format!("{} {}", job.state, job.reason)))
                }
                Some(_) => None,
            };
            let Some(event) = event else {
                return true;
            };
            let last = !matches!(event, Event::Queued(_));
            let msg = AllocationEvent {
                job_id: id_raw,
                event: Some(event),
            };
            // A full stream only delays a `queued` update; the final event must get through.
            match w.events.try_send(Ok(msg)) {
                Ok(()) => !last,
                Err(mpsc::error::TrySendError::Full(msg)) if last => {
                    let tx = w.events.clone();
                    tokio::spawn(async move {
                        let _ = tx.send(msg).await;
                    });
                    false
                }
                Err(_) => true,
            }
        });
    }

    /// Jobs whose `srun` went away before it got its allocation; they are dropped here and
    /// should be cancelled.
    pub fn abandoned(&mut self) -> Vec<FedJobId> {
        let gone: Vec<FedJobId> = self
            .map
            .iter()
            .filter(|(_, w)| w.events.is_closed())
            .map(|(&id, _)| id)
            .collect();
        for id in &gone {
            self.map.remove(id);
        }
        gone
    }
}
