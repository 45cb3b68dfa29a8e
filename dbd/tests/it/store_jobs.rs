//! Ingest of the controllers' accounting records, on every backend: every record kind, batches
//! delivered twice or with gaps, requeued runs, default accounts, node events, refusals.

use crate::common;

per_backend!(
    every_record_kind_is_stored,
    a_batch_delivered_twice_is_stored_once,
    seq_gaps_and_unordered_batches,
    a_new_outbox_stream_applies_from_its_first_seq,
    requeued_runs_are_kept_apart,
    an_empty_account_is_the_users_default_account,
    node_events_open_and_close,
    an_unknown_cluster_is_refused_and_nothing_is_stored,
    a_thousand_record_batch,
);

mod cases {
    use std::time::Instant;

    use sluice_dbd::store::*;
    use sluice_vocab::states::JobState;

    use super::common::jobs::*;
    use super::common::{T1, TestDb, s};

    fn all(store: &Store) -> Vec<JobRun> {
        query(
            store,
            &JobQuery {
                duplicates: true,
                ..Default::default()
            },
        )
    }

    pub fn every_record_kind_is_stored(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut array_task = submit(11, 5_000);
        array_task.array_job_id = 10;
        array_task.array_task_id = Some(1);
        let kinds = vec![
            submitted(7, 1_000),
            RecordKind::JobSubmitted(Box::new(array_task)),
            started(7, 0, 1_010),
            step(7, -4, 1_010, 0, JobState::Running),
            suspended(7, 1_100, true),
            suspended(7, 1_160, false),
            step(7, 0, 1_020, 1_200, JobState::Completed),
            step(7, -4, 1_010, 1_300, JobState::Completed),
            ended(7, 0, 1_300, JobState::Completed, 0),
            node_event("n1", 1_050, "drain", "bad disk"),
        ];
        let records = numbered(1, kinds);
        assert_eq!(store.record_batch("c1", 1, &records).unwrap(), 10);
        let runs = all(&store);
        assert_eq!(keys(&runs), vec![("c1".into(), 7, 0), ("c1".into(), 11, 0)]);
        let job = &runs[0];
        let expected = JobRun {
            cluster: "c1".into(),
            job_id: 7,
            array_job_id: 0,
            array_task_id: None,
            run: 0,
            name: "job7".into(),
            uid: 1000,
            gid: 100,
            user: "alice".into(),
            account: "acct".into(),
            partition: "debug".into(),
            state: JobState::Completed.stored(),
            exit_code: 0,
            signal: 0,
            submit: 1_000,
            eligible: 1_000,
            start: 1_010,
            end: 1_300,
            suspended_secs: 60,
            time_limit_min: 60,
            node_list: "n[1-2]".into(),
            node_count: 2,
            cpus: 4,
            mem_mb: 1024,
            req_cpus: 2,
            req_mem_mb: 512,
            workdir: "/home/alice".into(),
            reason: String::new(),
            comment: String::new(),
            wckey: String::new(),
            het_job_id: 0,
            het_offset: 0,
            requester_uid: None,
            qos: String::new(),
            steps: job.steps.clone(),
        };
        assert_eq!(job, &expected);
        // The batch step first, replaced by its last record; then the numbered steps.
        let steps: Vec<_> = job
            .steps
            .iter()
            .map(|s| (s.step_id, s.name.as_str(), s.end, s.state))
            .collect();
        assert_eq!(
            steps,
            vec![
                (-4, "batch", 1_300, JobState::Completed.stored()),
                (0, "hostname", 1_200, JobState::Completed.stored()),
            ]
        );
        let task = &runs[1];
        assert_eq!(
            (task.array_job_id, task.array_task_id, task.state),
            (10, Some(1), JobState::Pending.stored())
        );
        let events = store.list_node_events("c1", None).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(
            (
                events[0].node.as_str(),
                events[0].kind.as_str(),
                events[0].reason.as_str()
            ),
            ("n1", "drain", "bad disk")
        );
    }

    pub fn a_batch_delivered_twice_is_stored_once(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let batch = numbered(
            1,
            vec![
                submitted(1, 100),
                started(1, 0, 110),
                suspended(1, 120, true),
                suspended(1, 150, false),
                node_event("n1", 130, "down", "not responding"),
                step(1, 0, 110, 0, JobState::Running),
            ],
        );
        assert_eq!(store.record_batch("c1", 1, &batch).unwrap(), 6);
        // The reply was lost: the controller sends the same batch again.
        assert_eq!(store.record_batch("c1", 1, &batch).unwrap(), 6);
        // Then a batch overlapping the first: only seq 7 is new.
        let mut overlap = batch[3..].to_vec();
        overlap.extend(numbered(7, vec![suspended(1, 200, true)]));
        assert_eq!(store.record_batch("c1", 1, &overlap).unwrap(), 7);
        let runs = all(&store);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].suspended_secs, 30, "the resume counted once");
        assert_eq!(runs[0].state, JobState::Suspended.stored());
        assert_eq!(runs[0].steps.len(), 1);
        // sacct -X asks for the runs without their steps.
        let bare = query(
            &store,
            &JobQuery {
                duplicates: true,
                no_steps: true,
                ..Default::default()
            },
        );
        assert_eq!(bare.len(), 1);
        assert!(bare[0].steps.is_empty());
        assert_eq!(bare[0].suspended_secs, 30);
        assert_eq!(store.list_node_events("c1", None).unwrap().len(), 1);
        // After a reconnect the cursor is still there.
        drop(store);
        let store = db.open();
        assert_eq!(store.record_batch("c1", 1, &batch).unwrap(), 7);
        assert_eq!(store.record_batch("c1", 1, &[]).unwrap(), 7);
        assert_eq!(all(&store)[0].suspended_secs, 30);
    }

    pub fn a_new_outbox_stream_applies_from_its_first_seq(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let old_stream = 0x0123_4567_89ab_cdef;
        let old = numbered(
            1,
            vec![submitted(1, 100), submitted(2, 100), submitted(3, 100)],
        );
        assert_eq!(store.record_batch("c1", old_stream, &old).unwrap(), 3);
        // The controller's state directory was wiped: a new stream (with the top bit set, as half
        // of the random ids are), whose seqs start at 1 again.
        let new_stream = u64::MAX - 5;
        let new = numbered(1, vec![submitted(10, 200), started(10, 0, 210)]);
        assert_eq!(store.record_batch("c1", new_stream, &new).unwrap(), 2);
        let runs = all(&store);
        assert_eq!(
            runs.iter().map(|r| (r.job_id, r.start)).collect::<Vec<_>>(),
            vec![(1, 0), (2, 0), (3, 0), (10, 210)],
            "the new stream's records landed although their seqs are below the old cursor"
        );
        // A batch of the old stream replayed late is still skipped...
        let replay = numbered(2, vec![started(2, 0, 150), started(3, 0, 150)]);
        assert_eq!(store.record_batch("c1", old_stream, &replay).unwrap(), 3);
        assert!(all(&store).iter().all(|r| r.job_id == 10 || r.start == 0));
        // ...and each stream keeps its own cursor across a reconnect.
        drop(store);
        let store = db.open();
        assert_eq!(store.record_batch("c1", new_stream, &[]).unwrap(), 2);
        assert_eq!(store.record_batch("c1", old_stream, &[]).unwrap(), 3);
        assert_eq!(store.record_batch("c1", 42, &[]).unwrap(), 0);
    }

    pub fn seq_gaps_and_unordered_batches(db: &TestDb) {
        let store = with_clusters(db, &["c1", "c2"]);
        assert_eq!(store.record_batch("c1", 1, &[]).unwrap(), 0);
        let first = numbered(1, vec![submitted(1, 100), submitted(2, 100)]);
        assert_eq!(store.record_batch("c1", 1, &first).unwrap(), 2);
        // Seqs 3 and 4 never come: the gap does not stall the cluster.
        let mut after_gap = numbered(
            5,
            vec![started(1, 0, 110), ended(1, 0, 120, JobState::Failed, 3)],
        );
        after_gap.reverse();
        assert_eq!(store.record_batch("c1", 1, &after_gap).unwrap(), 6);
        let runs = all(&store);
        assert_eq!(
            (runs[0].state, runs[0].start, runs[0].exit_code),
            (JobState::Failed.stored(), 110, 3),
            "applied in seq order although sent reversed"
        );
        // Records below the cursor are taken for duplicates (see the records module doc).
        let late = numbered(3, vec![started(2, 0, 115)]);
        assert_eq!(store.record_batch("c1", 1, &late).unwrap(), 6);
        assert_eq!(all(&store)[1].start, 0);
        // Each cluster has its own sequence.
        assert_eq!(store.record_batch("c2", 1, &late).unwrap(), 3);
        let c2 = query(
            &store,
            &JobQuery {
                clusters: s(&["c2"]),
                ..Default::default()
            },
        );
        assert_eq!(
            (c2[0].job_id, c2[0].start, c2[0].name.as_str()),
            (2, 115, ""),
            "a start without a submit still leaves a run"
        );
    }

    pub fn requeued_runs_are_kept_apart(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut run1 = submit(5, 200);
        run1.run = 1;
        let batch = numbered(
            1,
            vec![
                submitted(5, 100),
                started(5, 0, 110),
                ended(5, 0, 150, JobState::Requeued, 0),
                RecordKind::JobSubmitted(Box::new(run1)),
                started(5, 1, 210),
                ended(5, 1, 300, JobState::Completed, 0),
                submitted(6, 100),
                started(6, 0, 110),
                ended(6, 0, 160, JobState::Requeued, 0),
            ],
        );
        store.record_batch("c1", 1, &batch).unwrap();
        // Job 6 was requeued without a new submit record: its next run waits from the requeue.
        let runs = all(&store);
        let summary: Vec<_> = runs
            .iter()
            .map(|r| (r.job_id, r.run, r.state, r.submit, r.start, r.end))
            .collect();
        let (rq, cd, pd) = (
            JobState::Requeued.stored(),
            JobState::Completed.stored(),
            JobState::Pending.stored(),
        );
        assert_eq!(
            summary,
            vec![
                (5, 0, rq, 100, 110, 150),
                (6, 0, rq, 100, 110, 160),
                (6, 1, pd, 160, 0, 0),
                (5, 1, cd, 200, 210, 300),
            ]
        );
        let latest = query(&store, &JobQuery::default());
        assert_eq!(
            keys(&latest),
            vec![("c1".into(), 6, 1), ("c1".into(), 5, 1)]
        );
        // A later batch starts job 6's second run; still one row per run.
        let more = numbered(10, vec![started(6, 1, 400)]);
        store.record_batch("c1", 1, &more).unwrap();
        let six = query(
            &store,
            &JobQuery {
                job_ids: vec![6],
                duplicates: true,
                ..Default::default()
            },
        );
        let six: Vec<_> = six.iter().map(|r| (r.run, r.state, r.start)).collect();
        assert_eq!(
            six,
            vec![(0, rq, 110), (1, JobState::Running.stored(), 400)]
        );
    }

    pub fn an_empty_account_is_the_users_default_account(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let acct = AddAccounts {
            names: s(&["physics"]),
            ..Default::default()
        };
        store.add_accounts(&acct, Apply::Commit, T1).unwrap();
        let user = AddUsers {
            names: s(&["alice"]),
            accounts: s(&["physics"]),
            default_account: Some("physics".into()),
            ..Default::default()
        };
        store.add_users(&user, Apply::Commit, T1).unwrap();
        let mut mine = submit(1, 100);
        mine.account = String::new();
        let mut explicit = submit(2, 100);
        explicit.account = "chemistry".into();
        let mut stranger = submit(3, 100);
        stranger.account = String::new();
        stranger.user = "mallory".into();
        let kinds = [mine, explicit, stranger]
            .into_iter()
            .map(|s| RecordKind::JobSubmitted(Box::new(s)))
            .collect();
        store.record_batch("c1", 1, &numbered(1, kinds)).unwrap();
        let accounts: Vec<_> = all(&store).into_iter().map(|r| r.account).collect();
        assert_eq!(accounts, s(&["physics", "chemistry", ""]));
    }

    pub fn node_events_open_and_close(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let first = numbered(
            1,
            vec![
                node_event("n1", 100, "drain", "bad disk"),
                node_event("n2", 100, "down", "not responding"),
                node_event("n3", 105, "power_down", ""),
            ],
        );
        store.record_batch("c1", 1, &first).unwrap();
        // Closing events stored by an earlier batch, and one opened and closed in one batch.
        let second = numbered(
            4,
            vec![
                node_event("n1", 110, "drain", "replacing disk"),
                node_event("n1", 120, "up", ""),
                node_event("n3", 130, "power_up", ""),
                node_event("n4", 140, "fail", "fan"),
                node_event("n4", 150, "up", ""),
                node_event("n1", 160, "down", "again"),
            ],
        );
        store.record_batch("c1", 1, &second).unwrap();
        let events: Vec<_> = store
            .list_node_events("c1", None)
            .unwrap()
            .into_iter()
            .map(|e| (e.node, e.kind, e.start, e.end, e.reason))
            .collect();
        let e = |n: &str, k: &str, s: i64, end: i64, r: &str| {
            (n.to_string(), k.to_string(), s, end, r.to_string())
        };
        assert_eq!(
            events,
            vec![
                e("n1", "drain", 100, 120, "replacing disk"),
                e("n2", "down", 100, 0, "not responding"),
                e("n3", "power_down", 105, 130, ""),
                e("n4", "fail", 140, 150, "fan"),
                e("n1", "down", 160, 0, "again"),
            ]
        );
        let n1 = store.list_node_events("c1", Some("n1")).unwrap();
        assert_eq!(n1.len(), 2);
        assert!(store.list_node_events("c2", None).unwrap().is_empty());
    }

    pub fn an_unknown_cluster_is_refused_and_nothing_is_stored(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let batch = numbered(1, vec![submitted(1, 100)]);
        let e = store.record_batch("nope", 1, &batch).unwrap_err();
        assert!(matches!(e, StoreError::UnknownCluster { ref name } if name == "nope"));
        assert_eq!(
            e.to_string(),
            "The cluster nope doesn't exist. Please add first."
        );
        // A deleted cluster is unknown too.
        let del = DeleteClusters {
            names: s(&["c1"]),
            ..Default::default()
        };
        store.delete_clusters(&del, Apply::Commit, T1).unwrap();
        assert!(matches!(
            store.record_batch("c1", 1, &batch),
            Err(StoreError::UnknownCluster { .. })
        ));
        assert!(all(&store).is_empty());
    }

    /// 1,000 records (250 jobs: submit, start, batch step, end) in one batch; the time is
    /// printed (`--nocapture`), never asserted.
    pub fn a_thousand_record_batch(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let kinds: Vec<RecordKind> = (1..=250u32)
            .flat_map(|id| {
                let t = 10_000 + i64::from(id);
                [
                    submitted(id, t),
                    started(id, 0, t + 1),
                    step(id, -4, t + 1, t + 50, JobState::Completed),
                    ended(id, 0, t + 50, JobState::Completed, 0),
                ]
            })
            .collect();
        let batch = numbered(1, kinds);
        let begin = Instant::now();
        assert_eq!(store.record_batch("c1", 1, &batch).unwrap(), 1_000);
        let took = begin.elapsed();
        eprintln!(
            "{:?}: 1,000 records in {:?} ({:.0} records/s)",
            db.kind,
            took,
            1_000.0 / took.as_secs_f64()
        );
        let runs = all(&store);
        assert_eq!(ids(&runs), (1..=250).collect::<Vec<_>>());
        assert!(
            runs.iter()
                .all(|r| r.state == JobState::Completed.stored() && r.steps.len() == 1)
        );
        // The costlier shape: every record updates a run stored by an earlier batch.
        let submits = (1_001..=2_000u32).map(|id| submitted(id, 20_000)).collect();
        store
            .record_batch("c1", 1, &numbered(1_001, submits))
            .unwrap();
        let starts = (1_001..=2_000u32)
            .map(|id| started(id, 0, 20_001))
            .collect();
        let begin = Instant::now();
        assert_eq!(
            store
                .record_batch("c1", 1, &numbered(2_001, starts))
                .unwrap(),
            3_000
        );
        let took = begin.elapsed();
        eprintln!(
            "{:?}: 1,000 updating records in {:?} ({:.0} records/s)",
            db.kind,
            took,
            1_000.0 / took.as_secs_f64()
        );
        let running = query(
            &store,
            &JobQuery {
                states: vec![JobState::Running.stored()],
                ..Default::default()
            },
        );
        assert_eq!(running.len(), 1_000);
    }
}
