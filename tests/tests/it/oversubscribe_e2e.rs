//! Job-level sharing on a real local cluster, through the real commands: in an
//! `OverSubscribe=YES` partition two `sbatch -s` jobs share the node and take turns (gang
//! scheduling), a job that did not ask and an `--exclusive` job wait, and squeue and
//! `scontrol show job` show what each job may share.

use crate::common;

use common::cluster::Cluster;

/// `%i %t %h` of every job, by job id.
fn lines(c: &Cluster) -> Vec<String> {
    let out = c.ok("squeue", &["-h", "-S", "i", "-o", "%i %t %h"]);
    out.lines().map(|l| l.trim().to_string()).collect()
}

#[test]
fn yes_shares_a_node_between_jobs_that_ask_and_gang_schedules_them() {
    let c = Cluster::start_with(
        1,
        &[
            "PreemptMode=GANG",
            "PartitionName=shared Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=YES",
        ],
    );
    let a = c.sbatch(&["-p", "shared", "-s", "--wrap", "sleep 300"]);
    let b = c.sbatch(&["-p", "shared", "--oversubscribe", "--wrap", "sleep 300"]);
    c.wait_for("one sharing job running and the other suspended", || {
        lines(&c) == [format!("{a} R YES"), format!("{b} S YES")]
    });
    let lone = c.sbatch(&["-p", "shared", "--wrap", "sleep 300"]);
    let ex = c.sbatch(&["-p", "shared", "--exclusive", "--wrap", "sleep 300"]);
    c.wait_for("the other two jobs to wait", || {
        lines(&c)
            == [
                format!("{a} R YES"),
                format!("{b} S YES"),
                format!("{lone} PD OK"),
                format!("{ex} PD NO"),
            ]
    });
    let shown = c.ok("scontrol", &["-o", "show", "job", &ex.to_string()]);
    assert!(shown.contains(" OverSubscribe=NO "), "{shown}");
    let refused = c.cmd("sbatch", &["--exclusive=user", "--wrap", "true"]);
    assert_eq!(refused.code, 1);
    assert_eq!(
        refused.stderr,
        "sbatch: error: --exclusive=user is not supported\n"
    );
    let ids: Vec<String> = [a, b, lone, ex].iter().map(u32::to_string).collect();
    let mut args: Vec<&str> = ids.iter().map(String::as_str).collect();
    args.insert(0, "-Q");
    c.ok("scancel", &args);
    for id in [a, b, lone, ex] {
        c.wait_done(id);
    }
}
