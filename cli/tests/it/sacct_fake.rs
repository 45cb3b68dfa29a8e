//! The real `sacct` binary against a fake accounting daemon: default columns, `-P`, `-X`,
//! the query it sends, and Slurm's errors.

use crate::fake;

use fake::{FakeCluster, FakeState, dead_conf, run_bin};
use sluice_vocab::JobState;
use sluice_wire::proto::{JobRow, StepRecord};

const SACCT: &str = env!("CARGO_BIN_EXE_sacct");

fn cluster() -> FakeCluster {
    let uid = nix::unistd::getuid().as_raw();
    FakeCluster::start(FakeState {
        rows: vec![JobRow {
            cluster: "c1".into(),
            job_id: 4,
            name: "sim".into(),
            uid,
            account: "phys".into(),
            partition: "debug".into(),
            state: JobState::Completed.stored(),
            cpus: 1,
            steps: vec![StepRecord {
                job_id: 4,
                step_id: -4,
                state: JobState::Completed.stored(),
                cpus: 1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    })
}

#[test]
fn default_columns_with_the_batch_step() {
    let c = cluster();
    let out = c.run(SACCT, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n\
         ------------ ---------- ---------- ---------- ---------- ---------- -------- \n\
         4                   sim      debug       phys          1  COMPLETED      0:0 \n\
         4.batch           batch                  phys          1  COMPLETED      0:0 \n"
    );
    let s = c.state.lock().unwrap();
    assert_eq!(s.queries[0].clusters, vec!["c1".to_string()]);
    assert!(s.queries[0].start > 0, "default window starts at midnight");
}

#[test]
fn parsable_allocations_with_jobs() {
    let c = cluster();
    let out = c.run(
        SACCT,
        &["-X", "-P", "-n", "-j", "4", "-o", "jobid,state,exitcode"],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "4|COMPLETED|0:0\n"));
    assert_eq!(
        c.state.lock().unwrap().queries[0].start,
        0,
        "-j searches all time"
    );
}

#[test]
fn bad_field_and_unreachable_dbd() {
    let c = cluster();
    let out = c.run(SACCT, &["-o", "jobid,xyz"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "sacct: error: Invalid field requested: \"xyz\"\n")
    );
    let dir = tempfile::tempdir().unwrap();
    let out = run_bin(SACCT, &dead_conf(dir.path()), &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .ends_with("sacct: error: Problem talking to the database: Connection refused\n"),
        "{}",
        out.stderr
    );
}
