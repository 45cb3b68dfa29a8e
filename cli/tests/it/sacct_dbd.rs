//! The real `sacct` binary against a real accounting daemon loaded through `RecordBatch`:
//! exact output for each option, and Slurm's errors.

use crate::sacct_support;

use sacct_support::{Dbd, ended, started, step, submitted};
use sluice_vocab::JobState;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::{AddFederationsRequest, JobSubmittedRecord};

const SACCT: &str = env!("CARGO_BIN_EXE_sacct");
/// 2024-03-01T10:00:00Z.
const T: i64 = 1_709_287_200;
const ALICE: (u32, &str) = (1001, "alice");
const BOB: (u32, &str) = (1002, "bob");
const DAY: [&str; 4] = ["-S", "2024-03-01", "-E", "2024-03-02"];

fn st(s: JobState) -> u32 {
    s.stored()
}

fn array_task(job: u32, task: u32, submit: i64) -> Kind {
    Kind::JobSubmitted(JobSubmittedRecord {
        array_job_id: 5,
        array_task_id: Some(task),
        ..match submitted(job, ALICE, "phys", submit) {
            Kind::JobSubmitted(s) => s,
            _ => unreachable!("submitted() makes a submit record"),
        }
    })
}

/// Cluster c1: a finished batch job with steps, a failed job, a job cancelled while pending,
/// a running job, an array of two tasks, and a job of the day before; c2: one job.
fn loaded() -> Dbd {
    let dbd = Dbd::start(&["c1", "c2"]);
    dbd.send(
        "c1",
        1,
        vec![
            submitted(1, ALICE, "phys", T),
            started(1, T + 60, "n1", 1),
            step(1, -4, "batch", T + 60, T + 3660, st(JobState::Completed)),
            step(1, 0, "solver", T + 70, T + 3600, st(JobState::Completed)),
            ended(1, T + 3660, st(JobState::Completed), 0, None),
            submitted(2, BOB, "chem", T + 100),
            started(2, T + 200, "n[2-3]", 2),
            ended(2, T + 400, st(JobState::Failed), 3, None),
            submitted(3, ALICE, "phys", T + 300),
            ended(3, T + 500, st(JobState::Cancelled), 0, Some(0)),
            submitted(4, BOB, "chem", T + 1000),
            started(4, T + 1100, "n2", 1),
            array_task(5, 0, T + 2000),
            array_task(6, 1, T + 2000),
            started(5, T + 2010, "n1", 1),
            started(6, T + 2010, "n3", 1),
            ended(5, T + 2100, st(JobState::Completed), 0, None),
            ended(6, T + 2100, st(JobState::Completed), 0, None),
            submitted(7, ALICE, "phys", T - 86_400),
            started(7, T - 86_000, "n1", 1),
            ended(7, T - 80_000, st(JobState::Completed), 0, None),
        ],
    );
    dbd.send(
        "c2",
        1,
        vec![
            submitted(1, BOB, "chem", T + 50),
            started(1, T + 60, "m1", 1),
            ended(1, T + 120, st(JobState::Completed), 0, None),
        ],
    );
    dbd
}

fn sacct(dbd: &Dbd, args: &[&str]) -> String {
    let out = dbd.run(SACCT, args);
    assert_eq!(out.code, 0, "sacct {args:?}: {}", out.stderr);
    assert_eq!(out.stderr, "", "sacct {args:?}");
    out.stdout
}

/// `-n -P -X -o jobid` over the day, plus `extra`.
fn ids(dbd: &Dbd, extra: &[&str]) -> String {
    let mut args = vec!["-n", "-P", "-X", "-a", "-o", "jobid"];
    args.extend_from_slice(&DAY);
    args.extend_from_slice(extra);
    sacct(dbd, &args).replace('\n', " ")
}

#[test]
fn a_days_jobs_in_slurms_columns() {
    let dbd = loaded();
    let mut args = vec!["-a"];
    args.extend_from_slice(&DAY);
    assert_eq!(
        sacct(&dbd, &args),
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n\
         ------------ ---------- ---------- ---------- ---------- ---------- -------- \n\
         1                  job1      debug       phys          2  COMPLETED      0:0 \n\
         1.batch           batch                  phys          2  COMPLETED      0:0 \n\
         1.0              solver                  phys          2  COMPLETED      0:0 \n\
         2                  job2      debug       chem          4     FAILED      3:0 \n\
         3                  job3      debug       phys          0 CANCELLED+      0:0 \n\
         4                  job4      debug       chem          2    RUNNING      0:0 \n\
         5_0                job5      debug       phys          2  COMPLETED      0:0 \n\
         5_1                job6      debug       phys          2  COMPLETED      0:0 \n"
    );
    assert_eq!(
        sacct(
            &dbd,
            &[
                "-a",
                "-X",
                "-p",
                "--delimiter=;",
                "-S",
                "2024-03-01T10:00",
                "-E",
                "2024-03-01T10:05",
                "-o",
                "jobid,jobidraw,user,uid,state,start,end,elapsed,nodelist,alloctres,reqmem"
            ]
        ),
        "JobID;JobIDRaw;User;UID;State;Start;End;Elapsed;NodeList;AllocTRES;ReqMem;\n\
         1;1;alice;1001;COMPLETED;2024-03-01T10:01:00;2024-03-01T11:01:00;01:00:00;n1;billing=2,cpu=2,mem=1000M,node=1;1000M;\n\
         2;2;bob;1002;FAILED;2024-03-01T10:03:20;2024-03-01T10:06:40;00:03:20;n[2-3];billing=4,cpu=4,mem=1000M,node=2;1000M;\n"
    );
}

#[test]
fn selections_reach_the_dbd() {
    let dbd = loaded();
    assert_eq!(ids(&dbd, &[]), "1 2 3 4 5_0 5_1 ");
    assert_eq!(ids(&dbd, &["-u", "1002"]), "2 4 ");
    assert_eq!(ids(&dbd, &["-A", "phys"]), "1 3 5_0 5_1 ");
    assert_eq!(ids(&dbd, &["--name", "job2,job3"]), "2 3 ");
    assert_eq!(ids(&dbd, &["-r", "nope"]), "");
    assert_eq!(ids(&dbd, &["-N", "n3"]), "2 5_1 ");
    assert_eq!(ids(&dbd, &["-N", "n[2-3]"]), "2 4 5_1 ");
    assert_eq!(ids(&dbd, &["-M", "c2"]), "1 ");
    assert_eq!(
        sacct(
            &dbd,
            &[
                "-n",
                "-P",
                "-X",
                "-a",
                "-M",
                "all",
                "-o",
                "cluster,jobid",
                "-S",
                "2024-03-01T10:00",
                "-E",
                "2024-03-01T10:01"
            ]
        ),
        "c1|1\nc2|1\n"
    );
    // Jobs by id search all time (in submit order), and print only what `-j` names.
    assert_eq!(
        sacct(&dbd, &["-n", "-P", "-j", "1,7", "-o", "jobid,state"]),
        "7|COMPLETED\n1|COMPLETED\n1.batch|COMPLETED\n1.0|COMPLETED\n"
    );
    assert_eq!(
        sacct(&dbd, &["-n", "-P", "-j", "1.0", "-o", "jobid"]),
        "1.0\n"
    );
    assert_eq!(
        sacct(&dbd, &["-n", "-P", "-j", "5_1", "-o", "jobid"]),
        "5_1\n"
    );
    assert_eq!(
        sacct(&dbd, &["-n", "-P", "-j", "5", "-o", "jobid,jobidraw"]),
        "5_0|5\n5_1|6\n"
    );
}

#[test]
fn states_have_their_own_windows() {
    let dbd = loaded();
    assert_eq!(ids(&dbd, &["-s", "CD"]), "1 5_0 5_1 ");
    assert_eq!(ids(&dbd, &["-s", "failed,CA"]), "2 3 ");
    assert_eq!(ids(&dbd, &["-s", "R"]), "1 2 4 5_0 5_1 ");
    let at = |from: &str, to: &str, state: &str| {
        sacct(
            &dbd,
            &[
                "-n", "-P", "-X", "-a", "-o", "jobid", "-s", state, "-S", from, "-E", to,
            ],
        )
        .replace('\n', " ")
    };
    // Running at 10:04: jobs 1 and 2; pending at 10:02:30: job 2 only.
    assert_eq!(at("2024-03-01T10:04", "2024-03-01T10:04", "R"), "1 2 ");
    assert_eq!(at("2024-03-01T10:02:30", "2024-03-01T10:02:40", "PD"), "2 ");
    let mut cancelled = vec!["-n", "-P", "-X", "-a", "-s", "CA", "-o", "state"];
    cancelled.extend_from_slice(&DAY);
    assert_eq!(sacct(&dbd, &cancelled), "CANCELLED by 0\n");
}

#[test]
fn federation_view_and_json() {
    let dbd = loaded();
    dbd.admin(|mut c| async move {
        c.add_federations(AddFederationsRequest {
            names: vec!["fed".into()],
            clusters: vec!["c1".into(), "c2".into()],
            commit: true,
        })
        .await
        .map(|_| ())
    });
    // Another cluster's local job ids are not shown in the federation view (Slurm's rule).
    let fed = [
        "-n",
        "-P",
        "-X",
        "-a",
        "--federation",
        "-o",
        "cluster,jobid",
        "-S",
        "2024-03-01T10:00",
        "-E",
        "2024-03-01T10:01",
    ];
    assert_eq!(sacct(&dbd, &fed), "c1|1\n");
    let out = sacct(&dbd, &["--json", "-j", "2"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["jobs"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["jobs"][0]["job_id"], 2);
    assert_eq!(v["jobs"][0]["user"], "bob");
    assert_eq!(v["jobs"][0]["state"]["current"][0], "FAILED");
    assert_eq!(v["jobs"][0]["exit_code"]["return_code"]["number"], 3);
    assert_eq!(v["jobs"][0]["nodes"], "n[2-3]");
}

#[test]
fn bad_input_gets_slurms_errors() {
    let dbd = loaded();
    let err = |args: &[&str]| {
        let out = dbd.run(SACCT, args);
        assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{args:?}");
        out.stderr
    };
    assert_eq!(
        err(&["-o", "jobid,xyz"]),
        "sacct: error: Invalid field requested: \"xyz\"\n"
    );
    assert_eq!(
        err(&["-S", "soon"]),
        "sacct: error: Invalid time specification (pos=0): soon\n"
    );
    assert_eq!(
        err(&["-S", "2024-03-02", "-E", "2024-03-01"]),
        "sacct: error: Start time (2024-03-02T00:00:00) requested is after end time \
         (2024-03-01T00:00:00).\n"
    );
    assert_eq!(
        err(&["-s", "x"]),
        "sacct: fatal: unrecognized job state value 'x'\n"
    );
    assert!(err(&["-N", "n["]).starts_with("sacct: error: Problem talking to the database: "));
}
