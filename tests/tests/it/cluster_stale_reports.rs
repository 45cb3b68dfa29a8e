//! A node daemon killed with `kill -9` while its job runs: the node goes DOWN after
//! SlurmdTimeout, the job is requeued and runs on the other node; when the old node daemon
//! comes back, its report about the old run (killed by the controller) is dropped,
//! and the new run ends with its own exit code.

use crate::common;

use common::cluster::Cluster;

/// The first run records itself and sleeps; a later run records itself, waits for `gate`
/// and exits 0.
const SCRIPT: &str = "if mkdir first.d 2>/dev/null; then echo $SLURMD_NODENAME > run0.txt; sleep 300; else echo $SLURMD_NODENAME > run1.txt; while [ ! -e gate ]; do sleep 0.1; done; fi";

#[test]
fn a_node_daemon_back_after_its_job_was_requeued_elsewhere_does_not_end_the_new_run() {
    let c = Cluster::start_with(2, &["SlurmdTimeout=6"]);
    let job = c.sbatch(&["--wrap", SCRIPT]);
    let first = c.wait_file("run0.txt", "n").trim().to_string();
    // Once the node daemon has recorded the launch, it finds the script again after a restart.
    let record = c
        .dir()
        .join(format!("cluster/spool/{first}/launches/{job}_0"));
    c.wait_for("the launch record", || record.exists());
    c.kill9_noded(&first);

    // The node goes DOWN, the job is requeued (NODE_FAIL) and starts on the other node.
    let second = c.wait_file("run1.txt", "n").trim().to_string();
    assert_ne!(first, second);
    c.wait_state(job, "RUNNING");

    // The old node daemon comes back: it finds its old run, which the controller has it kill,
    // and reports that run's end, which the controller must drop.
    c.up();
    let log = c.dir().join("log/ctld-cluster.log");
    let needle = format!("stale report for job {job} dropped: run 0 is over, the job is in run 1");
    c.wait_for("the old run's report to be dropped", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains(&needle))
    });
    assert_eq!(c.state(&job.to_string()), "RUNNING");
    let nodes = c.ok("squeue", &["-h", "-j", &job.to_string(), "-o", "%N"]);
    assert_eq!(nodes.trim(), second);

    std::fs::write(c.work.join("gate"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED");
    c.wait_for("the new run in sacct", || {
        let out = c.cmd(
            "sacct",
            &[
                "-n",
                "-X",
                "-P",
                "-o",
                "State,ExitCode,NodeList",
                "-j",
                &job.to_string(),
            ],
        );
        out.stdout.trim() == format!("COMPLETED|0:0|{second}")
    });
}
