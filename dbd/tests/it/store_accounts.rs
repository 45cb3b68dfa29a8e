//! Account, user and association rules of the store, on every backend.

use crate::common;

per_backend!(
    accounts_get_associations_on_every_cluster,
    account_modify_and_delete_follow_the_tree,
    users_get_associations_and_a_default_account,
    user_modify_and_delete,
);

mod cases {
    use sluice_dbd::store::*;

    use super::common::{T1, TestDb, s};

    fn setup(db: &TestDb) -> Store {
        let store = db.open();
        let req = AddClusters {
            names: s(&["c1", "c2"]),
            ..Default::default()
        };
        store.add_clusters(&req, Apply::Commit, T1).unwrap();
        store
    }

    fn add_account(
        store: &Store,
        name: &str,
        parent: Option<&str>,
        clusters: &[&str],
    ) -> Result<Change, StoreError> {
        let req = AddAccounts {
            names: s(&[name]),
            parent: parent.map(str::to_string),
            clusters: s(clusters),
            ..Default::default()
        };
        store.add_accounts(&req, Apply::Commit, T1)
    }

    /// (cluster, account, user, parent) of the live associations matching the filter.
    fn assocs(
        store: &Store,
        accounts: &[&str],
        users: &[&str],
    ) -> Vec<(String, String, String, String)> {
        let filter = AssociationFilter {
            accounts: s(accounts),
            users: s(users),
            ..Default::default()
        };
        store
            .list_associations(&filter)
            .unwrap()
            .into_iter()
            .map(|a| (a.cluster, a.account, a.user, a.parent_account))
            .collect()
    }

    fn t(c: &str, a: &str, u: &str, p: &str) -> (String, String, String, String) {
        (c.into(), a.into(), u.into(), p.into())
    }

    fn account(store: &Store, name: &str) -> Account {
        let filter = AccountFilter {
            names: s(&[name]),
            with_deleted: true,
            ..Default::default()
        };
        store
            .list_accounts(&filter)
            .unwrap()
            .pop()
            .expect("account listed")
    }

    fn user(store: &Store, name: &str) -> User {
        let filter = UserFilter {
            names: s(&[name]),
            with_deleted: true,
            ..Default::default()
        };
        store
            .list_users(&filter)
            .unwrap()
            .pop()
            .expect("user listed")
    }

    pub fn accounts_get_associations_on_every_cluster(db: &TestDb) {
        let store = setup(db);
        assert_eq!(
            add_account(&store, "phys", None, &[]).unwrap().names,
            s(&["phys"])
        );
        let phys = account(&store, "phys");
        assert_eq!(
            (
                phys.description.as_str(),
                phys.organization.as_str(),
                phys.parent.as_str()
            ),
            ("phys", "phys", "root")
        );
        assert_eq!(
            assocs(&store, &["phys"], &[]),
            vec![t("c1", "phys", "", "root"), t("c2", "phys", "", "root")]
        );
        // A child on one cluster takes its organization from its parent.
        add_account(&store, "astro", Some("phys"), &["c2"]).unwrap();
        assert_eq!(account(&store, "astro").organization, "phys");
        assert_eq!(
            assocs(&store, &["astro"], &[]),
            vec![t("c2", "astro", "", "phys")]
        );
        // Adding it again on the other cluster creates only the missing association.
        add_account(&store, "astro", Some("phys"), &["c1"]).unwrap();
        assert_eq!(assocs(&store, &["astro"], &[]).len(), 2);
        let dup = add_account(&store, "astro", Some("phys"), &[]).unwrap_err();
        assert!(
            matches!(
                dup,
                StoreError::AlreadyExists {
                    kind: ObjectKind::Account,
                    ..
                }
            ),
            "{dup:?}"
        );
        assert!(matches!(
            add_account(&store, "x", Some("nope"), &[]),
            Err(StoreError::UnknownAccount { .. })
        ));
        assert!(matches!(
            add_account(&store, "x", None, &["nope"]),
            Err(StoreError::UnknownCluster { .. })
        ));
        add_account(&store, "chem", None, &["c1"]).unwrap();
        let err = add_account(&store, "organic", Some("chem"), &["c2"]).unwrap_err();
        assert!(
            matches!(err, StoreError::AccountNotOnCluster { .. }),
            "{err:?}"
        );
        assert!(
            store
                .list_accounts(&AccountFilter {
                    names: s(&["organic", "x"]),
                    ..Default::default()
                })
                .unwrap()
                .is_empty()
        );
    }

    pub fn account_modify_and_delete_follow_the_tree(db: &TestDb) {
        let store = setup(db);
        add_account(&store, "a", None, &[]).unwrap();
        add_account(&store, "b", Some("a"), &[]).unwrap();
        let describe = ModifyAccounts {
            names: s(&["a"]),
            description: Some("Dept A".into()),
            ..Default::default()
        };
        assert_eq!(
            store
                .modify_accounts(&describe, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["a"])
        );
        assert_eq!(account(&store, "a").description, "Dept A");
        assert!(matches!(
            store.modify_accounts(&describe, Apply::Commit, T1),
            Err(StoreError::NothingToChange)
        ));
        let by_desc = ModifyAccounts {
            where_description: Some("Dept A".into()),
            organization: Some("org".into()),
            ..Default::default()
        };
        assert_eq!(
            store
                .modify_accounts(&by_desc, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["a"])
        );
        // Moving b under root re-parents its associations; a loop is refused.
        let loop_req = ModifyAccounts {
            names: s(&["a"]),
            parent: Some("b".into()),
            ..Default::default()
        };
        assert!(matches!(
            store.modify_accounts(&loop_req, Apply::Commit, T1),
            Err(StoreError::ParentLoop { .. })
        ));
        let root_req = ModifyAccounts {
            names: s(&["root"]),
            parent: Some("a".into()),
            ..Default::default()
        };
        assert!(matches!(
            store.modify_accounts(&root_req, Apply::Commit, T1),
            Err(StoreError::RootAccount)
        ));
        let move_b = ModifyAccounts {
            names: s(&["b"]),
            parent: Some("root".into()),
            ..Default::default()
        };
        store.modify_accounts(&move_b, Apply::Commit, T1).unwrap();
        assert_eq!(account(&store, "b").parent, "root");
        assert_eq!(
            assocs(&store, &["b"], &[]),
            vec![t("c1", "b", "", "root"), t("c2", "b", "", "root")]
        );
        let back = ModifyAccounts {
            names: s(&["b"]),
            parent: Some("a".into()),
            ..Default::default()
        };
        store.modify_accounts(&back, Apply::Commit, T1).unwrap();
        // Deleting a parent with a live child is refused; deleting both works.
        assert!(matches!(
            store.delete_accounts(&s(&["a"]), Apply::Commit, T1),
            Err(StoreError::AccountHasChildren { .. })
        ));
        assert!(matches!(
            store.delete_accounts(&s(&["root"]), Apply::Commit, T1),
            Err(StoreError::RootAccount)
        ));
        assert!(matches!(
            store.delete_accounts(&s(&["zz"]), Apply::Commit, T1),
            Err(StoreError::UnknownAccount { .. })
        ));
        assert_eq!(
            store
                .delete_accounts(&s(&["b", "a"]), Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["b", "a"])
        );
        assert!(account(&store, "a").deleted);
        assert!(assocs(&store, &["a", "b"], &[]).is_empty());
        // Re-adding revives the account and its associations.
        add_account(&store, "a", None, &["c1"]).unwrap();
        assert!(!account(&store, "a").deleted);
        assert_eq!(assocs(&store, &["a"], &[]), vec![t("c1", "a", "", "root")]);
    }

    fn add_user(
        store: &Store,
        name: &str,
        accounts: &[&str],
        default: Option<&str>,
    ) -> Result<Change, StoreError> {
        let req = AddUsers {
            names: s(&[name]),
            accounts: s(accounts),
            default_account: default.map(str::to_string),
            ..Default::default()
        };
        store.add_users(&req, Apply::Commit, T1)
    }

    pub fn users_get_associations_and_a_default_account(db: &TestDb) {
        let store = setup(db);
        add_account(&store, "a", None, &[]).unwrap();
        add_account(&store, "b", None, &["c1"]).unwrap();
        assert_eq!(
            add_user(&store, "alice", &["a", "b"], None).unwrap().names,
            s(&["alice"])
        );
        let alice = user(&store, "alice");
        assert_eq!(
            (alice.default_account.as_str(), alice.admin_level),
            ("a", AdminLevel::None)
        );
        // b is only on c1, so alice gets (c1,a), (c1,b), (c2,a).
        assert_eq!(
            assocs(&store, &[], &["alice"]),
            vec![
                t("c1", "a", "alice", ""),
                t("c1", "b", "alice", ""),
                t("c2", "a", "alice", "")
            ]
        );
        assert!(matches!(
            add_user(&store, "alice", &["a"], None),
            Err(StoreError::AlreadyExists { .. })
        ));
        assert!(matches!(
            add_user(&store, "bob", &[], None),
            Err(StoreError::NoDefaultAccount)
        ));
        assert!(matches!(
            add_user(&store, "bob", &["nope"], None),
            Err(StoreError::UnknownAccount { .. })
        ));
        let explicit = AddUsers {
            names: s(&["bob"]),
            accounts: s(&["b"]),
            clusters: s(&["c2"]),
            ..Default::default()
        };
        assert!(matches!(
            store.add_users(&explicit, Apply::Commit, T1),
            Err(StoreError::AccountNotOnCluster { .. })
        ));
        // The default account joins the account list.
        let admin = AddUsers {
            names: s(&["carol"]),
            default_account: Some("b".into()),
            admin_level: Some(AdminLevel::Operator),
            ..Default::default()
        };
        store.add_users(&admin, Apply::Commit, T1).unwrap();
        assert_eq!(
            assocs(&store, &[], &["carol"]),
            vec![t("c1", "b", "carol", "")]
        );
        assert_eq!(user(&store, "carol").admin_level, AdminLevel::Operator);
        assert!(user_list(&store, &[AdminLevel::Operator]).contains(&"carol".to_string()));
        assert!(
            store
                .list_users(&UserFilter {
                    names: s(&["bob"]),
                    ..Default::default()
                })
                .unwrap()
                .is_empty()
        );
    }

    fn user_list(store: &Store, levels: &[AdminLevel]) -> Vec<String> {
        let filter = UserFilter {
            admin_levels: levels.to_vec(),
            ..Default::default()
        };
        store
            .list_users(&filter)
            .unwrap()
            .into_iter()
            .map(|u| u.name)
            .collect()
    }

    pub fn user_modify_and_delete(db: &TestDb) {
        let store = setup(db);
        add_account(&store, "a", None, &[]).unwrap();
        add_account(&store, "b", None, &[]).unwrap();
        add_account(&store, "c", None, &[]).unwrap();
        add_user(&store, "alice", &["a", "b"], None).unwrap();
        add_user(&store, "dave", &["c"], None).unwrap();
        let set_default = ModifyUsers {
            names: s(&["alice"]),
            default_account: Some("b".into()),
            ..Default::default()
        };
        assert_eq!(
            store
                .modify_users(&set_default, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["alice"])
        );
        assert_eq!(user(&store, "alice").default_account, "b");
        assert!(matches!(
            store.modify_users(&set_default, Apply::Commit, T1),
            Err(StoreError::NothingToChange)
        ));
        let no_assoc = ModifyUsers {
            names: s(&["alice"]),
            default_account: Some("c".into()),
            ..Default::default()
        };
        assert!(matches!(
            store.modify_users(&no_assoc, Apply::Commit, T1),
            Err(StoreError::NoAssociation { .. })
        ));
        let unknown = ModifyUsers {
            names: s(&["zed"]),
            admin_level: Some(AdminLevel::Operator),
            ..Default::default()
        };
        assert!(matches!(
            store.modify_users(&unknown, Apply::Commit, T1),
            Err(StoreError::UnknownUser { .. })
        ));
        // Conditions on accounts select only users associated with them.
        let promote = ModifyUsers {
            where_accounts: s(&["c"]),
            admin_level: Some(AdminLevel::Administrator),
            ..Default::default()
        };
        assert_eq!(
            store
                .modify_users(&promote, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["dave"])
        );
        assert_eq!(
            store.admin_level("dave").unwrap(),
            Some(AdminLevel::Administrator)
        );
        // Removing the default account's associations while others remain is refused.
        let drop_b = DeleteUsers {
            names: s(&["alice"]),
            accounts: s(&["b"]),
        };
        assert!(matches!(
            store.delete_users(&drop_b, Apply::Commit, T1),
            Err(StoreError::DefaultAccountInUse { .. })
        ));
        let drop_a = DeleteUsers {
            names: s(&["alice"]),
            accounts: s(&["a"]),
        };
        assert_eq!(
            store
                .delete_users(&drop_a, Apply::Commit, T1)
                .unwrap()
                .names,
            s(&["alice"])
        );
        assert_eq!(
            assocs(&store, &[], &["alice"]),
            vec![t("c1", "b", "alice", ""), t("c2", "b", "alice", "")]
        );
        // An account that is some user's default cannot be deleted.
        assert!(matches!(
            store.delete_accounts(&s(&["b"]), Apply::Commit, T1),
            Err(StoreError::DefaultAccountInUse { .. })
        ));
        let whole = DeleteUsers {
            names: s(&["alice"]),
            accounts: vec![],
        };
        store.delete_users(&whole, Apply::Commit, T1).unwrap();
        assert!(user(&store, "alice").deleted);
        assert!(assocs(&store, &[], &["alice"]).is_empty());
        assert_eq!(store.admin_level("alice").unwrap(), None);
        assert!(matches!(
            store.delete_users(&whole, Apply::Commit, T1),
            Err(StoreError::UnknownUser { .. })
        ));
        assert!(matches!(
            store.delete_users(&DeleteUsers::default(), Apply::Commit, T1),
            Err(StoreError::NoConditions)
        ));
        // Re-adding revives alice with fresh associations.
        add_user(&store, "alice", &["c"], None).unwrap();
        assert_eq!(user(&store, "alice").default_account, "c");
        assert_eq!(assocs(&store, &[], &["alice"]).len(), 2);
        // Deleting an account drops its users' associations.
        let move_dave = ModifyUsers {
            names: s(&["dave"]),
            admin_level: Some(AdminLevel::None),
            ..Default::default()
        };
        store.modify_users(&move_dave, Apply::Commit, T1).unwrap();
        store
            .delete_accounts(&s(&["a"]), Apply::Commit, T1)
            .unwrap();
        assert!(assocs(&store, &["a"], &[]).is_empty());
    }
}
