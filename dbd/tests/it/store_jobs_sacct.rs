//! sacct's windowed query on every backend: Slurm's per-state windows, the bounded two-range
//! read (runs still going + finished runs within the cluster's longest span), node filters,
//! the canceller's uid, and pages that join up whatever their size.

use crate::common;

per_backend!(
    state_windows_follow_slurm,
    long_and_running_jobs_are_found_by_a_short_window,
    pages_of_any_size_join_up,
    node_lists_and_cancellers,
    reads_by_id_and_by_window_agree,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::states::JobState;

    use super::common::TestDb;
    use super::common::jobs::*;

    fn window(start: i64, end: i64) -> JobQuery {
        JobQuery {
            start,
            end,
            ..Default::default()
        }
    }

    fn states(start: i64, end: i64, states: &[JobState]) -> JobQuery {
        JobQuery {
            states: states.iter().map(|s| s.stored()).collect(),
            ..window(start, end)
        }
    }

    /// Job 1 ran 100..200 and completed; job 2 waited 100..300, ran 300..400 and failed;
    /// job 3 waited from 150 and was cancelled at 250 while pending; job 4 runs since 350.
    fn four_jobs(db: &TestDb) -> Store {
        let store = with_clusters(db, &["c1"]);
        let records = vec![
            submitted(1, 100),
            started(1, 0, 100),
            ended(1, 0, 200, JobState::Completed, 0),
            submitted(2, 100),
            started(2, 0, 300),
            ended(2, 0, 400, JobState::Failed, 1),
            submitted(3, 150),
            ended(3, 0, 250, JobState::Cancelled, 0),
            submitted(4, 300),
            started(4, 0, 350),
        ];
        store.record_batch("c1", 1, &numbered(1, records)).unwrap();
        store
    }

    pub fn state_windows_follow_slurm(db: &TestDb) {
        let store = four_jobs(db);
        let got = |q: JobQuery| ids(&query(&store, &q));
        // Running at some time in [210, 260]: none of them; in [150, 320]: 1, 2.
        assert_eq!(
            got(states(210, 260, &[JobState::Running])),
            Vec::<u32>::new()
        );
        assert_eq!(got(states(150, 320, &[JobState::Running])), vec![1, 2]);
        assert_eq!(got(states(360, 0, &[JobState::Running])), vec![2, 4]);
        // Pending at some time in [200, 260]: 2 (waited to 300) and 3 (cancelled at 250).
        assert_eq!(got(states(200, 260, &[JobState::Pending])), vec![2, 3]);
        assert_eq!(got(states(260, 270, &[JobState::Pending])), vec![2]);
        // Ended in the window in that state.
        assert_eq!(got(states(0, 300, &[JobState::Completed])), vec![1]);
        assert_eq!(
            got(states(201, 300, &[JobState::Completed])),
            Vec::<u32>::new()
        );
        assert_eq!(
            got(states(100, 500, &[JobState::Failed, JobState::Cancelled])),
            vec![2, 3]
        );
        // No window: the runs in that state now.
        assert_eq!(got(states(0, 0, &[JobState::Running])), vec![4]);
        // Without states: could have run in the window (eligible by its end, not ended before).
        assert_eq!(got(window(260, 270)), vec![2]);
        assert_eq!(got(window(201, 0)), vec![2, 3, 4]);
    }

    pub fn long_and_running_jobs_are_found_by_a_short_window(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        // Many short jobs over a long history, one job that ran for ages, one still running.
        let mut records = Vec::new();
        for id in 1..=200u32 {
            let t = i64::from(id) * 1_000;
            records.extend([
                submitted(id, t),
                started(id, 0, t + 10),
                ended(id, 0, t + 50, JobState::Completed, 0),
            ]);
        }
        records.extend([
            submitted(500, 5_000),
            started(500, 0, 6_000),
            ended(500, 0, 150_500, JobState::Completed, 0),
            submitted(501, 2_000),
            started(501, 0, 2_500),
        ]);
        store.record_batch("c1", 1, &numbered(1, records)).unwrap();
        let got = ids(&query(&store, &window(150_000, 151_000)));
        assert_eq!(got, vec![501, 500, 150, 151]);
        let got = ids(&query(&store, &window(199_500, 0)));
        assert_eq!(got, vec![501, 200]);
    }

    pub fn pages_of_any_size_join_up(db: &TestDb) {
        let store = with_clusters(db, &["c1", "c2"]);
        for cluster in ["c1", "c2"] {
            let mut records = Vec::new();
            for id in 1..=30u32 {
                let t = i64::from(id % 7) * 100 + i64::from(id);
                records.push(submitted(id, t));
                if id % 3 != 0 {
                    records.push(started(id, 0, t + 5));
                }
                if id % 2 == 0 {
                    records.push(ended(id, 0, t + 900, JobState::Completed, 0));
                }
            }
            store
                .record_batch(cluster, 1, &numbered(1, records))
                .unwrap();
        }
        let q = window(400, 0);
        let whole = keys(&query_paged(&store, &q, 1_000));
        assert!(whole.len() > 20, "{whole:?}");
        for page in [1, 2, 3, 7] {
            assert_eq!(keys(&query_paged(&store, &q, page)), whole, "page {page}");
        }
        let mut sorted = whole.clone();
        sorted.sort_by_key(|(c, id, _)| {
            let id = i64::from(*id);
            (c.clone(), (id % 7) * 100 + id, id)
        });
        assert_eq!(whole, sorted, "cluster, then submit order");
    }

    /// Reads by id check the window in Rust, windowed reads in SQL: same rules, same rows.
    pub fn reads_by_id_and_by_window_agree(db: &TestDb) {
        let store = four_jobs(db);
        let cases = [
            window(0, 0),
            window(210, 260),
            window(201, 0),
            window(0, 150),
            states(210, 260, &[JobState::Running]),
            states(150, 320, &[JobState::Running, JobState::Cancelled]),
            states(200, 260, &[JobState::Pending]),
            states(0, 300, &[JobState::Completed]),
            states(0, 0, &[JobState::Running]),
            JobQuery {
                uids: vec![1000],
                accounts: vec!["acct".into()],
                ..window(120, 0)
            },
        ];
        for q in cases {
            let by_window = ids(&query(&store, &q));
            let by_id = JobQuery {
                job_ids: vec![1, 2, 3, 4, 99],
                ..q.clone()
            };
            assert_eq!(ids(&query_paged(&store, &by_id, 1)), by_window, "{q:?}");
        }
    }

    pub fn node_lists_and_cancellers(db: &TestDb) {
        let store = four_jobs(db);
        let mut cancel = JobEnded {
            job_id: 4,
            end: 500,
            state: JobState::Cancelled.stored(),
            requester_uid: Some(1000),
            ..Default::default()
        };
        store
            .record_batch(
                "c1",
                1,
                &numbered(11, vec![RecordKind::JobEnded(cancel.clone())]),
            )
            .unwrap();
        let runs = query(&store, &JobQuery::default());
        let by_id = |id: u32| runs.iter().find(|r| r.job_id == id).unwrap();
        assert_eq!(by_id(4).requester_uid, Some(1000));
        assert_eq!(by_id(3).requester_uid, None);
        let on = |nodes: &[&str]| {
            let q = JobQuery {
                nodes: nodes.iter().map(|n| n.to_string()).collect(),
                ..Default::default()
            };
            ids(&query_paged(&store, &q, 1))
        };
        assert_eq!(on(&["n2"]), vec![1, 2, 4]);
        assert_eq!(on(&["n9"]), Vec::<u32>::new());
        // A later end without a canceller clears it.
        cancel.requester_uid = None;
        store
            .record_batch("c1", 1, &numbered(12, vec![RecordKind::JobEnded(cancel)]))
            .unwrap();
        let runs = query(&store, &JobQuery::default());
        assert_eq!(
            runs.iter().find(|r| r.job_id == 4).unwrap().requester_uid,
            None
        );
    }
}
