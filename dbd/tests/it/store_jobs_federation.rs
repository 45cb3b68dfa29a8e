//! sacct --federation without -D on every backend (Slurm's `_remove_duplicate_fed_jobs`): a
//! run whose job id the result shows again, submitted more than a day later on another
//! cluster, is left out; same-day siblings are all shown; only runs in the result count.

use crate::common;

per_backend!(
    older_ids_are_hidden_by_runs_over_a_day_newer,
    only_runs_in_the_result_hide_others,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::states::JobState;

    use super::common::TestDb;
    use super::common::jobs::*;

    const T: i64 = 1_000_000;
    const DAY: i64 = 86_400;

    /// Job 7: a pending federated job cancelled on all three clusters (its siblings, same
    /// day). Job 8: ended on c1, the id used again on c2 a day and a second later. Job 9: the
    /// same, exactly a day later. Job 10: on c1, and a REVOKED copy on c2 two days later.
    fn federation(db: &TestDb) -> Store {
        let store = with_clusters(db, &["c1", "c2", "c3"]);
        let c1 = vec![
            submitted(7, T),
            ended(7, 0, T + 60, JobState::Cancelled, 0),
            submitted(8, T),
            started(8, 0, T + 5),
            ended(8, 0, T + 50, JobState::Completed, 0),
            submitted(9, T),
            ended(9, 0, T + 20, JobState::Failed, 1),
            submitted(10, T),
            started(10, 0, T + 10),
        ];
        let c2 = vec![
            submitted(7, T),
            ended(7, 0, T + 61, JobState::Cancelled, 0),
            submitted(8, T + DAY + 1),
            submitted(9, T + DAY),
            submitted(10, T + 2 * DAY),
            ended(10, 0, T + 2 * DAY + 5, JobState::Revoked, 0),
        ];
        let c3 = vec![
            submitted(7, T + 3),
            ended(7, 0, T + 62, JobState::Cancelled, 0),
        ];
        for (cluster, records) in [("c1", c1), ("c2", c2), ("c3", c3)] {
            store
                .record_batch(cluster, 1, &numbered(1, records))
                .unwrap();
        }
        store
    }

    fn shown(store: &Store, q: &JobQuery, page: usize) -> Vec<(String, u32)> {
        let mut k: Vec<(String, u32)> = query_paged(store, q, page)
            .iter()
            .map(|r| (r.cluster.clone(), r.job_id))
            .collect();
        k.sort();
        k
    }

    fn k(pairs: &[(&str, u32)]) -> Vec<(String, u32)> {
        let mut v: Vec<(String, u32)> = pairs.iter().map(|(c, j)| (c.to_string(), *j)).collect();
        v.sort();
        v
    }

    pub fn older_ids_are_hidden_by_runs_over_a_day_newer(db: &TestDb) {
        let store = federation(db);
        let fed = JobQuery {
            clusters: vec!["c1".into(), "c2".into(), "c3".into()],
            federation: true,
            ..Default::default()
        };
        let want = k(&[
            ("c1", 7),
            ("c2", 7),
            ("c3", 7),
            ("c2", 8),
            ("c1", 9),
            ("c2", 9),
            ("c1", 10),
        ]);
        // Pages of one row: the newer run is on a later page than the run it hides.
        for page in [1, 2, 1_000] {
            assert_eq!(shown(&store, &fed, page), want, "page {page}");
        }
        // Every cluster (`-M all` sends none): the same.
        let all = JobQuery {
            clusters: Vec::new(),
            ..fed.clone()
        };
        assert_eq!(shown(&store, &all, 1_000), want);
        // Not a federation view (-M c1,c2,c3): every cluster's newest run.
        let listed = JobQuery {
            federation: false,
            ..fed.clone()
        };
        assert_eq!(
            shown(&store, &listed, 1_000),
            k(&[
                ("c1", 7),
                ("c2", 7),
                ("c3", 7),
                ("c1", 8),
                ("c2", 8),
                ("c1", 9),
                ("c2", 9),
                ("c1", 10),
            ])
        );
        // -D: every run, the REVOKED copy too.
        let dup = JobQuery {
            duplicates: true,
            ..fed.clone()
        };
        assert_eq!(shown(&store, &dup, 1).len(), 9);
        // By id: the same rule.
        let by_id = JobQuery {
            job_ids: vec![8, 9],
            ..fed
        };
        assert_eq!(
            shown(&store, &by_id, 1),
            k(&[("c2", 8), ("c1", 9), ("c2", 9)])
        );
    }

    pub fn only_runs_in_the_result_hide_others(db: &TestDb) {
        let store = federation(db);
        let fed = JobQuery {
            clusters: vec!["c1".into(), "c2".into()],
            federation: true,
            ..Default::default()
        };
        // A window ending before c2's job 8 was submitted: c1's job 8 is shown.
        let early = JobQuery {
            start: T,
            end: T + DAY - 1,
            ..fed.clone()
        };
        assert_eq!(
            shown(&store, &early, 1),
            k(&[("c1", 7), ("c2", 7), ("c1", 8), ("c1", 9), ("c1", 10)])
        );
        // c2 not searched: nothing on it hides c1's runs.
        let c1_only = JobQuery {
            clusters: vec!["c1".into()],
            ..fed.clone()
        };
        assert_eq!(
            shown(&store, &c1_only, 1),
            k(&[("c1", 7), ("c1", 8), ("c1", 9), ("c1", 10)])
        );
        // A state filter c2's pending job 8 fails: c1's completed job 8 is shown.
        let completed = JobQuery {
            states: vec![JobState::Completed.stored()],
            ..fed
        };
        assert_eq!(shown(&store, &completed, 1), k(&[("c1", 8)]));
    }
}
