//! The submission path's grouped writes, on every backend: submissions and offers written in
//! one transaction are each answered as they would be alone. A refused write changes nothing
//! (not even the version bump of the job row it locked) and fails none of the others; a repeat
//! in the same group gets the record the first one made; an offer sees its job recorded earlier
//! in the group; what the group appended reaches the siblings' logs.

use crate::common;
use crate::store_fed_support;

per_backend!(a_group_answers_each_write_as_if_alone);

mod cases {
    use sluice_dbd::store::fed::error::FedError;
    use sluice_dbd::store::fed::group::FedWrite;
    use sluice_dbd::store::fed::types::*;

    use super::common::TestDb;
    use super::store_fed_support::*;

    fn held(local: u32) -> SubmitFedJob {
        SubmitFedJob {
            held: true,
            ..request("a", 1, local)
        }
    }

    fn offer(local: u32) -> FedWrite {
        FedWrite::Offer {
            job_id: id(1, local),
            caller: "a".into(),
            desc: None,
        }
    }

    pub fn a_group_answers_each_write_as_if_alone(db: &TestDb) {
        let store = federation(db);
        // Job 3 started on b before the group: offering it again is refused.
        let started = submit(&store, request("a", 1, 3)).job_id;
        start_on(&store, started, "b", NOW);
        flush(&store);
        let before = store.fed_job(started, "a").unwrap();

        let other_desc = SubmitFedJob {
            desc: b"another script".to_vec(),
            ..held(1)
        };
        let writes = vec![
            FedWrite::Submit(held(1)),
            FedWrite::Submit(other_desc),
            FedWrite::Submit(held(1)),
            FedWrite::Submit(request("a", 2, 5)),
            offer(1),
            offer(3),
            offer(9),
            FedWrite::Submit(held(2)),
        ];
        let answers = store.fed_write_group(&writes, NOW + 1);
        assert_eq!(answers.len(), writes.len(), "one answer per write");

        let recorded = answers[0].as_ref().expect("recorded");
        assert!(recorded.held && recorded.phase == FedPhase::Pending);
        assert!(matches!(answers[1], Err(FedError::DuplicateJobId { .. })));
        assert_eq!(
            answers[2].as_ref().unwrap(),
            recorded,
            "a repeat: its record"
        );
        assert!(matches!(answers[3], Err(FedError::ForeignJobId { .. })));
        let offered = answers[4].as_ref().expect("offered");
        assert!(!offered.held && offered.job_id == id(1, 1));
        assert!(matches!(answers[5], Err(FedError::NotPending { .. })));
        assert!(matches!(answers[6], Err(FedError::InvalidJobId { .. })));
        let second = answers[7].as_ref().expect("recorded after the refusals");
        assert!(second.held);

        // Committed as answered; nothing of the refused writes.
        assert_eq!(&store.fed_job(id(1, 1), "a").unwrap(), offered);
        assert_eq!(&store.fed_job(id(1, 2), "a").unwrap(), second);
        assert_eq!(store.fed_job(started, "a").unwrap(), before, "unchanged");
        assert!(store.fed_job(id(1, 9), "a").is_err());
        assert!(store.fed_job(id(2, 5), "a").is_err());
        for c in ["b", "c"] {
            let events = take(&store, c);
            assert_eq!(events.len(), 1, "{c}: {events:?}");
            assert!(is_offer(&events[0], id(1, 1)), "{c}: {events:?}");
        }
        assert!(take(&store, "a").is_empty());
    }
}
