//! Every command's format widths through the real binaries: huge, overflowing, negative and
//! garbage widths are clamped to `MAX_WIDTH` (65535) and never panic, in options and in the
//! `*_FORMAT` environment variables alike.

use std::path::Path;
use std::process::Command;

use crate::fake::{self, FakeCluster, FakeState};
use crate::sreport_support::fake::{FakeDbd, FakeState as DbdState};
use sluice_vocab::JobState;
use sluice_wire::proto::{JobInfo, JobRow, NodeInfo, PartitionInfo};

const MAX: usize = 65_535;

/// The widths every command is fed, after a field: huge, overflowing, negative, and followed by
/// garbage.
const WIDTHS: [&str; 6] = [
    "65536",
    "70000",
    "4294967296",
    "99999999999999999999",
    "-5",
    "12garbage",
];

/// Runs `bin` with `args` and `env` against `conf`.
fn run(bin: &str, conf: &Path, args: &[&str], env: &[(&str, &str)]) -> fake::Output {
    let out = Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .env("SLURM_CONF", conf)
        .env("TZ", "UTC")
        .env_remove("SQUEUE_FORMAT")
        .env_remove("SQUEUE_FORMAT2")
        .env_remove("SINFO_FORMAT")
        .env_remove("SACCT_FORMAT")
        .output()
        .expect("command runs");
    fake::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// No panic: exit 0 or 1, stderr only Slurm's `<prog>: ` lines (squeue, like Slurm's, reports
/// a bad field such as `%.-5i` and goes on); no line wider than a row of clamped columns.
fn assert_no_panic(prog: &str, what: &str, out: &fake::Output) {
    assert!(!out.stderr.contains("panicked"), "{what}: {}", out.stderr);
    assert!(
        !out.stderr.contains("internal error"),
        "{what}: {}",
        out.stderr
    );
    assert!(
        matches!(out.code, 0 | 1),
        "{what}: exit {}: {}",
        out.code,
        out.stderr
    );
    let prefix = format!("{prog}: ");
    assert!(
        out.stderr.lines().all(|l| l.starts_with(&prefix)),
        "{what}: {}",
        out.stderr
    );
    let widest = out.stdout.lines().map(|l| l.chars().count()).max();
    assert!(widest.unwrap_or(0) <= 4 * (MAX + 1), "{what}");
}

fn controller() -> FakeCluster {
    FakeCluster::start(FakeState {
        jobs: vec![JobInfo {
            job_id: 7,
            name: "sim".into(),
            user: "alice".into(),
            partition: "debug".into(),
            state: JobState::Running.stored(),
            node_list: "n1".into(),
            node_count: 1,
            cpus: 1,
            ..Default::default()
        }],
        nodes: vec![NodeInfo {
            name: "n1".into(),
            state: "IDLE".into(),
            cpus: 2,
            partitions: vec!["debug".into()],
            ..Default::default()
        }],
        partitions: vec![PartitionInfo {
            name: "debug".into(),
            state: "UP".into(),
            max_time_min: -1,
            max_nodes: -1,
            nodes: vec!["n1".into()],
            ..Default::default()
        }],
        rows: vec![JobRow {
            cluster: "c1".into(),
            job_id: 7,
            name: "sim".into(),
            uid: nix::unistd::getuid().as_raw(),
            state: JobState::Completed.stored(),
            cpus: 1,
            ..Default::default()
        }],
        ..Default::default()
    })
}

#[test]
fn squeue_clamps_every_width() {
    let c = controller();
    let squeue = env!("CARGO_BIN_EXE_squeue");
    let out = run(squeue, &c.conf, &["-o", "%.65536i"], &[]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].len(), MAX);
    assert!(lines[0].ends_with("JOBID") && lines[1].ends_with(" 7"));
    for w in WIDTHS {
        for args in [
            vec!["-o".to_string(), format!("%.{w}i %{w}P")],
            vec!["-O".to_string(), format!("JobID:.{w},Name:{w}")],
        ] {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            assert_no_panic(
                "squeue",
                &format!("{args:?}"),
                &run(squeue, &c.conf, &args, &[]),
            );
        }
        let f = format!("%{w}j");
        let out = run(squeue, &c.conf, &[], &[("SQUEUE_FORMAT", &f)]);
        assert_no_panic("squeue", &f, &out);
        let f = format!("Name:{w}");
        let out = run(squeue, &c.conf, &[], &[("SQUEUE_FORMAT2", &f)]);
        assert_no_panic("squeue", &f, &out);
    }
}

#[test]
fn sinfo_clamps_every_width() {
    let c = controller();
    let sinfo = env!("CARGO_BIN_EXE_sinfo");
    let out = run(sinfo, &c.conf, &["-o", "%.65536P"], &[]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(
        out.stdout.lines().all(|l| l.len() == MAX),
        "{}",
        out.stdout.len()
    );
    for w in WIDTHS {
        let f = format!("%.{w}P %{w}N %#{w}t");
        assert_no_panic("sinfo", &f, &run(sinfo, &c.conf, &["-o", &f], &[]));
        let out = run(sinfo, &c.conf, &[], &[("SINFO_FORMAT", &f)]);
        assert_no_panic("sinfo", &f, &out);
        assert_no_panic("sinfo", &f, &run(sinfo, &c.conf, &["-N", "-o", &f], &[]));
    }
}

#[test]
fn sacct_clamps_every_width() {
    let c = controller();
    let sacct = env!("CARGO_BIN_EXE_sacct");
    let out = run(sacct, &c.conf, &["-X", "-o", "jobid%70000"], &[]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout.len());
    assert_eq!(lines[1], format!("{} ", "-".repeat(MAX)));
    assert!(lines.iter().all(|l| l.len() == MAX + 1));
    for w in WIDTHS {
        let f = format!("jobid%{w},state%{w},jobname%-{w}");
        assert_no_panic("sacct", &f, &run(sacct, &c.conf, &["-o", &f], &[]));
        assert_no_panic("sacct", &f, &run(sacct, &c.conf, &["--format", &f], &[]));
        let out = run(sacct, &c.conf, &[], &[("SACCT_FORMAT", &f)]);
        assert_no_panic("sacct", &f, &out);
    }
}

#[test]
fn sacctmgr_clamps_every_width() {
    // No dbd answers: the format is read, then the connection fails with Slurm's words.
    let dir = tempfile::tempdir().unwrap();
    let conf = fake::dead_conf(dir.path());
    let sacctmgr = env!("CARGO_BIN_EXE_sacctmgr");
    let out = run(
        sacctmgr,
        &conf,
        &["show", "cluster", "format=cluster%70000"],
        &[],
    );
    assert_no_panic("sacctmgr", "cluster%70000", &out);
    for w in WIDTHS {
        let f = format!("format=cluster%{w},controlhost%-{w}");
        let out = run(sacctmgr, &conf, &["show", "cluster", &f], &[]);
        assert_no_panic("sacctmgr", &f, &out);
    }
}

#[test]
fn sreport_clamps_every_width() {
    let dbd = FakeDbd::start(DbdState::default());
    let out = dbd.run(&["cluster", "utilization", "format=cluster%70000"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(out.stdout.contains(&format!("{} \n", "-".repeat(MAX))));
    for w in WIDTHS {
        let f = format!("format=cluster%{w},allocated%-{w}");
        let out = dbd.run(&["cluster", "utilization", &f]);
        assert_no_panic(
            "sreport",
            &f,
            &fake::Output {
                code: out.code,
                stdout: out.stdout,
                stderr: out.stderr,
            },
        );
        let g = format!("grouping=50%{w},250");
        let out = dbd.run(&["job", "sizesbyaccount", &g]);
        assert_no_panic(
            "sreport",
            &g,
            &fake::Output {
                code: out.code,
                stdout: out.stdout,
                stderr: out.stderr,
            },
        );
    }
}
