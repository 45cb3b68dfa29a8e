//! The federation arbiter: the dbd records every federated job (origin, viable and active
//! siblings, start lock, winner), grants the start lock by compare-and-set, and tells each
//! cluster what to do through that cluster's event log (DESIGN.md, "Federation through the
//! accounting daemon").
//!
//! * [`viable`]: the viable-set rules (pure).
//! * [`start`], [`pending`], [`removal`]: the job transitions (pure, clock passed in).
//! * [`log`]: the per-cluster event log; [`settle`]: membership and draining; [`view`]: a
//!   controller's federation view and registration.
//! * `ops`, `submission`: the job requests as store methods, each one transaction;
//!   `submission` holds the origin's (idempotent) submission and its withdrawal.
//! * [`group`]: the submission path's writes (submissions, offers) grouped into one
//!   transaction per group commit, each answered as if written alone.
//!
//! Concurrency: every job request first bumps the job row's version, which takes the row's lock
//! (MariaDB, PostgreSQL) or the write lock (SQLite) until commit, so requests on one job run one
//! at a time even across dbds sharing a database. A transaction that loses a deadlock or a
//! SQLite busy race is run again ([`FedError::is_transient`]).

pub mod error;
pub mod group;
pub mod log;
mod ops;
pub mod pending;
pub mod removal;
pub(crate) mod settle;
pub mod start;
mod submission;
pub mod viable;
pub mod view;

/// The arbiter's domain types (kept in [`crate::store::types::fed`] with the other domain
/// types, below the row models that store them).
pub use super::types::fed as types;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use super::conn::AnyConnection;
use super::{Apply, Change, Store, StoreError};
use error::FedError;
use types::{EventPage, FedView, Registration};

/// How often a transaction that lost a race is tried in all.
const ATTEMPTS: u32 = 30;

/// Change notifications for the federation service's streams (this process only; the service
/// also polls, for changes made by another dbd on the same database). Event streams are woken
/// per cluster: an append wakes the streams of the clusters whose logs grew, not every stream
/// (each woken stream reads its log).
#[derive(Debug)]
pub struct Signals {
    federation: watch::Sender<u64>,
    events: Mutex<HashMap<String, watch::Sender<u64>>>,
}

impl Default for Signals {
    fn default() -> Self {
        Self {
            federation: watch::Sender::new(0),
            events: Mutex::new(HashMap::new()),
        }
    }
}

impl Signals {
    /// Tells the watchers that clusters or federations changed.
    pub fn federation_changed(&self) {
        self.federation.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Tells every event stream that its cluster's log may have grown.
    pub fn events_appended(&self) {
        for tx in self.event_senders().values() {
            tx.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Tells the event streams of `clusters` that their logs grew.
    pub fn events_appended_to<'a>(&self, clusters: impl IntoIterator<Item = &'a String>) {
        let senders = self.event_senders();
        for cluster in clusters {
            if let Some(tx) = senders.get(cluster) {
                tx.send_modify(|n| *n = n.wrapping_add(1));
            }
        }
    }

    /// A receiver that wakes at every clusters/federations change.
    pub fn watch_federation(&self) -> watch::Receiver<u64> {
        self.federation.subscribe()
    }

    /// A receiver that wakes whenever an event is appended to `cluster`'s log.
    pub fn watch_events(&self, cluster: &str) -> watch::Receiver<u64> {
        self.event_senders()
            .entry(cluster.to_string())
            .or_insert_with(|| watch::Sender::new(0))
            .subscribe()
    }

    fn event_senders(&self) -> MutexGuard<'_, HashMap<String, watch::Sender<u64>>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Store {
    /// The federation change notifications.
    pub fn fed_signals(&self) -> &Signals {
        &self.fed
    }

    /// Runs `f` in one transaction, again when it lost a race with another transaction.
    fn fed_tx<T>(
        &self,
        mut f: impl FnMut(&mut AnyConnection) -> Result<T, FedError>,
    ) -> Result<T, FedError> {
        let mut attempt = 1;
        loop {
            let outcome = {
                let mut conn = self.lock();
                conn.write_transaction::<T, FedError, _>(|c| f(c))
            };
            match outcome {
                Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                    tracing::debug!(error = %e, attempt, "federation transaction retried");
                    // Let the winner of the race commit before trying again.
                    std::thread::sleep(std::time::Duration::from_millis(u64::from(attempt)));
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// An admin change of clusters or federations: runs `f`, then applies the removal rules to
    /// the federated jobs of clusters that left (same transaction); tells the watchers after a
    /// commit.
    pub(super) fn fed_admin_change(
        &self,
        apply: Apply,
        now: i64,
        f: impl FnOnce(&mut AnyConnection) -> Result<Vec<String>, StoreError>,
    ) -> Result<Change, StoreError> {
        let change = self.changed(apply, |c| {
            let names = f(c)?;
            settle::reconcile(c, now)?;
            Ok(names)
        })?;
        if change.committed {
            self.fed.federation_changed();
            self.fed.events_appended();
        }
        Ok(change)
    }

    /// A controller announces itself (control address, rpc version, start time) and gets its
    /// federation view. A new start time releases the start locks of its previous process.
    pub fn fed_register(&self, reg: &Registration, now: i64) -> Result<FedView, FedError> {
        let (moved, released) = self.fed_tx(|c| view::register(c, reg, now))?;
        if released > 0 {
            tracing::info!(cluster = %reg.cluster, released, "restarted controller's start locks released");
        }
        if moved {
            self.fed.federation_changed();
        }
        self.fed_view(&reg.cluster)
    }

    /// `cluster`'s view of its federation.
    pub fn fed_view(&self, cluster: &str) -> Result<FedView, FedError> {
        self.fed_tx(|c| view::view(c, cluster))
    }

    /// `cluster`'s events after `max(after, acknowledged)`, at most `limit`.
    pub fn fed_events(
        &self,
        cluster: &str,
        after: u64,
        limit: usize,
    ) -> Result<EventPage, FedError> {
        self.fed_tx(|c| {
            view::live_cluster(c, cluster)?;
            Ok(log::read(c, cluster, after, limit)?)
        })
    }

    /// Acknowledges `cluster`'s events up to `seq`: they are never sent again. Returns the
    /// acknowledged cursor (it never moves back, nor past the newest event).
    pub fn fed_ack_events(&self, cluster: &str, seq: u64) -> Result<u64, FedError> {
        self.fed_tx(|c| {
            view::live_cluster(c, cluster)?;
            Ok(log::ack(c, cluster, seq)?)
        })
    }

    /// Finishes draining (DRAIN → DRAINED, DRAIN+REMOVE → out of the federation) for every
    /// draining cluster with no live federated job; returns the clusters that changed.
    pub fn fed_settle(&self, now: i64) -> Result<Vec<String>, FedError> {
        let changed = self.fed_tx(|c| Ok(settle::settle(c, None, now)?))?;
        if !changed.is_empty() {
            tracing::info!(clusters = ?changed, "draining clusters settled");
            self.fed.federation_changed();
            self.fed.events_appended();
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::Signals;

    #[test]
    fn an_append_wakes_the_streams_of_the_clusters_it_names_and_settling_wakes_all() {
        let signals = Signals::default();
        let mut a = signals.watch_events("a");
        let b = signals.watch_events("b");
        signals.events_appended_to([&"a".to_string(), &"c".to_string()]);
        assert!(a.has_changed().unwrap());
        assert!(!b.has_changed().unwrap(), "b's log did not grow");
        a.borrow_and_update();
        // A stream opened later for the same cluster shares its signal.
        let mut a2 = signals.watch_events("a");
        signals.events_appended_to([&"a".to_string()]);
        assert!(a.has_changed().unwrap() && a2.has_changed().unwrap());
        a.borrow_and_update();
        a2.borrow_and_update();
        signals.events_appended();
        assert!(a.has_changed().unwrap() && b.has_changed().unwrap());
    }
}
