//! Association limits of the store (`sacctmgr modify user|account ... set MaxJobs=...`), on
//! every backend: set, cleared with `-1`, listed as in force (Max* inherited down the account
//! tree, Grp* only where set), previews change nothing, unknown names are refused.

use crate::common;

per_backend!(
    limits_are_set_cleared_and_listed,
    max_limits_are_inherited_and_group_limits_are_not,
    a_preview_changes_nothing_and_unknown_names_are_refused,
    tres_minutes_are_stored_per_association_and_not_inherited,
    add_gives_the_new_associations_their_limits,
    fairshare_and_limits_change_in_one_modify,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::assoc_limits::{AssocLimitsEdit, Tres, TresKind};
    use sluice_vocab::fairshare::Shares;

    use super::common::{T1, TestDb, s};

    /// A store with cluster c1, accounts top > mid, and users u1 in mid, u2 in top.
    fn setup(db: &TestDb) -> Store {
        let store = db.open();
        let req = AddClusters {
            names: s(&["c1"]),
            ..Default::default()
        };
        store.add_clusters(&req, Apply::Commit, T1).unwrap();
        for (name, parent) in [("top", None), ("mid", Some("top"))] {
            let req = AddAccounts {
                names: s(&[name]),
                parent: parent.map(str::to_string),
                ..Default::default()
            };
            store.add_accounts(&req, Apply::Commit, T1).unwrap();
        }
        for (user, account) in [("u1", "mid"), ("u2", "top")] {
            let req = AddUsers {
                names: s(&[user]),
                accounts: s(&[account]),
                ..Default::default()
            };
            store.add_users(&req, Apply::Commit, T1).unwrap();
        }
        store
    }

    fn set_account(store: &Store, account: &str, set: AssocLimitsEdit) -> Vec<String> {
        let req = ModifyAssocLimits {
            accounts: s(&[account]),
            set,
            ..Default::default()
        };
        store
            .modify_assoc_limits(&req, Apply::Commit, T1)
            .unwrap()
            .names
    }

    fn set_user(store: &Store, user: &str, set: AssocLimitsEdit) -> Vec<String> {
        let req = ModifyAssocLimits {
            user_associations: true,
            users: s(&[user]),
            set,
            ..Default::default()
        };
        store
            .modify_assoc_limits(&req, Apply::Commit, T1)
            .unwrap()
            .names
    }

    fn assoc(store: &Store, account: &str, user: &str) -> Association {
        let filter = AssociationFilter {
            accounts: s(&[account]),
            ..Default::default()
        };
        store
            .list_associations(&filter)
            .unwrap()
            .into_iter()
            .find(|a| a.user == user)
            .unwrap()
    }

    pub fn limits_are_set_cleared_and_listed(db: &TestDb) {
        let store = setup(db);
        let names = set_user(
            &store,
            "u1",
            AssocLimitsEdit {
                max_jobs: Some(Some(3)),
                max_wall_minutes: Some(Some(90)),
                grp_tres: vec![(TresKind::Cpu, Some(8)), (TresKind::Mem, Some(2048))],
                ..Default::default()
            },
        );
        assert_eq!(names, s(&["c1\tmid\tu1"]));
        let l = assoc(&store, "mid", "u1").limits;
        assert_eq!(l.max_jobs, Some(3));
        assert_eq!(l.max_wall_minutes, Some(90));
        assert_eq!(l.grp_tres.to_string(), "cpu=8,mem=2048M");
        // -1 clears one limit and one resource; the others stay.
        set_user(
            &store,
            "u1",
            AssocLimitsEdit {
                max_jobs: Some(None),
                grp_tres: vec![(TresKind::Mem, None)],
                ..Default::default()
            },
        );
        let l = assoc(&store, "mid", "u1").limits;
        assert_eq!(l.max_jobs, None);
        assert_eq!(l.max_wall_minutes, Some(90));
        assert_eq!(
            l.grp_tres,
            Tres {
                cpu: Some(8),
                ..Tres::default()
            }
        );
        // The same value again changes nothing.
        let again = set_user(
            &store,
            "u1",
            AssocLimitsEdit {
                max_wall_minutes: Some(Some(90)),
                ..Default::default()
            },
        );
        assert!(again.is_empty());
    }

    pub fn max_limits_are_inherited_and_group_limits_are_not(db: &TestDb) {
        let store = setup(db);
        let names = set_account(
            &store,
            "top",
            AssocLimitsEdit {
                max_jobs: Some(Some(5)),
                max_submit_jobs: Some(Some(9)),
                grp_jobs: Some(Some(20)),
                max_tres_per_job: vec![(TresKind::Node, Some(2))],
                ..Default::default()
            },
        );
        assert_eq!(names, s(&["c1\ttop\t"]));
        set_account(
            &store,
            "mid",
            AssocLimitsEdit {
                max_jobs: Some(Some(4)),
                ..Default::default()
            },
        );
        let top = assoc(&store, "top", "").limits;
        assert_eq!((top.max_jobs, top.grp_jobs), (Some(5), Some(20)));
        let mid = assoc(&store, "mid", "").limits;
        assert_eq!(mid.max_jobs, Some(4), "its own value wins");
        assert_eq!(mid.max_submit_jobs, Some(9), "inherited from top");
        assert_eq!(mid.max_tres_per_job.node, Some(2));
        assert_eq!(mid.grp_jobs, None, "group limits are not copied");
        let u1 = assoc(&store, "mid", "u1").limits;
        assert_eq!((u1.max_jobs, u1.max_submit_jobs), (Some(4), Some(9)));
        let u2 = assoc(&store, "top", "u2").limits;
        assert_eq!((u2.max_jobs, u2.grp_jobs), (Some(5), None));
        // Clearing mid's own value lets top's through again.
        set_account(
            &store,
            "mid",
            AssocLimitsEdit {
                max_jobs: Some(None),
                ..Default::default()
            },
        );
        assert_eq!(assoc(&store, "mid", "u1").limits.max_jobs, Some(5));
    }

    pub fn a_preview_changes_nothing_and_unknown_names_are_refused(db: &TestDb) {
        let store = setup(db);
        let req = ModifyAssocLimits {
            user_associations: true,
            users: s(&["u2"]),
            set: AssocLimitsEdit {
                grp_jobs: Some(Some(1)),
                ..Default::default()
            },
            ..Default::default()
        };
        let preview = store.modify_assoc_limits(&req, Apply::DryRun, T1).unwrap();
        assert_eq!(preview.names, s(&["c1\ttop\tu2"]));
        assert_eq!(assoc(&store, "top", "u2").limits.grp_jobs, None);
        let unknown = ModifyAssocLimits {
            users: s(&["nobody"]),
            ..req.clone()
        };
        assert!(matches!(
            store.modify_assoc_limits(&unknown, Apply::Commit, T1),
            Err(StoreError::UnknownUser { .. })
        ));
        let no_account = ModifyAssocLimits {
            user_associations: false,
            accounts: s(&["nope"]),
            ..req
        };
        assert!(matches!(
            store.modify_assoc_limits(&no_account, Apply::Commit, T1),
            Err(StoreError::UnknownAccount { .. })
        ));
    }

    pub fn tres_minutes_are_stored_per_association_and_not_inherited(db: &TestDb) {
        let store = setup(db);
        let names = set_account(
            &store,
            "top",
            AssocLimitsEdit {
                grp_tres_mins: vec![(TresKind::Cpu, Some(6000)), (TresKind::Node, Some(100))],
                ..Default::default()
            },
        );
        assert_eq!(names, s(&["c1\ttop\t"]));
        let top = assoc(&store, "top", "").limits;
        assert_eq!(top.grp_tres_mins.to_string(), "cpu=6000,node=100");
        assert!(assoc(&store, "mid", "").limits.grp_tres_mins.is_empty());
        assert!(assoc(&store, "top", "u2").limits.grp_tres_mins.is_empty());
        // -1 clears one resource; other limits set beside it stay.
        set_account(
            &store,
            "top",
            AssocLimitsEdit {
                grp_tres_mins: vec![(TresKind::Node, None)],
                max_jobs: Some(Some(2)),
                ..Default::default()
            },
        );
        let top = assoc(&store, "top", "").limits;
        assert_eq!(top.grp_tres_mins.to_string(), "cpu=6000");
        assert_eq!(top.max_jobs, Some(2));
    }

    pub fn add_gives_the_new_associations_their_limits(db: &TestDb) {
        let store = setup(db);
        let limits = AssocLimitsEdit {
            max_jobs: Some(Some(2)),
            grp_tres: vec![(TresKind::Cpu, Some(4))],
            grp_tres_mins: vec![(TresKind::Cpu, Some(600))],
            ..Default::default()
        };
        let acct = AddAccounts {
            names: s(&["new"]),
            parent: Some("top".into()),
            limits: limits.clone(),
            ..Default::default()
        };
        store.add_accounts(&acct, Apply::Commit, T1).unwrap();
        let new = assoc(&store, "new", "").limits;
        assert_eq!(new.max_jobs, Some(2));
        assert_eq!(new.grp_tres.to_string(), "cpu=4");
        assert_eq!(new.grp_tres_mins.to_string(), "cpu=600");
        let user = AddUsers {
            names: s(&["u3"]),
            accounts: s(&["mid"]),
            limits: AssocLimitsEdit {
                max_submit_jobs: Some(Some(7)),
                ..Default::default()
            },
            ..Default::default()
        };
        store.add_users(&user, Apply::Commit, T1).unwrap();
        assert_eq!(assoc(&store, "mid", "u3").limits.max_submit_jobs, Some(7));
        assert_eq!(
            assoc(&store, "mid", "u1").limits.max_submit_jobs,
            None,
            "the other users of mid keep theirs"
        );
        // A preview creates nothing and sets nothing.
        let preview = AddUsers {
            names: s(&["u4"]),
            ..user
        };
        store.add_users(&preview, Apply::DryRun, T1).unwrap();
        let filter = AssociationFilter {
            users: s(&["u4"]),
            ..Default::default()
        };
        assert!(store.list_associations(&filter).unwrap().is_empty());
    }

    pub fn fairshare_and_limits_change_in_one_modify(db: &TestDb) {
        let store = setup(db);
        let req = ModifyAssocLimits {
            user_associations: true,
            users: s(&["u1"]),
            set: AssocLimitsEdit {
                max_jobs: Some(Some(2)),
                ..Default::default()
            },
            fairshare: Some(Shares::parse("10").unwrap()),
            ..Default::default()
        };
        let names = store
            .modify_assoc_limits(&req, Apply::Commit, T1)
            .unwrap()
            .names;
        assert_eq!(names, s(&["c1\tmid\tu1"]));
        assert_eq!(assoc(&store, "mid", "u1").limits.max_jobs, Some(2));
        let filter = AssociationFilter {
            users: s(&["u1"]),
            ..Default::default()
        };
        let shares = store.list_association_shares(&filter, None).unwrap();
        assert_eq!(shares[0].shares, 10);
        // Fair share alone through the same request: only what differs is reported.
        let again = ModifyAssocLimits {
            set: AssocLimitsEdit::default(),
            ..req.clone()
        };
        let names = store
            .modify_assoc_limits(&again, Apply::Commit, T1)
            .unwrap()
            .names;
        assert!(names.is_empty(), "nothing differs");
        // A failing part refuses the whole change: nothing was set.
        let bad = ModifyAssocLimits {
            users: s(&["u1", "nobody"]),
            fairshare: Some(Shares::parse("20").unwrap()),
            ..req
        };
        assert!(store.modify_assoc_limits(&bad, Apply::Commit, T1).is_err());
        let shares = store.list_association_shares(&filter, None).unwrap();
        assert_eq!(shares[0].shares, 10);
    }
}
