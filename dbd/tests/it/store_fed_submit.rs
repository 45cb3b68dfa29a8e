//! The origin's submission whose answer was lost, on every backend: a repeat of the same
//! submission is answered with its record whatever became of it (and before the draining
//! check), a different description under a live id is refused, and a withdrawal cancels the
//! record (a start lock in flight is then refused) or, when nothing was recorded, keeps a
//! late repeat from recording anything.

use crate::common;
use crate::store_fed_support;

per_backend!(
    a_repeated_submission_is_answered_with_its_record,
    a_withdrawn_submission_is_cancelled_and_a_lock_in_flight_is_refused,
    a_withdrawal_before_the_submission_arrives_keeps_it_from_being_recorded,
    a_started_or_foreign_job_is_not_withdrawn,
);

mod cases {
    use sluice_dbd::store::fed::error::FedError;
    use sluice_dbd::store::fed::types::*;
    use sluice_vocab::{FedState, JobState};

    use super::common::TestDb;
    use super::store_fed_support::*;

    fn held(origin: &str, fed_id: u32, local: u32) -> SubmitFedJob {
        SubmitFedJob {
            held: true,
            ..request(origin, fed_id, local)
        }
    }

    pub fn a_repeated_submission_is_answered_with_its_record(db: &TestDb) {
        let store = federation(db);
        let first = submit(&store, request("a", 1, 1));
        assert_eq!(take(&store, "b").len(), 1, "offered");
        // The answer was lost: the origin sends it again, and again after a's drain began.
        assert_eq!(submit(&store, request("a", 1, 1)), first);
        set_fed_state(&store, "a", FedState::Drain.stored());
        assert_eq!(submit(&store, request("a", 1, 1)), first);
        assert!(take(&store, "b").is_empty(), "offered once");
        // Another description under the live id: refused, the record unchanged.
        let other = SubmitFedJob {
            desc: b"something else".to_vec(),
            ..request("a", 1, 1)
        };
        let e = store.fed_submit(&other, NOW).unwrap_err();
        assert!(matches!(e, FedError::DuplicateJobId { .. }));
        assert_eq!(e.to_string(), "Duplicate job id");
        assert_eq!(store.fed_job(first.job_id, "a").unwrap(), first);
        // New submissions of a draining origin are still refused.
        let e = store.fed_submit(&request("a", 1, 2), NOW).unwrap_err();
        assert_eq!(e.to_string(), "System submissions disabled");
        // Once the job is over a repeat still gets its record; nothing is offered again.
        set_fed_state(&store, "a", FedState::Active.stored());
        store.fed_cancel(first.job_id, "a", None, NOW).unwrap();
        flush(&store);
        let late = submit(&store, request("a", 1, 1));
        assert_eq!(late.phase, FedPhase::Cancelled);
        assert!(take(&store, "b").is_empty() && take(&store, "c").is_empty());
    }

    pub fn a_withdrawn_submission_is_cancelled_and_a_lock_in_flight_is_refused(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        let LockOutcome::Granted { token, .. } =
            store.fed_acquire_start_lock(j, "b", LEASE, NOW).unwrap()
        else {
            panic!("lock refused");
        };
        let gone = store
            .fed_withdraw_submission(&request("a", 1, 1), NOW + 1)
            .unwrap();
        assert_eq!((gone.phase, gone.lock.clone()), (FedPhase::Cancelled, None));
        assert_eq!(gone.final_state, JobState::Cancelled.stored());
        for c in ["b", "c"] {
            assert_eq!(take(&store, c), vec![cancelled(j)], "{c}");
        }
        assert!(take(&store, "a").is_empty(), "the origin is not told");
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 1).unwrap(),
            Err(LockRefusal::NotPending)
        );
        // Both are idempotent: withdrawing again, or the submission arriving late, changes
        // nothing and answers the cancelled record.
        let again = store
            .fed_withdraw_submission(&request("a", 1, 1), NOW + 2)
            .unwrap();
        assert_eq!(again.phase, FedPhase::Cancelled);
        assert_eq!(
            submit(&store, request("a", 1, 1)).phase,
            FedPhase::Cancelled
        );
        assert!(take(&store, "b").is_empty() && take(&store, "c").is_empty());
    }

    pub fn a_withdrawal_before_the_submission_arrives_keeps_it_from_being_recorded(db: &TestDb) {
        let store = federation(db);
        set_fed_state(&store, "a", FedState::Drain.stored());
        // The origin gave up before its submission reached the dbd.
        let gone = store
            .fed_withdraw_submission(&held("a", 1, 1), NOW)
            .unwrap();
        assert_eq!(
            (gone.phase, gone.origin.as_str(), gone.active.len()),
            (FedPhase::Cancelled, "a", 0)
        );
        // A draining origin with nothing live settles.
        assert_eq!(store.fed_settle(NOW).unwrap(), vec!["a".to_string()]);
        flush(&store);
        // The submission arrives late: answered with the cancelled record, offered to nobody.
        let late = submit(&store, held("a", 1, 1));
        assert_eq!((late.phase, late.desc.clone()), (gone.phase, gone.desc));
        assert!(take(&store, "b").is_empty() && take(&store, "c").is_empty());
        // Another submission under that id later is a new job (ids wrap).
        set_fed_state(&store, "a", FedState::Active.stored());
        let other = SubmitFedJob {
            desc: b"another".to_vec(),
            ..request("a", 1, 1)
        };
        let reused = submit(&store, other);
        assert_eq!(reused.phase, FedPhase::Pending);
        assert!(take(&store, "b").iter().any(|e| is_offer(e, reused.job_id)));
    }

    pub fn a_started_or_foreign_job_is_not_withdrawn(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        start_on(&store, j, "b", NOW);
        let e = store
            .fed_withdraw_submission(&request("a", 1, 1), NOW + 1)
            .unwrap_err();
        assert_eq!(e.to_string(), "Job is no longer pending execution");
        let job = store.fed_job(j, "a").unwrap();
        assert_eq!(
            (job.phase, job.winner.as_deref()),
            (FedPhase::Started, Some("b"))
        );
        // Only the origin withdraws its ids.
        let foreign = SubmitFedJob {
            origin: "b".into(),
            ..request("a", 1, 2)
        };
        let e = store.fed_withdraw_submission(&foreign, NOW).unwrap_err();
        assert_eq!(e.to_string(), "Invalid job id specified");
        assert!(matches!(
            store.fed_job(id(1, 2), "a"),
            Err(FedError::InvalidJobId { .. })
        ));
    }
}
