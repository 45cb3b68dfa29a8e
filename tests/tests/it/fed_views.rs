//! What a user sees of a three-cluster federation: `squeue --federation` and `-M all`,
//! `scontrol show federation`, the Fed lines of `scontrol show job`, `sinfo --federation`,
//! and the changes to a pending job's siblings: `scancel --sibling` and
//! `scontrol update jobid=X clusters=...`.

use crate::common;

use common::federation::Federation;

/// Fills every cluster's only node with a long job (`-M` pins each to its cluster), so
/// federated jobs submitted next stay pending with their siblings offered everywhere.
fn fill(fed: &Federation) -> Vec<u32> {
    let mut blockers = Vec::new();
    for name in fed.names.clone() {
        let job = fed.sbatch(0, &["-M", &name, "--wrap", "sleep 600"]);
        blockers.push(job);
    }
    for (job, name) in blockers.iter().zip(&fed.names) {
        fed.wait_for(&format!("blocker {job} running on {name}"), || {
            let out = fed.cmd(
                0,
                "squeue",
                &["-M", name, "-h", "-j", &job.to_string(), "-o", "%T"],
            );
            out.stdout.lines().any(|l| l.trim() == "RUNNING")
        });
    }
    blockers
}

/// `scontrol show job` of `job` from cluster `i`, one `key=value` per element.
fn show_job(fed: &Federation, i: usize, job: u32) -> String {
    fed.ok(i, "scontrol", &["show", "job", &job.to_string()])
}

/// The value of `key` in `scontrol show job` text.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
}

#[test]
fn federation_views_of_pending_and_running_jobs() {
    let fed = Federation::start(3);

    // scontrol show federation: Federation, Self, one Sibling line per other member.
    let mut shown = String::new();
    fed.wait_for("every sibling connected", || {
        shown = fed.ok(0, "scontrol", &["show", "federation"]);
        shown.matches("Synced:Yes").count() == 2
    });
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 4, "{shown}");
    assert_eq!(lines[0], "Federation: fed1", "{shown}");
    assert!(
        lines[1].starts_with("Self:       cluster1:127.0.0.1:"),
        "{shown}"
    );
    assert!(lines[1].contains("FedState:ACTIVE"), "{shown}");
    assert!(lines[2].starts_with("Sibling:    cluster2:"), "{shown}");
    assert!(lines[3].starts_with("Sibling:    cluster3:"), "{shown}");

    let blockers = fill(&fed);
    let job = fed.sbatch(0, &["-J", "fedpend", "--wrap", "true"]);
    let id = job.to_string();

    // scontrol show job: the Fed lines, from the origin and from a sibling.
    let text = show_job(&fed, 0, job);
    assert_eq!(field(&text, "JobState"), "PENDING", "{text}");
    assert_eq!(field(&text, "FedOrigin"), "cluster1", "{text}");
    assert_eq!(
        field(&text, "FedViableSiblings"),
        "cluster1,cluster2,cluster3",
        "{text}"
    );
    fed.wait_for("siblings active on all three", || {
        field(&show_job(&fed, 0, job), "FedActiveSiblings") == "cluster1,cluster2,cluster3"
    });
    let text = show_job(&fed, 2, job);
    assert_eq!(field(&text, "FedOrigin"), "cluster1", "{text}");

    // squeue --federation: one line per job; --sibling: one per copy; -M all: every
    // cluster's own view with a CLUSTER header.
    let out = fed.ok(
        1,
        "squeue",
        &[
            "--federation",
            "-h",
            "-j",
            &id,
            "-O",
            "jobid,origin,siblingsactive:40,statecompact",
        ],
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [[id.as_str(), "cluster1", "cluster1,cluster2,cluster3", "PD"]],
        "{out}"
    );
    // The origin counts a sibling active once the dbd recorded the offer; the sibling's copy
    // comes with its next event batch.
    fed.wait_for("one copy per cluster", || {
        let out = fed.ok(1, "squeue", &["--sibling", "-h", "-j", &id, "-o", "%i"]);
        out.lines().count() == 3
    });
    let out = fed.ok(0, "squeue", &["-M", "all", "-j", &id]);
    assert_eq!(out.matches("CLUSTER: ").count(), 3, "{out}");
    assert_eq!(out.matches("fedpend").count(), 3, "{out}");

    // sinfo --federation: every cluster's partition, with the cluster column.
    let out = fed.ok(0, "sinfo", &["--federation", "-h", "-o", "%V %P %D"]);
    for name in &fed.names {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name} in {out}"
        );
    }

    // scancel --sibling=cluster3 withdraws that copy only.
    fed.ok(0, "scancel", &["--sibling=cluster3", &id]);
    fed.wait_for("cluster3's copy withdrawn", || {
        field(&show_job(&fed, 0, job), "FedActiveSiblings") == "cluster1,cluster2"
    });
    let text = show_job(&fed, 0, job);
    assert_eq!(field(&text, "JobState"), "PENDING", "{text}");

    // scontrol update clusters=: the viable set follows; copies are revoked or offered.
    fed.ok(
        0,
        "scontrol",
        &["update", &format!("jobid={id}"), "clusters=cluster3"],
    );
    fed.wait_for("the job viable on cluster3 only", || {
        let text = show_job(&fed, 0, job);
        field(&text, "FedViableSiblings") == "cluster3"
            && field(&text, "FedActiveSiblings") == "cluster3"
    });

    // Free cluster3: the job runs there, once; the others stay busy.
    fed.ok(0, "scancel", &[&blockers[2].to_string()]);
    let file = fed.work.join(format!("slurm-{id}.out"));
    fed.wait_for("the job to complete", || {
        let out = fed.cmd(
            0,
            "squeue",
            &[
                "--federation",
                "-h",
                "-t",
                "all",
                "-j",
                &id,
                "-O",
                "state,cluster",
            ],
        );
        let words: Vec<String> = out.stdout.split_whitespace().map(str::to_string).collect();
        words == ["COMPLETED", "cluster3"] && file.exists()
    });
    // Once started, a sibling can no longer be withdrawn (an already finished job is reported
    // only with -v, as Slurm's scancel does).
    let out = fed.cmd(0, "scancel", &["-v", "--sibling=cluster2", &id]);
    assert!(
        out.stderr.contains("Job is no longer pending execution")
            || out.stderr.contains("already completing or completed"),
        "{out:?}"
    );
    for b in &blockers[..2] {
        fed.ok(0, "scancel", &[&b.to_string()]);
    }
}
