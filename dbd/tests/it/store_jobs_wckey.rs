//! The wckey of a job (`--wckey`) in the job history, on every backend: kept from its submit
//! record, shared by its runs, changed or cleared by a later submit record, matched by
//! sacct's `--wckeys`, and purged with the job.

use crate::common;
use crate::usage_support;

per_backend!(
    a_jobs_wckey_is_kept_and_shared_by_its_runs,
    wckeys_select_jobs,
    a_later_submit_record_changes_or_clears_the_wckey,
    the_wckey_goes_with_its_purged_job,
);

mod cases {
    use sluice_dbd::store::usage::PurgePolicy;
    use sluice_dbd::store::*;
    use sluice_reports::purge::PurgeAfter;
    use sluice_vocab::states::JobState;

    use super::common::jobs::*;
    use super::common::{TestDb, s};
    use super::usage_support::{DAY, DAY0, Feed, Job, at, roll, utc};

    fn with_wckey(job_id: u32, at: i64, wckey: &str) -> RecordKind {
        let mut r = submit(job_id, at);
        r.wckey = wckey.into();
        RecordKind::JobSubmitted(Box::new(r))
    }

    fn wckeys_of(store: &Store, q: &JobQuery) -> Vec<(u32, u32, String)> {
        query(store, q)
            .into_iter()
            .map(|r| (r.job_id, r.run, r.wckey))
            .collect()
    }

    fn every_run() -> JobQuery {
        JobQuery {
            duplicates: true,
            ..Default::default()
        }
    }

    pub fn a_jobs_wckey_is_kept_and_shared_by_its_runs(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let kinds = vec![
            with_wckey(7, 1_000, "proj7"),
            submitted(8, 1_001),
            started(7, 0, 1_010),
            ended(7, 0, 1_100, JobState::Requeued, 0),
        ];
        store.record_batch("c1", 1, &numbered(1, kinds)).unwrap();
        assert_eq!(
            wckeys_of(&store, &every_run()),
            vec![
                (7, 0, "proj7".to_string()),
                (8, 0, String::new()),
                (7, 1, "proj7".to_string()),
            ]
        );
    }

    pub fn wckeys_select_jobs(db: &TestDb) {
        let store = with_clusters(db, &["c1", "c2"]);
        let one = vec![
            with_wckey(1, 1_000, "a"),
            with_wckey(2, 1_001, "b"),
            submitted(3, 1_002),
        ];
        store.record_batch("c1", 1, &numbered(1, one)).unwrap();
        // Job ids repeat across clusters; each cluster's job has its own wckey.
        let two = vec![with_wckey(1, 1_000, "b")];
        store.record_batch("c2", 1, &numbered(1, two)).unwrap();
        let q = |wckeys: &[&str]| {
            let q = JobQuery {
                wckeys: s(wckeys),
                ..every_run()
            };
            query(&store, &q)
                .into_iter()
                .map(|r| (r.cluster, r.job_id))
                .collect::<Vec<_>>()
        };
        assert_eq!(q(&["a"]), vec![("c1".to_string(), 1)]);
        assert_eq!(
            q(&["b"]),
            vec![("c1".to_string(), 2), ("c2".to_string(), 1)]
        );
        assert_eq!(q(&["a", "b"]).len(), 3);
        assert!(q(&["nope"]).is_empty());
        assert_eq!(q(&[]).len(), 4);
    }

    pub fn a_later_submit_record_changes_or_clears_the_wckey(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        store
            .record_batch("c1", 1, &numbered(1, vec![with_wckey(5, 1_000, "old")]))
            .unwrap();
        // scontrol update WCKey=new: the controller sends the submit record again.
        store
            .record_batch("c1", 1, &numbered(2, vec![with_wckey(5, 1_000, "new")]))
            .unwrap();
        assert_eq!(
            wckeys_of(&store, &every_run()),
            vec![(5, 0, "new".to_string())]
        );
        store
            .record_batch("c1", 1, &numbered(3, vec![with_wckey(5, 1_000, "")]))
            .unwrap();
        assert_eq!(wckeys_of(&store, &every_run()), vec![(5, 0, String::new())]);
    }

    pub fn the_wckey_goes_with_its_purged_job(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let old = Job::new(1, "alice", "phys", at(1, 0), 2, 1);
        let new = Job::new(2, "alice", "phys", DAY0 + 35 * DAY, 2, 1);
        let wckey = |j: &Job, w: &str| match j.submitted() {
            RecordKind::JobSubmitted(mut r) => {
                r.wckey = w.into();
                RecordKind::JobSubmitted(r)
            }
            other => other,
        };
        let mut feed = Feed::new(&store, "c1");
        feed.send(vec![
            wckey(&old, "gone"),
            old.started(at(1, 0)),
            old.ended(at(2, 0)),
            wckey(&new, "kept"),
        ]);
        let now = DAY0 + 40 * DAY;
        roll(&store, now);
        let policy = PurgePolicy {
            jobs: PurgeAfter::parse("30days").unwrap(),
            ..Default::default()
        };
        let summary = store.roll_up(&utc(), now, &policy).unwrap();
        assert_eq!(summary.purged.runs, 1);
        // Job 1 comes back (a federation sibling's id reused): it has no wckey left.
        feed.send(vec![Job::new(1, "bob", "phys", now, 1, 1).submitted()]);
        assert_eq!(
            wckeys_of(&store, &every_run()),
            vec![(2, 0, "kept".to_string()), (1, 0, String::new())]
        );
    }
}
