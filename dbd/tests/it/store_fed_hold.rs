//! Holds and arrays against the start protocol, on every backend: a withdrawal (the origin held
//! the job or gave it a dependency) voids a start lock in flight, a sibling's or the origin's
//! own, so its commit is refused, and a later grant's token does not revive the old one; a
//! start the origin gives back as a held requeue stays on the origin; a job array's record
//! ends when its origin reports the array over, or when it is cancelled from a sibling, and a
//! draining origin then settles.

use crate::common;
use crate::store_fed_support;

per_backend!(
    a_withdrawal_voids_a_siblings_lock_in_flight,
    a_withdrawal_voids_the_origins_own_lock,
    a_withdrawal_after_the_start_is_refused,
    a_start_given_back_held_stays_on_the_origin,
    an_array_ends_when_its_origin_reports_it_over,
    an_array_cancelled_from_a_sibling_is_over_for_its_origin,
);

mod cases {
    use sluice_dbd::store::fed::error::FedError;
    use sluice_dbd::store::fed::types::*;
    use sluice_dbd::store::*;
    use sluice_vocab::{FedState, JobState};

    use super::common::{TestDb, s};
    use super::store_fed_support::*;

    fn granted(store: &Store, job: u32, cluster: &str, now: i64) -> u64 {
        match store
            .fed_acquire_start_lock(job, cluster, LEASE, now)
            .unwrap()
        {
            LockOutcome::Granted { token, .. } => token,
            LockOutcome::Refused { reason } => panic!("{cluster} refused: {reason:?}"),
        }
    }

    fn refusal(store: &Store, job: u32, cluster: &str, now: i64) -> LockRefusal {
        match store
            .fed_acquire_start_lock(job, cluster, LEASE, now)
            .unwrap()
        {
            LockOutcome::Refused { reason } => reason,
            LockOutcome::Granted { .. } => panic!("{cluster} granted"),
        }
    }

    fn commit(store: &Store, job: u32, cluster: &str, token: u64, now: i64) -> Option<LockRefusal> {
        store
            .fed_commit_start(job, cluster, token, now)
            .unwrap()
            .err()
    }

    fn fed_state(store: &Store, cluster: &str) -> u32 {
        let filter = ClusterFilter {
            names: s(&[cluster]),
            ..Default::default()
        };
        store.list_clusters(&filter).unwrap().remove(0).fed_state
    }

    pub fn a_withdrawal_voids_a_siblings_lock_in_flight(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        let token = granted(&store, j, "b", NOW);
        // The origin holds the job while b's start is in flight.
        let held = store.fed_withdraw(j, "a", NOW + 1).unwrap();
        assert_eq!(
            (held.held, held.active.clone(), held.lock.clone()),
            (true, set(&["a"]), None)
        );
        assert_eq!(take(&store, "b"), [revoked(j, None)]);
        assert_eq!(
            commit(&store, j, "b", token, NOW + 2),
            Some(LockRefusal::LostLock)
        );
        assert_eq!(refusal(&store, j, "b", NOW + 2), LockRefusal::NotActiveHere);
        assert_eq!(refusal(&store, j, "a", NOW + 2), LockRefusal::Held);
        // Released: b is offered again and takes a new lock; the old token stays void.
        store.fed_offer(j, "a", None, NOW + 3).unwrap();
        assert!(take(&store, "b").iter().any(|e| is_offer(e, j)));
        let again = granted(&store, j, "b", NOW + 4);
        assert_ne!(again, token);
        assert_eq!(
            commit(&store, j, "b", token, NOW + 4),
            Some(LockRefusal::LostLock)
        );
        assert_eq!(commit(&store, j, "b", again, NOW + 5), None);
        let job = store.fed_job(j, "a").unwrap();
        assert_eq!(
            (job.phase, job.winner),
            (FedPhase::Started, Some("b".into()))
        );
    }

    pub fn a_withdrawal_voids_the_origins_own_lock(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        let token = granted(&store, j, "a", NOW);
        store.fed_withdraw(j, "a", NOW + 1).unwrap();
        assert_eq!(
            commit(&store, j, "a", token, NOW + 1),
            Some(LockRefusal::LostLock)
        );
        let job = store.fed_job(j, "a").unwrap();
        assert_eq!((job.phase, job.lock), (FedPhase::Pending, None));
        // Only the origin may withdraw.
        assert!(matches!(
            store.fed_withdraw(j, "b", NOW + 2),
            Err(FedError::NotOrigin { .. })
        ));
    }

    pub fn a_withdrawal_after_the_start_is_refused(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        start_on(&store, j, "c", NOW);
        flush(&store);
        let err = store.fed_withdraw(j, "a", NOW + 1).unwrap_err();
        assert_eq!(err.to_string(), "Job is no longer pending execution");
        let job = store.fed_job(j, "a").unwrap();
        assert_eq!((job.phase, job.held), (FedPhase::Started, false));
        assert!(take(&store, "c").is_empty(), "the run is left alone");
    }

    pub fn a_start_given_back_held_stays_on_the_origin(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        // The origin's commit went through before its withdrawal: it gives the start back.
        start_on(&store, j, "a", NOW);
        for c in ["b", "c"] {
            assert_eq!(take(&store, c), [revoked(j, Some("a"))], "{c}");
        }
        let pending = JobState::Pending.stored();
        let job = store
            .fed_job_ended(j, "a", pending, 0, RequeueMode::RequeueHold, NOW + 1)
            .unwrap();
        assert_eq!(
            (job.phase, job.held, job.active.clone(), job.winner.clone()),
            (FedPhase::Pending, true, set(&["a"]), None)
        );
        for c in ["a", "b", "c"] {
            assert!(
                take(&store, c).is_empty(),
                "{c}: nothing offered while held"
            );
        }
        assert_eq!(refusal(&store, j, "a", NOW + 2), LockRefusal::Held);
        store.fed_offer(j, "a", None, NOW + 3).unwrap();
        assert!(take(&store, "c").iter().any(|e| is_offer(e, j)));
        granted(&store, j, "a", NOW + 4);
    }

    fn array(store: &Store) -> u32 {
        let req = SubmitFedJob {
            is_array: true,
            ..request("b", 2, 1)
        };
        let job = submit(store, req);
        assert_eq!(job.active, set(&["b"]));
        job.job_id
    }

    pub fn an_array_ends_when_its_origin_reports_it_over(db: &TestDb) {
        let store = federation(db);
        let j = array(&store);
        set_fed_state(&store, "b", FedState::Drain.stored());
        assert!(store.fed_settle(NOW + 1).unwrap().is_empty(), "b waits");
        flush(&store);
        let done = JobState::Cancelled.stored();
        let end = |cluster: &str, state: u32, mode: RequeueMode| {
            store.fed_job_ended(j, cluster, state, 0, mode, NOW + 2)
        };
        assert!(matches!(
            end("a", done, RequeueMode::None),
            Err(FedError::NotRunningHere { .. })
        ));
        assert!(matches!(
            end("b", done, RequeueMode::Requeue),
            Err(FedError::NotRunningHere { .. })
        ));
        let running = JobState::Running.stored();
        assert!(matches!(
            end("b", running, RequeueMode::None),
            Err(FedError::NotFinalState { .. })
        ));
        let job = end("b", done, RequeueMode::None).unwrap();
        assert_eq!(
            (job.phase, job.final_state, job.winner.clone()),
            (FedPhase::Ended, done, Some("b".into()))
        );
        // The draining origin has nothing left: drained in the same transaction.
        assert_eq!(fed_state(&store, "b"), FedState::Drained.stored());
        // No cluster is told about the job (only that the federation changed).
        for c in ["a", "b", "c"] {
            let events = take(&store, c);
            assert!(
                events.iter().all(|e| *e == FedEventKind::FederationChanged),
                "{c}: {events:?}"
            );
        }
        // Said again (a restart): nothing changes.
        assert_eq!(
            end("b", done, RequeueMode::None).unwrap().phase,
            FedPhase::Ended
        );
        assert!(take(&store, "a").is_empty());
    }

    pub fn an_array_cancelled_from_a_sibling_is_over_for_its_origin(db: &TestDb) {
        let store = federation(db);
        let j = array(&store);
        flush(&store);
        assert_eq!(
            store.fed_cancel(j, "a", None, NOW).unwrap(),
            CancelOutcome::Cancelled
        );
        assert_eq!(take(&store, "b"), [cancelled(j)]);
        assert!(take(&store, "c").is_empty());
        // The origin's report of the cancelled tasks comes after: the record stays cancelled.
        let done = JobState::Cancelled.stored();
        let job = store
            .fed_job_ended(j, "b", done, 0, RequeueMode::None, NOW + 1)
            .unwrap();
        assert_eq!(job.phase, FedPhase::Cancelled);
    }
}
