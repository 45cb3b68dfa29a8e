//! Requests on recorded federated jobs on every backend: cancel, `scancel --sibling`, updates,
//! requeue, end reports and refused copies, and the events each sends.

use crate::common;
use crate::store_fed_support;

per_backend!(
    cancel_of_a_pending_job_reaches_every_copy_and_the_origin,
    cancel_of_a_running_job_goes_to_its_cluster,
    scancel_sibling_withdraws_one_pending_copy,
    updates_add_and_remove_siblings,
    requeue_reoffers_the_job_and_requeuehold_keeps_it_on_the_origin,
    end_reports_are_checked_and_idempotent,
    a_sibling_that_refuses_its_copy_leaves_the_active_set,
);

mod cases {
    use sluice_dbd::store::fed::error::FedError;
    use sluice_dbd::store::fed::types::*;
    use sluice_vocab::JobState;

    use super::common::TestDb;
    use super::store_fed_support::*;

    pub fn cancel_of_a_pending_job_reaches_every_copy_and_the_origin(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        assert_eq!(
            store.fed_cancel(j, "b", Some(1000), NOW + 5).unwrap(),
            CancelOutcome::Cancelled
        );
        // Every copy is told who cancelled it (for its `CANCELLED by 1000` record).
        assert_eq!(take(&store, "a"), vec![cancelled_by(j, Some(1000))]);
        assert_eq!(take(&store, "c"), vec![cancelled_by(j, Some(1000))]);
        assert!(
            take(&store, "b").is_empty(),
            "the caller cancels its own copy"
        );
        let job = store.fed_job(j, "a").unwrap();
        assert_eq!(
            (job.phase, job.final_state, job.end_time),
            (FedPhase::Cancelled, JobState::Cancelled.stored(), NOW + 5)
        );
        let again = store.fed_cancel(j, "a", None, NOW + 6).unwrap_err();
        assert_eq!(
            again.to_string(),
            "Job/step already completing or completed"
        );
        let lock = store
            .fed_acquire_start_lock(j, "c", LEASE, NOW + 7)
            .unwrap();
        assert_eq!(
            lock,
            LockOutcome::Refused {
                reason: LockRefusal::NotPending
            }
        );
    }

    pub fn cancel_of_a_running_job_goes_to_its_cluster(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        start_on(&store, j, "c", NOW);
        flush(&store);
        let running = CancelOutcome::Running {
            cluster: "c".into(),
        };
        assert_eq!(store.fed_cancel(j, "a", Some(0), NOW + 1).unwrap(), running);
        assert_eq!(take(&store, "c"), vec![cancelled_by(j, Some(0))]);
        // Still running until c reports the end.
        assert_eq!(store.fed_job(j, "a").unwrap().phase, FedPhase::Started);
        assert_eq!(store.fed_cancel(j, "c", None, NOW + 2).unwrap(), running);
        assert!(
            take(&store, "c").is_empty(),
            "the running cluster cancels itself"
        );
        let state = JobState::Cancelled.stored();
        let ended = store
            .fed_job_ended(j, "c", state, 0, RequeueMode::None, NOW + 3)
            .unwrap();
        assert_eq!((ended.phase, ended.final_state), (FedPhase::Ended, state));
        assert_eq!(
            take(&store, "a"),
            vec![FedEventKind::JobEnded {
                job_id: j,
                cluster: "c".into(),
                state,
                exit_code: 0
            }]
        );
    }

    pub fn scancel_sibling_withdraws_one_pending_copy(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        let job = store.fed_remove_sibling(j, "a", "b", NOW).unwrap();
        assert_eq!(
            (job.active.clone(), job.viable.clone()),
            (set(&["a", "c"]), set(&["a", "b", "c"]))
        );
        assert_eq!(take(&store, "b"), vec![revoked(j, None)]);
        assert_eq!(
            store
                .fed_remove_sibling(j, "a", "zz", NOW)
                .unwrap_err()
                .to_string(),
            "Invalid cluster name"
        );
        // The origin's own copy, from another cluster: the origin is told (it becomes RV).
        store.fed_remove_sibling(j, "c", "a", NOW).unwrap();
        assert_eq!(take(&store, "a"), vec![revoked(j, None)]);
        // While a start lock is held, and once started: no longer pending.
        let LockOutcome::Granted { token, .. } =
            store.fed_acquire_start_lock(j, "c", LEASE, NOW).unwrap()
        else {
            panic!("lock refused");
        };
        let e = store.fed_remove_sibling(j, "a", "c", NOW + 1).unwrap_err();
        assert_eq!(e.to_string(), "Job is no longer pending execution");
        store
            .fed_commit_start(j, "c", token, NOW + 1)
            .unwrap()
            .unwrap();
        let e = store.fed_remove_sibling(j, "a", "c", NOW + 2).unwrap_err();
        assert_eq!(e.to_string(), "Job is no longer pending execution");
    }

    pub fn updates_add_and_remove_siblings(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        let update =
            |clusters: Option<&str>, features: Option<&str>, desc: Option<&[u8]>| UpdateFedJob {
                job_id: j,
                caller: "a".into(),
                req_clusters: clusters.map(str::to_string),
                cluster_features: features.map(str::to_string),
                desc: desc.map(<[u8]>::to_vec),
            };
        let job = store
            .fed_update(&update(Some("a,b"), None, None), NOW)
            .unwrap();
        assert_eq!(
            (
                job.viable.clone(),
                job.active.clone(),
                job.req_clusters.as_str()
            ),
            (set(&["a", "b"]), set(&["a", "b"]), "a,b")
        );
        assert_eq!(take(&store, "c"), vec![revoked(j, None)]);
        assert!(take(&store, "b").is_empty());
        // Features: only c is big; the origin (the caller) loses its copy, b is revoked, c offered.
        let job = store
            .fed_update(&update(Some(""), Some("big"), None), NOW)
            .unwrap();
        assert_eq!(
            (job.viable.clone(), job.active.clone()),
            (set(&["c"]), set(&["c"]))
        );
        assert_eq!(take(&store, "b"), vec![revoked(j, None)]);
        assert!(matches!(take(&store, "c").as_slice(), [e] if is_offer(e, j)));
        assert!(take(&store, "a").is_empty());
        // Cleared: every member again; the copies that stay get only a new description.
        let job = store
            .fed_update(&update(None, Some(""), Some(b"new")), NOW)
            .unwrap();
        assert_eq!(job.active, set(&["a", "b", "c"]));
        assert!(
            matches!(take(&store, "b").as_slice(), [FedEventKind::SiblingOffered { desc, .. }] if desc == b"new")
        );
        assert_eq!(
            take(&store, "c"),
            vec![FedEventKind::SiblingUpdated {
                job_id: j,
                desc: b"new".to_vec()
            }]
        );
        // Bad input changes nothing.
        let e = store
            .fed_update(&update(None, Some("nosuch"), None), NOW)
            .unwrap_err();
        assert_eq!(e.to_string(), "Invalid cluster feature specification");
        assert_eq!(store.fed_job(j, "a").unwrap().active, set(&["a", "b", "c"]));
        // A started job cannot be updated.
        start_on(&store, j, "b", NOW);
        let e = store
            .fed_update(&update(Some("a"), None, None), NOW)
            .unwrap_err();
        assert_eq!(e.to_string(), "Job is no longer pending execution");
    }

    pub fn requeue_reoffers_the_job_and_requeuehold_keeps_it_on_the_origin(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        let e = store.fed_requeue(j, "a", false, NOW).unwrap_err();
        assert_eq!(e.to_string(), "Job is pending execution");
        start_on(&store, j, "b", NOW);
        flush(&store);
        assert_eq!(store.fed_requeue(j, "a", false, NOW + 1).unwrap(), "b");
        assert_eq!(
            take(&store, "b"),
            vec![FedEventKind::SiblingCancelled {
                job_id: j,
                requeue: RequeueMode::Requeue,
                requester_uid: None,
            }]
        );
        // b kills the run and reports its end; the asked-for requeue applies.
        let job = store
            .fed_job_ended(
                j,
                "b",
                JobState::Requeued.stored(),
                0,
                RequeueMode::None,
                NOW + 2,
            )
            .unwrap();
        assert_eq!(
            (job.phase, job.held, job.winner.clone(), job.active.clone()),
            (FedPhase::Pending, false, None, set(&["a", "b", "c"]))
        );
        assert_eq!(
            take(&store, "a"),
            vec![FedEventKind::JobRequeued {
                job_id: j,
                held: false,
                origin_viable: true
            }]
        );
        assert!(
            matches!(take(&store, "b").as_slice(), [e] if is_offer(e, j)),
            "the reporter gets a fresh copy"
        );
        assert!(matches!(take(&store, "c").as_slice(), [e] if is_offer(e, j)));
        // It can start again, anywhere.
        start_on(&store, j, "c", NOW + 3);
        flush(&store);
        // requeuehold from the running cluster itself: no event to it; held on the origin.
        assert_eq!(store.fed_requeue(j, "c", true, NOW + 4).unwrap(), "c");
        assert!(take(&store, "c").is_empty());
        let job = store
            .fed_job_ended(
                j,
                "c",
                JobState::Requeued.stored(),
                0,
                RequeueMode::None,
                NOW + 5,
            )
            .unwrap();
        assert_eq!(
            (job.phase, job.held, job.active.clone()),
            (FedPhase::Pending, true, set(&["a"]))
        );
        assert_eq!(
            take(&store, "a"),
            vec![FedEventKind::JobRequeued {
                job_id: j,
                held: true,
                origin_viable: true
            }]
        );
        assert!(take(&store, "b").is_empty() && take(&store, "c").is_empty());
        // A requeue the running cluster decides itself (e.g. node failure) comes with the report.
        store.fed_offer(j, "a", None, NOW + 6).unwrap();
        start_on(&store, j, "a", NOW + 7);
        flush(&store);
        let job = store
            .fed_job_ended(
                j,
                "a",
                JobState::NodeFail.stored(),
                0,
                RequeueMode::Requeue,
                NOW + 8,
            )
            .unwrap();
        assert_eq!(job.phase, FedPhase::Pending);
        assert!(
            take(&store, "a").is_empty(),
            "the origin requeued it itself"
        );
        assert!(matches!(take(&store, "b").as_slice(), [e] if is_offer(e, j)));
    }

    pub fn end_reports_are_checked_and_idempotent(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        let done = JobState::Completed.stored();
        let e = store
            .fed_job_ended(j, "b", done, 0, RequeueMode::None, NOW)
            .unwrap_err();
        assert!(matches!(e, FedError::NotRunningHere { .. }), "{e:?}");
        start_on(&store, j, "b", NOW);
        flush(&store);
        let e = store
            .fed_job_ended(j, "c", done, 0, RequeueMode::None, NOW)
            .unwrap_err();
        assert!(matches!(e, FedError::NotRunningHere { .. }), "{e:?}");
        let e = store
            .fed_job_ended(
                j,
                "b",
                JobState::Running.stored(),
                0,
                RequeueMode::None,
                NOW,
            )
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "Job state {} is not a final state",
                JobState::Running.stored()
            )
        );
        let ended = store
            .fed_job_ended(j, "b", done, 3, RequeueMode::None, NOW + 9)
            .unwrap();
        assert_eq!(
            (ended.phase, ended.exit_code, ended.end_time),
            (FedPhase::Ended, 3, NOW + 9)
        );
        let again = store
            .fed_job_ended(j, "b", done, 3, RequeueMode::None, NOW + 10)
            .unwrap();
        assert_eq!(again.end_time, NOW + 9);
        assert_eq!(
            take(&store, "a"),
            vec![FedEventKind::JobEnded {
                job_id: j,
                cluster: "b".into(),
                state: done,
                exit_code: 3
            }]
        );
    }

    pub fn a_sibling_that_refuses_its_copy_leaves_the_active_set(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        let job = store.fed_reject_sibling(j, "c", NOW).unwrap();
        assert_eq!(
            (job.active.clone(), job.viable.clone()),
            (set(&["a", "b"]), set(&["a", "b", "c"]))
        );
        let lock = store.fed_acquire_start_lock(j, "c", LEASE, NOW).unwrap();
        assert_eq!(
            lock,
            LockOutcome::Refused {
                reason: LockRefusal::NotActiveHere
            }
        );
    }
}
