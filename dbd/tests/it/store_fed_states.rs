//! Fed states and membership on every backend: DRAIN becomes DRAINED once the cluster's
//! federated jobs are done, DRAIN+REMOVE leaves the federation, INACTIVE takes no jobs, and
//! Slurm's removal rules for the jobs of a cluster that leaves.

use crate::common;
use crate::store_fed_support;

per_backend!(
    drain_becomes_drained_once_its_federated_jobs_are_done,
    drain_remove_leaves_the_federation_when_done,
    inactive_clusters_take_no_new_jobs,
    a_cluster_leaving_follows_slurms_removal_rules,
    a_deleted_cluster_is_a_departed_one,
);

mod cases {
    use sluice_dbd::store::fed::types::*;
    use sluice_dbd::store::*;
    use sluice_vocab::{FedState, JobState};

    use super::common::{T1, TestDb, s};
    use super::store_fed_support::*;

    fn fed_state(store: &Store, cluster: &str) -> (String, u32) {
        let filter = ClusterFilter {
            names: s(&[cluster]),
            ..Default::default()
        };
        let c = store.list_clusters(&filter).unwrap().remove(0);
        (c.federation, c.fed_state)
    }

    fn changed(kinds: &[FedEventKind]) -> bool {
        kinds.contains(&FedEventKind::FederationChanged)
    }

    pub fn drain_becomes_drained_once_its_federated_jobs_are_done(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        start_on(&store, j, "b", NOW);
        flush(&store);
        set_fed_state(&store, "b", FedState::Drain.stored());
        set_fed_state(&store, "c", FedState::Drain.stored());
        // c has nothing to wait for; b still runs j.
        assert_eq!(store.fed_settle(NOW + 1).unwrap(), s(&["c"]));
        assert_eq!(fed_state(&store, "c").1, FedState::Drained.stored());
        assert_eq!(fed_state(&store, "b").1, FedState::Drain.stored());
        for m in ["a", "b", "c"] {
            assert!(changed(&take(&store, m)), "{m} told");
        }
        assert!(store.fed_settle(NOW + 2).unwrap().is_empty());
        // Draining clusters get no new jobs, but run what they have.
        let other = submit(&store, request("a", 1, 2));
        assert_eq!(other.viable, set(&["a"]));
        // b's job ends: b is drained in the same transaction.
        let done = JobState::Completed.stored();
        store
            .fed_job_ended(j, "b", done, 0, RequeueMode::None, NOW + 3)
            .unwrap();
        assert_eq!(fed_state(&store, "b").1, FedState::Drained.stored());
        assert!(changed(&take(&store, "a")));
        // Back to ACTIVE by the admin.
        set_fed_state(&store, "b", FedState::Active.stored());
        assert_eq!(submit(&store, request("a", 1, 3)).viable, set(&["a", "b"]));
    }

    pub fn drain_remove_leaves_the_federation_when_done(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        set_fed_state(&store, "c", FedState::DrainRemove.stored());
        // c still holds a pending copy.
        assert!(store.fed_settle(NOW).unwrap().is_empty());
        assert_eq!(
            fed_state(&store, "c"),
            ("fed".into(), FedState::DrainRemove.stored())
        );
        store.fed_cancel(j, "a", None, NOW + 1).unwrap();
        assert_eq!(
            fed_state(&store, "c"),
            (String::new(), FedState::Na.stored())
        );
        let view = store.fed_view("a").unwrap();
        let names: Vec<&str> = view.siblings.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, vec!["b"]);
        assert_eq!(store.fed_view("c").unwrap().federation, "");
        assert!(changed(&take(&store, "b")));
        assert!(
            changed(&take(&store, "c")),
            "the leaving cluster is told too"
        );
        // Its id is free again.
        let add = AddClusters {
            names: s(&["d"]),
            federation: Some("fed".into()),
            ..Default::default()
        };
        store.add_clusters(&add, Apply::Commit, T1).unwrap();
        assert_eq!(store.fed_view("d").unwrap().this.fed_id, 3);
    }

    pub fn inactive_clusters_take_no_new_jobs(db: &TestDb) {
        let store = federation(db);
        set_fed_state(&store, "b", FedState::Inactive.stored());
        assert_eq!(submit(&store, request("a", 1, 1)).viable, set(&["a", "c"]));
        let e = store.fed_submit(&request("b", 2, 1), NOW).unwrap_err();
        assert_eq!(e.to_string(), "System submissions disabled");
        // INACTIVE is not draining: it stays as set.
        assert!(store.fed_settle(NOW).unwrap().is_empty());
        assert_eq!(fed_state(&store, "b").1, FedState::Inactive.stored());
    }

    fn remove_c(store: &Store) {
        let req = ModifyFederations {
            names: s(&["fed"]),
            clusters: s(&["-c"]),
        };
        store.modify_federations(&req, Apply::Commit, T1).unwrap();
    }

    fn left(job_id: u32) -> FedEventKind {
        FedEventKind::JobLeftFederation { job_id }
    }

    pub fn a_cluster_leaving_follows_slurms_removal_rules(db: &TestDb) {
        let store = federation(db);
        let with = |origin: &str, fed_id, local, clusters: &str| SubmitFedJob {
            req_clusters: clusters.into(),
            ..request(origin, fed_id, local)
        };
        // Origin a stays: a pending job loses c; a job running on c runs on outside.
        let pending = submit(&store, with("a", 1, 1, "")).job_id;
        let on_c = submit(&store, with("a", 1, 2, "")).job_id;
        start_on(&store, on_c, "c", NOW);
        let locked_by_c = submit(&store, with("a", 1, 3, "")).job_id;
        store
            .fed_acquire_start_lock(locked_by_c, "c", LEASE, NOW)
            .unwrap();
        // Origin c leaves: its own pending copy stays there; copies elsewhere go.
        let from_c = submit(&store, with("c", 3, 1, "")).job_id;
        // Origin c not viable, two siblings left: stays federated among them.
        let tracked_two = submit(&store, with("c", 3, 2, "a,b")).job_id;
        // Origin c not viable, one sibling left: it keeps the job as a local one.
        let tracked_one = submit(&store, with("c", 3, 3, "a")).job_id;
        // Running on a, origin c: runs on as a local job.
        let on_a = submit(&store, with("c", 3, 4, "")).job_id;
        start_on(&store, on_a, "a", NOW);
        flush(&store);

        remove_c(&store);

        let job = |j| store.fed_job(j, "a").unwrap();
        let p = job(pending);
        assert_eq!(
            (p.phase, p.viable.clone(), p.active.clone()),
            (FedPhase::Pending, set(&["a", "b"]), set(&["a", "b"]))
        );
        assert_eq!(job(on_c).phase, FedPhase::Detached);
        assert_eq!(job(locked_by_c).lock, None);
        assert_eq!(job(from_c).phase, FedPhase::Detached);
        let t2 = job(tracked_two);
        assert_eq!(
            (t2.phase, t2.viable.clone(), t2.active.clone()),
            (FedPhase::Pending, set(&["a", "b"]), set(&["a", "b"]))
        );
        assert_eq!(job(tracked_one).phase, FedPhase::Detached);
        assert_eq!(job(on_a).phase, FedPhase::Detached);

        let mut to_a = take(&store, "a");
        to_a.sort_by_key(FedEventKind::job_id);
        assert_eq!(
            to_a,
            vec![
                left(on_c),
                revoked(from_c, None),
                left(tracked_one),
                left(on_a)
            ]
        );
        assert_eq!(take(&store, "b"), vec![revoked(from_c, None)]);
        assert!(
            take(&store, "c").is_empty(),
            "the departed cluster cleans up itself"
        );
        // The stayed-federated job can still start among the remaining siblings.
        start_on(&store, tracked_two, "b", NOW + 1);
    }

    pub fn a_deleted_cluster_is_a_departed_one(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        let req = DeleteClusters {
            names: s(&["b"]),
            ..Default::default()
        };
        store.delete_clusters(&req, Apply::Commit, T1).unwrap();
        assert_eq!(store.fed_job(j, "a").unwrap().active, set(&["a", "c"]));
        // A dry run changes nothing.
        let dry = ModifyFederations {
            names: s(&["fed"]),
            clusters: s(&["-c"]),
        };
        store.modify_federations(&dry, Apply::DryRun, T1).unwrap();
        assert_eq!(store.fed_job(j, "a").unwrap().active, set(&["a", "c"]));
    }
}
