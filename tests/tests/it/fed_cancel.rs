//! Cancelling in a three-cluster federation as a user does it: `scancel -u <user>` on one
//! cluster cancels the user's pending and running federated jobs of every origin on every
//! cluster (one of another origin runs on a third cluster), and a cancelled job array leaves
//! nothing pending at the accounting daemon, whether cancelled at its origin or from another
//! cluster. A pending job cancelled from another cluster is recorded `CANCELLED by <uid>`.

use crate::common;

use common::federation::Federation;

/// The user running the tests, by name (`scancel -u`).
fn me() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .expect("the test user has a name")
}

/// `squeue --federation` lines (job id as shown, state) as cluster `i` sees them.
fn federation_queue(fed: &Federation, i: usize) -> Vec<(String, String)> {
    fed.ok(i, "squeue", &["--federation", "-h", "-o", "%i %T"])
        .lines()
        .filter_map(|l| {
            let (id, state) = l.trim().split_once(' ')?;
            Some((id.to_string(), state.trim().to_string()))
        })
        .collect()
}

/// Whether `queue` shows every job of `ids` in `state`.
fn all_in(queue: &[(String, String)], ids: &[u32], state: &str) -> bool {
    ids.iter()
        .all(|j| queue.contains(&(j.to_string(), state.to_string())))
}

/// Whether sacct (from cluster `i`, the whole federation) shows every job of `ids`
/// CANCELLED (a copy revoked when the job started elsewhere may show REVOKED beside it).
fn all_cancelled(fed: &Federation, i: usize, ids: &[u32]) -> bool {
    let out = fed.ok(
        i,
        "sacct",
        &["--federation", "-X", "-n", "-P", "-o", "JobIDRaw,State"],
    );
    ids.iter().all(|id| {
        let states: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("{id}|")))
            .collect();
        states.iter().any(|s| s.starts_with("CANCELLED"))
            && states
                .iter()
                .all(|s| s.starts_with("CANCELLED") || *s == "REVOKED")
    })
}

#[test]
fn scancel_by_user_cancels_federated_jobs_of_every_origin_everywhere() {
    let fed = Federation::start(3);
    // Running: cluster i's job pinned to the next cluster, so each runs away from its origin
    // (cluster2's on cluster3: neither the origin nor the cluster scancel runs on).
    let mut running = Vec::new();
    for i in 0..3 {
        let there = fed.names[(i + 1) % 3].clone();
        running.push(fed.sbatch(i, &["-M", &there, "--wrap", "sleep 600"]));
    }
    fed.wait_for("every pinned job running", || {
        all_in(&federation_queue(&fed, 0), &running, "RUNNING")
    });
    // Pending: one job of each origin, offered everywhere, waiting for a node.
    let pending: Vec<u32> = (0..3)
        .map(|i| fed.sbatch(i, &["--wrap", "sleep 600"]))
        .collect();
    fed.wait_for("the new jobs pending", || {
        all_in(&federation_queue(&fed, 2), &pending, "PENDING")
    });

    let out = fed.cmd(0, "scancel", &["-u", &me()]);
    assert_eq!(out.code, 0, "{out:?}");

    for i in 0..3 {
        fed.wait_for(&format!("squeue --federation empty on #{i}"), || {
            federation_queue(&fed, i).is_empty()
        });
    }
    let all: Vec<u32> = running.iter().chain(&pending).copied().collect();
    fed.wait_for("sacct to show every job CANCELLED", || {
        all_cancelled(&fed, 1, &all)
    });
}

/// The accounting daemon's fedstate of `cluster`.
fn fedstate(fed: &Federation, cluster: &str) -> String {
    fed.sacctmgr(&["-nP", "show", "cluster", cluster, "format=fedstate"])
        .trim()
        .to_string()
}

#[test]
fn a_cancelled_array_leaves_nothing_pending_at_the_dbd() {
    let fed = Federation::start(3);
    // Two arrays of cluster1 (arrays run on their origin only): one cancelled there, one
    // from cluster3.
    let here = fed.sbatch(0, &["--array=1-3", "--wrap", "sleep 600"]);
    let away = fed.sbatch(0, &["--array=1-2", "--wrap", "sleep 600"]);
    fed.wait_for("a task running", || {
        let queue = federation_queue(&fed, 2);
        queue.iter().any(|(_, s)| s == "RUNNING")
    });
    let out = fed.cmd(0, "scancel", &[&here.to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = fed.cmd(2, "scancel", &[&away.to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    for i in 0..3 {
        fed.wait_for(&format!("squeue --federation empty on #{i}"), || {
            federation_queue(&fed, i).is_empty()
        });
    }
    // Nothing of cluster1's is live at the dbd: draining, it is drained at once.
    fed.sacctmgr(&["modify", "cluster", "cluster1", "set", "fedstate=drain"]);
    fed.wait_for("cluster1 DRAINED", || {
        fedstate(&fed, "cluster1") == "DRAINED"
    });
    // Every task is recorded CANCELLED.
    fed.wait_for("sacct to show the five tasks CANCELLED", || {
        let out = fed.ok(0, "sacct", &["-X", "-n", "-P", "-o", "JobID,State"]);
        let tasks: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(&format!("{here}_")) || l.starts_with(&format!("{away}_")))
            .collect();
        tasks.len() == 5 && tasks.iter().all(|l| l.contains("|CANCELLED"))
    });
}

#[test]
fn a_pending_job_cancelled_from_another_cluster_is_recorded_cancelled_by_its_canceller() {
    let fed = Federation::start(2);
    // Held: pending on its origin (cluster1), with no copy on cluster2, so cluster2's scancel
    // goes through the dbd alone.
    let id = fed.sbatch(0, &["-H", "--wrap", "sleep 600"]);
    fed.wait_for("the job pending", || {
        federation_queue(&fed, 1).contains(&(id.to_string(), "PENDING".to_string()))
    });
    let out = fed.cmd(1, "scancel", &[&id.to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    let by = format!("CANCELLED by {}", nix::unistd::getuid().as_raw());
    let mut last = String::new();
    fed.wait_for(&format!("sacct to show {by}"), || {
        last = fed.ok(
            1,
            "sacct",
            &[
                "--federation",
                "-X",
                "-n",
                "-j",
                &id.to_string(),
                "-o",
                "state%20",
            ],
        );
        last.lines().map(str::trim).any(|l| l == by)
    });
    assert!(
        last.lines().map(str::trim).all(|l| l == by),
        "every record of the job: {last:?}"
    );
}
