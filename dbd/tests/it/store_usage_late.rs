//! Usage rollups on every backend, continued: late records rolling the hours they touch
//! again, capacity changes, purges.

use crate::common;
use crate::usage_support;

per_backend!(
    late_records_roll_the_hours_they_touch_again,
    capacity_changes_open_new_periods,
    purges_remove_rolled_records_only,
);

mod cases {
    use sluice_dbd::store::usage::PurgePolicy;
    use sluice_dbd::store::*;
    use sluice_reports::Tres;
    use sluice_reports::purge::PurgeAfter;

    use super::common::TestDb;
    use super::common::jobs::{query, with_clusters};
    use super::usage_support::*;

    pub fn late_records_roll_the_hours_they_touch_again(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut feed = Feed::new(&store, "c1");
        let mut first = vec![capacity(DAY0, 8, 2)];
        first.extend(Job::new(1, "alice", "a", at(5, 0), 2, 1).ran(at(5, 0), at(7, 0)));
        let running = Job::new(5, "alice", "a", at(40, 0), 1, 1);
        first.extend([running.submitted(), running.started(at(40, 0))]);
        feed.send(first);
        let now = DAY0 + 2 * DAY + 1_800;
        assert_eq!(roll(&store, now), 48);
        let marks = store.usage_marks("c1").unwrap().unwrap();
        assert_eq!(marks.rolled_until, DAY0 + 2 * DAY);
        let day0 = (DAY0, DAY0 + DAY);
        let day1 = (DAY0 + DAY, DAY0 + 2 * DAY);
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, day0, now, "day").alloc,
            14_400
        );
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, day1, now, "day").alloc,
            8 * 3_600
        );

        // A controller that was cut off delivers DAY0's records late (from a new stream).
        let mut late = Feed::new(&store, "c1");
        late.stream = 8;
        let mut records = Job::new(2, "bob", "b", at(2, 0), 4, 1).ran(at(2, 30), at(3, 0));
        records.extend([node("n1", at(20, 0), "down"), node("n1", at(21, 0), "up")]);
        late.send(records);
        assert_eq!(
            store.usage_marks("c1").unwrap().unwrap().rolled_until,
            at(2, 0)
        );
        assert_eq!(
            roll(&store, now),
            46,
            "hours from 02:00 on roll again, not those before"
        );
        let u = usage(&store, "c1", Tres::Cpu, day0, now, "day");
        assert_eq!(
            (u.alloc, u.plan, u.down),
            (14_400 + 4 * 1_800, 4 * 1_800, 4 * 3_600)
        );
        let h2 = usage(&store, "c1", Tres::Cpu, (at(2, 0), at(3, 0)), now, "hour");
        assert_eq!(
            (h2.alloc, h2.plan, h2.idle),
            (7_200, 7_200, 28_800 - 14_400)
        );

        // The running job's end arrives late: it stopped at 44:00, not at the end of day 1.
        feed.send(vec![running.ended(at(44, 0))]);
        assert_eq!(roll(&store, now), 4);
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, day1, now, "day").alloc,
            4 * 3_600
        );
        // A record for an hour not rolled yet moves nothing back.
        feed.send(vec![node("n2", now, "drain")]);
        assert_eq!(
            store.usage_marks("c1").unwrap().unwrap().rolled_until,
            DAY0 + 2 * DAY
        );
        assert_eq!(roll(&store, now), 0);
    }

    pub fn capacity_changes_open_new_periods(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut feed = Feed::new(&store, "c1");
        feed.send(vec![capacity(at(0, 0), 8, 2), capacity(at(0, 30), 8, 2)]);
        feed.send(vec![capacity(at(1, 30), 12, 3)]);
        let capacity_events = |store: &Store| {
            store
                .list_node_events("c1", None)
                .unwrap()
                .into_iter()
                .filter(|e| e.node.is_empty())
                .map(|e| (e.start, e.end, e.cpus, e.kind, e.reason))
                .collect::<Vec<_>>()
        };
        let kind = || {
            (
                usage::CAPACITY_KIND.to_string(),
                usage::CAPACITY_REASON.to_string(),
            )
        };
        assert_eq!(
            capacity_events(&store),
            vec![
                (at(0, 0), at(1, 30), 8, kind().0, kind().1),
                (at(1, 30), 0, 12, kind().0, kind().1),
            ],
            "a repeated capacity opens nothing"
        );
        // A correction at the same instant replaces the counts.
        feed.send(vec![capacity(at(1, 30), 16, 4)]);
        assert_eq!(capacity_events(&store)[1].2, 16);
        let now = at(3, 0);
        roll(&store, now);
        let h1 = usage(&store, "c1", Tres::Cpu, (at(1, 0), at(2, 0)), now, "hour");
        assert_eq!(
            (h1.count, h1.total, h1.idle),
            (16, 8 * 1_800 + 16 * 1_800, 43_200)
        );
        let n1 = usage(&store, "c1", Tres::Node, (at(1, 0), at(2, 0)), now, "hour");
        assert_eq!((n1.count, n1.total), (4, 2 * 1_800 + 4 * 1_800));
        let m1 = usage(&store, "c1", Tres::Mem, (at(1, 0), at(2, 0)), now, "hour");
        assert_eq!(m1.total, 8_000 * 1_800 + 16_000 * 1_800);
    }

    pub fn purges_remove_rolled_records_only(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut feed = Feed::new(&store, "c1");
        let mut records = vec![capacity(DAY0, 8, 2)];
        records.extend(Job::new(1, "alice", "a", at(1, 0), 2, 1).ran(at(1, 0), at(2, 0)));
        records.extend([node("n1", at(3, 0), "down"), node("n1", at(4, 0), "up")]);
        records.extend(
            Job::new(2, "alice", "a", DAY0 + 20 * DAY, 2, 1)
                .ran(DAY0 + 20 * DAY, DAY0 + 20 * DAY + HOUR),
        );
        let pending = Job::new(3, "alice", "a", at(1, 0), 2, 1);
        records.push(pending.submitted());
        feed.send(records);
        let now = DAY0 + 40 * DAY + 1_800;
        let policy = PurgePolicy {
            jobs: PurgeAfter::parse("30days").unwrap(),
            events: PurgeAfter::parse("30days").unwrap(),
            usage: PurgeAfter::parse("24hours").unwrap(),
            ..Default::default()
        };
        assert_eq!(roll(&store, now), 40 * 24);
        let day0 = usage(&store, "c1", Tres::Cpu, (DAY0, DAY0 + DAY), now, "day");
        assert_eq!((day0.alloc, day0.down), (7_200, 14_400));
        let summary = store.roll_up(&utc(), now, &policy).unwrap();
        assert_eq!(summary.hours, 0);
        assert_eq!((summary.purged.runs, summary.purged.events), (1, 1));
        let left: Vec<u32> = query(
            &store,
            &JobQuery {
                duplicates: true,
                ..Default::default()
            },
        )
        .iter()
        .map(|r| r.job_id)
        .collect();
        assert_eq!(left, vec![3, 2], "the pending job and the recent one stay");
        let events = store.list_node_events("c1", None).unwrap();
        assert_eq!(
            events.len(),
            1,
            "the open capacity period stays: {events:?}"
        );
        let marks = store.usage_marks("c1").unwrap().unwrap();
        assert_eq!(marks.purged_until, DAY0 + 10 * DAY);
        // Usage older than a day is gone, except what the days and months being summed need.
        let (_, hours) = report(&store, &["c1"], &[Tres::Cpu], (at(1, 0), at(2, 0)), now);
        assert!(hours.is_empty(), "{hours:?}");
        let (_, days) = report(&store, &["c1"], &[Tres::Cpu], (DAY0, DAY0 + DAY), now);
        assert!(days.is_empty(), "{days:?}");
        let dec = (DEC1, DEC1 + 9 * DAY);
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, dec, now, "day").total,
            8 * 9 * DAY as u64
        );
        let today = (DAY0 + 40 * DAY - 2 * HOUR, DAY0 + 40 * DAY);
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, today, now, "hour").total,
            8 * 2 * HOUR as u64
        );
        // A late record older than the purge only rolls the hours since the purge again.
        feed.send(vec![node("n2", DAY0 + 5 * DAY, "drain")]);
        assert_eq!(
            store.usage_marks("c1").unwrap().unwrap().rolled_until,
            DAY0 + 10 * DAY
        );
        assert_eq!(roll(&store, now), 30 * 24);
    }
}
