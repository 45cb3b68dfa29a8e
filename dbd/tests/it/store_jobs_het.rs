//! Heterogeneous jobs in the job history, on every backend: each component's submit record
//! names its heterogeneous job and offset (`job_het`), every run of the component carries
//! them, and a heterogeneous job's id names all its components (sacct `-j 123`) while
//! `123+1` names one, per cluster.

use crate::common;

per_backend!(
    components_carry_their_heterogeneous_job_and_offset,
    a_heterogeneous_jobs_id_names_every_component,
    a_component_is_named_alone_by_its_offset,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::states::JobState;

    use super::common::jobs::*;
    use super::common::{TestDb, s};

    fn component(job_id: u32, at: i64, leader: u32, offset: u32) -> RecordKind {
        let mut r = submit(job_id, at);
        r.het_job_id = leader;
        r.het_offset = offset;
        RecordKind::JobSubmitted(Box::new(r))
    }

    /// `(cluster, job, run, het job, offset)` of every run `q` selects, components named as
    /// the dbd's service names them.
    fn rows(store: &Store, q: &JobQuery) -> Vec<(String, u32, u32, u32, u32)> {
        rows_het(store, q, &[])
    }

    /// Like [`rows`], with the components `het` (`N+K`) named too; nothing when the query
    /// named jobs and none of them exist (as the dbd's service answers).
    fn rows_het(
        store: &Store,
        q: &JobQuery,
        het: &[(u32, u32)],
    ) -> Vec<(String, u32, u32, u32, u32)> {
        let mut q = q.clone();
        if !q.job_ids.is_empty() || !het.is_empty() {
            q.job_ids = store.named_jobs(&q.clusters, &q.job_ids, het).unwrap();
            if q.job_ids.is_empty() {
                return Vec::new();
            }
        }
        query(store, &q)
            .into_iter()
            .map(|r| (r.cluster, r.job_id, r.run, r.het_job_id, r.het_offset))
            .collect()
    }

    fn every_run() -> JobQuery {
        JobQuery {
            duplicates: true,
            ..Default::default()
        }
    }

    pub fn components_carry_their_heterogeneous_job_and_offset(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let kinds = vec![
            component(10, 1_000, 10, 0),
            component(11, 1_000, 10, 1),
            submitted(12, 1_001),
            started(10, 0, 1_010),
            started(11, 0, 1_010),
            ended(10, 0, 1_100, JobState::Requeued, 0),
            ended(11, 0, 1_100, JobState::Requeued, 0),
        ];
        store.record_batch("c1", 1, &numbered(1, kinds)).unwrap();
        // The requeue's submit record names the job again; the row stays as it was.
        let again = vec![component(11, 1_100, 10, 1)];
        store.record_batch("c1", 1, &numbered(8, again)).unwrap();
        let c1 = || "c1".to_string();
        let mut got = rows(&store, &every_run());
        got.sort();
        assert_eq!(
            got,
            vec![
                (c1(), 10, 0, 10, 0),
                (c1(), 10, 1, 10, 0),
                (c1(), 11, 0, 10, 1),
                (c1(), 11, 1, 10, 1),
                (c1(), 12, 0, 0, 0),
            ]
        );
    }

    pub fn a_heterogeneous_jobs_id_names_every_component(db: &TestDb) {
        let store = with_clusters(db, &["c1", "c2"]);
        let one = vec![
            component(20, 1_000, 20, 0),
            component(21, 1_000, 20, 1),
            component(22, 1_000, 20, 2),
            submitted(23, 1_001),
        ];
        store.record_batch("c1", 1, &numbered(1, one)).unwrap();
        // Ids repeat across clusters: c2's job 20 is a plain job with a plain neighbour.
        let two = vec![submitted(20, 1_000), submitted(21, 1_000)];
        store.record_batch("c2", 1, &numbered(1, two)).unwrap();
        let ids = |clusters: &[&str], job_ids: Vec<u32>| {
            let q = JobQuery {
                clusters: s(clusters),
                job_ids,
                ..every_run()
            };
            rows(&store, &q)
                .into_iter()
                .map(|r| (r.0, r.1))
                .collect::<Vec<_>>()
        };
        let c = |name: &str, id: u32| (name.to_string(), id);
        assert_eq!(
            ids(&["c1"], vec![20]),
            vec![c("c1", 20), c("c1", 21), c("c1", 22)]
        );
        // A component's own id names that component alone.
        assert_eq!(ids(&["c1"], vec![21]), vec![c("c1", 21)]);
        // c2's job 20 is not heterogeneous: its neighbour 21 is not pulled in.
        assert_eq!(ids(&["c2"], vec![20]), vec![c("c2", 20)]);
    }

    pub fn a_component_is_named_alone_by_its_offset(db: &TestDb) {
        let store = with_clusters(db, &["c1", "c2"]);
        let one = vec![
            component(30, 1_000, 30, 0),
            component(31, 1_000, 30, 1),
            component(33, 1_000, 30, 2),
            submitted(32, 1_001),
        ];
        store.record_batch("c1", 1, &numbered(1, one)).unwrap();
        // c2 has its own heterogeneous job 30, with other component ids.
        let two = vec![component(30, 1_000, 30, 0), component(34, 1_000, 30, 1)];
        store.record_batch("c2", 1, &numbered(1, two)).unwrap();
        let named = |clusters: &[&str], job_ids: Vec<u32>, het: &[(u32, u32)]| {
            let q = JobQuery {
                clusters: s(clusters),
                job_ids,
                ..every_run()
            };
            rows_het(&store, &q, het)
                .into_iter()
                .map(|r| (r.0, r.1, r.3, r.4))
                .collect::<Vec<_>>()
        };
        let c = |name: &str, id: u32, offset: u32| (name.to_string(), id, 30, offset);
        // The component's own id need not follow the leader's: it is looked up.
        assert_eq!(named(&["c1"], vec![], &[(30, 2)]), vec![c("c1", 33, 2)]);
        // `N+0` is the leader alone, not every component.
        assert_eq!(named(&["c1"], vec![], &[(30, 0)]), vec![c("c1", 30, 0)]);
        assert_eq!(
            named(&["c1"], vec![], &[(30, 1), (30, 2)]),
            vec![c("c1", 31, 1), c("c1", 33, 2)]
        );
        // Beside a plain id, and per cluster.
        let mut both = named(&["c1", "c2"], vec![32], &[(30, 1)]);
        both.sort();
        assert_eq!(
            both,
            vec![c("c1", 31, 1), ("c1".to_string(), 32, 0, 0), c("c2", 34, 1)]
        );
        // A component that does not exist names nothing (not every job).
        assert_eq!(named(&["c1"], vec![], &[(30, 3)]), vec![]);
        assert_eq!(
            named(&["c1"], vec![], &[(32, 0)]),
            vec![],
            "32 is not heterogeneous"
        );
    }
}
