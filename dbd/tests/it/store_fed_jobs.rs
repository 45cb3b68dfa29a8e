//! The federation arbiter's submissions on every backend: the viable set and its errors,
//! idempotent resubmission, held jobs and arrays, and the offers each sends.

use crate::common;
use crate::store_fed_support;

per_backend!(
    submission_offers_every_viable_sibling,
    viable_set_errors_use_slurms_texts_and_change_nothing,
    constraint_and_cluster_list_narrow_the_siblings,
    resubmission_is_idempotent_and_duplicates_are_refused,
    held_jobs_stay_on_the_origin_until_offered,
    array_jobs_run_on_the_origin_only,
);

mod cases {
    use sluice_dbd::store::fed::error::FedError;
    use sluice_dbd::store::fed::types::*;
    use sluice_dbd::store::*;

    use super::common::{T1, TestDb, s};
    use super::store_fed_support::*;

    pub fn submission_offers_every_viable_sibling(db: &TestDb) {
        let store = federation(db);
        let job = submit(&store, request("a", 1, 1));
        assert_eq!(job.job_id, 67_108_865);
        assert_eq!((job.phase, job.origin.as_str()), (FedPhase::Pending, "a"));
        assert_eq!(job.viable, set(&["a", "b", "c"]));
        assert_eq!(job.active, set(&["a", "b", "c"]));
        assert!(
            take(&store, "a").is_empty(),
            "the origin is not told of its own job"
        );
        for sib in ["b", "c"] {
            let events = take(&store, sib);
            assert_eq!(
                events,
                vec![FedEventKind::SiblingOffered {
                    job_id: job.job_id,
                    origin: "a".into(),
                    viable: set(&["a", "b", "c"]),
                    desc: b"job 1 of a".to_vec(),
                }],
                "{sib}"
            );
        }
        // Any member sees the record.
        assert_eq!(store.fed_job(job.job_id, "c").unwrap(), job);
    }

    pub fn viable_set_errors_use_slurms_texts_and_change_nothing(db: &TestDb) {
        let store = federation(db);
        let with = |clusters: &str, features: &str| SubmitFedJob {
            req_clusters: clusters.into(),
            cluster_features: features.into(),
            ..request("a", 1, 1)
        };
        let text = |req: SubmitFedJob| store.fed_submit(&req, NOW).unwrap_err().to_string();
        assert_eq!(
            text(with("", "nosuch")),
            "Invalid cluster feature specification"
        );
        assert_eq!(
            text(with("", "gpu,nosuch")),
            "Invalid cluster feature specification"
        );
        assert_eq!(
            text(with("", "!fast,big")),
            "Invalid cluster feature specification"
        );
        assert_eq!(text(with("zz", "")), "Invalid cluster name");
        assert_eq!(
            text(with("c", "gpu")),
            "No eligible clusters for federated job"
        );
        set_fed_state(&store, "b", 17);
        set_fed_state(&store, "c", 2);
        assert_eq!(
            text(with("b,c", "")),
            "No eligible clusters for federated job"
        );
        // The origin itself draining or inactive: submissions are disabled.
        set_fed_state(&store, "a", 17);
        assert_eq!(text(with("", "")), "System submissions disabled");
        set_fed_state(&store, "a", 2);
        assert_eq!(text(with("", "")), "System submissions disabled");
        set_fed_state(&store, "a", 1);
        // An id whose origin bits name another cluster, or a zero local part.
        let foreign = SubmitFedJob {
            job_id: id(2, 5),
            ..request("a", 1, 1)
        };
        assert_eq!(text(foreign), "Invalid job id specified");
        assert_eq!(
            text(SubmitFedJob {
                job_id: id(1, 0),
                ..request("a", 1, 1)
            }),
            "Invalid job id specified"
        );
        // A cluster outside any federation.
        let lone = AddClusters {
            names: s(&["lone"]),
            ..Default::default()
        };
        store.add_clusters(&lone, Apply::Commit, T1).unwrap();
        assert_eq!(text(request("lone", 0, 1)), "Not a valid federated job");
        let e = store
            .fed_submit(&request("nowhere", 1, 1), NOW)
            .unwrap_err();
        assert!(
            matches!(e, FedError::Store(StoreError::UnknownCluster { .. })),
            "{e:?}"
        );
        // Nothing was recorded or sent.
        assert!(matches!(
            store.fed_job(id(1, 1), "a"),
            Err(FedError::InvalidJobId { .. })
        ));
        for c in ["a", "b", "c"] {
            assert!(take(&store, c).is_empty(), "{c}");
        }
    }

    pub fn constraint_and_cluster_list_narrow_the_siblings(db: &TestDb) {
        let store = federation(db);
        let fast = submit(
            &store,
            SubmitFedJob {
                cluster_features: "fast".into(),
                ..request("a", 1, 1)
            },
        );
        assert_eq!(
            (fast.viable.clone(), fast.active.clone()),
            (set(&["a", "b"]), set(&["a", "b"]))
        );
        let not_fast = submit(
            &store,
            SubmitFedJob {
                cluster_features: "!fast".into(),
                ..request("a", 1, 2)
            },
        );
        // The origin is not viable: it keeps a tracker but holds no active copy.
        assert_eq!(
            (not_fast.viable.clone(), not_fast.active.clone()),
            (set(&["c"]), set(&["c"]))
        );
        let listed = submit(
            &store,
            SubmitFedJob {
                req_clusters: "b,c".into(),
                cluster_features: "fast,big".into(),
                ..request("a", 1, 3)
            },
        );
        assert_eq!(listed.viable, set(&["b", "c"]));
        let offered_to =
            |c: &str| -> Vec<u32> { take(&store, c).iter().map(FedEventKind::job_id).collect() };
        assert_eq!(offered_to("b"), vec![fast.job_id, listed.job_id]);
        assert_eq!(offered_to("c"), vec![not_fast.job_id, listed.job_id]);
        assert!(offered_to("a").is_empty());
        // A drained sibling is not offered new jobs.
        set_fed_state(&store, "c", 17);
        let job = submit(&store, request("b", 2, 1));
        assert_eq!(job.viable, set(&["a", "b"]));
    }

    pub fn resubmission_is_idempotent_and_duplicates_are_refused(db: &TestDb) {
        let store = federation(db);
        let first = submit(&store, request("a", 1, 1));
        let again = submit(&store, request("a", 1, 1));
        assert_eq!(first, again);
        assert_eq!(take(&store, "b").len(), 1, "offered once");
        let other = SubmitFedJob {
            desc: b"something else".to_vec(),
            ..request("a", 1, 1)
        };
        let e = store.fed_submit(&other, NOW).unwrap_err();
        assert_eq!(e.to_string(), "Duplicate job id");
        // Once the job is over its id may come back (ids wrap).
        store.fed_cancel(first.job_id, "a", None, NOW).unwrap();
        let reused = store.fed_submit(&other, NOW + 1).unwrap();
        assert_eq!(
            (reused.phase, reused.desc.as_slice()),
            (FedPhase::Pending, &b"something else"[..])
        );
        assert!(take(&store, "b").iter().any(|e| is_offer(e, first.job_id)));
    }

    pub fn held_jobs_stay_on_the_origin_until_offered(db: &TestDb) {
        let store = federation(db);
        let held = submit(
            &store,
            SubmitFedJob {
                held: true,
                ..request("a", 1, 1)
            },
        );
        let j = held.job_id;
        assert_eq!((held.held, held.active.clone()), (true, set(&["a"])));
        assert!(take(&store, "b").is_empty());
        let refused = |c: &str| match store.fed_acquire_start_lock(j, c, LEASE, NOW).unwrap() {
            LockOutcome::Refused { reason } => reason,
            LockOutcome::Granted { .. } => panic!("granted to {c}"),
        };
        assert_eq!(refused("a"), LockRefusal::Held);
        assert_eq!(refused("b"), LockRefusal::NotActiveHere);
        // Only the origin releases it.
        assert!(matches!(
            store.fed_offer(j, "b", None, NOW),
            Err(FedError::NotOrigin { .. })
        ));
        let offered = store
            .fed_offer(j, "a", Some(b"released".to_vec()), NOW)
            .unwrap();
        assert_eq!(
            (offered.held, offered.active.clone()),
            (false, set(&["a", "b", "c"]))
        );
        for c in ["b", "c"] {
            match take(&store, c).as_slice() {
                [FedEventKind::SiblingOffered { job_id, desc, .. }] => {
                    assert_eq!((*job_id, desc.as_slice()), (j, &b"released"[..]));
                }
                other => panic!("{c}: {other:?}"),
            }
        }
        // Held again after submission: withdrawn to the origin; a pending lock is dropped.
        let LockOutcome::Granted { token, .. } =
            store.fed_acquire_start_lock(j, "b", LEASE, NOW).unwrap()
        else {
            panic!("lock refused");
        };
        let withdrawn = store.fed_withdraw(j, "a", NOW).unwrap();
        assert_eq!(
            (
                withdrawn.held,
                withdrawn.active.clone(),
                withdrawn.lock.clone()
            ),
            (true, set(&["a"]), None)
        );
        assert_eq!(take(&store, "b"), vec![revoked(j, None)]);
        assert_eq!(take(&store, "c"), vec![revoked(j, None)]);
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW).unwrap(),
            Err(LockRefusal::LostLock)
        );
        assert!(take(&store, "a").is_empty());
    }

    pub fn array_jobs_run_on_the_origin_only(db: &TestDb) {
        let store = federation(db);
        let array = submit(
            &store,
            SubmitFedJob {
                is_array: true,
                ..request("b", 2, 1)
            },
        );
        assert_eq!(
            (array.viable.clone(), array.active.clone()),
            (set(&["b"]), set(&["b"]))
        );
        assert!(take(&store, "a").is_empty() && take(&store, "c").is_empty());
        let elsewhere = SubmitFedJob {
            is_array: true,
            req_clusters: "a,c".into(),
            ..request("b", 2, 2)
        };
        assert_eq!(
            store.fed_submit(&elsewhere, NOW).unwrap_err().to_string(),
            "No eligible clusters for federated job"
        );
    }
}
