//! Durability on a real local cluster: the controller killed with `kill -9` mid-workload and
//! restarted loses no job and runs none twice (counted from the jobs' own output files); the
//! accounting daemon stopped while jobs run loses no record (every job reaches sacct once).

use crate::common;

use common::cluster::Cluster;

/// A batch script that records its start in `runs-<job>.txt`, waits for the file `gate`
/// (in the work directory) and records its end.
fn gated(gate: &str) -> String {
    format!(
        "echo start >> runs-$SLURM_JOB_ID.txt; while [ ! -e {gate} ]; do sleep 0.1; done; echo end >> runs-$SLURM_JOB_ID.txt"
    )
}

#[test]
fn a_controller_killed_with_kill_9_loses_no_job_and_runs_none_twice() {
    let c = Cluster::start(2);
    // Two running jobs: one ends while the controller is dead, one after it is back.
    let ends_meanwhile = c.sbatch(&["--wrap", &gated("gate1")]);
    let keeps_running = c.sbatch(&["--wrap", &gated("gate2")]);
    c.wait_state(ends_meanwhile, "RUNNING");
    c.wait_state(keeps_running, "RUNNING");
    // Pending jobs needing both nodes: they can only run one after the other, in queue order.
    let pending: Vec<u32> = (0..5)
        .map(|_| c.sbatch(&["-N2", "--wrap", "echo $SLURM_JOB_ID >> order.txt"]))
        .collect();
    c.wait_file(&format!("runs-{ends_meanwhile}.txt"), "start");
    c.wait_file(&format!("runs-{keeps_running}.txt"), "start");

    c.kill9_ctld();
    std::fs::write(c.work.join("gate1"), "").unwrap();
    c.wait_file(&format!("runs-{ends_meanwhile}.txt"), "end");
    let out = c.cmd("squeue", &[]);
    assert_ne!(out.code, 0, "squeue reached a dead controller: {out:?}");

    let up = c.up();
    assert!(up.stdout.contains("already running"), "{}", up.stdout);
    assert_eq!(c.wait_done(ends_meanwhile), "COMPLETED");
    assert_eq!(
        c.state(&keeps_running.to_string()),
        "RUNNING",
        "the running job was reconnected, not lost or restarted"
    );
    for job in &pending {
        assert_eq!(c.state(&job.to_string()), "PENDING", "job {job}");
    }
    std::fs::write(c.work.join("gate2"), "").unwrap();
    assert_eq!(c.wait_done(keeps_running), "COMPLETED");
    for job in &pending {
        assert_eq!(c.wait_done(*job), "COMPLETED", "job {job}");
    }

    for job in [ends_meanwhile, keeps_running] {
        assert_eq!(
            c.read(&format!("runs-{job}.txt")),
            "start\nend\n",
            "job {job} ran exactly once"
        );
    }
    let order: Vec<u32> = c
        .read("order.txt")
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(order, pending, "each pending job ran once, in queue order");

    // Ids stay unique after the restart.
    let next = c.sbatch(&["--wrap", "true"]);
    assert!(next > *pending.last().unwrap(), "new id {next}");
    assert_eq!(c.wait_done(next), "COMPLETED");
}

#[test]
fn jobs_acknowledged_just_before_a_kill_9_are_kept() {
    let c = Cluster::start(1);
    let blocker = c.sbatch(&["--wrap", &gated("gate")]);
    c.wait_state(blocker, "RUNNING");
    let queued: Vec<u32> = (0..20)
        .map(|_| c.sbatch(&["--wrap", "echo $SLURM_JOB_ID >> done.txt"]))
        .collect();
    c.kill9_ctld();
    c.up();
    std::fs::write(c.work.join("gate"), "").unwrap();
    for job in &queued {
        assert_eq!(c.wait_done(*job), "COMPLETED", "job {job}");
    }
    let done: Vec<u32> = c
        .read("done.txt")
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(done, queued, "every acknowledged job ran once, in order");
}

#[test]
fn with_the_dbd_stopped_jobs_still_run_and_every_record_arrives_once() {
    let c = Cluster::start(2);
    let mut jobs: Vec<u32> = (0..5).map(|_| c.sbatch(&["--wrap", "true"])).collect();
    for job in &jobs {
        c.wait_done(*job);
    }
    c.stop_dbd();
    let out = c.cmd("sacct", &["-n", "-X"]);
    assert_ne!(out.code, 0, "sacct reached a stopped dbd: {out:?}");
    let during: Vec<u32> = (0..30)
        .map(|i| {
            let script = if i % 3 == 0 { "exit 2" } else { "true" };
            c.sbatch(&["--wrap", script])
        })
        .collect();
    for job in &during {
        let state = c.wait_done(*job);
        assert!(
            state == "COMPLETED" || state == "FAILED",
            "job {job}: {state}"
        );
    }
    jobs.extend(&during);

    c.up();
    let list: Vec<String> = jobs.iter().map(u32::to_string).collect();
    let list = list.join(",");
    let mut lines: Vec<String> = Vec::new();
    c.wait_for("every job in sacct", || {
        let out = c.cmd(
            "sacct",
            &["-n", "-X", "-P", "-o", "JobID,State", "-j", &list],
        );
        lines = out.stdout.lines().map(str::to_string).collect();
        out.code == 0 && lines.len() >= jobs.len()
    });
    let mut expected: Vec<String> = jobs
        .iter()
        .enumerate()
        .map(|(i, job)| {
            let failed = i >= 5 && (i - 5) % 3 == 0;
            format!("{job}|{}", if failed { "FAILED" } else { "COMPLETED" })
        })
        .collect();
    expected.sort();
    lines.sort();
    assert_eq!(
        lines, expected,
        "each job exactly once, with its final state"
    );
}
