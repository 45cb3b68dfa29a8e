//! Job accounting on a real local cluster: the node daemon samples a job's processes, the
//! usage travels with the exit report (batch step) and srun's step end (srun step) through the
//! controller's outbox into the dbd, and sacct shows it.

use crate::common;

use common::cluster::Cluster;

/// About a second of CPU: a shell loop and the `date` children it waits for.
const BURN: &str = "end=$(( $(date +%s) + 1 )); while [ $(date +%s) -le $end ]; do :; done";

#[test]
fn sacct_shows_the_cpu_time_and_memory_of_the_batch_and_srun_steps() {
    let c = Cluster::start(1);
    let script = format!("{BURN}\nsrun sh -c '{BURN}'\n");
    let id = c.sbatch(&["--wrap", &script]);
    assert_eq!(
        c.wait_done(id),
        "COMPLETED",
        "{}",
        c.read(&format!("slurm-{id}.out"))
    );
    let job = id.to_string();
    let mut lines = Vec::new();
    c.wait_for(&format!("the steps of job {id} in sacct"), || {
        let out = c.cmd(
            "sacct",
            &["-j", &job, "-o", "jobid,totalcpu,maxrss", "-P", "-n"],
        );
        lines = out.stdout.lines().map(str::to_string).collect();
        let measured = |suffix: &str| {
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{id}.{suffix}|")) && !l.ends_with('|'))
        };
        measured("batch") && measured("0")
    });
    for step in ["batch", "0"] {
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("{id}.{step}|")))
            .unwrap();
        let fields: Vec<&str> = line.split('|').collect();
        assert_ne!(fields[1], "00:00:00", "CPU time counted: {line}");
        assert!(
            fields[2].ends_with('K') || fields[2].ends_with('M'),
            "a resident size: {line}"
        );
    }
    let job_line = lines
        .iter()
        .find(|l| l.starts_with(&format!("{id}|")))
        .unwrap();
    let fields: Vec<&str> = job_line.split('|').collect();
    assert_ne!(fields[1], "00:00:00", "the job sums its steps: {job_line}");
    assert_eq!(fields[2], "", "no MaxRSS on the job line: {job_line}");
}
