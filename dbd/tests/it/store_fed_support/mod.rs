//! Helpers of the federation arbiter suites (`store_fed_*.rs`): a three-cluster federation and
//! short forms of the job requests and of reading a cluster's event log.

use std::collections::BTreeSet;

use sluice_dbd::store::fed::types::*;
use sluice_dbd::store::*;

use super::common::{T1, TestDb, s};

/// The dbd clock of the suites (after the fixture's admin changes).
pub const NOW: i64 = 10_000;
/// A lease long enough for any step of a test.
pub const LEASE: u32 = 30;

/// The federated id of local job `local` of the cluster with fed id `fed_id`.
pub fn id(fed_id: u32, local: u32) -> u32 {
    (fed_id << 26) | local
}

/// Names as a set.
pub fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// Clusters a, b, c (fed ids 1, 2, 3) in federation `fed`, with features a: gpu,fast;
/// b: fast; c: big.
pub fn federation(db: &TestDb) -> Store {
    let store = db.open();
    let add = AddClusters {
        names: s(&["a", "b", "c"]),
        ..Default::default()
    };
    store.add_clusters(&add, Apply::Commit, T1).unwrap();
    let fed = AddFederations {
        names: s(&["fed"]),
        clusters: s(&["a", "b", "c"]),
    };
    store.add_federations(&fed, Apply::Commit, T1).unwrap();
    for (name, features) in [
        ("a", &["gpu", "fast"][..]),
        ("b", &["fast"]),
        ("c", &["big"]),
    ] {
        set_features(&store, name, features);
    }
    store
}

pub fn set_features(store: &Store, cluster: &str, features: &[&str]) {
    let req = ModifyClusters {
        names: s(&[cluster]),
        features: Some(ListEdit::Set(s(features))),
        ..Default::default()
    };
    store.modify_clusters(&req, Apply::Commit, T1).unwrap();
}

pub fn set_fed_state(store: &Store, cluster: &str, state: u32) {
    let req = ModifyClusters {
        names: s(&[cluster]),
        fed_state: Some(state),
        ..Default::default()
    };
    store.modify_clusters(&req, Apply::Commit, T1).unwrap();
}

/// A plain submission of local job `local` from `origin` (fed id `fed_id`).
pub fn request(origin: &str, fed_id: u32, local: u32) -> SubmitFedJob {
    SubmitFedJob {
        origin: origin.into(),
        job_id: id(fed_id, local),
        desc: format!("job {local} of {origin}").into_bytes(),
        ..Default::default()
    }
}

/// Submits `req` at [`NOW`].
pub fn submit(store: &Store, req: SubmitFedJob) -> FedJob {
    store.fed_submit(&req, NOW).unwrap()
}

/// Every unacknowledged event of `cluster`, without acknowledging them.
pub fn pending_events(store: &Store, cluster: &str) -> Vec<FedEvent> {
    store.fed_events(cluster, 0, 100_000).unwrap().events
}

/// Every unacknowledged event of `cluster` (kinds only), acknowledging them.
pub fn take(store: &Store, cluster: &str) -> Vec<FedEventKind> {
    let events = pending_events(store, cluster);
    if let Some(last) = events.last() {
        store.fed_ack_events(cluster, last.seq).unwrap();
    }
    events.into_iter().map(|e| e.kind).collect()
}

/// Acknowledges everything in every cluster's log (a clean slate for the next step).
pub fn flush(store: &Store) {
    for c in ["a", "b", "c"] {
        take(store, c);
    }
}

/// Takes the lock for `cluster` and commits the start; returns the token.
pub fn start_on(store: &Store, job: u32, cluster: &str, now: i64) -> u64 {
    let LockOutcome::Granted { token, .. } = store
        .fed_acquire_start_lock(job, cluster, LEASE, now)
        .unwrap()
    else {
        panic!("lock refused to {cluster}");
    };
    store
        .fed_commit_start(job, cluster, token, now)
        .unwrap()
        .unwrap();
    token
}

pub fn revoked(job_id: u32, winner: Option<&str>) -> FedEventKind {
    FedEventKind::SiblingRevoked {
        job_id,
        winner: winner.map(str::to_string),
    }
}

/// The cancel of `job_id` by `requester_uid` (unknown: a cancel by the dbd itself).
pub fn cancelled_by(job_id: u32, requester_uid: Option<u32>) -> FedEventKind {
    FedEventKind::SiblingCancelled {
        job_id,
        requeue: RequeueMode::None,
        requester_uid,
    }
}

/// The cancel of `job_id` with no requester named.
pub fn cancelled(job_id: u32) -> FedEventKind {
    cancelled_by(job_id, None)
}

/// Whether `kind` offers `job_id`.
pub fn is_offer(kind: &FedEventKind, job_id: u32) -> bool {
    matches!(kind, FedEventKind::SiblingOffered { job_id: j, .. } if *j == job_id)
}
