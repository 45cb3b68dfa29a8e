//! Scheduling on a real local cluster: backfill, dependencies, job arrays with a throttle,
//! hold and release. Jobs that must stay running are `sleep 300` and are cancelled by the test.

use crate::common;

use common::cluster::Cluster;

/// squeue's `%R` (reason or node list) of `job`.
fn reason(c: &Cluster, job: u32) -> String {
    c.ok(
        "squeue",
        &["-h", "-t", "all", "-j", &job.to_string(), "-o", "%R"],
    )
    .trim()
    .to_string()
}

#[test]
fn backfill_starts_a_short_job_early_only_when_it_does_not_delay_the_first_waiting_job() {
    let c = Cluster::start(2);
    let running = c.sbatch(&["-t", "10", "--wrap", "sleep 300"]);
    c.wait_state(running, "RUNNING");
    // Needs both nodes: waits for `running` (planned to start in 10 minutes at the latest).
    let big = c.sbatch(&["-N", "2", "-t", "10", "--wrap", "true"]);
    // Would still run when `big` is planned to start: must not go ahead of it.
    let long = c.sbatch(&["-t", "30", "--wrap", "true"]);
    // Ends before `big` could start: backfilled onto the idle node.
    let short = c.sbatch(&["-t", "5", "--wrap", "sleep 300"]);
    c.wait_state(short, "RUNNING");
    assert_eq!(c.state(&long.to_string()), "PENDING");
    assert_eq!(c.state(&big.to_string()), "PENDING");
    assert_eq!(reason(&c, big), "(Resources)");
    assert_eq!(reason(&c, long), "(Priority)");

    c.ok("scancel", &[&running.to_string(), &short.to_string()]);
    assert_eq!(c.wait_done(big), "COMPLETED");
    assert_eq!(c.wait_done(long), "COMPLETED");
    let start = |job: u32| {
        c.ok(
            "squeue",
            &["-h", "-t", "all", "-j", &job.to_string(), "-o", "%S"],
        )
        .trim()
        .to_string()
    };
    assert!(
        start(big) <= start(long),
        "the first waiting job started first: {} vs {}",
        start(big),
        start(long)
    );
}

#[test]
fn dependencies_afterok_afternotok_afterany_wait_for_their_job() {
    let c = Cluster::start(2);
    // Held, so the dependents are seen waiting before it runs (and fails).
    let first = c.sbatch(&["-H", "--wrap", "exit 1"]);
    assert_eq!(reason(&c, first), "(JobHeldUser)");
    let ok = c.sbatch(&["-d", &format!("afterok:{first}"), "--wrap", "true"]);
    let notok = c.sbatch(&["-d", &format!("afternotok:{first}"), "--wrap", "true"]);
    let any = c.sbatch(&[
        "--dependency",
        &format!("afterany:{first}"),
        "--wrap",
        "true",
    ]);
    for job in [ok, notok, any] {
        assert_eq!(reason(&c, job), "(Dependency)", "job {job}");
    }
    c.ok("scontrol", &["release", &first.to_string()]);
    assert_eq!(c.wait_done(first), "FAILED");
    assert_eq!(c.wait_done(notok), "COMPLETED");
    assert_eq!(c.wait_done(any), "COMPLETED");
    c.wait_for("afterok to be never satisfied", || {
        reason(&c, ok) == "(DependencyNeverSatisfied)"
    });
    assert_eq!(c.state(&ok.to_string()), "PENDING");
}

#[test]
fn singleton_runs_one_job_of_a_name_at_a_time() {
    let c = Cluster::start(2);
    let one = c.sbatch(&["-J", "solo", "-d", "singleton", "--wrap", "sleep 300"]);
    c.wait_state(one, "RUNNING");
    let two = c.sbatch(&["-J", "solo", "-d", "singleton", "--wrap", "true"]);
    let other = c.sbatch(&["-J", "other", "-d", "singleton", "--wrap", "true"]);
    assert_eq!(
        c.wait_done(other),
        "COMPLETED",
        "another name is not held back"
    );
    assert_eq!(c.state(&two.to_string()), "PENDING");
    assert_eq!(reason(&c, two), "(Dependency)");
    c.ok("scancel", &[&one.to_string()]);
    assert_eq!(c.wait_done(two), "COMPLETED");
}

#[test]
fn an_array_with_a_throttle_never_runs_more_than_its_limit() {
    let c = Cluster::start(3);
    let array = c.sbatch(&[
        "--array=1-6%2",
        "-o",
        "arr-%A_%a.out",
        "--wrap",
        "echo \"$SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT\"; sleep 1",
    ]);
    let mut most = 0;
    let mut finished = 0;
    c.wait_for("every array task to finish", || {
        let out = c.ok(
            "squeue",
            &["-h", "-t", "all", "-j", &array.to_string(), "-o", "%i %T"],
        );
        let running = out.lines().filter(|l| l.ends_with(" RUNNING")).count();
        assert!(running <= 2, "more than 2 tasks run at once:\n{out}");
        most = most.max(running);
        finished = out.lines().filter(|l| l.ends_with(" COMPLETED")).count();
        finished == 6
    });
    assert_eq!(
        most, 2,
        "the throttle allows 2 at once, and 3 nodes were free"
    );
    for task in 1..=6 {
        let text = c.wait_file(&format!("arr-{array}_{task}.out"), "\n");
        assert_eq!(text, format!("{array} {task} 6\n"));
    }
}

#[test]
fn held_jobs_wait_until_released() {
    let c = Cluster::start(1);
    let blocker = c.sbatch(&["--wrap", "sleep 300"]);
    c.wait_state(blocker, "RUNNING");
    let held = c.sbatch(&["--wrap", "true"]);
    c.ok("scontrol", &["hold", &held.to_string()]);
    assert_eq!(reason(&c, held), "(JobHeldAdmin)");
    c.ok("scancel", &[&blocker.to_string()]);
    c.wait_done(blocker);
    // A later job runs on the freed node while the held one keeps waiting.
    let later = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(later), "COMPLETED");
    assert_eq!(c.state(&held.to_string()), "PENDING");
    c.ok("scontrol", &["release", &held.to_string()]);
    assert_eq!(c.wait_done(held), "COMPLETED");
}
