//! The per-cluster event log and registration on every backend: ordering, the acknowledged
//! cursor across a dbd restart, no event lost or repeated under concurrent appends, and the
//! federation view a controller gets.

use crate::common;
use crate::store_fed_support;

per_backend!(
    events_are_ordered_per_cluster_and_the_cursor_survives_a_restart,
    a_follower_sees_every_event_once_under_concurrent_appends,
    registration_records_the_controller_and_returns_its_view,
);

mod cases {
    use std::sync::{Arc, Barrier};

    use sluice_dbd::store::fed::error::FedError;
    use sluice_dbd::store::fed::types::*;
    use sluice_dbd::store::*;

    use super::common::{T1, TestDb, s};
    use super::store_fed_support::*;

    fn seqs(events: &[FedEvent]) -> Vec<u64> {
        events.iter().map(|e| e.seq).collect()
    }

    pub fn events_are_ordered_per_cluster_and_the_cursor_survives_a_restart(db: &TestDb) {
        let store = federation(db);
        let jobs: Vec<u32> = (1..=5)
            .map(|i| submit(&store, request("a", 1, i)).job_id)
            .collect();
        submit(&store, request("c", 3, 1));
        let b = store.fed_events("b", 0, 100).unwrap();
        assert_eq!(seqs(&b.events), vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(b.acked, 0);
        let ids: Vec<u32> = b.events.iter().map(|e| e.kind.job_id()).collect();
        assert_eq!(ids[..5], jobs[..]);
        assert_eq!(ids[5], id(3, 1));
        // Each cluster numbers its own log.
        assert_eq!(
            seqs(&store.fed_events("a", 0, 100).unwrap().events),
            vec![1]
        );
        assert_eq!(
            seqs(&store.fed_events("c", 0, 100).unwrap().events),
            vec![1, 2, 3, 4, 5]
        );
        // Pages and a cursor of the controller's own.
        assert_eq!(
            seqs(&store.fed_events("b", 2, 3).unwrap().events),
            vec![3, 4, 5]
        );
        assert_eq!(store.fed_ack_events("b", 3).unwrap(), 3);
        drop(store);
        // The dbd restarts: the acknowledged cursor is durable.
        let store = db.open();
        let page = store.fed_events("b", 0, 100).unwrap();
        assert_eq!((seqs(&page.events), page.acked), (vec![4, 5, 6], 3));
        assert_eq!(
            seqs(&store.fed_events("b", 5, 100).unwrap().events),
            vec![6]
        );
        // The cursor never moves back nor past the newest event.
        assert_eq!(store.fed_ack_events("b", 1).unwrap(), 3);
        assert_eq!(store.fed_ack_events("b", 100).unwrap(), 6);
        assert!(store.fed_events("b", 0, 100).unwrap().events.is_empty());
        // New events continue the sequence.
        submit(&store, request("a", 1, 9));
        assert_eq!(
            seqs(&store.fed_events("b", 0, 100).unwrap().events),
            vec![7]
        );
        let e = store.fed_events("zz", 0, 10).unwrap_err();
        assert!(
            matches!(e, FedError::Store(StoreError::UnknownCluster { .. })),
            "{e:?}"
        );
    }

    /// Jobs each origin submits while b's follower reads.
    const PER_ORIGIN: u32 = 40;

    pub fn a_follower_sees_every_event_once_under_concurrent_appends(db: &TestDb) {
        let store = federation(db);
        drop(store);
        let barrier = Arc::new(Barrier::new(3));
        let submitters: Vec<_> = [("a", 1), ("c", 3)]
            .into_iter()
            .map(|(origin, fed_id)| {
                let (url, barrier) = (db.url.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    let store = Store::connect(&url).unwrap();
                    barrier.wait();
                    for i in 1..=PER_ORIGIN {
                        store.fed_submit(&request(origin, fed_id, i), NOW).unwrap();
                    }
                })
            })
            .collect();
        // b's controller: follows its log with its own cursor, acknowledging as it goes.
        let url = db.url.clone();
        let follower = std::thread::spawn(move || {
            let store = Store::connect(&url).unwrap();
            barrier.wait();
            let (mut cursor, mut seen) = (0, Vec::new());
            let total = usize::try_from(2 * PER_ORIGIN).unwrap();
            for _ in 0..1_000_000 {
                if seen.len() >= total {
                    break;
                }
                for e in store.fed_events("b", cursor, 7).unwrap().events {
                    assert_eq!(e.seq, cursor + 1, "a gap or a repeat in b's log");
                    cursor = e.seq;
                    seen.push(e.kind.job_id());
                }
                if cursor.is_multiple_of(3) {
                    store.fed_ack_events("b", cursor).unwrap();
                }
                std::thread::yield_now();
            }
            seen
        });
        for s in submitters {
            s.join().unwrap();
        }
        let mut seen = follower.join().unwrap();
        seen.sort_unstable();
        let mut expected: Vec<u32> = (1..=PER_ORIGIN)
            .flat_map(|i| [id(1, i), id(3, i)])
            .collect();
        expected.sort_unstable();
        assert_eq!(seen, expected);
    }

    pub fn registration_records_the_controller_and_returns_its_view(db: &TestDb) {
        let store = federation(db);
        let reg = Registration {
            cluster: "b".into(),
            control_host: "hostb".into(),
            control_port: 6817,
            rpc_version: 3,
            start_time: 500,
        };
        let view = store.fed_register(&reg, NOW).unwrap();
        assert_eq!(
            (view.cluster.as_str(), view.federation.as_str()),
            ("b", "fed")
        );
        assert_eq!(
            (
                view.this.fed_id,
                view.this.fed_state,
                view.this.control_host.as_str()
            ),
            (2, 1, "hostb")
        );
        assert_eq!(view.this.features, s(&["fast"]));
        let names: Vec<(&str, u32)> = view
            .siblings
            .iter()
            .map(|m| (m.name.as_str(), m.fed_id))
            .collect();
        assert_eq!(names, vec![("a", 1), ("c", 3)]);
        assert_eq!(view.siblings[0].features, s(&["gpu", "fast"]));
        // sacctmgr sees the registered address.
        let filter = ClusterFilter {
            names: s(&["b"]),
            ..Default::default()
        };
        let row = &store.list_clusters(&filter).unwrap()[0];
        assert_eq!(
            (row.control_host.as_str(), row.control_port, row.rpc_version),
            ("hostb", 6817, 3)
        );
        // Siblings see it too.
        let from_a = store.fed_view("a").unwrap();
        assert_eq!(from_a.siblings[0].control_host, "hostb");
        // A cluster outside any federation issues plain ids: an empty view.
        let lone = AddClusters {
            names: s(&["lone"]),
            ..Default::default()
        };
        store.add_clusters(&lone, Apply::Commit, T1).unwrap();
        let view = store
            .fed_register(
                &Registration {
                    cluster: "lone".into(),
                    ..reg.clone()
                },
                NOW,
            )
            .unwrap();
        assert_eq!(
            (
                view.federation.as_str(),
                view.this.fed_id,
                view.siblings.len()
            ),
            ("", 0, 0)
        );
        let e = store
            .fed_register(
                &Registration {
                    cluster: "zz".into(),
                    ..reg
                },
                NOW,
            )
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "The cluster zz doesn't exist. Please add first."
        );
    }
}
