//! The ingest's bulk paths, on every backend: the runs and steps a batch touches are found
//! and rewritten whether their ids are dense (read and deleted as ranges, rows in the gaps
//! left alone) or scattered (looked up and deleted id by id), and batches of any size are
//! written whole (multi-row INSERTs of several sizes on SQLite and MariaDB, `COPY` on
//! PostgreSQL).

use crate::common;

per_backend!(
    dense_and_scattered_jobs_are_found_again,
    batches_of_any_size_are_written_whole,
);

mod cases {
    use sluice_dbd::store::*;
    use sluice_vocab::states::JobState;

    use super::common::TestDb;
    use super::common::jobs::*;

    fn all(store: &Store) -> Vec<JobRun> {
        query(
            store,
            &JobQuery {
                duplicates: true,
                ..Default::default()
            },
        )
    }

    fn run(runs: &[JobRun], job_id: u32, run: u32) -> &JobRun {
        runs.iter()
            .find(|r| r.job_id == job_id && r.run == run)
            .unwrap_or_else(|| panic!("no run {job_id}.{run}"))
    }

    /// Job ids a second batch names: a dense stretch with one stored job left out (20), a
    /// stretch with a gap at every other id (50, 52, .., 80), scattered ones, a job whose
    /// run 0 was requeued (400), and a job the first batch never named (999).
    fn second_batch_jobs() -> Vec<u32> {
        let mut ids: Vec<u32> = (1..=40).filter(|&id| id != 20).collect();
        ids.extend((50..=80).step_by(2));
        ids.extend([100, 333, 400, 999]);
        ids
    }

    pub fn dense_and_scattered_jobs_are_found_again(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut first_ids: Vec<u32> = (1..=40).collect();
        first_ids.extend((50..=80).step_by(2));
        first_ids.extend([100, 205, 333, 400]);
        let mut kinds: Vec<RecordKind> = Vec::new();
        for &id in &first_ids {
            kinds.push(submitted(id, 1_000));
            kinds.push(started(id, 0, 1_010));
            kinds.push(step(id, -4, 1_010, 0, JobState::Running));
        }
        kinds.push(ended(400, 0, 1_050, JobState::Requeued, 0));
        kinds.push(started(400, 1, 1_100));
        let first = numbered(1, kinds);
        let mut seq = store.record_batch("c1", 1, &first).unwrap();

        // The second batch only ends runs and steps: each must find the stored row (a missed
        // one would be inserted again, and its key refused).
        let mut kinds: Vec<RecordKind> = Vec::new();
        for id in second_batch_jobs() {
            let run = u32::from(id == 400);
            kinds.push(ended(id, run, 2_000, JobState::Completed, 0));
            if id != 400 && id != 999 {
                // An end record without the step's start, name or nodes keeps the stored ones.
                let RecordKind::Step(mut end) = step(id, -4, 0, 2_000, JobState::Completed) else {
                    unreachable!()
                };
                end.name.clear();
                end.node_list.clear();
                kinds.push(RecordKind::Step(end));
            }
        }
        let second = numbered(seq + 1, kinds);
        seq = store.record_batch("c1", 1, &second).unwrap();
        assert_eq!(seq, second.last().unwrap().seq);

        let runs = all(&store);
        let mut expected_keys: Vec<(u32, u32)> = first_ids.iter().map(|&id| (id, 0)).collect();
        expected_keys.extend([(400, 1), (999, 0)]);
        expected_keys.sort_unstable();
        let mut keys: Vec<(u32, u32)> = runs.iter().map(|r| (r.job_id, r.run)).collect();
        keys.sort_unstable();
        assert_eq!(keys, expected_keys);

        for id in second_batch_jobs()
            .into_iter()
            .filter(|&id| id != 400 && id != 999)
        {
            let r = run(&runs, id, 0);
            assert_eq!(
                (r.state, r.submit, r.start, r.end, r.name.as_str()),
                (
                    JobState::Completed.stored(),
                    1_000,
                    1_010,
                    2_000,
                    format!("job{id}").as_str()
                ),
                "job {id}"
            );
            assert_eq!(r.steps.len(), 1, "job {id}");
            let s = &r.steps[0];
            assert_eq!(
                (s.start, s.end, s.name.as_str(), s.node_list.as_str()),
                (1_010, 2_000, "batch", "n1"),
                "step of job {id}"
            );
        }
        // Stored jobs the second batch did not name, inside its ranges (20) or not (205).
        for id in [20, 205] {
            let r = run(&runs, id, 0);
            assert_eq!(
                (r.state, r.end),
                (JobState::Running.stored(), 0),
                "job {id}"
            );
            assert_eq!(r.steps[0].end, 0, "step of job {id}");
        }
        let requeued = run(&runs, 400, 0);
        assert_eq!(requeued.state, JobState::Requeued.stored());
        let rerun = run(&runs, 400, 1);
        assert_eq!(
            (rerun.state, rerun.start, rerun.end),
            (JobState::Completed.stored(), 1_100, 2_000)
        );
        let unknown = run(&runs, 999, 0);
        assert_eq!(
            (unknown.state, unknown.end),
            (JobState::Completed.stored(), 2_000)
        );
    }

    /// Enough rows for full chunks and every smaller size, and a few suspensions.
    const JOBS: u32 = 437;

    pub fn batches_of_any_size_are_written_whole(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut kinds: Vec<RecordKind> = Vec::new();
        for id in 1..=JOBS {
            kinds.push(submitted(id, 1_000));
            kinds.push(started(id, 0, 1_010));
            kinds.push(step(id, -4, 1_010, 1_500, JobState::Completed));
            if id % 100 == 7 {
                kinds.push(suspended(id, 1_100, true));
                kinds.push(suspended(id, 1_130, false));
            }
            kinds.push(ended(id, 0, 1_500, JobState::Completed, 0));
        }
        let records = numbered(1, kinds);
        let last = records.last().unwrap().seq;
        assert_eq!(store.record_batch("c1", 7, &records).unwrap(), last);
        // Delivered again: nothing new, nothing refused.
        assert_eq!(store.record_batch("c1", 7, &records).unwrap(), last);

        let runs = all(&store);
        assert_eq!(ids(&runs), (1..=JOBS).collect::<Vec<_>>());
        for r in &runs {
            let suspended = if r.job_id % 100 == 7 { 30 } else { 0 };
            assert_eq!(
                (r.state, r.end, r.suspended_secs, r.steps.len()),
                (JobState::Completed.stored(), 1_500, suspended, 1),
                "job {}",
                r.job_id
            );
        }
    }
}
