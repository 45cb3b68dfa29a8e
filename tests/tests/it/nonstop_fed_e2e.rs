//! Failure management of a federated job: a `--no-kill` job submitted on cluster1 that only
//! cluster2 may run (`--cluster-constraint`) loses a node on cluster2; `smd`, run with
//! cluster2's configuration as a batch script there would run it and given the federated job
//! id, sees the failed node and gets it replaced by cluster2's hot spare; the next step runs on
//! the new node list, the origin's copy stays revoked, and accounting keeps the first
//! allocation's record (RESIZING) before the job's own.

use crate::common;

use common::federation::Federation;

/// Turns failure management on for cluster `i` (`nonstop` as its `nonstop.conf`); the
/// controller is stopped, `Federation::up` starts it again reading them.
fn enable_nonstop(fed: &Federation, i: usize, nonstop: &str) {
    let conf = fed.conf(i);
    std::fs::write(conf.with_file_name("nonstop.conf"), nonstop).unwrap();
    let mut text = std::fs::read_to_string(&conf).unwrap();
    text.push_str("SlurmctldPlugin=slurmctld/nonstop\n");
    std::fs::write(&conf, text).unwrap();
    fed.kill9_ctld(i);
}

/// Cluster `i`'s own view of `job` as `squeue -o <format>` shows it.
fn squeue(fed: &Federation, i: usize, job: &str, format: &str) -> String {
    let out = fed.cmd(i, "squeue", &["-h", "-j", job, "-o", format]);
    out.stdout.trim().to_string()
}

#[test]
fn a_federated_no_kill_job_gets_a_spare_where_it_runs_and_smd_takes_its_federated_id() {
    let fed = Federation::start_with(2, 3, &[]);
    for i in 0..2 {
        enable_nonstop(&fed, i, "HotSpareCount=debug:1\nTimeLimitExtend=2\n");
    }
    fed.up();
    fed.sacctmgr(&["modify", "cluster", "cluster2", "set", "features=gpu"]);
    fed.wait_for("cluster1 to see cluster2's features", || {
        let view = fed.controller_view(0);
        view.siblings
            .iter()
            .any(|m| m.name == "cluster2" && m.features == ["gpu"])
    });
    let job = fed
        .sbatch(
            0,
            &[
                "--cluster-constraint=gpu",
                "-N2",
                "-k",
                "-t",
                "10",
                "--wrap",
                "sleep 600",
            ],
        )
        .to_string();
    assert!(
        job.parse::<u32>().unwrap() >= 1 << 26,
        "a federated id: {job}"
    );
    fed.wait_for("the job to run on cluster2", || {
        squeue(&fed, 1, &job, "%t") == "R"
    });
    assert_eq!(squeue(&fed, 1, &job, "%N"), "cluster2n[1-2]");

    fed.ok(
        1,
        "scontrol",
        &["update", "NodeName=cluster2n2", "State=DOWN", "Reason=test"],
    );
    fed.wait_for("smd to see the failed node", || {
        let out = fed.cmd(1, "smd", &["-j", &job, "-f", "-p"]);
        out.code == 0 && out.stdout.contains("|cluster2n2|")
    });
    assert_eq!(fed.state(1, &job), "RUNNING", "--no-kill keeps it");

    let out = fed.ok(1, "smd", &["-j", &job, "-r", "cluster2n2"]);
    assert!(out.contains("cluster2n3"), "{out}");
    assert_eq!(squeue(&fed, 1, &job, "%N"), "cluster2n[1,3]");
    let query = fed.ok(1, "smd", &["-j", &job, "-q"]);
    assert!(
        query.contains(&format!("JobId={job} NodeList=cluster2n[1,3]")),
        "{query}"
    );
    // The origin's own copy stays revoked (cluster2 runs the job): the failure did not
    // send it back to the origin to be queued again.
    assert_eq!(fed.state(0, &job), "REVOKED");
    assert_eq!(fed.state(1, &job), "RUNNING");

    // The next step runs on the new node list.
    let out = fed.ok(
        1,
        "srun",
        &["--jobid", &job, "-N2", "-l", "printenv", "SLURMD_NODENAME"],
    );
    let mut nodes: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().last().unwrap_or_default())
        .collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["cluster2n1", "cluster2n3"], "{out}");

    fed.ok(0, "scancel", &[&job]);
    fed.wait_done(1, &job);
    fed.wait_for("cluster2's accounting to show both allocations", || {
        let out = fed.cmd(
            0,
            "sacct",
            &[
                "-M",
                "cluster2",
                "-n",
                "-P",
                "-X",
                "-j",
                &job,
                "-o",
                "State,NodeList",
            ],
        );
        let lines: Vec<&str> = out.stdout.lines().collect();
        lines.len() == 2
            && lines[0] == "RESIZING|cluster2n[1-2]"
            && lines[1].ends_with("|cluster2n[1,3]")
    });
}
