//! Federation rules of the store (fed ids, fed states, cluster lists), on every backend.

use crate::common;

per_backend!(
    fed_ids_are_lowest_free_and_distinct,
    fed_id_is_kept_on_reset_and_released_on_leave,
    joining_another_federation_sets_active_unless_given,
    sixty_three_clusters_fit_and_the_sixty_fourth_fails,
    deleting_a_federation_releases_its_clusters,
    federation_cluster_lists_set_exactly_add_and_remove,
    several_federations_with_clusters_is_refused,
    a_modify_that_changes_nothing_is_refused,
    a_dry_run_changes_nothing,
    a_failing_request_changes_nothing,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::FedState;

    use super::common::fed::*;
    use super::common::{T1, TestDb, s};

    const ACTIVE: u32 = FedState::Active.stored();
    const DRAIN: u32 = FedState::Drain.stored();

    pub fn fed_ids_are_lowest_free_and_distinct(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "fed", &[]);
        add_clusters(&store, &["a", "b", "c", "d"], Some("fed"));
        assert_eq!(
            members(&store, "fed"),
            pairs(&[("a", 1), ("b", 2), ("c", 3), ("d", 4)])
        );
        // Leave gaps at 1 and 3, then add two at once: they fill the gaps, distinct ids.
        set_federation(&store, &["a", "c"], "", None).unwrap();
        add_clusters(&store, &["e", "f", "g"], Some("fed"));
        assert_eq!(
            members(&store, "fed"),
            pairs(&[("e", 1), ("b", 2), ("f", 3), ("d", 4), ("g", 5)])
        );
        assert_eq!(cluster(&store, "e").fed_state, ACTIVE);
    }

    pub fn fed_id_is_kept_on_reset_and_released_on_leave(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "fed", &[]);
        add_clusters(&store, &["a", "b"], Some("fed"));
        set_federation(&store, &["b"], "fed", Some(DRAIN)).unwrap();
        let b = cluster(&store, "b");
        assert_eq!((b.fed_id, b.fed_state), (2, DRAIN));
        set_federation(&store, &["a"], "", None).unwrap();
        let a = cluster(&store, "a");
        assert_eq!(
            (a.federation.as_str(), a.fed_id, a.fed_state),
            ("", 0, FedState::Na.stored())
        );
        assert_eq!(FedState::name_of_stored(a.fed_state), "NA");
        assert_eq!(members(&store, "fed"), pairs(&[("b", 2)]));
    }

    pub fn joining_another_federation_sets_active_unless_given(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "f1", &[]);
        add_federation(&store, "f2", &[]);
        add_clusters(&store, &["a", "b"], Some("f1"));
        set_federation(&store, &["a", "b"], "f1", Some(DRAIN)).unwrap();
        set_federation(&store, &["a"], "f2", None).unwrap();
        let a = cluster(&store, "a");
        assert_eq!(
            (a.federation.as_str(), a.fed_id, a.fed_state),
            ("f2", 1, ACTIVE)
        );
        set_federation(&store, &["b"], "f2", Some(FedState::Inactive.stored())).unwrap();
        let b = cluster(&store, "b");
        assert_eq!(
            (b.federation.as_str(), b.fed_id, b.fed_state),
            ("f2", 2, FedState::Inactive.stored())
        );
        assert!(
            members(&store, "f1").is_empty(),
            "a cluster is in one federation only"
        );
        let added = store
            .add_clusters(
                &AddClusters {
                    names: s(&["c"]),
                    federation: Some("f1".into()),
                    fed_state: Some(DRAIN),
                    ..Default::default()
                },
                Apply::Commit,
                T1,
            )
            .unwrap();
        assert_eq!(added.names, s(&["c"]));
        assert_eq!(cluster(&store, "c").fed_state, DRAIN);
    }

    pub fn sixty_three_clusters_fit_and_the_sixty_fourth_fails(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "big", &[]);
        let names: Vec<String> = (1..=63).map(|i| format!("c{i:02}")).collect();
        let req = AddClusters {
            names: names.clone(),
            federation: Some("big".into()),
            ..Default::default()
        };
        store.add_clusters(&req, Apply::Commit, T1).unwrap();
        let ids: Vec<u32> = members(&store, "big").iter().map(|m| m.1).collect();
        assert_eq!(ids, (1..=63).collect::<Vec<u32>>());
        let err = add_clusters_err(&store, &["c64"], "big");
        assert!(matches!(err, StoreError::TooManyClusters { .. }), "{err:?}");
        assert_eq!(
            tonic::Status::from(err).message(),
            "Too many clusters in federation"
        );
        let all = store
            .list_clusters(&ClusterFilter {
                with_deleted: true,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(all.len(), 63, "the failed add left nothing behind");
        // Moving a 64th existing cluster in fails the same way.
        add_clusters(&store, &["x"], None);
        assert!(matches!(
            set_federation(&store, &["x"], "big", None),
            Err(StoreError::TooManyClusters { .. })
        ));
    }

    pub fn deleting_a_federation_releases_its_clusters(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "fed", &[]);
        add_clusters(&store, &["a", "b"], Some("fed"));
        let change = store
            .delete_federations(&s(&["fed"]), Apply::Commit, T1)
            .unwrap();
        assert_eq!(change.names, s(&["fed"]));
        for name in ["a", "b"] {
            let c = cluster(&store, name);
            assert_eq!(
                (c.federation.as_str(), c.fed_id, c.fed_state, c.deleted),
                ("", 0, 0, false)
            );
        }
        assert!(
            store
                .list_federations(&FederationFilter::default())
                .unwrap()
                .is_empty()
        );
        let deleted = store
            .list_federations(&FederationFilter {
                with_deleted: true,
                ..Default::default()
            })
            .unwrap();
        assert_eq!((deleted.len(), deleted[0].deleted), (1, true));
        // Re-adding revives it, empty.
        add_federation(&store, "fed", &["+a"]);
        assert_eq!(members(&store, "fed"), pairs(&[("a", 1)]));
    }

    pub fn federation_cluster_lists_set_exactly_add_and_remove(db: &TestDb) {
        let store = db.open();
        add_clusters(&store, &["a", "b", "c", "d"], None);
        add_federation(&store, "fed", &["a", "b"]);
        assert_eq!(members(&store, "fed"), pairs(&[("a", 1), ("b", 2)]));
        assert_eq!(
            modify_fed(&store, "fed", &["+c"]).unwrap().names,
            s(&["fed"])
        );
        assert_eq!(
            members(&store, "fed"),
            pairs(&[("a", 1), ("b", 2), ("c", 3)])
        );
        modify_fed(&store, "fed", &["-a"]).unwrap();
        assert_eq!(members(&store, "fed"), pairs(&[("b", 2), ("c", 3)]));
        assert_eq!(cluster(&store, "a").fed_state, 0);
        // Set exactly: d joins (lowest free id 1), b stays with its id, c is released.
        modify_fed(&store, "fed", &["b", "d"]).unwrap();
        assert_eq!(members(&store, "fed"), pairs(&[("d", 1), ("b", 2)]));
        assert_eq!(cluster(&store, "c").federation, "");
        // Clearing with an empty set.
        modify_fed(&store, "fed", &[""]).unwrap();
        assert!(members(&store, "fed").is_empty());
        let mixed = modify_fed(&store, "fed", &["a", "+b"]).unwrap_err();
        assert!(matches!(mixed, StoreError::MixedListModes), "{mixed:?}");
        // A cluster moves from another federation.
        add_federation(&store, "other", &["a"]);
        modify_fed(&store, "fed", &["+a"]).unwrap();
        assert_eq!(members(&store, "fed"), pairs(&[("a", 1)]));
        assert!(members(&store, "other").is_empty());
    }

    pub fn several_federations_with_clusters_is_refused(db: &TestDb) {
        let store = db.open();
        add_clusters(&store, &["a"], None);
        let req = AddFederations {
            names: s(&["f1", "f2"]),
            clusters: s(&["a"]),
        };
        let err = store.add_federations(&req, Apply::Commit, T1).unwrap_err();
        assert!(matches!(err, StoreError::MultipleAssignment));
        assert_eq!(
            tonic::Status::from(err).message(),
            "Clusters can only be assigned to one federation"
        );
        assert!(
            store
                .list_federations(&FederationFilter::default())
                .unwrap()
                .is_empty()
        );
        add_federation(&store, "f1", &[]);
        add_federation(&store, "f2", &[]);
        let modify = ModifyFederations {
            names: s(&["f1", "f2"]),
            clusters: s(&["+a"]),
        };
        let err = store
            .modify_federations(&modify, Apply::Commit, T1)
            .unwrap_err();
        assert!(matches!(err, StoreError::MultipleAssignment));
        // Without cluster lists several federations may be added at once.
        let plain = AddFederations {
            names: s(&["f3", "f4"]),
            clusters: vec![],
        };
        assert_eq!(
            store
                .add_federations(&plain, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["f3", "f4"])
        );
    }

    pub fn a_modify_that_changes_nothing_is_refused(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "fed", &[]);
        add_clusters(&store, &["a"], Some("fed"));
        let before = cluster(&store, "a");
        let err = set_federation(&store, &["a"], "fed", None).unwrap_err();
        assert!(matches!(err, StoreError::NothingToChange));
        assert_eq!(tonic::Status::from(err).message(), "Nothing to change");
        assert!(matches!(
            modify_fed(&store, "fed", &["+a"]),
            Err(StoreError::NothingToChange)
        ));
        assert!(matches!(
            modify_fed(&store, "fed", &["-b_not_member"]),
            Err(StoreError::UnknownCluster { .. })
        ));
        add_clusters(&store, &["b"], None);
        assert!(matches!(
            modify_fed(&store, "fed", &["-b"]),
            Err(StoreError::NothingToChange)
        ));
        let none = ModifyClusters {
            names: s(&["a"]),
            ..Default::default()
        };
        assert!(matches!(
            store.modify_clusters(&none, Apply::Commit, T1),
            Err(StoreError::NothingToChange)
        ));
        assert_eq!(cluster(&store, "a"), before, "mod_time untouched");
    }

    pub fn a_dry_run_changes_nothing(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "fed", &[]);
        let req = AddClusters {
            names: s(&["a", "b"]),
            federation: Some("fed".into()),
            ..Default::default()
        };
        let preview = store.add_clusters(&req, Apply::DryRun, T1).unwrap();
        assert_eq!(
            (preview.committed, preview.names.clone()),
            (false, s(&["a", "b"]))
        );
        assert!(
            store
                .list_clusters(&ClusterFilter {
                    with_deleted: true,
                    ..Default::default()
                })
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            store
                .list_associations(&AssociationFilter::default())
                .unwrap()
                .len(),
            0
        );
        let done = store.add_clusters(&req, Apply::Commit, T1).unwrap();
        assert!(done.committed);
        let preview = store
            .delete_federations(&s(&["fed"]), Apply::DryRun, T1)
            .unwrap();
        assert_eq!(preview.names, s(&["fed"]));
        assert_eq!(members(&store, "fed"), pairs(&[("a", 1), ("b", 2)]));
        let accounts = AddAccounts {
            names: s(&["acct"]),
            ..Default::default()
        };
        store.add_accounts(&accounts, Apply::DryRun, T1).unwrap();
        assert_eq!(
            store
                .list_accounts(&AccountFilter::default())
                .unwrap()
                .len(),
            1
        );
    }

    pub fn a_failing_request_changes_nothing(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "fed", &[]);
        add_clusters(&store, &["b"], None);
        // "a" is new, "b" exists: the whole add fails and "a" is not there afterwards.
        let req = AddClusters {
            names: s(&["a", "b"]),
            federation: Some("fed".into()),
            ..Default::default()
        };
        assert!(matches!(
            store.add_clusters(&req, Apply::Commit, T1),
            Err(StoreError::AlreadyExists { .. })
        ));
        let all = store
            .list_clusters(&ClusterFilter {
                with_deleted: true,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(
            all.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            vec!["b"]
        );
        assert!(members(&store, "fed").is_empty());
        // A set-exactly edit naming an unknown cluster leaves the old members in place.
        add_clusters(&store, &["c"], Some("fed"));
        assert!(modify_fed(&store, "fed", &["b", "nope"]).is_err());
        assert_eq!(members(&store, "fed"), pairs(&[("c", 1)]));
    }
}
