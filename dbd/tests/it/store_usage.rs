//! Usage rollups on every backend, checked against hand-computed histories: a cluster with
//! known capacity, node down / drain / power-down events, and jobs with eligible, start, end
//! and suspend times; an hour, a day and a month; associations; clusters side by side; job
//! sizes. Late records, capacity changes and purges: `store_usage_late.rs`.

use crate::common;
use crate::usage_support;

per_backend!(
    an_hour_a_day_and_a_month_by_hand,
    associations_hold_their_subtree,
    clusters_of_a_federation_side_by_side,
    job_sizes_come_from_the_runs,
);

mod cases {
    use sluice_dbd::store::usage::{JobSizesQuery, UsageQuery};
    use sluice_dbd::store::*;
    use sluice_reports::Tres;

    use super::common::jobs::with_clusters;
    use super::common::{T1, TestDb, s};
    use super::usage_support::*;

    /// The history of DAY0 on a 40-CPU, 10-node cluster (times are hh:mm of DAY0):
    /// n2 powered down 09:00-10:30; n1 down 10:15-10:45; n3 drained from 10:50 on;
    /// job 1 (8 CPUs, 2 nodes) eligible 09:30, runs 10:10-10:40;
    /// job 2 (4 CPUs, 1 node) runs 10:00-12:00, suspended 10:20-10:35;
    /// job 3 (16 CPUs, 4 nodes) eligible 10:30, runs 11:30-13:30.
    fn day_of_history(store: &Store) {
        let j1 = Job::new(1, "alice", "phys", at(9, 30), 8, 2);
        let j2 = Job::new(2, "bob", "chem", at(10, 0), 4, 1);
        let j3 = Job::new(3, "alice", "phys", at(10, 30), 16, 4);
        let mut feed = Feed::new(store, "c1");
        feed.send(vec![
            capacity(DAY0, 40, 10),
            node("n2", at(9, 0), "power_down"),
            j1.submitted(),
            j2.submitted(),
            j2.started(at(10, 0)),
            j1.started(at(10, 10)),
            node("n1", at(10, 15), "down"),
            j2.suspended(at(10, 20), true),
        ]);
        feed.send(vec![
            node("n2", at(10, 30), "power_up"),
            j3.submitted(),
            j2.suspended(at(10, 35), false),
            j1.ended(at(10, 40)),
            node("n1", at(10, 45), "up"),
            node("n3", at(10, 50), "drain"),
            j3.started(at(11, 30)),
            j2.ended(at(12, 0)),
            j3.ended(at(13, 30)),
        ]);
    }

    pub fn an_hour_a_day_and_a_month_by_hand(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        day_of_history(&store);
        let now = DEC1 + 90 * 60;
        assert_eq!(
            roll(&store, now),
            30 * 24 + 1,
            "every closed hour of November and Dec 1"
        );
        let hour = (at(10, 0), at(11, 0));
        // cpu: alloc 8×1800 + 4×(3600−900 suspended); down n1 4×1800 + n3 4×600;
        // planned down n2 4×1800; planned job 1 8×600 + job 3 16×1800.
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, hour, now, "hour"),
            secs(40, 144_000, 25_200, 9_600, 7_200, 68_400, 33_600, 0)
        );
        // node: alloc 2×1800 + 1×3600 (suspended jobs keep their nodes); down 1800 + 600;
        // planned down 1800; planned 2×600 + 4×1800.
        assert_eq!(
            usage(&store, "c1", Tres::Node, hour, now, "hour"),
            secs(10, 36_000, 7_200, 2_400, 1_800, 16_200, 8_400, 0)
        );
        // mem (MB-seconds): alloc 800×1800 + 400×3600; down the down CPUs' share of memory.
        assert_eq!(
            usage(&store, "c1", Tres::Mem, hour, now, "hour"),
            secs(
                40_000,
                144_000_000,
                2_880_000,
                9_600_000,
                7_200_000,
                120_960_000,
                3_360_000,
                0
            )
        );
        // The day: job 3 runs 16×7200; n3 stays drained 13h10m; n2 was down 1h30.
        let day = (DAY0, DAY0 + DAY);
        let expected_day = secs(
            40, 3_456_000, 154_800, 196_800, 21_600, 3_006_000, 76_800, 0,
        );
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, day, now, "day"),
            expected_day
        );
        // The same day read from hours (a window not ending at midnight reads the hour table).
        let (_, rows) = report(
            &store,
            &["c1"],
            &[Tres::Cpu],
            (DAY0, DAY0 + DAY + HOUR),
            now,
        );
        let d = rows[0].usage;
        assert_eq!(d.alloc, expected_day.alloc);
        assert_eq!(d.total, expected_day.total + 40 * 3_600);
        // November: n3 drained from Nov 1 10:50 to Dec 1.
        let month = (DAY0, DEC1);
        let n3 = 4 * (30 * DAY - (10 * HOUR + 50 * 60)) as u64;
        let total = 40 * 30 * DAY as u64;
        let down = n3 + 7_200;
        let idle = total - 154_800 - down - 21_600 - 76_800;
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, month, now, "month"),
            secs(40, total, 154_800, down, 21_600, idle, 76_800, 0)
        );
        assert_eq!(
            roll(&store, now),
            0,
            "rolling again at the same time changes nothing"
        );
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, day, now, "day"),
            expected_day
        );
    }

    pub fn associations_hold_their_subtree(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let add = |names: &[&str], parent: Option<&str>| AddAccounts {
            names: s(names),
            parent: parent.map(str::to_string),
            ..Default::default()
        };
        store
            .add_accounts(&add(&["phys", "chem"], None), Apply::Commit, T1)
            .unwrap();
        store
            .add_accounts(&add(&["hep"], Some("phys")), Apply::Commit, T1)
            .unwrap();
        for (user, account) in [("alice", "hep"), ("bob", "chem")] {
            let u = AddUsers {
                names: s(&[user]),
                accounts: s(&[account]),
                ..Default::default()
            };
            store.add_users(&u, Apply::Commit, T1).unwrap();
        }
        let mut feed = Feed::new(&store, "c1");
        let mut records = vec![capacity(DAY0, 16, 4)];
        records.extend(Job::new(1, "alice", "hep", at(1, 0), 4, 1).ran(at(1, 0), at(2, 0)));
        records.extend(Job::new(2, "bob", "chem", at(1, 0), 2, 1).ran(at(1, 0), at(3, 0)));
        // An account the dbd does not know hangs under root.
        records.extend(Job::new(3, "carol", "misc", at(1, 0), 1, 1).ran(at(5, 0), at(6, 0)));
        feed.send(records);
        let now = DAY0 + 2 * DAY;
        roll(&store, now);
        let rows = |accounts: &[&str], users: &[&str]| {
            let q = UsageQuery {
                start: DAY0,
                end: DAY0 + DAY,
                accounts: s(accounts),
                users: s(users),
                ..Default::default()
            };
            let r = store.assoc_utilization(&utc(), &q, now).unwrap();
            assert_eq!(r.period.name(), "day");
            assert_eq!(r.clusters.len(), 1);
            assert_eq!(r.clusters[0].usage.alloc, 14_400 + 14_400 + 3_600);
            r.rows
                .into_iter()
                .map(|r| (r.account, r.user, r.parent_account, r.alloc_secs))
                .collect::<Vec<_>>()
        };
        let row = |a: &str, u: &str, p: &str, secs: u64| {
            (a.to_string(), u.to_string(), p.to_string(), secs)
        };
        assert_eq!(
            rows(&[], &[]),
            vec![
                row("chem", "", "root", 14_400),
                row("chem", "bob", "chem", 14_400),
                row("hep", "", "phys", 14_400),
                row("hep", "alice", "hep", 14_400),
                row("misc", "", "root", 3_600),
                row("misc", "carol", "misc", 3_600),
                row("phys", "", "root", 14_400),
                row("root", "", "", 32_400),
            ]
        );
        assert_eq!(
            rows(&["phys"], &[]),
            vec![
                row("hep", "", "phys", 14_400),
                row("hep", "alice", "hep", 14_400),
                row("phys", "", "root", 14_400),
            ]
        );
        assert_eq!(
            rows(&[], &["bob"]),
            vec![
                row("chem", "", "root", 14_400),
                row("chem", "bob", "chem", 14_400),
                row("root", "", "", 14_400),
            ]
        );
    }

    pub fn clusters_of_a_federation_side_by_side(db: &TestDb) {
        let store = with_clusters(db, &["c1", "c2"]);
        let mut one = Feed::new(&store, "c1");
        let mut records = vec![capacity(DAY0, 8, 2)];
        records.extend(Job::new(1, "alice", "a", at(1, 0), 8, 2).ran(at(1, 0), at(2, 0)));
        one.send(records);
        let mut two = Feed::new(&store, "c2");
        let mut records = vec![capacity(DAY0, 4, 1)];
        records.extend(Job::new(1, "bob", "b", at(1, 0), 2, 1).ran(at(1, 30), at(2, 30)));
        two.send(records);
        let now = DAY0 + DAY + 60;
        roll(&store, now);
        let (table, rows) = report(&store, &[], &[], (DAY0, DAY0 + DAY), now);
        assert_eq!(table, "day");
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.cluster.as_str(),
                    r.tres,
                    r.usage.count,
                    r.usage.alloc,
                    r.usage.plan,
                    r.usage.total,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("c1", Tres::Cpu, 8, 28_800, 0, 8 * 86_400),
                ("c2", Tres::Cpu, 4, 7_200, 3_600, 4 * 86_400),
            ]
        );
        let (_, rows) = report(
            &store,
            &["c2"],
            &[Tres::Cpu, Tres::Node],
            (DAY0, DAY0 + DAY),
            now,
        );
        let got: Vec<_> = rows.iter().map(|r| (r.cluster.as_str(), r.tres)).collect();
        assert_eq!(got, vec![("c2", Tres::Cpu), ("c2", Tres::Node)]);
        // A deleted cluster's usage stops: only c1's next day rolls.
        let delete = DeleteClusters {
            names: s(&["c2"]),
            ..Default::default()
        };
        store.delete_clusters(&delete, Apply::Commit, T1).unwrap();
        assert_eq!(roll(&store, now + DAY), 24);
    }

    pub fn job_sizes_come_from_the_runs(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut feed = Feed::new(&store, "c1");
        let mut records = vec![capacity(DAY0 - DAY, 2_000, 20)];
        records.extend(Job::new(1, "alice", "a", at(1, 0), 1, 1).ran(at(1, 0), at(2, 0)));
        records.extend(Job::new(2, "alice", "a", at(1, 0), 60, 1).ran(at(1, 0), at(2, 0)));
        records.extend(Job::new(3, "bob", "b", at(1, 0), 300, 4).ran(at(1, 0), at(2, 0)));
        // Runs across the window's start: only its hour inside counts.
        records.extend(Job::new(4, "bob", "b", at(-2, 0), 10, 1).ran(at(-1, 0), at(1, 0)));
        // Never ran: not a job of any size.
        let cancelled = Job::new(5, "bob", "b", at(1, 0), 10, 1);
        records.extend([cancelled.submitted(), cancelled.ended(at(2, 0))]);
        feed.send(records);
        let now = DAY0 + DAY + 60;
        roll(&store, now);
        let q = JobSizesQuery {
            clusters: vec![],
            start: DAY0,
            end: DAY0 + DAY,
            grouping: vec![],
            tres: Tres::Cpu,
            accounts: vec![],
            uids: vec![],
            individual: false,
        };
        let r = store.job_sizes(&utc(), &q, now).unwrap();
        assert_eq!(r.bounds, vec![50, 250, 500, 1_000]);
        let rows: Vec<_> = r
            .rows
            .iter()
            .map(|r| {
                (
                    r.account.as_str(),
                    r.parent_account.as_str(),
                    r.bucket_secs.clone(),
                    r.bucket_jobs.clone(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (
                    "a",
                    "root",
                    vec![3_600, 216_000, 0, 0, 0],
                    vec![1, 1, 0, 0, 0]
                ),
                (
                    "b",
                    "root",
                    vec![36_000, 0, 1_080_000, 0, 0],
                    vec![1, 0, 1, 0, 0]
                ),
                ("root", "", vec![0; 5], vec![0; 5]),
            ]
        );
        assert_eq!(
            r.clusters[0].usage.alloc,
            3_600 + 216_000 + 1_080_000 + 36_000
        );
    }
}
