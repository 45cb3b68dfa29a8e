//! QOS in the store (`sacctmgr add|modify|delete|show qos`, `modify user|account ... set
//! QOS= DefaultQOS=`), on every backend: `normal` is there from the start with id 1; add,
//! modify (-1 clears), delete (taken out of association lists, refused while jobs of it are
//! unfinished) and revive; association lists and defaults inherited down the tree, `QOS+=`/
//! `QOS-=` on an inherited list kept as a delta that follows the parent's list; a default
//! outside the list refused; a job's QOS kept for sacct.

use crate::common;

per_backend!(
    normal_exists_and_qos_are_added_modified_and_listed,
    deleting_a_qos_takes_it_out_of_lists_and_adding_it_again_revives_it,
    association_qos_are_inherited_and_edited,
    a_delta_on_an_inherited_list_follows_the_parents_list,
    qos_and_limits_change_in_one_request,
    a_default_outside_the_list_and_unknown_names_are_refused,
    a_jobs_qos_is_kept_and_blocks_deleting_it_while_unfinished,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::assoc_limits::{AssocLimitsEdit, TresKind};
    use sluice_vocab::qos::{QosEdit, QosFlags, UsageFactor};
    use sluice_vocab::states::JobState;

    use super::common::jobs::*;
    use super::common::{T1, TestDb, s};

    /// A store with cluster c1, accounts top > mid, and users u1 in mid, u2 in top.
    fn setup(db: &TestDb) -> Store {
        let store = with_clusters(db, &["c1"]);
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

    fn add(store: &Store, name: &str, set: QosEdit) -> Vec<String> {
        let req = AddQos {
            names: s(&[name]),
            set,
        };
        store.add_qos(&req, Apply::Commit, T1).unwrap().names
    }

    fn names(store: &Store) -> Vec<(u32, String)> {
        store
            .list_qos(&[], false)
            .unwrap()
            .into_iter()
            .map(|e| (e.id, e.qos.name))
            .collect()
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

    fn modify_assoc(store: &Store, req: ModifyAssocQos) -> Result<Vec<String>, StoreError> {
        store
            .modify_assoc_qos(&req, Apply::Commit, T1)
            .map(|c| c.names)
    }

    pub fn normal_exists_and_qos_are_added_modified_and_listed(db: &TestDb) {
        let store = setup(db);
        assert_eq!(names(&store), vec![(1, "normal".to_string())]);
        let normal = &store.list_qos(&s(&["normal"]), false).unwrap()[0].qos;
        assert_eq!(normal.description, "Normal QOS default");
        let set = QosEdit {
            priority: Some(10),
            max_jobs_per_user: Some(Some(2)),
            grp_tres: vec![(TresKind::Cpu, Some(8))],
            ..Default::default()
        };
        assert_eq!(add(&store, "High", set), s(&["high"]));
        // Adding what exists adds nothing.
        assert!(add(&store, "high", QosEdit::default()).is_empty());
        assert_eq!(
            names(&store),
            vec![(1, "normal".to_string()), (2, "high".to_string())]
        );
        let high = store.list_qos(&s(&["high"]), false).unwrap()[0].qos.clone();
        assert_eq!(high.description, "high");
        assert_eq!(high.priority, 10);
        assert_eq!(high.limits.max_jobs_per_user, Some(2));
        assert_eq!(high.limits.grp_tres.cpu, Some(8));
        assert_eq!(high.usage_factor, UsageFactor::ONE, "Slurm's default");
        let req = ModifyQos {
            names: s(&["high"]),
            set: QosEdit {
                max_jobs_per_user: Some(None),
                max_wall_minutes: Some(Some(60)),
                max_tres_mins_per_job: vec![(TresKind::Cpu, Some(600)), (TresKind::Node, Some(90))],
                max_tres_per_account: vec![(TresKind::Cpu, Some(12))],
                max_jobs_per_account: Some(Some(3)),
                max_submit_jobs_per_account: Some(Some(5)),
                min_tres_per_job: vec![(TresKind::Node, Some(2))],
                max_tres_per_node: vec![(TresKind::Cpu, Some(4))],
                usage_factor: UsageFactor::from_f64(0.75),
                flags: Some(QosFlags {
                    over_part_qos: true,
                    ..Default::default()
                }),
                ..Default::default()
            },
        };
        assert_eq!(
            store.modify_qos(&req, Apply::Commit, T1).unwrap().names,
            s(&["high"])
        );
        let high = store.list_qos(&s(&["high"]), false).unwrap()[0].qos.clone();
        assert_eq!(high.limits.max_jobs_per_user, None);
        assert_eq!(high.limits.max_wall_minutes, Some(60));
        assert_eq!(
            (
                high.limits.max_tres_mins_per_job.cpu,
                high.limits.max_tres_mins_per_job.node
            ),
            (Some(600), Some(90))
        );
        let l = &high.limits;
        assert_eq!(
            (
                l.max_tres_per_account.cpu,
                l.max_jobs_per_account,
                l.max_submit_jobs_per_account,
                l.min_tres_per_job.node,
                l.max_tres_per_node.cpu
            ),
            (Some(12), Some(3), Some(5), Some(2), Some(4))
        );
        assert!(high.flags.over_part_qos);
        assert_eq!(high.priority, 10);
        assert_eq!(high.usage_factor.to_string(), "0.750000");
        // The same values again change nothing; a preview changes nothing either.
        assert!(
            store
                .modify_qos(&req, Apply::Commit, T1)
                .unwrap()
                .names
                .is_empty()
        );
        let preview = ModifyQos {
            names: s(&["high"]),
            set: QosEdit {
                priority: Some(99),
                ..Default::default()
            },
        };
        store.modify_qos(&preview, Apply::DryRun, T1).unwrap();
        assert_eq!(
            store.list_qos(&s(&["high"]), false).unwrap()[0]
                .qos
                .priority,
            10
        );
    }

    pub fn deleting_a_qos_takes_it_out_of_lists_and_adding_it_again_revives_it(db: &TestDb) {
        let store = setup(db);
        add(&store, "high", QosEdit::default());
        modify_assoc(
            &store,
            ModifyAssocQos {
                accounts: s(&["top"]),
                set_list: Some(s(&["normal", "high"])),
                default_qos: Some("high".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(assoc(&store, "top", "").default_qos, "high");
        let req = DeleteQos {
            names: s(&["high"]),
        };
        assert_eq!(
            store.delete_qos(&req, Apply::Commit, T1).unwrap().names,
            s(&["high"])
        );
        assert_eq!(names(&store), vec![(1, "normal".to_string())]);
        let top = assoc(&store, "top", "");
        assert_eq!((top.qos, top.default_qos), (s(&["normal"]), String::new()));
        assert_eq!(store.list_qos(&[], true).unwrap().len(), 2);
        // Deleting it again deletes nothing; adding it again gives it back its id.
        assert!(
            store
                .delete_qos(&req, Apply::Commit, T1)
                .unwrap()
                .names
                .is_empty()
        );
        add(&store, "high", QosEdit::default());
        assert_eq!(
            names(&store),
            vec![(1, "normal".to_string()), (2, "high".to_string())]
        );
    }

    pub fn association_qos_are_inherited_and_edited(db: &TestDb) {
        let store = setup(db);
        add(&store, "high", QosEdit::default());
        add(&store, "low", QosEdit::default());
        // Without settings every association has the root's list: normal.
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["normal"]));
        let changed = modify_assoc(
            &store,
            ModifyAssocQos {
                accounts: s(&["top"]),
                set_list: Some(s(&["high", "normal"])),
                default_qos: Some("normal".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(changed, vec!["c1\ttop\t".to_string()]);
        let u1 = assoc(&store, "mid", "u1");
        assert_eq!(
            (u1.qos, u1.default_qos),
            (s(&["high", "normal"]), "normal".into())
        );
        // QOS+= on a user changes the list in force there only.
        modify_assoc(
            &store,
            ModifyAssocQos {
                user_associations: true,
                users: s(&["u1"]),
                add: s(&["low"]),
                remove: s(&["high"]),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["low", "normal"]));
        assert_eq!(assoc(&store, "top", "u2").qos, s(&["high", "normal"]));
        // QOS= (empty) inherits again.
        modify_assoc(
            &store,
            ModifyAssocQos {
                user_associations: true,
                users: s(&["u1"]),
                set_list: Some(Vec::new()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["high", "normal"]));
    }

    /// `QOS+=x`/`QOS-=x` on `account` (`user` empty) or on `user`'s associations.
    fn edit(store: &Store, account: &str, user: &str, add: &[&str], remove: &[&str]) {
        let (users, accounts) = match user {
            "" => (Vec::new(), s(&[account])),
            u => (s(&[u]), Vec::new()),
        };
        modify_assoc(
            store,
            ModifyAssocQos {
                user_associations: !user.is_empty(),
                users,
                accounts,
                add: s(add),
                remove: s(remove),
                ..Default::default()
            },
        )
        .unwrap();
    }

    fn set_list(store: &Store, account: &str, list: &[&str]) {
        modify_assoc(
            store,
            ModifyAssocQos {
                accounts: s(&[account]),
                set_list: Some(s(list)),
                ..Default::default()
            },
        )
        .unwrap();
    }

    pub fn a_delta_on_an_inherited_list_follows_the_parents_list(db: &TestDb) {
        let store = setup(db);
        add(&store, "high", QosEdit::default());
        add(&store, "low", QosEdit::default());
        // u1 (under mid under top) inherits normal; QOS+=high keeps a delta, not a list.
        edit(&store, "mid", "u1", &["high"], &[]);
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["high", "normal"]));
        // A later change of an account above reaches u1, with its delta still applied.
        set_list(&store, "top", &["low", "normal"]);
        assert_eq!(
            assoc(&store, "mid", "u1").qos,
            s(&["high", "low", "normal"])
        );
        assert_eq!(assoc(&store, "top", "u2").qos, s(&["low", "normal"]));
        // A delta on an account is inherited below it, and a user's own delta on top of it.
        edit(&store, "mid", "", &[], &["low"]);
        assert_eq!(assoc(&store, "mid", "").qos, s(&["normal"]));
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["high", "normal"]));
        // QOS-= takes out what the delta added and what is inherited; QOS+= puts one back.
        edit(&store, "mid", "u1", &[], &["high", "normal"]);
        assert_eq!(assoc(&store, "mid", "u1").qos, Vec::<String>::new());
        edit(&store, "mid", "u1", &["normal"], &[]);
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["normal"]));
        // u1's QOS-=high keeps high out when its parent gains it.
        set_list(&store, "top", &["high", "low", "normal"]);
        assert_eq!(assoc(&store, "mid", "").qos, s(&["high", "normal"]));
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["normal"]));
        // Deleting a QOS takes it out of deltas too: revived and in the parent's list again,
        // it is in the lists of u1 and u2, whose deltas took it out before.
        edit(&store, "top", "u2", &[], &["high"]);
        assert_eq!(assoc(&store, "top", "u2").qos, s(&["low", "normal"]));
        store
            .delete_qos(
                &DeleteQos {
                    names: s(&["high"]),
                },
                Apply::Commit,
                T1,
            )
            .unwrap();
        add(&store, "high", QosEdit::default());
        set_list(&store, "top", &["high", "low", "normal"]);
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["high", "normal"]));
        assert_eq!(
            assoc(&store, "top", "u2").qos,
            s(&["high", "low", "normal"])
        );
        // QOS= on an account drops its delta: its list is its own from then on (u1 keeps its
        // own delta on it).
        set_list(&store, "mid", &["low"]);
        assert_eq!(assoc(&store, "mid", "").qos, s(&["low"]));
        assert_eq!(assoc(&store, "mid", "u1").qos, s(&["low", "normal"]));
    }

    pub fn qos_and_limits_change_in_one_request(db: &TestDb) {
        let store = setup(db);
        add(&store, "high", QosEdit::default());
        let req = ModifyAssocLimits {
            user_associations: true,
            users: s(&["u1"]),
            set: AssocLimitsEdit {
                max_jobs: Some(Some(3)),
                ..Default::default()
            },
            qos: Some(ModifyAssocQos {
                add: s(&["high"]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let names = store.modify_assoc_limits(&req, Apply::Commit, T1).unwrap();
        assert_eq!(names.names, s(&["c1\tmid\tu1"]));
        let u1 = assoc(&store, "mid", "u1");
        assert_eq!(
            (u1.qos, u1.limits.max_jobs),
            (s(&["high", "normal"]), Some(3))
        );
        // The QOS part alone changes the association too.
        let only_qos = ModifyAssocLimits {
            set: AssocLimitsEdit::default(),
            qos: Some(ModifyAssocQos {
                default_qos: Some("high".into()),
                ..Default::default()
            }),
            ..req.clone()
        };
        let names = store
            .modify_assoc_limits(&only_qos, Apply::Commit, T1)
            .unwrap();
        assert_eq!(names.names, s(&["c1\tmid\tu1"]));
        assert_eq!(assoc(&store, "mid", "u1").default_qos, "high");
        // One change: a refused QOS part leaves the limits as they were.
        let bad = ModifyAssocLimits {
            set: AssocLimitsEdit {
                max_jobs: Some(Some(5)),
                ..Default::default()
            },
            qos: Some(ModifyAssocQos {
                add: s(&["nope"]),
                ..Default::default()
            }),
            ..req
        };
        let e = store
            .modify_assoc_limits(&bad, Apply::Commit, T1)
            .unwrap_err();
        assert_eq!(e.to_string(), "Unknown QOS name: nope");
        assert_eq!(assoc(&store, "mid", "u1").limits.max_jobs, Some(3));
    }

    pub fn a_default_outside_the_list_and_unknown_names_are_refused(db: &TestDb) {
        let store = setup(db);
        add(&store, "high", QosEdit::default());
        let e = modify_assoc(
            &store,
            ModifyAssocQos {
                accounts: s(&["top"]),
                default_qos: Some("high".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "You are not allowed to have a default QOS that is not in the list of QOS"
        );
        let e = modify_assoc(
            &store,
            ModifyAssocQos {
                accounts: s(&["top"]),
                set_list: Some(s(&["bogus"])),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(e, StoreError::UnknownQos { .. }), "{e}");
        let e = store
            .modify_qos(
                &ModifyQos {
                    names: s(&["bogus"]),
                    set: QosEdit {
                        priority: Some(1),
                        ..Default::default()
                    },
                },
                Apply::Commit,
                T1,
            )
            .unwrap_err();
        assert_eq!(e.to_string(), "Unknown QOS name: bogus");
        let e = store
            .add_qos(
                &AddQos {
                    names: s(&["a,b"]),
                    set: QosEdit::default(),
                },
                Apply::Commit,
                T1,
            )
            .unwrap_err();
        assert!(matches!(e, StoreError::InvalidName { .. }), "{e}");
        // Nothing changed.
        assert_eq!(assoc(&store, "top", "").default_qos, "");
        assert_eq!(names(&store).len(), 2);
    }

    pub fn a_jobs_qos_is_kept_and_blocks_deleting_it_while_unfinished(db: &TestDb) {
        let store = setup(db);
        add(&store, "high", QosEdit::default());
        let mut job = submit(7, 1_000);
        job.qos = "high".into();
        let records = numbered(
            1,
            vec![
                RecordKind::JobSubmitted(Box::new(job)),
                started(7, 0, 1_010),
            ],
        );
        store.record_batch("c1", 1, &records).unwrap();
        let runs = query(
            &store,
            &JobQuery {
                duplicates: true,
                ..Default::default()
            },
        );
        assert_eq!(runs[0].qos, "high");
        let req = DeleteQos {
            names: s(&["high"]),
        };
        let e = store.delete_qos(&req, Apply::Commit, T1).unwrap_err();
        assert_eq!(e.to_string(), "Job(s) active, cancel job(s) before remove");
        let end = numbered(3, vec![ended(7, 0, 1_100, JobState::Completed, 0)]);
        store.record_batch("c1", 1, &end).unwrap();
        assert_eq!(
            store.delete_qos(&req, Apply::Commit, T1).unwrap().names,
            s(&["high"])
        );
        // The history keeps the name.
        assert_eq!(
            query(
                &store,
                &JobQuery {
                    duplicates: true,
                    ..Default::default()
                }
            )[0]
            .qos,
            "high"
        );
    }
}
