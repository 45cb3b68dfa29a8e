//! `sreport job SizesByAccount`'s data on every backend: `Users=` keeps only those users' jobs,
//! `Grouping=individual` makes one bucket per TRES count found, over every cluster asked for.

use crate::common;
use crate::usage_support;

per_backend!(users_and_individual_sizes,);

mod cases {
    use sluice_dbd::store::usage::{JobSizesQuery, JobSizesReport};
    use sluice_dbd::store::*;
    use sluice_reports::Tres;

    use super::common::TestDb;
    use super::common::jobs::with_clusters;
    use super::usage_support::*;

    const ALICE: u32 = 1_000;
    const BOB: u32 = 2_000;

    /// `job` run from 01:00 for `hours`, submitted by `uid`.
    fn ran_by(uid: u32, job: &Job, hours: i64) -> Vec<RecordKind> {
        let mut records = job.ran(at(1, 0), at(1 + hours, 0));
        if let RecordKind::JobSubmitted(s) = &mut records[0] {
            s.uid = uid;
        }
        records
    }

    /// c1: alice 4 CPUs on `a` for 1 h and on `b` for 2 h, bob 16 CPUs on `a` for 1 h;
    /// c2: bob 8 CPUs on `a` for 1 h.
    fn two_clusters(db: &TestDb) -> Store {
        let store = with_clusters(db, &["c1", "c2"]);
        let mut c1 = vec![capacity(DAY0 - DAY, 64, 4)];
        c1.extend(ran_by(ALICE, &Job::new(1, "alice", "a", at(1, 0), 4, 1), 1));
        c1.extend(ran_by(BOB, &Job::new(2, "bob", "a", at(1, 0), 16, 1), 1));
        c1.extend(ran_by(ALICE, &Job::new(3, "alice", "b", at(1, 0), 4, 1), 2));
        Feed::new(&store, "c1").send(c1);
        let mut c2 = vec![capacity(DAY0 - DAY, 64, 4)];
        c2.extend(ran_by(BOB, &Job::new(1, "bob", "a", at(1, 0), 8, 1), 1));
        Feed::new(&store, "c2").send(c2);
        roll(&store, DAY0 + DAY + 60);
        store
    }

    fn sizes(store: &Store, uids: &[u32], individual: bool) -> JobSizesReport {
        let q = JobSizesQuery {
            clusters: vec!["c1".into(), "c2".into()],
            start: DAY0,
            end: DAY0 + DAY,
            grouping: vec![],
            tres: Tres::Cpu,
            accounts: vec![],
            uids: uids.to_vec(),
            individual,
        };
        store.job_sizes(&utc(), &q, DAY0 + DAY + 60).unwrap()
    }

    type Line = (String, String, Vec<u64>, Vec<u64>);

    fn lines(r: &JobSizesReport) -> Vec<Line> {
        r.rows
            .iter()
            .map(|r| {
                (
                    r.cluster.clone(),
                    r.account.clone(),
                    r.bucket_secs.clone(),
                    r.bucket_jobs.clone(),
                )
            })
            .collect()
    }

    fn line(cluster: &str, account: &str, secs: &[u64], jobs: &[u64]) -> Line {
        (cluster.into(), account.into(), secs.to_vec(), jobs.to_vec())
    }

    pub fn users_and_individual_sizes(db: &TestDb) {
        let store = two_clusters(db);
        const H: u64 = 3_600;

        // One bucket per CPU count found on either cluster: 4, 8 and 16.
        let every = sizes(&store, &[], true);
        assert_eq!(every.bounds, vec![4, 8, 16]);
        assert_eq!(
            lines(&every),
            vec![
                line("c1", "a", &[4 * H, 0, 16 * H], &[1, 0, 1]),
                line("c1", "b", &[8 * H, 0, 0], &[1, 0, 0]),
                line("c1", "root", &[0; 3], &[0; 3]),
                line("c2", "a", &[0, 8 * H, 0], &[0, 1, 0]),
                line("c2", "root", &[0; 3], &[0; 3]),
            ]
        );

        // Users=alice with the default grouping: bob's jobs are left out, c2 has none.
        let alice = sizes(&store, &[ALICE], false);
        assert_eq!(alice.bounds, vec![50, 250, 500, 1_000]);
        assert_eq!(
            lines(&alice),
            vec![
                line("c1", "a", &[4 * H, 0, 0, 0, 0], &[1, 0, 0, 0, 0]),
                line("c1", "b", &[8 * H, 0, 0, 0, 0], &[1, 0, 0, 0, 0]),
                line("c1", "root", &[0; 5], &[0; 5]),
            ]
        );

        // Both: the sizes are those of bob's jobs only.
        let bob = sizes(&store, &[BOB], true);
        assert_eq!(bob.bounds, vec![8, 16]);
        assert_eq!(
            lines(&bob),
            vec![
                line("c1", "a", &[0, 16 * H], &[0, 1]),
                line("c1", "root", &[0; 2], &[0; 2]),
                line("c2", "a", &[8 * H, 0], &[1, 0]),
                line("c2", "root", &[0; 2], &[0; 2]),
            ]
        );

        // Nobody's jobs: no sizes, no rows.
        let nobody = sizes(&store, &[42], true);
        assert!(nobody.bounds.is_empty() && nobody.rows.is_empty());
    }
}
