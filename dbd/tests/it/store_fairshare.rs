//! Fair share in the store, on every backend: `Fairshare=` set on add and modify of users
//! and accounts (default 1, `parent`), and each association's decayed usage computed from
//! the job runs (finished and running, half-life, reset boundary); each QOS's usage
//! (`GrpTRESMins`) from the runs of its jobs.

use crate::common;

per_backend!(
    shares_are_stored_and_listed,
    usage_is_decayed_cpu_seconds,
    qos_usage_sums_the_runs_of_each_qos,
    a_qos_usage_factor_scales_what_its_jobs_are_charged
);

mod cases {
    use sluice_dbd::store::fairshare::{AssocShare, UsageWindow};
    use sluice_dbd::store::*;
    use sluice_vocab::fairshare::Shares;
    use sluice_vocab::states::JobState;

    use super::common::jobs::*;
    use super::common::{T1, TestDb, s};

    fn setup(db: &TestDb) -> Store {
        let store = with_clusters(db, &["c1"]);
        let acct = AddAccounts {
            names: s(&["acct"]),
            fairshare: Some(Shares::Count(5)),
            ..Default::default()
        };
        store.add_accounts(&acct, Apply::Commit, T1).unwrap();
        let alice = AddUsers {
            names: s(&["alice"]),
            accounts: s(&["acct"]),
            fairshare: Some(Shares::Parent),
            ..Default::default()
        };
        store.add_users(&alice, Apply::Commit, T1).unwrap();
        let bob = AddUsers {
            names: s(&["bob"]),
            accounts: s(&["acct"]),
            ..Default::default()
        };
        store.add_users(&bob, Apply::Commit, T1).unwrap();
        store
    }

    fn listed(store: &Store, window: Option<UsageWindow>) -> Vec<AssocShare> {
        store
            .list_association_shares(&AssociationFilter::default(), window)
            .unwrap()
    }

    /// Job `id` of alice submitted at 900 with QOS `qos`.
    fn with_qos(id: u32, qos: &str) -> RecordKind {
        let mut j = submit(id, 900);
        j.qos = qos.into();
        RecordKind::JobSubmitted(Box::new(j))
    }

    fn shares(store: &Store) -> Vec<(String, String, i64)> {
        listed(store, None)
            .into_iter()
            .map(|a| (a.assoc.account, a.assoc.user, a.shares))
            .collect()
    }

    fn row(v: &[(String, String, i64)], account: &str, user: &str) -> i64 {
        v.iter()
            .find(|r| r.0 == account && r.1 == user)
            .map(|r| r.2)
            .unwrap()
    }

    pub fn shares_are_stored_and_listed(db: &TestDb) {
        let store = setup(db);
        let v = shares(&store);
        assert_eq!(row(&v, "acct", ""), 5);
        assert_eq!(row(&v, "acct", "alice"), -1, "parent");
        assert_eq!(row(&v, "acct", "bob"), 1, "Slurm's default");
        assert_eq!(row(&v, "root", ""), 1);

        let modify = ModifyUsers {
            names: s(&["bob"]),
            fairshare: Some(Shares::Count(3)),
            ..Default::default()
        };
        let changed = store.modify_users(&modify, Apply::Commit, T1).unwrap();
        assert_eq!(changed.names, s(&["bob"]));
        assert_eq!(row(&shares(&store), "acct", "bob"), 3);
        // The same value again changes nothing.
        let again = store.modify_users(&modify, Apply::Commit, T1);
        assert!(
            matches!(again, Err(StoreError::NothingToChange)),
            "{again:?}"
        );
        // A preview changes nothing either.
        let account = ModifyAccounts {
            names: s(&["acct"]),
            fairshare: Some(Shares::Count(7)),
            ..Default::default()
        };
        store.modify_accounts(&account, Apply::DryRun, T1).unwrap();
        assert_eq!(row(&shares(&store), "acct", ""), 5);
        store.modify_accounts(&account, Apply::Commit, T1).unwrap();
        assert_eq!(row(&shares(&store), "acct", ""), 7);
    }

    pub fn usage_is_decayed_cpu_seconds(db: &TestDb) {
        let store = setup(db);
        // Job 7 (alice, 4 CPUs) ran 1000..1100; job 8 runs since 1200 (limit 60 min).
        let kinds = vec![
            submitted(7, 900),
            started(7, 0, 1_000),
            ended(7, 0, 1_100, JobState::Completed, 0),
            submitted(8, 900),
            started(8, 0, 1_200),
        ];
        store.record_batch("c1", 1, &numbered(1, kinds)).unwrap();
        let usage = |w: UsageWindow| -> (f64, u64) {
            let a = listed(&store, Some(w))
                .into_iter()
                .find(|a| a.assoc.user == "alice")
                .unwrap();
            (a.raw_usage, a.run_cpu_mins)
        };
        let plain = UsageWindow {
            now: 1_300,
            half_life: 0,
            since: 0,
        };
        // 4 x 100 s finished, 4 x 100 s running so far; 58 minutes left on 4 CPUs.
        assert_eq!(usage(plain), (800.0, 232));
        let reset = UsageWindow {
            since: 1_050,
            ..plain
        };
        assert_eq!(usage(reset).0, 600.0);
        let decayed = UsageWindow {
            now: 1_100,
            half_life: 100,
            since: 0,
        };
        // Only job 7 by then; its 400 CPU-seconds weigh 4*100/ln2*(1 - 1/2).
        let expect = 4.0 * 100.0 / std::f64::consts::LN_2 * 0.5;
        assert!(
            (usage(decayed).0 - expect).abs() < 1e-6,
            "{:?}",
            usage(decayed)
        );
        // No window: no usage asked, none computed.
        let bob = listed(&store, None)
            .into_iter()
            .find(|a| a.assoc.user == "alice")
            .unwrap();
        assert_eq!((bob.raw_usage, bob.run_cpu_mins), (0.0, 0));
    }

    pub fn qos_usage_sums_the_runs_of_each_qos(db: &TestDb) {
        let store = setup(db);
        // Jobs 7 and 8 (high) ran 100 s each on 4 CPUs, 1024 MB and 2 nodes; job 9 (normal)
        // runs since 1200; job 10 (high) on another cluster does not count here.
        let kinds = vec![
            with_qos(7, "high"),
            started(7, 0, 1_000),
            ended(7, 0, 1_100, JobState::Completed, 0),
            with_qos(8, "high"),
            started(8, 0, 1_100),
            ended(8, 0, 1_200, JobState::Failed, 1),
            with_qos(9, "normal"),
            started(9, 0, 1_200),
        ];
        store.record_batch("c1", 1, &numbered(1, kinds)).unwrap();
        store
            .add_clusters(
                &AddClusters {
                    names: s(&["c2"]),
                    ..Default::default()
                },
                Apply::Commit,
                T1,
            )
            .unwrap();
        let other = vec![with_qos(10, "high"), started(10, 0, 1_000)];
        store.record_batch("c2", 1, &numbered(1, other)).unwrap();
        let w = UsageWindow {
            now: 1_300,
            half_life: 0,
            since: 0,
        };
        let used = store.qos_usage("c1", w).unwrap();
        let high = used["high"];
        assert_eq!((high.cpu, high.mem, high.node), (800.0, 204_800.0, 400.0));
        assert_eq!(used["normal"].cpu, 400.0, "a running job counts up to now");
        assert_eq!(used.len(), 2);
        let reset = UsageWindow { since: 1_150, ..w };
        assert_eq!(store.qos_usage("c1", reset).unwrap()["high"].cpu, 200.0);
    }

    pub fn a_qos_usage_factor_scales_what_its_jobs_are_charged(db: &TestDb) {
        use sluice_vocab::qos::{QosEdit, UsageFactor};
        let store = setup(db);
        for (name, factor) in [("double", 2.0), ("free", 0.0)] {
            let add = AddQos {
                names: s(&[name]),
                set: QosEdit {
                    usage_factor: UsageFactor::from_f64(factor),
                    ..Default::default()
                },
            };
            store.add_qos(&add, Apply::Commit, T1).unwrap();
        }
        // Each of alice's jobs 7 (double), 8 (free) and 9 (no QOS) ran 100 s on 4 CPUs; job
        // 10 (double) runs since 1200 with 60 minutes of limit.
        let kinds = vec![
            with_qos(7, "double"),
            started(7, 0, 1_000),
            ended(7, 0, 1_100, JobState::Completed, 0),
            with_qos(8, "free"),
            started(8, 0, 1_000),
            ended(8, 0, 1_100, JobState::Completed, 0),
            submitted(9, 900),
            started(9, 0, 1_000),
            ended(9, 0, 1_100, JobState::Completed, 0),
            with_qos(10, "double"),
            started(10, 0, 1_200),
        ];
        store.record_batch("c1", 1, &numbered(1, kinds)).unwrap();
        let w = UsageWindow {
            now: 1_300,
            half_life: 0,
            since: 0,
        };
        let used = store.qos_usage("c1", w).unwrap();
        assert_eq!(used["double"].cpu, 1_600.0, "2 x (400 + 400 so far)");
        assert_eq!((used["free"].cpu, used["free"].mem), (0.0, 0.0));
        let alice = listed(&store, Some(w))
            .into_iter()
            .find(|a| a.assoc.user == "alice")
            .unwrap();
        // 800 + 0 + 400 + 800 CPU-seconds; 58 minutes left on 4 CPUs, counted twice.
        assert_eq!((alice.raw_usage, alice.run_cpu_mins), (2_000.0, 464));
        // Back to Slurm's default.
        let reset = ModifyQos {
            names: s(&["double"]),
            set: QosEdit {
                usage_factor: Some(UsageFactor::ONE),
                ..Default::default()
            },
        };
        store.modify_qos(&reset, Apply::Commit, T1).unwrap();
        assert_eq!(store.qos_usage("c1", w).unwrap()["double"].cpu, 800.0);
    }
}
