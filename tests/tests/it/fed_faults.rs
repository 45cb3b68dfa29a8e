//! A federated job never runs twice, whatever fails: a controller killed with `kill -9` while
//! jobs start, the accounting daemon restarted while jobs start; and a cluster leaving the
//! federation with DRAIN+REMOVE while it has jobs running and pending.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::federation::Federation;

/// Submits `n` short jobs from cluster `i`, each appending its cluster's name to `runs/<id>`.
fn submit(fed: &Federation, i: usize, n: usize, runs: &Path) -> Vec<u32> {
    let script = format!(
        "echo $SLURM_CLUSTER_NAME >> {}/$SLURM_JOB_ID",
        runs.display()
    );
    (0..n)
        .map(|_| fed.sbatch(i, &["-o", "/dev/null", "--wrap", &script]))
        .collect()
}

/// The runs recorded in `runs/`: job id → one cluster name per run.
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

/// Waits until every one of `ids` has run, then checks each ran exactly once.
fn each_ran_once(fed: &Federation, runs: &Path, ids: &[u32]) {
    fed.wait_within(Duration::from_secs(180), "every job to run", || {
        let seen = runs_of(runs);
        ids.iter().all(|id| seen.contains_key(id))
    });
    // Late duplicates would show up in the files: let every job reach its end first.
    fed.wait_within(Duration::from_secs(120), "every job to end", || {
        let out = fed.cmd(
            0,
            "squeue",
            &[
                "--federation",
                "-h",
                "-t",
                "pending,running,completing",
                "-o",
                "%i",
            ],
        );
        out.code == 0 && out.stdout.trim().is_empty()
    });
    let seen = runs_of(runs);
    for id in ids {
        let clusters = &seen[id];
        assert_eq!(clusters.len(), 1, "job {id} ran {clusters:?}");
    }
}

#[test]
fn a_controller_killed_while_jobs_start_runs_nothing_twice() {
    let fed = Federation::start(3);
    let runs = fed.work.join("runs");
    std::fs::create_dir_all(&runs).expect("runs dir");

    let mut ids = submit(&fed, 0, 20, &runs);
    ids.extend(submit(&fed, 1, 20, &runs));
    // cluster2 is taking start locks for these right now: kill it mid-way.
    fed.kill9_ctld(1);
    ids.extend(submit(&fed, 2, 20, &runs));
    // With their origin down, cluster2's jobs still start on the other clusters: none is left
    // pending there (a job whose start cluster2 had committed waits for cluster2).
    fed.wait_within(Duration::from_secs(120), "no job left pending", || {
        let out = fed.cmd(
            0,
            "squeue",
            &["--federation", "-h", "-t", "pending", "-o", "%i"],
        );
        out.code == 0 && out.stdout.trim().is_empty()
    });
    // Its siblings keep starting elsewhere; its lease expires; it comes back and catches up.
    fed.up();
    ids.extend(submit(&fed, 1, 10, &runs));
    each_ran_once(&fed, &runs, &ids);
}

#[test]
fn the_dbd_restarted_while_jobs_start_runs_nothing_twice() {
    let fed = Federation::start(3);
    let runs = fed.work.join("runs");
    std::fs::create_dir_all(&runs).expect("runs dir");

    let mut ids = submit(&fed, 0, 20, &runs);
    ids.extend(submit(&fed, 1, 20, &runs));
    ids.extend(submit(&fed, 2, 20, &runs));
    fed.stop_dbd();
    fed.up();
    ids.extend(submit(&fed, 0, 10, &runs));
    each_ran_once(&fed, &runs, &ids);

    // The accounting still has one COMPLETED row per job.
    fed.wait_for("sacct to record every job", || {
        let out = fed.cmd(
            2,
            "sacct",
            &["--federation", "-X", "-n", "-P", "-o", "JobIDRaw,State"],
        );
        ids.iter().all(|id| {
            let rows: Vec<&str> = out
                .stdout
                .lines()
                .filter(|l| l.starts_with(&format!("{id}|")))
                .collect();
            rows == [format!("{id}|COMPLETED")]
        })
    });
}

#[test]
fn a_drain_remove_cluster_finishes_its_jobs_and_leaves() {
    let fed = Federation::start(3);
    let go = fed.work.join("go");
    let wait = format!(
        "while [ ! -e {} ]; do sleep 0.1; done; echo $SLURM_CLUSTER_NAME",
        go.display()
    );
    // cluster3: one job running (held by the `go` file), two pending behind it.
    let running = fed.sbatch(2, &["-M", "cluster3", "--wrap", &wait]);
    fed.wait_for("the first job to run", || {
        let out = fed.cmd(2, "squeue", &["-h", "-j", &running.to_string(), "-o", "%T"]);
        out.stdout.trim() == "RUNNING"
    });
    let pending: Vec<u32> = (0..2)
        .map(|_| fed.sbatch(2, &["-M", "cluster3", "--wrap", "echo $SLURM_CLUSTER_NAME"]))
        .collect();

    fed.sacctmgr(&[
        "modify",
        "cluster",
        "cluster3",
        "set",
        "fedstate=drain+remove",
    ]);
    let out = fed.ok(
        0,
        "sacctmgr",
        &[
            "-n",
            "-P",
            "show",
            "cluster",
            "cluster3",
            "format=cluster,fedstate",
        ],
    );
    assert_eq!(out.trim(), "cluster3|DRAIN+REMOVE");
    // New federated jobs are no longer offered to it.
    let job = fed.sbatch(0, &["--wrap", "echo $SLURM_CLUSTER_NAME"]);
    fed.wait_for("a new job to run off cluster3", || {
        std::fs::read_to_string(fed.work.join(format!("slurm-{job}.out")))
            .is_ok_and(|t| t.ends_with('\n'))
    });
    assert_ne!(
        std::fs::read_to_string(fed.work.join(format!("slurm-{job}.out")))
            .unwrap_or_default()
            .trim(),
        "cluster3"
    );
    // It stays a member while its jobs run.
    let members = fed.sacctmgr(&[
        "-n",
        "-P",
        "show",
        "federation",
        "format=federation,cluster",
    ]);
    assert!(members.lines().any(|l| l == "fed1|cluster3"), "{members}");

    std::fs::write(&go, "").expect("release the running job");
    for id in std::iter::once(running).chain(pending) {
        let file = fed.work.join(format!("slurm-{id}.out"));
        fed.wait_for(&format!("job {id} to finish on cluster3"), || {
            std::fs::read_to_string(&file).is_ok_and(|t| t == "cluster3\n")
        });
    }
    fed.wait_for("cluster3 to leave the federation", || {
        let members = fed.sacctmgr(&[
            "-n",
            "-P",
            "show",
            "federation",
            "format=federation,cluster",
        ]);
        let mut m: Vec<&str> = members.lines().collect();
        m.sort_unstable();
        m == ["fed1|cluster1", "fed1|cluster2"]
    });
    // The departed cluster takes jobs again, as a cluster of its own (plain ids).
    fed.wait_for("cluster3 to issue plain ids", || {
        let out = fed.cmd(2, "sbatch", &["--parsable", "--wrap", "true"]);
        out.code == 0
            && out
                .stdout
                .trim()
                .parse::<u32>()
                .is_ok_and(|id| id < 1 << 26)
    });
    let shown = fed.ok(0, "scontrol", &["show", "federation"]);
    assert!(!shown.contains("cluster3"), "{shown}");
}
