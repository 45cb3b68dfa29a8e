//! Many federated jobs submitted from all three clusters at once: each runs exactly once,
//! as counted from the jobs' own output and from `sacct --federation`.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use common::federation::{Federation, parse_job_id};

/// Jobs submitted in all.
const JOBS: usize = 500;
/// Concurrent submitters per cluster.
const SUBMITTERS: usize = 3;

/// Submits `n` short jobs from cluster `i` writing one line each to `runs/<jobid>`.
fn submit(fed: &Federation, i: usize, n: usize, runs: &Path) -> Vec<u32> {
    let script = format!(
        "echo $SLURM_CLUSTER_NAME >> {}/$SLURM_JOB_ID",
        runs.display()
    );
    (0..n)
        .map(|_| {
            let out = fed.ok(
                i,
                "sbatch",
                &["--parsable", "-o", "/dev/null", "--wrap", &script],
            );
            parse_job_id(&out).unwrap_or_else(|| panic!("sbatch printed {out:?}"))
        })
        .collect()
}

/// The runs recorded in `runs/`: job id → the clusters that ran it (one line per run).
fn runs_of(runs: &Path) -> BTreeMap<u32, Vec<String>> {
    let mut seen = BTreeMap::new();
    for entry in std::fs::read_dir(runs).into_iter().flatten().flatten() {
        let Ok(id) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        seen.insert(id, text.lines().map(str::to_string).collect());
    }
    seen
}

#[test]
fn five_hundred_jobs_from_three_clusters_each_run_once() {
    let fed = Federation::start_with(3, 2, &[]);
    let runs = fed.work.join("runs");
    std::fs::create_dir_all(&runs).expect("runs dir");

    let per = JOBS / (3 * SUBMITTERS);
    let mut ids: Vec<u32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3 * SUBMITTERS)
            .map(|k| {
                let (fed, runs) = (&fed, &runs);
                // The first submitters take the remainder.
                let n = per + usize::from(k < JOBS % (3 * SUBMITTERS));
                s.spawn(move || submit(fed, k % 3, n, runs))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a submitter panicked"))
            .collect()
    });
    ids.sort_unstable();
    let unique: BTreeSet<u32> = ids.iter().copied().collect();
    assert_eq!(unique.len(), JOBS, "distinct federated ids");
    let origins: BTreeSet<u32> = ids.iter().map(|id| id >> 26).collect();
    assert_eq!(origins.len(), 3, "ids from three origins: {origins:?}");

    fed.wait_within(Duration::from_secs(300), "every job to run", || {
        runs_of(&runs).len() >= JOBS
    });
    // Every job ran exactly once, on a member of the federation.
    let seen = runs_of(&runs);
    assert_eq!(seen.keys().copied().collect::<BTreeSet<u32>>(), unique);
    for (id, clusters) in &seen {
        assert_eq!(clusters.len(), 1, "job {id} ran {clusters:?}");
        assert!(
            fed.names.contains(&clusters[0]),
            "job {id} ran on {clusters:?}"
        );
    }

    // sacct --federation: one COMPLETED row per job, from the cluster that ran it. While jobs
    // run, a job may briefly show twice: its origin's pending copy until the origin learns that
    // a sibling started it (then the copy is revoked and hidden, as in Slurm); once every job
    // has ended, never.
    let mut rows = BTreeMap::new();
    fed.wait_within(
        Duration::from_secs(120),
        "sacct to record every job",
        || {
            let out = fed.ok(
                1,
                "sacct",
                &[
                    "--federation",
                    "-X",
                    "-n",
                    "-P",
                    "-o",
                    "JobIDRaw,State,Cluster",
                ],
            );
            rows.clear();
            let mut dup = false;
            for line in out.lines() {
                let f: Vec<&str> = line.split('|').collect();
                if let [id, state, cluster] = f[..]
                    && let Ok(id) = id.parse::<u32>()
                {
                    dup |= rows
                        .insert(id, (state.to_string(), cluster.to_string()))
                        .is_some();
                }
            }
            let done = rows.len() >= JOBS && rows.values().all(|(s, _)| s == "COMPLETED");
            if done {
                assert!(!dup, "a job has two rows in sacct -X:\n{out}");
            }
            done
        },
    );
    assert_eq!(rows.keys().copied().collect::<BTreeSet<u32>>(), unique);
    for (id, (_, cluster)) in &rows {
        assert_eq!(
            &seen[id][0], cluster,
            "job {id}: sacct names the cluster that ran it"
        );
    }

    // sacct -D also shows the revoked copies of jobs that ran away from their origin.
    let away: Vec<u32> = rows
        .iter()
        .filter(|(id, (_, cluster))| fed.names[((**id >> 26) - 1) as usize] != *cluster)
        .map(|(id, _)| *id)
        .collect();
    let out = fed.ok(
        0,
        "sacct",
        &[
            "--federation",
            "-D",
            "-X",
            "-n",
            "-P",
            "-o",
            "JobIDRaw,State,Cluster",
        ],
    );
    eprintln!("{} of {JOBS} jobs ran away from their origin", away.len());
    if let Some(id) = away.first() {
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(&format!("{id}|")))
            .collect();
        assert!(
            lines.iter().any(|l| l.contains("|REVOKED|")),
            "job {id} ran away from its origin; sacct -D: {lines:?}"
        );
    }
}
