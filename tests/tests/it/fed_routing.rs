//! Commands about a federated job reach the cluster that must act on it, whichever cluster's
//! commands a user runs: suspend/resume and signals go to the cluster running the job, holds
//! and releases to its origin (which withdraws and re-offers its siblings), updates of a
//! running job to the cluster running it. Three real clusters, driven through the real
//! `scontrol` / `scancel` / `squeue` with each cluster's `SLURM_CONF`.

use crate::common;
use common::procs::{TRAPPER, proc_state};

use common::federation::Federation;

/// Cluster `i`'s own copy of `job` as `squeue -o <format>` shows it ("" when it has none:
/// squeue then fails with Slurm's "Invalid job id specified").
fn local(fed: &Federation, i: usize, job: &str, format: &str) -> String {
    let out = fed.cmd(i, "squeue", &["-h", "-j", job, "-o", format]);
    if out.code != 0 {
        assert!(out.stderr.contains("Invalid job id specified"), "{out:?}");
    }
    out.stdout.trim().to_string()
}

/// The work directory's `file` once it holds a whole line.
fn wait_line(fed: &Federation, file: &str) -> String {
    let path = fed.work.join(file);
    let mut text = String::new();
    fed.wait_for(&format!("{file} to be written"), || {
        text = std::fs::read_to_string(&path).unwrap_or_default();
        text.ends_with('\n')
    });
    text.trim().to_string()
}

/// The value of `key` in `scontrol show job` text.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
}

/// Waits until cluster `i`'s controller sees cluster `name` with `features` (the origin
/// checks `--cluster-constraint` against its own view).
fn wait_features(fed: &Federation, i: usize, name: &str, features: &[&str]) {
    fed.wait_for(
        &format!("{} to see {name}'s features", fed.names[i]),
        || {
            let view = fed.controller_view(i);
            view.self_
                .iter()
                .chain(&view.siblings)
                .any(|m| m.name == name && m.features == features)
        },
    );
}

/// A trapping job with origin cluster1 that only cluster2 (the one gpu cluster) may run;
/// returns its id once it runs there and the script has written its pids.
fn start_on_cluster2(fed: &Federation) -> String {
    fed.sacctmgr(&["modify", "cluster", "cluster2", "set", "features=gpu"]);
    wait_features(fed, 0, "cluster2", &["gpu"]);
    std::fs::write(fed.work.join("trap.sh"), TRAPPER).expect("write trap.sh");
    let job = fed
        .sbatch(0, &["--cluster-constraint=gpu", "trap.sh"])
        .to_string();
    fed.wait_for("the job to run on cluster2", || {
        local(fed, 1, &job, "%t") == "R"
    });
    wait_line(fed, "pid.txt");
    wait_line(fed, "child.txt");
    job
}

#[test]
fn suspend_resume_signal_and_update_reach_the_running_cluster() {
    let fed = Federation::start(3);
    let job = start_on_cluster2(&fed);
    let shell = wait_line(&fed, "pid.txt");
    let child = wait_line(&fed, "child.txt");

    // From cluster3, which holds no copy: suspended on cluster2, the processes stop.
    fed.ok(2, "scontrol", &["suspend", &job]);
    fed.wait_for("squeue on cluster2 to show S", || {
        local(&fed, 1, &job, "%t") == "S"
    });
    fed.wait_for("the job's processes to stop", || {
        proc_state(&shell) == "T" && proc_state(&child) == "T"
    });
    let out = fed.ok(
        0,
        "squeue",
        &[
            "--federation",
            "-h",
            "-j",
            &job,
            "-O",
            "statecompact,cluster",
        ],
    );
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(words, ["S", "cluster2"], "{out}");

    // From the origin, whose copy is the REVOKED tracker: resumed on cluster2.
    fed.ok(0, "scontrol", &["resume", &job]);
    fed.wait_for("squeue on cluster2 to show R", || {
        local(&fed, 1, &job, "%t") == "R"
    });
    fed.wait_for("the job's processes to continue", || {
        proc_state(&shell) != "T" && proc_state(&child) != "T"
    });

    // A signal from cluster3 reaches the script's trap on cluster2; the job goes on.
    fed.ok(2, "scancel", &["-s", "USR1", &job]);
    assert_eq!(wait_line(&fed, "sig.txt"), "USR1");
    assert_eq!(local(&fed, 1, &job, "%t"), "R");

    // A new time limit from cluster3, then from the origin: the running cluster has it.
    let update = |i: usize, limit: &str| {
        fed.ok(
            i,
            "scontrol",
            &[
                "update",
                &format!("jobid={job}"),
                &format!("timelimit={limit}"),
            ],
        );
        let shown = fed.ok(1, "scontrol", &["show", "job", &job]);
        field(&shown, "TimeLimit").to_string()
    };
    assert_eq!(update(2, "45"), "00:45:00");
    assert_eq!(update(0, "1:30:00"), "01:30:00");
    let out = fed.ok(1, "squeue", &["-h", "-j", &job, "-o", "%l"]);
    assert_eq!(out.trim(), "1:30:00");

    // Cancelled from cluster3: the script gets its SIGTERM on cluster2 and the job ends.
    fed.ok(2, "scancel", &[&job]);
    fed.wait_for("the job to end on cluster2", || {
        local(&fed, 1, &job, "%t").is_empty()
    });
    assert_eq!(
        std::fs::read_to_string(fed.work.join("sig.txt")).unwrap_or_default(),
        "USR1\nTERM\n"
    );
}

/// Fills every cluster's only node with a long job pinned there with `-M`.
fn fill(fed: &Federation) -> Vec<String> {
    let mut blockers = Vec::new();
    for name in fed.names.clone() {
        let job = fed.sbatch(0, &["-M", &name, "--wrap", "sleep 600"]);
        blockers.push(job.to_string());
    }
    for (job, i) in blockers.iter().zip(0..) {
        fed.wait_for(&format!("blocker {job} running"), || {
            local(fed, i, job, "%T") == "RUNNING"
        });
    }
    blockers
}

/// `FedActiveSiblings` of `job` on its origin (cluster1).
fn active(fed: &Federation, job: &str) -> String {
    let shown = fed.ok(0, "scontrol", &["show", "job", job]);
    field(&shown, "FedActiveSiblings").to_string()
}

#[test]
fn a_hold_from_a_sibling_keeps_the_job_on_its_origin_until_released() {
    let fed = Federation::start(3);
    let blockers = fill(&fed);
    let job = fed
        .sbatch(0, &["--wrap", "echo $SLURM_CLUSTER_NAME"])
        .to_string();
    fed.wait_for("copies on all three clusters", || {
        active(&fed, &job) == "cluster1,cluster2,cluster3"
    });

    // A pending job's update from cluster3 goes to the origin, which passes it on to every copy.
    fed.ok(
        2,
        "scontrol",
        &["update", &format!("jobid={job}"), "timelimit=20"],
    );
    fed.wait_for("cluster2's copy to get the new time limit", || {
        let shown = fed.ok(1, "scontrol", &["show", "job", &job]);
        field(&shown, "TimeLimit") == "00:20:00"
    });

    // Suspend is for running jobs: refused with Slurm's words from a sibling.
    let out = fed.cmd(1, "scontrol", &["suspend", &job]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Job is pending execution"), "{out:?}");

    // Held from cluster2 (a sibling): the origin holds it and withdraws every other copy.
    fed.ok(1, "scontrol", &["hold", &job]);
    fed.wait_for("the copies withdrawn", || {
        active(&fed, &job) == "cluster1"
            && local(&fed, 1, &job, "%T").is_empty()
            && local(&fed, 2, &job, "%T").is_empty()
    });
    let out = fed.ok(
        2,
        "squeue",
        &[
            "--federation",
            "-h",
            "-j",
            &job,
            "-O",
            "state,reason,cluster",
        ],
    );
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(words, ["PENDING", "JobHeldAdmin", "cluster1"], "{out}");

    // Held, it starts nowhere, even with a cluster free: a younger job pinned to the free
    // cluster3 runs there and ends while the held job stays pending on its origin.
    fed.ok(0, "scancel", &[&blockers[2]]);
    let probe = fed.sbatch(0, &["-M", "cluster3", "--wrap", "echo $SLURM_CLUSTER_NAME"]);
    let out = fed.work.join(format!("slurm-{probe}.out"));
    fed.wait_for("the probe to run on cluster3", || {
        std::fs::read_to_string(&out).unwrap_or_default() == "cluster3\n"
    });
    assert_eq!(local(&fed, 0, &job, "%T"), "PENDING");
    assert!(local(&fed, 2, &job, "%T").is_empty());

    // Released from cluster3 (no copy there now): offered again, it runs on the free cluster.
    fed.ok(2, "scontrol", &["release", &job]);
    let file = fed.work.join(format!("slurm-{job}.out"));
    fed.wait_for("the job to run on cluster3", || {
        std::fs::read_to_string(&file).unwrap_or_default() == "cluster3\n"
    });
    for b in &blockers[..2] {
        fed.ok(0, "scancel", &[b]);
    }
}
