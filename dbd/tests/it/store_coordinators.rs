//! Coordinator grants of the store (`sacctmgr add|delete coordinator`), on every backend: a
//! grant covers the account and everything below it, also accounts added later; revoking works
//! on direct grants only; deleting a user or an account ends its grants.

use crate::common;

per_backend!(
    a_grant_covers_the_account_and_all_below_it,
    revoking_takes_direct_grants_only_and_deletions_end_grants,
);

mod cases {
    use sluice_dbd::store::*;

    use super::common::{T1, TestDb, s};

    /// A store with cluster c1, accounts top > mid > leaf and other, users u1 (in top) and u2
    /// (in other).
    fn setup(db: &TestDb) -> Store {
        let store = db.open();
        let req = AddClusters {
            names: s(&["c1"]),
            ..Default::default()
        };
        store.add_clusters(&req, Apply::Commit, T1).unwrap();
        for (name, parent) in [
            ("top", None),
            ("mid", Some("top")),
            ("leaf", Some("mid")),
            ("other", None),
        ] {
            let req = AddAccounts {
                names: s(&[name]),
                parent: parent.map(str::to_string),
                ..Default::default()
            };
            store.add_accounts(&req, Apply::Commit, T1).unwrap();
        }
        for (user, account) in [("u1", "top"), ("u2", "other")] {
            let req = AddUsers {
                names: s(&[user]),
                accounts: s(&[account]),
                ..Default::default()
            };
            store.add_users(&req, Apply::Commit, T1).unwrap();
        }
        store
    }

    fn grant(store: &Store, users: &[&str], accounts: &[&str]) -> Result<Change, StoreError> {
        let req = Coordinators {
            names: s(users),
            accounts: s(accounts),
        };
        store.add_coordinators(&req, Apply::Commit, T1)
    }

    fn revoke(store: &Store, users: &[&str], accounts: &[&str]) -> Vec<(String, String)> {
        let req = Coordinators {
            names: s(users),
            accounts: s(accounts),
        };
        store
            .delete_coordinators(&req, Apply::Commit, T1)
            .unwrap()
            .revoked
    }

    fn coord_accounts(store: &Store, user: &str) -> Vec<String> {
        let filter = UserFilter {
            names: s(&[user]),
            ..Default::default()
        };
        store.list_users(&filter).unwrap()[0].coord_accounts.clone()
    }

    fn coordinators_of(store: &Store, account: &str) -> Vec<String> {
        let filter = AccountFilter {
            names: s(&[account]),
            ..Default::default()
        };
        store.list_accounts(&filter).unwrap()[0]
            .coordinators
            .clone()
    }

    fn pair(u: &str, a: &str) -> (String, String) {
        (u.into(), a.into())
    }

    pub fn a_grant_covers_the_account_and_all_below_it(db: &TestDb) {
        let store = setup(db);
        assert_eq!(grant(&store, &["u1"], &["mid"]).unwrap().names, ["u1"]);
        assert_eq!(coord_accounts(&store, "u1"), ["leaf", "mid"]);
        assert!(coord_accounts(&store, "u2").is_empty());
        assert_eq!(coordinators_of(&store, "leaf"), ["u1"]);
        assert!(coordinators_of(&store, "top").is_empty());
        // A sub-account added later is covered too; granting again is not an error.
        let req = AddAccounts {
            names: s(&["late"]),
            parent: Some("mid".into()),
            ..Default::default()
        };
        store.add_accounts(&req, Apply::Commit, T1).unwrap();
        grant(&store, &["u1"], &["mid"]).unwrap();
        assert_eq!(coord_accounts(&store, "u1"), ["late", "leaf", "mid"]);
        let realms = store.coordinator_realms().unwrap();
        assert_eq!(realms.len(), 1);
        // A dry run changes nothing.
        let req = Coordinators {
            names: s(&["u2"]),
            accounts: s(&["top"]),
        };
        store.add_coordinators(&req, Apply::DryRun, T1).unwrap();
        assert!(coord_accounts(&store, "u2").is_empty());
        // Names that do not exist, or missing lists, are refused and change nothing.
        assert!(matches!(
            grant(&store, &["u2"], &["nosuch"]),
            Err(StoreError::CoordUnknownAccount { name }) if name == "nosuch"
        ));
        assert!(matches!(
            grant(&store, &["ghost"], &["top"]),
            Err(StoreError::CoordUnknownUser { name }) if name == "ghost"
        ));
        assert!(matches!(
            grant(&store, &["u2"], &[]),
            Err(StoreError::NoCoordAccounts)
        ));
        assert!(matches!(
            grant(&store, &[], &["top"]),
            Err(StoreError::NoCoordUsers)
        ));
        assert!(coord_accounts(&store, "u2").is_empty());
    }

    pub fn revoking_takes_direct_grants_only_and_deletions_end_grants(db: &TestDb) {
        let store = setup(db);
        grant(&store, &["u1", "u2"], &["mid", "other"]).unwrap();
        // `leaf` is coordinated through `mid` only: nothing to revoke there.
        assert!(revoke(&store, &["u1"], &["leaf"]).is_empty());
        assert_eq!(
            revoke(&store, &[], &["other"]),
            [pair("u1", "other"), pair("u2", "other")]
        );
        assert_eq!(coord_accounts(&store, "u2"), ["leaf", "mid"]);
        assert_eq!(revoke(&store, &["u2"], &[]), [pair("u2", "mid")]);
        assert!(coord_accounts(&store, "u2").is_empty());
        let req = Coordinators::default();
        assert!(matches!(
            store.delete_coordinators(&req, Apply::Commit, T1),
            Err(StoreError::NoCoordConditions)
        ));
        // Granted again after a revoke.
        grant(&store, &["u2"], &["other"]).unwrap();
        assert_eq!(coord_accounts(&store, "u2"), ["other"]);
        // Deleting the account ends grants over it; deleting the user ends the user's.
        store
            .delete_accounts(&s(&["leaf"]), Apply::Commit, T1)
            .unwrap();
        assert_eq!(coord_accounts(&store, "u1"), ["mid"]);
        let req = DeleteUsers {
            names: s(&["u1"]),
            ..Default::default()
        };
        store.delete_users(&req, Apply::Commit, T1).unwrap();
        let realms = store.coordinator_realms().unwrap();
        assert_eq!(realms.keys().collect::<Vec<_>>(), ["u2"]);
    }
}
