//! Subscribers of failure management events (`Nonstop.WatchJob`), by job. The core emits its
//! events into the batch; after the batch's commit the loop hands each one to the subscribers
//! of its job. A job's end is its subscribers' last event: their channels are dropped, which
//! closes their streams. A subscriber whose channel is full (it stopped reading) or closed (it
//! hung up) is dropped, so a slow client never holds the core back.

use crate::core::nonstop::{EventKind, NonstopEvent};
use sluice_vocab::FedJobId;
use std::collections::HashMap;
use tokio::sync::mpsc;

/// Where one subscriber's events go.
pub type EventSender = mpsc::Sender<NonstopEvent>;

/// How many events wait for a subscriber before it is dropped as too slow.
pub const QUEUE: usize = 1024;

/// The subscribers, by job.
#[derive(Default)]
pub struct Subscribers {
    map: HashMap<FedJobId, Vec<EventSender>>,
}

impl Subscribers {
    /// Adds a subscriber of `job`.
    pub fn add(&mut self, job: FedJobId, events: EventSender) {
        self.map.entry(job).or_default().push(events);
    }

    /// Whether nobody subscribes.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Hands `events` to their jobs' subscribers, in order.
    pub fn publish(&mut self, events: Vec<NonstopEvent>) {
        for ev in events {
            let job = ev.view.job;
            let Some(subs) = self.map.get_mut(&job) else {
                continue;
            };
            let last = ev.kind == EventKind::JobEnded;
            subs.retain(|tx| tx.try_send(ev.clone()).is_ok());
            if last || subs.is_empty() {
                self.map.remove(&job);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::SimTime;
    use crate::core::nonstop::NonstopView;

    fn event(job: u32, kind: EventKind) -> NonstopEvent {
        NonstopEvent {
            kind,
            node: "n1".into(),
            replacement: None,
            at: SimTime::from_secs(1),
            view: NonstopView {
                job: FedJobId::from_raw(job).unwrap(),
                node_list: "n1".into(),
                nodes: Vec::new(),
                cpus_per_node: String::new(),
                time_limit_min: 0,
                extend_available_min: 0,
                spares_used: 0,
                spares_free: 0,
            },
        }
    }

    #[test]
    fn events_reach_their_jobs_subscribers_and_the_end_closes_them() {
        let mut subs = Subscribers::default();
        let (tx, mut rx) = mpsc::channel(QUEUE);
        let (other_tx, mut other_rx) = mpsc::channel(QUEUE);
        subs.add(FedJobId::from_raw(1).unwrap(), tx);
        subs.add(FedJobId::from_raw(2).unwrap(), other_tx);
        subs.publish(vec![
            event(1, EventKind::Failed),
            event(1, EventKind::JobEnded),
        ]);
        assert_eq!(rx.try_recv().unwrap().kind, EventKind::Failed);
        assert_eq!(rx.try_recv().unwrap().kind, EventKind::JobEnded);
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(other_rx.try_recv().is_err());
        drop(other_rx);
        subs.publish(vec![event(2, EventKind::Failing)]);
        assert!(subs.is_empty(), "a subscriber that hung up is dropped");
    }
}
