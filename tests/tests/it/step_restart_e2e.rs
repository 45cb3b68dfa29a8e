//! An srun step whose node daemon is killed with `kill -9` while its task runs, inside a batch
//! job: the task runs on under its supervisor (`sluice-stepd --task`), the restarted daemon
//! adopts it, srun (which lost its stream) says so and waits for the daemon, then gets the
//! task's true exit code; srun exits with it and sacct shows it for the step.

use crate::common;

use common::cluster::Cluster;

#[test]
fn a_node_daemon_killed_under_an_srun_step_loses_no_exit_code() {
    let c = Cluster::start(1);
    let script = "srun sh -c 'echo before; touch started; while [ ! -e go ]; do sleep 0.1; done; echo after; exit 7'; echo srun=$? > srun.rc";
    let job = c.sbatch(&["-o", "job.out", "--wrap", script]);
    c.wait_for("the step's task to run", || c.work.join("started").exists());
    // Its first line reached srun before the kill.
    c.wait_file("job.out", "before\n");
    let record = c
        .dir()
        .join(format!("cluster/spool/clustern1/launches/step.{job}.0.0"));
    assert!(record.exists(), "the task's launch record");
    c.kill9_noded("clustern1");
    c.up();
    std::fs::write(c.work.join("go"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(
        c.read("srun.rc"),
        "srun=7\n",
        "srun has the task's exit code"
    );
    let step = format!("{job}.0");
    c.wait_for("the step's record", || {
        let out = c.cmd(
            "sacct",
            &[
                "-n",
                "-P",
                "-o",
                "JobID,State,ExitCode",
                "-j",
                &job.to_string(),
            ],
        );
        out.stdout
            .lines()
            .any(|l| l == format!("{step}|FAILED|7:0"))
    });
    let out = c.read("job.out");
    assert!(
        out.contains("before\n"),
        "the output before the kill: {out}"
    );
    assert!(
        out.contains("srun: error: clustern1: lost the connection to the node daemon"),
        "{out}"
    );
    assert!(out.contains("srun: clustern1: node daemon back"), "{out}");
    assert!(
        out.contains("srun: error: clustern1: task 0: Exited with exit code 7"),
        "{out}"
    );
    assert!(!record.exists(), "the task's files go with its end");
}
