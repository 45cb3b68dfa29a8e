//! Cluster rules of the store (add, delete, features, input checks), on every backend.

use crate::common;

per_backend!(
    root_rows_exist_and_clusters_get_root_associations,
    deleting_a_cluster_leaves_its_federation_and_re_adding_revives,
    features_set_add_remove,
    duplicates_unknowns_and_invalid_input_are_refused,
    an_unknown_stored_fed_state_does_not_break_listing,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::FedState;

    use super::common::fed::*;
    use super::common::{T1, TestDb, s};

    const ACTIVE: u32 = FedState::Active.stored();

    fn edit_features(store: &Store, edit: ListEdit) -> Vec<String> {
        let req = ModifyClusters {
            names: s(&["c"]),
            features: Some(edit),
            ..Default::default()
        };
        store.modify_clusters(&req, Apply::Commit, T1 + 1).unwrap();
        cluster(store, "c").features
    }

    pub fn root_rows_exist_and_clusters_get_root_associations(db: &TestDb) {
        let store = db.open();
        let accounts = store.list_accounts(&AccountFilter::default()).unwrap();
        assert_eq!(accounts.len(), 1);
        assert_eq!(
            (
                accounts[0].name.as_str(),
                accounts[0].description.as_str(),
                accounts[0].organization.as_str()
            ),
            ("root", "default root account", "root")
        );
        let users = store.list_users(&UserFilter::default()).unwrap();
        assert_eq!(users.len(), 1);
        assert_eq!(
            (users[0].name.as_str(), users[0].default_account.as_str()),
            ("root", "root")
        );
        assert_eq!(users[0].admin_level, AdminLevel::Administrator);
        assert_eq!(
            store.admin_level("root").unwrap(),
            Some(AdminLevel::Administrator)
        );
        assert_eq!(store.admin_level("nobody").unwrap(), None);

        add_clusters(&store, &["c1"], None);
        let assocs = store
            .list_associations(&AssociationFilter::default())
            .unwrap();
        let keys: Vec<_> = assocs
            .iter()
            .map(|a| (a.cluster.as_str(), a.account.as_str(), a.user.as_str()))
            .collect();
        assert_eq!(keys, vec![("c1", "root", ""), ("c1", "root", "root")]);
        let c1 = cluster(&store, "c1");
        assert_eq!(
            (c1.federation.as_str(), c1.fed_id, c1.fed_state),
            ("", 0, 0)
        );
        assert_eq!((c1.creation_time, c1.mod_time), (T1, T1));
    }

    pub fn deleting_a_cluster_leaves_its_federation_and_re_adding_revives(db: &TestDb) {
        let store = db.open();
        add_federation(&store, "fed", &[]);
        add_clusters(&store, &["a", "b"], Some("fed"));
        let req = DeleteClusters {
            names: s(&["a"]),
            ..Default::default()
        };
        assert_eq!(
            store
                .delete_clusters(&req, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["a"])
        );
        let a = cluster(&store, "a");
        assert!(a.deleted);
        assert_eq!((a.federation.as_str(), a.fed_id), ("", 0));
        assert_eq!(members(&store, "fed"), pairs(&[("b", 2)]));
        assert!(
            store
                .list_associations(&AssociationFilter {
                    clusters: s(&["a"]),
                    ..Default::default()
                })
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .list_clusters(&ClusterFilter::default())
                .unwrap()
                .iter()
                .all(|c| c.name != "a")
        );
        add_clusters(&store, &["a"], Some("fed"));
        assert_eq!(members(&store, "fed"), pairs(&[("a", 1), ("b", 2)]));
        assert_eq!(
            store
                .list_associations(&AssociationFilter {
                    clusters: s(&["a"]),
                    ..Default::default()
                })
                .unwrap()
                .len(),
            2
        );
        // Deleting by federation.
        let by_fed = DeleteClusters {
            where_federations: s(&["fed"]),
            ..Default::default()
        };
        assert_eq!(
            store
                .delete_clusters(&by_fed, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["a", "b"])
        );
        let none = store.delete_clusters(&by_fed, Apply::Commit, T1).unwrap();
        assert!(none.nothing_changed());
        let no_cond = store
            .delete_clusters(&DeleteClusters::default(), Apply::Commit, T1)
            .unwrap_err();
        assert!(matches!(no_cond, StoreError::NoConditions));
    }

    pub fn features_set_add_remove(db: &TestDb) {
        let store = db.open();
        let req = AddClusters {
            names: s(&["c"]),
            features: s(&["a", "b"]),
            ..Default::default()
        };
        store.add_clusters(&req, Apply::Commit, T1).unwrap();
        assert_eq!(cluster(&store, "c").features, s(&["a", "b"]));
        assert_eq!(
            edit_features(&store, ListEdit::Add(s(&["b", "c"]))),
            s(&["a", "b", "c"])
        );
        assert_eq!(
            cluster(&store, "c").mod_time,
            T1 + 1,
            "a real change updates mod_time"
        );
        assert_eq!(
            edit_features(&store, ListEdit::Remove(s(&["a"]))),
            s(&["b", "c"])
        );
        assert_eq!(edit_features(&store, ListEdit::Set(s(&["x"]))), s(&["x"]));
        assert_eq!(
            edit_features(&store, ListEdit::Set(vec![])),
            Vec::<String>::new()
        );
    }

    pub fn duplicates_unknowns_and_invalid_input_are_refused(db: &TestDb) {
        let store = db.open();
        add_clusters(&store, &["a"], None);
        add_federation(&store, "fed", &[]);
        let dup = store.add_clusters(
            &AddClusters {
                names: s(&["a"]),
                ..Default::default()
            },
            Apply::Commit,
            T1,
        );
        assert!(
            matches!(
                dup,
                Err(StoreError::AlreadyExists {
                    kind: ObjectKind::Cluster,
                    ..
                })
            ),
            "{dup:?}"
        );
        let dup = store.add_federations(
            &AddFederations {
                names: s(&["fed"]),
                clusters: vec![],
            },
            Apply::Commit,
            T1,
        );
        assert!(matches!(
            dup,
            Err(StoreError::AlreadyExists {
                kind: ObjectKind::Federation,
                ..
            })
        ));
        assert!(matches!(
            add_clusters_err(&store, &["b"], "nofed"),
            StoreError::UnknownFederation { name } if name == "nofed"
        ));
        assert!(
            matches!(set_federation(&store, &["zz"], "fed", None), Err(StoreError::UnknownCluster { name }) if name == "zz")
        );
        assert!(matches!(
            modify_fed(&store, "fed", &["+zz"]),
            Err(StoreError::UnknownCluster { .. })
        ));
        assert!(matches!(
            modify_fed(&store, "nofed", &["+a"]),
            Err(StoreError::UnknownFederation { .. })
        ));
        assert!(matches!(
            store.delete_federations(&s(&["nofed"]), Apply::Commit, T1),
            Err(StoreError::UnknownFederation { .. })
        ));
        let bad_state = set_federation(&store, &["a"], "fed", Some(3)).unwrap_err();
        assert!(matches!(
            bad_state,
            StoreError::InvalidFedState { value: 3 }
        ));
        assert!(matches!(
            set_federation(&store, &["a"], "fed", Some(FedState::Drained.stored())),
            Err(StoreError::InvalidFedState { .. })
        ));
        let outside = ModifyClusters {
            names: s(&["a"]),
            fed_state: Some(ACTIVE),
            ..Default::default()
        };
        assert!(matches!(
            store.modify_clusters(&outside, Apply::Commit, T1),
            Err(StoreError::NotInFederation { .. })
        ));
        for bad in ["", "a,b", "+x", "has space"] {
            let r = store.add_clusters(
                &AddClusters {
                    names: s(&[bad]),
                    ..Default::default()
                },
                Apply::Commit,
                T1,
            );
            assert!(
                matches!(r, Err(StoreError::InvalidName { .. })),
                "{bad:?}: {r:?}"
            );
        }
        assert!(matches!(
            store.add_clusters(&AddClusters::default(), Apply::Commit, T1),
            Err(StoreError::NoNames { .. })
        ));
        assert_eq!(
            cluster(&store, "a").federation,
            "",
            "nothing was changed by the failures"
        );
    }

    pub fn an_unknown_stored_fed_state_does_not_break_listing(db: &TestDb) {
        use diesel::RunQueryDsl;
        let store = db.open();
        add_clusters(&store, &["a"], None);
        let mut raw = conn::open(&db.url).unwrap();
        diesel::sql_query("UPDATE clusters SET fed_state = 3, control_port = -5")
            .execute(&mut raw)
            .unwrap();
        let a = cluster(&store, "a");
        assert_eq!((a.fed_state, a.control_port), (3, 0));
        assert_eq!(FedState::name_of_stored(a.fed_state), "?");
        assert_eq!(a.creation_time, T1);
    }
}
