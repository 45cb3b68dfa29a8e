//! Controlling running jobs on a real local cluster: signals (a trap in the script records
//! what it got), cancel, requeue, suspend/resume (the processes really stop), time limits.

use crate::common;
use common::procs::{TRAPPER, proc_state};

use std::time::Duration;

use common::cluster::Cluster;

#[test]
fn a_signal_reaches_the_script_and_cancel_ends_it() {
    let c = Cluster::start(1);
    std::fs::write(c.work.join("trap.sh"), TRAPPER).unwrap();
    let id = c.sbatch(&["trap.sh"]);
    c.wait_state(id, "RUNNING");
    c.wait_file("pid.txt", "\n");
    let id_arg = id.to_string();
    c.ok("scancel", &["--batch", "--signal=USR1", &id_arg]);
    c.wait_file("sig.txt", "USR1");
    assert_eq!(c.state(&id_arg), "RUNNING", "USR1 does not end the job");

    c.ok("scancel", &[&id_arg]);
    assert_eq!(c.wait_done(id), "CANCELLED");
    assert_eq!(c.read("sig.txt"), "USR1\nTERM\n");

    // sacct names the canceller (the tests run as root), cut to the column's width by default.
    let mut state = String::new();
    c.wait_for("the CANCELLED record in sacct", || {
        state = c.ok("sacct", &["-j", &id_arg, "-o", "state%20", "-n", "-X"]);
        state.trim() == "CANCELLED by 0"
    });
    let short = c.ok("sacct", &["-j", &id_arg, "-o", "state", "-n", "-X"]);
    assert_eq!(short.trim(), "CANCELLED+");
}

#[test]
fn a_requeued_job_runs_again() {
    let c = Cluster::start(1);
    let id = c.sbatch(&["--wrap", "echo run >> runs.txt; [ -e go ] || sleep 300"]);
    c.wait_state(id, "RUNNING");
    c.wait_file("runs.txt", "run");
    std::fs::write(c.work.join("go"), "").unwrap();
    c.ok("scontrol", &["requeue", &id.to_string()]);
    assert_eq!(
        c.wait_done(id),
        "COMPLETED",
        "the second run finds the go file"
    );
    assert_eq!(c.read("runs.txt"), "run\nrun\n");
    let show = c.ok("scontrol", &["show", "job", &id.to_string()]);
    assert!(show.contains("Restarts=1"), "{show}");
}

#[test]
fn suspend_stops_the_processes_and_resume_continues_them() {
    let c = Cluster::start(1);
    std::fs::write(c.work.join("trap.sh"), TRAPPER).unwrap();
    let id = c.sbatch(&["trap.sh"]);
    let id_arg = id.to_string();
    c.wait_state(id, "RUNNING");
    let shell = c.wait_file("pid.txt", "\n");
    let child = c.wait_file("child.txt", "\n");

    c.ok("scontrol", &["suspend", &id_arg]);
    assert_eq!(c.state(&id_arg), "SUSPENDED");
    c.wait_for("the job's processes to stop", || {
        proc_state(&shell) == "T" && proc_state(&child) == "T"
    });
    let st = c.ok("squeue", &["-h", "-j", &id_arg, "-o", "%t"]);
    assert_eq!(st.trim(), "S");

    c.ok("scontrol", &["resume", &id_arg]);
    assert_eq!(c.state(&id_arg), "RUNNING");
    c.wait_for("the job's processes to continue", || {
        proc_state(&shell) != "T" && proc_state(&child) != "T"
    });
    c.ok("scancel", &[&id_arg]);
    assert_eq!(c.wait_done(id), "CANCELLED");
}

#[test]
fn a_job_past_its_time_limit_times_out() {
    let c = Cluster::start(1);
    std::fs::write(c.work.join("trap.sh"), TRAPPER).unwrap();
    // The smallest limit Slurm's format allows (a minute; seconds round up).
    let id = c.sbatch(&["-t", "0:30", "trap.sh"]);
    let id_arg = id.to_string();
    c.wait_state(id, "RUNNING");
    let limit = c.ok("squeue", &["-h", "-j", &id_arg, "-o", "%l"]);
    assert_eq!(limit.trim(), "1:00");
    let mut state = String::new();
    c.wait_within(Duration::from_secs(120), "the time limit", || {
        state = c.state(&id_arg);
        state == "TIMEOUT"
    });
    c.wait_file("sig.txt", "TERM");
    let mut line = String::new();
    c.wait_for("the TIMEOUT record in sacct", || {
        line = c
            .ok(
                "sacct",
                &["-n", "-X", "-P", "-o", "JobID,State", "-j", &id_arg],
            )
            .trim()
            .to_string();
        line == format!("{id}|TIMEOUT")
    });
}
