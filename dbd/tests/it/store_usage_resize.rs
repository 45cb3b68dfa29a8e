//! A running job whose allocation changes (failure management drops or replaces a node), on
//! every backend: usage counts each allocation for its own time, whether the change arrives
//! before or after the hours it touches were rolled up, and sacct reads the run as Slurm's
//! records of a resized job (RESIZING records, then the current one).

use crate::common;
use crate::usage_support;

per_backend!(
    a_dropped_node_counts_until_the_drop,
    sacct_shows_resizing_records,
    earlier_allocations_go_with_their_run,
);

mod cases {
    use sluice_dbd::store::usage::{JobSizesQuery, PurgePolicy, UsageQuery};
    use sluice_dbd::store::*;
    use sluice_reports::Tres;
    use sluice_reports::purge::PurgeAfter;
    use sluice_vocab::states::JobState;

    use super::common::jobs::{query, with_clusters};
    use super::common::{TestDb, s};
    use super::usage_support::*;

    /// Job 1 of alice, 8 CPUs on 2 nodes from 01:00; one node dropped at 01:40 (4 CPUs on
    /// 1 node), replaced at 02:20 by two nodes of 3 CPUs; ended at 03:00.
    fn job() -> Job {
        Job::new(1, "alice", "phys", at(1, 0), 8, 2)
    }

    fn resized(at: i64, node_list: &str, nodes: u32, cpus: u32) -> RecordKind {
        RecordKind::JobResized(JobResized {
            job_id: 1,
            run: 0,
            at,
            node_list: node_list.into(),
            node_count: nodes,
            cpus,
            mem_mb: u64::from(cpus) * 100,
        })
    }

    fn changes() -> Vec<RecordKind> {
        vec![
            resized(at(1, 40), "n1", 1, 4),
            resized(at(2, 20), "n[1,3]", 2, 6),
            job().ended(at(3, 0)),
        ]
    }

    fn history(store: &Store) {
        let mut feed = Feed::new(store, "c1");
        feed.send(vec![
            capacity(DAY0, 16, 4),
            job().submitted(),
            job().started(at(1, 0)),
        ]);
        feed.send(changes());
    }

    const CPU_SECS: u64 = (8 + 4 + 6) * 40 * 60;

    pub fn a_dropped_node_counts_until_the_drop(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut feed = Feed::new(&store, "c1");
        feed.send(vec![
            capacity(DAY0, 16, 4),
            job().submitted(),
            job().started(at(1, 0)),
        ]);
        // Hours up to 02:00 roll before the drop's record arrives: they roll again.
        roll(&store, at(2, 5));
        feed.send(changes());
        let now = DAY0 + 2 * DAY;
        roll(&store, now);
        let hour = |h| {
            usage(
                &store,
                "c1",
                Tres::Cpu,
                (at(h, 0), at(h + 1, 0)),
                now,
                "hour",
            )
        };
        assert_eq!(hour(1).alloc, 8 * 2_400 + 4 * 1_200);
        assert_eq!(hour(2).alloc, 4 * 1_200 + 6 * 2_400);
        let day = (DAY0, DAY0 + DAY);
        assert_eq!(
            usage(&store, "c1", Tres::Cpu, day, now, "day").alloc,
            CPU_SECS
        );
        assert_eq!(
            usage(&store, "c1", Tres::Node, day, now, "day").alloc,
            (2 + 1 + 2) * 2_400
        );
        assert_eq!(usage(&store, "c1", Tres::Cpu, day, now, "day").plan, 0);
        let q = UsageQuery {
            start: DAY0,
            end: DAY0 + DAY,
            users: s(&["alice"]),
            ..Default::default()
        };
        let r = store.assoc_utilization(&utc(), &q, now).unwrap();
        let alice: Vec<u64> = r
            .rows
            .iter()
            .filter(|r| r.user == "alice")
            .map(|r| r.alloc_secs)
            .collect();
        assert_eq!(alice, vec![CPU_SECS]);
        // Job sizes count each record, as Slurm's (which reads them with duplicates).
        let sizes = store
            .job_sizes(
                &utc(),
                &JobSizesQuery {
                    clusters: s(&["c1"]),
                    start: DAY0,
                    end: DAY0 + DAY,
                    grouping: vec![5],
                    tres: Tres::Cpu,
                    accounts: Vec::new(),
                    uids: Vec::new(),
                    individual: false,
                },
                now,
            )
            .unwrap();
        let phys = sizes.rows.iter().find(|r| r.account == "phys").unwrap();
        assert_eq!(phys.bucket_jobs, vec![1, 2]);
        assert_eq!(phys.bucket_secs, vec![4 * 2_400, (8 + 6) * 2_400]);
    }

    pub fn sacct_shows_resizing_records(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        history(&store);
        let resizing = JobState::Resizing.stored();
        let records = |q: JobQuery| -> Vec<(u32, i64, i64, i64, String, u32)> {
            query(&store, &q)
                .into_iter()
                .map(|r| (r.state, r.submit, r.start, r.end, r.node_list, r.cpus))
                .collect()
        };
        let all = vec![
            (resizing, at(1, 0), at(1, 0), at(1, 40), "n1".to_string(), 8),
            (
                resizing,
                at(1, 40),
                at(1, 40),
                at(2, 20),
                "n1".to_string(),
                4,
            ),
            (
                JobState::Completed.stored(),
                at(2, 20),
                at(2, 20),
                at(3, 0),
                "n[1,3]".to_string(),
                6,
            ),
        ];
        let by_id = JobQuery {
            job_ids: vec![1],
            ..Default::default()
        };
        assert_eq!(records(by_id.clone()), all);
        let dups = JobQuery {
            duplicates: true,
            ..by_id
        };
        assert_eq!(records(dups), all);
        // Each record is matched on its own: a window after the first change, RESIZING only.
        let late = JobQuery {
            start: at(2, 0),
            end: at(4, 0),
            ..Default::default()
        };
        assert_eq!(records(late), all[1..].to_vec());
        let only = JobQuery {
            states: vec![resizing],
            ..Default::default()
        };
        assert_eq!(records(only), all[..2].to_vec());
        let on_n3 = JobQuery {
            nodes: s(&["n3"]),
            ..Default::default()
        };
        assert_eq!(records(on_n3), all[2..].to_vec());
    }

    pub fn earlier_allocations_go_with_their_run(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        history(&store);
        // Job 2 still runs, resized long ago: its earlier allocation stays with it.
        let other = Job::new(2, "bob", "chem", at(1, 0), 4, 2);
        let mut feed = Feed::new(&store, "c1");
        feed.stream = 8;
        feed.send(vec![
            other.submitted(),
            other.started(at(1, 0)),
            RecordKind::JobResized(JobResized {
                job_id: 2,
                run: 0,
                at: at(2, 0),
                node_list: "n2".into(),
                node_count: 1,
                cpus: 2,
                mem_mb: 200,
            }),
        ]);
        let now = DAY0 + 40 * DAY;
        roll(&store, now);
        let policy = PurgePolicy {
            jobs: PurgeAfter::parse("30days").unwrap(),
            ..Default::default()
        };
        let summary = store.roll_up(&utc(), now, &policy).unwrap();
        assert_eq!((summary.purged.runs, summary.purged.resizes), (1, 2));
        let left: Vec<(u32, u32)> = query(
            &store,
            &JobQuery {
                duplicates: true,
                ..Default::default()
            },
        )
        .iter()
        .map(|r| (r.job_id, r.cpus))
        .collect();
        assert_eq!(left, vec![(2, 4), (2, 2)]);
    }
}
