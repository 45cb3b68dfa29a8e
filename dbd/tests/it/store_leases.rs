//! Job-id leases and migrations of the store, on every backend.

use crate::common;

per_backend!(
    leases_never_overlap_and_survive_a_reconnect,
    leases_wrap_below_max_job_id,
    leases_skip_ids_in_use,
    lease_counts_and_clusters_are_checked,
    migrations_run_again_on_an_existing_database,
);

mod cases {
    use sluice_dbd::store::*;

    use super::common::{T1, TestDb, s};

    fn with_cluster(db: &TestDb, name: &str) -> Store {
        let store = db.open();
        let req = AddClusters {
            names: s(&[name]),
            ..Default::default()
        };
        store.add_clusters(&req, Apply::Commit, T1).unwrap();
        store
    }

    fn ids(ranges: &[JobIdRange]) -> Vec<u32> {
        ranges
            .iter()
            .flat_map(|r| r.first..r.first + r.count)
            .collect()
    }

    pub fn leases_never_overlap_and_survive_a_reconnect(db: &TestDb) {
        let store = with_cluster(db, "c1");
        let other = AddClusters {
            names: s(&["c2"]),
            ..Default::default()
        };
        store.add_clusters(&other, Apply::Commit, T1).unwrap();
        let mut seen = Vec::new();
        assert_eq!(
            store.lease_job_ids("c1", 10, &[]).unwrap(),
            vec![JobIdRange {
                first: 1,
                count: 10
            }]
        );
        seen.extend(1..=10);
        seen.extend(ids(&store.lease_job_ids("c1", 5, &[]).unwrap()));
        // Every cluster has its own cursor.
        assert_eq!(
            store.lease_job_ids("c2", 3, &[]).unwrap(),
            vec![JobIdRange { first: 1, count: 3 }]
        );
        drop(store);
        let store = db.open();
        seen.extend(ids(&store.lease_job_ids("c1", 7, &[]).unwrap()));
        // Deleting and re-adding a cluster keeps its cursor.
        let del = DeleteClusters {
            names: s(&["c1"]),
            ..Default::default()
        };
        store.delete_clusters(&del, Apply::Commit, T1).unwrap();
        assert!(matches!(
            store.lease_job_ids("c1", 1, &[]),
            Err(StoreError::UnknownCluster { .. })
        ));
        store
            .add_clusters(
                &AddClusters {
                    names: s(&["c1"]),
                    ..Default::default()
                },
                Apply::Commit,
                T1,
            )
            .unwrap();
        seen.extend(ids(&store.lease_job_ids("c1", 3, &[]).unwrap()));
        assert_eq!(
            seen,
            (1..=25).collect::<Vec<u32>>(),
            "consecutive leases, no id twice"
        );
    }

    pub fn leases_wrap_below_max_job_id(db: &TestDb) {
        let store = with_cluster(db, "c");
        let full = MAX_LEASE_COUNT;
        let leases = (MAX_JOB_ID - 1) / full;
        let mut last = 0;
        for _ in 0..leases {
            let r = store.lease_job_ids("c", full, &[]).unwrap();
            assert_eq!(r.len(), 1);
            assert_eq!(r[0].first, last + 1);
            last = r[0].first + r[0].count - 1;
        }
        let tail = MAX_JOB_ID - 1 - last;
        let r = store.lease_job_ids("c", tail + 5, &[2]).unwrap();
        assert_eq!(
            r,
            vec![
                JobIdRange {
                    first: last + 1,
                    count: tail
                },
                JobIdRange { first: 1, count: 1 },
                JobIdRange { first: 3, count: 4 },
            ]
        );
        assert!(
            r.iter().all(|x| x.first + x.count <= MAX_JOB_ID),
            "never reaches MaxJobId"
        );
        assert_eq!(
            store.lease_job_ids("c", 1, &[]).unwrap(),
            vec![JobIdRange { first: 7, count: 1 }]
        );
    }

    pub fn leases_skip_ids_in_use(db: &TestDb) {
        let store = with_cluster(db, "c");
        let r = store
            .lease_job_ids("c", 5, &[2, 3, 9, 0, MAX_JOB_ID + 7])
            .unwrap();
        assert_eq!(
            r,
            vec![
                JobIdRange { first: 1, count: 1 },
                JobIdRange { first: 4, count: 4 }
            ]
        );
        assert_eq!(
            store.lease_job_ids("c", 2, &[]).unwrap(),
            vec![JobIdRange { first: 8, count: 2 }]
        );
    }

    pub fn lease_counts_and_clusters_are_checked(db: &TestDb) {
        let store = with_cluster(db, "c");
        for bad in [0, MAX_LEASE_COUNT + 1] {
            let err = store.lease_job_ids("c", bad, &[]).unwrap_err();
            assert!(
                matches!(err, StoreError::InvalidLeaseCount { count, .. } if count == bad),
                "{err:?}"
            );
            assert!(err.to_string().contains("count"));
        }
        assert!(matches!(
            store.lease_job_ids("nope", 1, &[]),
            Err(StoreError::UnknownCluster { .. })
        ));
        assert_eq!(
            store
                .lease_job_ids("c", MAX_LEASE_COUNT, &[])
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            store.lease_job_ids("c", 1, &[]).unwrap()[0].first,
            MAX_LEASE_COUNT + 1
        );
    }

    pub fn migrations_run_again_on_an_existing_database(db: &TestDb) {
        let store = with_cluster(db, "c");
        store
            .add_accounts(
                &AddAccounts {
                    names: s(&["a"]),
                    ..Default::default()
                },
                Apply::Commit,
                T1,
            )
            .unwrap();
        drop(store);
        let again = db.open();
        let again2 = db.open();
        assert_eq!(
            again
                .list_clusters(&ClusterFilter::default())
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            again2
                .list_accounts(&AccountFilter::default())
                .unwrap()
                .len(),
            2,
            "root and a, no second root"
        );
        assert_eq!(again.list_users(&UserFilter::default()).unwrap().len(), 1);
    }
}
