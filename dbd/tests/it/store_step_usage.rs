//! Step usage (jobacct_gather) on every backend: an end record's usage is stored and read back
//! whole; a later record without usage keeps it; a step without usage stays without.

use crate::common;

per_backend!(
    step_usage_round_trips,
    a_record_without_usage_keeps_the_stored_usage
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::jobacct::{StepUsage, TaskUsage};
    use sluice_vocab::states::JobState;

    use super::common::TestDb;
    use super::common::jobs::*;

    fn usage() -> StepUsage {
        let task = |task, node, user_ms, rss| TaskUsage {
            task,
            node,
            user_ms,
            sys_ms: 12,
            rss,
            vmem: 3 * rss,
            pages: 2,
            read: 4096,
            write: 1_000_000 + u64::from(task),
        };
        StepUsage::from_tasks(&[task(0, 0, 1_234, 8 << 20), task(1, 1, 99, 9 << 20)]).unwrap()
    }

    /// `usage()` as the history keeps it: without where the smallest values were (the
    /// task and node of each minimum are for `sstat`'s live view only).
    fn stored_usage() -> StepUsage {
        let mut u = usage();
        for side in [&mut u.usage_in, &mut u.usage_out] {
            side.min_task = Default::default();
            side.min_node = Default::default();
        }
        u
    }

    fn with_usage(kind: RecordKind, usage: Option<StepUsage>) -> RecordKind {
        match kind {
            RecordKind::Step(s) => RecordKind::Step(Box::new(Step { usage, ..*s })),
            other => other,
        }
    }

    fn steps(store: &Store) -> Vec<Step> {
        let runs = query(
            store,
            &JobQuery {
                duplicates: true,
                ..Default::default()
            },
        );
        runs.into_iter().flat_map(|r| r.steps).collect()
    }

    pub fn step_usage_round_trips(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let kinds = vec![
            submitted(7, 1_000),
            started(7, 0, 1_010),
            with_usage(
                step(7, -4, 1_010, 1_300, JobState::Completed),
                Some(usage()),
            ),
            step(7, 0, 1_020, 1_200, JobState::Completed),
            ended(7, 0, 1_300, JobState::Completed, 0),
        ];
        store.record_batch("c1", 1, &numbered(1, kinds)).unwrap();
        let steps = steps(&store);
        let by_id = |id: i32| steps.iter().find(|s| s.step_id == id).unwrap();
        assert_eq!(by_id(-4).usage, Some(stored_usage()));
        assert_eq!(by_id(0).usage, None, "not measured: no usage");
    }

    pub fn a_record_without_usage_keeps_the_stored_usage(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let first = vec![
            submitted(8, 1_000),
            started(8, 0, 1_010),
            with_usage(step(8, 0, 1_010, 1_100, JobState::Completed), Some(usage())),
        ];
        store.record_batch("c1", 1, &numbered(1, first)).unwrap();
        // A repeated end record from a controller that lost the usage (a later batch).
        let again = vec![step(8, 0, 1_010, 1_100, JobState::Completed)];
        store.record_batch("c1", 1, &numbered(4, again)).unwrap();
        assert_eq!(steps(&store)[0].usage, Some(stored_usage()));
    }
}
