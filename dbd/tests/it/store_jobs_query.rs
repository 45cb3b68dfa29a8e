//! sacct's query over stored job runs, on every backend: filters, time windows, duplicates,
//! ordering and paging.

use crate::common;

per_backend!(
    filters_select_runs,
    windows_select_runs_that_could_have_run_inside,
    duplicates_show_every_run_and_revoked_copies,
    rows_are_ordered_and_pages_join_up,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::states::JobState;

    use super::common::jobs::*;
    use super::common::{TestDb, s};

    fn q() -> JobQuery {
        JobQuery::default()
    }

    pub fn filters_select_runs(db: &TestDb) {
        let store = with_clusters(db, &["c1", "c2"]);
        let mut bob = submit(2, 110);
        bob.uid = 2000;
        bob.user = "bob".into();
        bob.account = "chem".into();
        bob.partition = "long".into();
        bob.name = "relax".into();
        let mut task = submit(4, 130);
        task.array_job_id = 3;
        task.array_task_id = Some(0);
        let c1 = vec![
            submitted(1, 100),
            RecordKind::JobSubmitted(Box::new(bob)),
            submitted(3, 120),
            RecordKind::JobSubmitted(Box::new(task)),
            started(1, 0, 105),
            ended(1, 0, 150, JobState::Failed, 1),
        ];
        store.record_batch("c1", 1, &numbered(1, c1)).unwrap();
        store
            .record_batch("c2", 1, &numbered(1, vec![submitted(1, 100)]))
            .unwrap();

        assert_eq!(keys(&query(&store, &q())).len(), 5);
        let only = |f: fn(&mut JobQuery)| {
            let mut query_ = q();
            f(&mut query_);
            keys(&query(&store, &query_))
        };
        let k = |c: &str, id: u32| (c.to_string(), id, 0);
        assert_eq!(only(|q| q.clusters = s(&["c2"])), vec![k("c2", 1)]);
        // A job id matches the job and the tasks of the array it names.
        assert_eq!(only(|q| q.job_ids = vec![3]), vec![k("c1", 3), k("c1", 4)]);
        assert_eq!(only(|q| q.job_ids = vec![1]), vec![k("c1", 1), k("c2", 1)]);
        assert_eq!(only(|q| q.uids = vec![2000]), vec![k("c1", 2)]);
        assert_eq!(only(|q| q.accounts = s(&["chem"])), vec![k("c1", 2)]);
        assert_eq!(only(|q| q.names = s(&["relax"])), vec![k("c1", 2)]);
        assert_eq!(only(|q| q.partitions = s(&["long"])), vec![k("c1", 2)]);
        assert_eq!(
            only(|q| q.states = vec![JobState::Failed.stored()]),
            vec![k("c1", 1)]
        );
        // Conditions combine.
        assert_eq!(
            only(|q| {
                q.clusters = s(&["c1"]);
                q.job_ids = vec![1, 2];
                q.uids = vec![1000];
            }),
            vec![k("c1", 1)]
        );
        assert!(only(|q| q.accounts = s(&["nobody"])).is_empty());
    }

    pub fn windows_select_runs_that_could_have_run_inside(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut held = submit(5, 100);
        held.eligible = 0;
        let records = vec![
            // 1: ran 100..200; 2: ran 300..400; 3: running since 500; 4: pending since 600.
            submitted(1, 100),
            started(1, 0, 110),
            ended(1, 0, 200, JobState::Completed, 0),
            submitted(2, 300),
            started(2, 0, 310),
            ended(2, 0, 400, JobState::Completed, 0),
            submitted(3, 500),
            started(3, 0, 510),
            submitted(4, 600),
            // 5: held, never eligible.
            RecordKind::JobSubmitted(Box::new(held)),
        ];
        store.record_batch("c1", 1, &numbered(1, records)).unwrap();
        let window = |start, end| {
            ids(&query(
                &store,
                &JobQuery {
                    start,
                    end,
                    ..Default::default()
                },
            ))
        };
        assert_eq!(window(0, 0), vec![1, 5, 2, 3, 4], "no window: all time");
        assert_eq!(window(250, 350), vec![2]);
        assert_eq!(window(200, 300), vec![1, 2], "both ends inclusive");
        assert_eq!(window(201, 299), Vec::<u32>::new());
        assert_eq!(window(450, 0), vec![3, 4], "open end");
        assert_eq!(
            window(0, 150),
            vec![1],
            "open start; never eligible is left out"
        );
        assert_eq!(window(1_000, 2_000), vec![3, 4], "still running or pending");
        // With job ids the submit time counts, so a held job shows.
        let held = query(
            &store,
            &JobQuery {
                job_ids: vec![5, 2],
                start: 50,
                end: 150,
                ..Default::default()
            },
        );
        assert_eq!(ids(&held), vec![5]);
    }

    pub fn duplicates_show_every_run_and_revoked_copies(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let records = vec![
            submitted(1, 100),
            started(1, 0, 110),
            ended(1, 0, 120, JobState::Requeued, 0),
            started(1, 1, 130),
            ended(1, 1, 140, JobState::Requeued, 0),
            started(1, 2, 150),
            submitted(2, 100),
            ended(2, 0, 105, JobState::Revoked, 0),
        ];
        store.record_batch("c1", 1, &numbered(1, records)).unwrap();
        let runs = |duplicates| {
            query(
                &store,
                &JobQuery {
                    duplicates,
                    ..Default::default()
                },
            )
            .iter()
            .map(|r| (r.job_id, r.run))
            .collect::<Vec<_>>()
        };
        assert_eq!(runs(false), vec![(1, 2)]);
        assert_eq!(runs(true), vec![(1, 0), (2, 0), (1, 1), (1, 2)]);
    }

    pub fn rows_are_ordered_and_pages_join_up(db: &TestDb) {
        let store = with_clusters(db, &["a", "b"]);
        // Same submit times in both clusters, ids not in submit order.
        let kinds = |offset: i64| {
            vec![
                submitted(9, 100 + offset),
                submitted(3, 200 + offset),
                submitted(7, 100 + offset),
                submitted(1, 300 + offset),
                submitted(5, 200 + offset),
            ]
        };
        store.record_batch("b", 1, &numbered(1, kinds(0))).unwrap();
        store.record_batch("a", 1, &numbered(1, kinds(50))).unwrap();
        let every = query(&store, &q());
        let order: Vec<_> = every
            .iter()
            .map(|r| (r.cluster.as_str(), r.job_id))
            .collect();
        assert_eq!(
            order,
            vec![
                ("a", 7),
                ("a", 9),
                ("a", 3),
                ("a", 5),
                ("a", 1),
                ("b", 7),
                ("b", 9),
                ("b", 3),
                ("b", 5),
                ("b", 1),
            ]
        );
        for page in [1, 2, 3, 9, 10, 11] {
            assert_eq!(query_paged(&store, &q(), page), every, "page size {page}");
        }
        let first = store.list_jobs(&q(), None, 4).unwrap();
        assert_eq!(first.runs.len(), 4);
        assert!(first.next.is_some());
        let last = store.list_jobs(&q(), None, 100).unwrap();
        assert!(last.next.is_none());
    }
}
