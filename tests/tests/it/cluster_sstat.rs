//! sstat on a real local cluster: a running job's batch script and srun step, sampled by the
//! node daemon, shown live with sstat's field lists and layouts; Slurm's errors for a missing
//! step, an unknown job and a finished one.

use crate::common;

use common::cluster::Cluster;

/// Lets the job end even when an assertion fails first.
struct Release(std::path::PathBuf);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, "");
    }
}

#[test]
fn sstat_shows_the_live_usage_of_a_running_jobs_steps() {
    let c = Cluster::start_with(1, &["JobAcctGatherFrequency=1"]);
    let go = c.dir().join("go");
    // Both steps burn CPU until the test lets them end.
    let burn = format!("while [ ! -f {} ]; do :; done", go.display());
    let script = format!("srun sh -c '{burn}' &\n{burn}\nwait\n");
    let id = c.sbatch(&["--wrap", &script]);
    c.wait_state(id, "RUNNING");
    let _release = Release(go.clone());
    let job = id.to_string();
    let fields = "jobid,avecpu,maxrss,ntasks,maxrssnode";
    let mut line = String::new();
    c.wait_for(&format!("step {id}.0's CPU time in sstat"), || {
        let out = c.cmd("sstat", &["-j", &job, "-p", "-n", "-o", fields]);
        line = out.stdout.trim_end().to_string();
        line.starts_with(&format!("{id}.0|")) && !line.contains("|00:00:00|")
    });
    let cells: Vec<&str> = line.split('|').collect();
    assert_eq!(cells.len(), 6, "-p ends every field with '|': {line}");
    assert!(
        cells[2].ends_with('K') || cells[2].ends_with('M'),
        "a resident size: {line}"
    );
    assert_eq!((cells[3], cells[5]), ("1", ""), "{line}");
    assert!(
        cells[4].ends_with("n1"),
        "the node of the largest RSS: {line}"
    );

    let all = c.cmd("sstat", &["-a", "-j", &job, "-P", "-o", "jobid,ntasks"]);
    assert_eq!(
        (all.code, all.stdout.as_str()),
        (
            0,
            format!("JobID|NTasks\n{id}.batch|1\n{id}.0|1\n").as_str()
        )
    );
    let pids = c.cmd("sstat", &["-i", "-n", "-P", "-j", &job]);
    let cells: Vec<&str> = pids.stdout.trim_end().split('|').collect();
    assert_eq!(cells[0], format!("{id}.0"), "{}", pids.stdout);
    assert!(cells[1].ends_with("n1"), "{}", pids.stdout);
    assert!(
        !cells[2].is_empty() && cells[2].split(',').all(|p| p.parse::<u32>().is_ok()),
        "the step's pids: {}",
        pids.stdout
    );
    let batch = c.cmd(
        "sstat",
        &["-j", &format!("{id}.batch"), "-o", "jobid,maxrss%12"],
    );
    let lines: Vec<&str> = batch.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        ["JobID              MaxRSS ", "------------ ------------ "]
    );
    assert!(
        lines[2].starts_with(&format!("{id}.batch ")),
        "{}",
        batch.stdout
    );
    assert!(
        !lines[2].trim_end().ends_with("batch"),
        "a MaxRSS: {}",
        lines[2]
    );

    let missing = c.cmd("sstat", &["-n", "-j", &format!("{id}.7")]);
    assert_eq!(
        (
            missing.code,
            missing.stdout.as_str(),
            missing.stderr.as_str()
        ),
        (
            0,
            "",
            format!("sstat: error: StepId={id}.7 not found running.\n").as_str()
        )
    );
    let bad = c.cmd("sstat", &["-j", &job, "-o", "jobid,bogus"]);
    assert_eq!(
        (bad.code, bad.stderr.as_str()),
        (1, "sstat: error: Invalid field requested: \"bogus\"\n")
    );

    std::fs::write(&go, "").unwrap();
    assert_eq!(
        c.wait_done(id),
        "COMPLETED",
        "{}",
        c.read(&format!("slurm-{id}.out"))
    );
    let done = c.cmd("sstat", &["-n", "-j", &job]);
    assert_eq!((done.code, done.stdout.as_str()), (0, ""));
    assert_eq!(
        done.stderr,
        format!("sstat: error: No steps running for job {id}\n")
    );
    let step = c.cmd("sstat", &["-n", "-j", &format!("{id}.batch")]);
    assert_eq!(
        step.stderr,
        format!("sstat: error: StepId={id}.batch not found running.\n")
    );
    let unknown = c.cmd("sstat", &["-n", "-j", "99999"]);
    assert_eq!(
        unknown.stderr,
        "sstat: error: couldn't get steps for job 99999\n"
    );
}
