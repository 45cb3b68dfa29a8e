//! Workflow tools from PyPI driving a local cluster unchanged (issue 10): submitit (functions,
//! a job array, an exception coming back, a cancel) and dask-jobqueue (a SLURMCluster of two
//! workers computing a sum). The tools run from a cached virtualenv
//! ([`common::python::venv_python`]) with the cluster's `SLURM_CONF` and our binaries first on
//! `PATH`, exactly as a user's shell would have them; the drivers in `tests/python/` check
//! what the tools report and print `ok <check>` lines.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use common::cluster::Cluster;
use common::python::{script, venv_python};
use sluice_testkit::site::federation::bin_dir;

/// How long a driver may take: it makes the venv the first time (a download) and waits for
/// several jobs on a loaded CI host; its own waits are bounded more tightly.
const DRIVER_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs `driver arg` with the venv's python against `c`; returns its stdout, failing the test
/// (with the driver's and the daemons' logs) if it did not succeed.
fn drive(c: &Cluster, driver: &str, arg: &std::path::Path) -> String {
    let python = venv_python();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        bin_dir().display(),
        python.parent().unwrap().display()
    );
    let mut cmd = Command::new(&python);
    cmd.arg(script(driver))
        .arg(arg)
        .current_dir(&c.work)
        .env("SLURM_CONF", c.conf())
        .env("PATH", path)
        .stdin(Stdio::null());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("SLURM_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("SLURM_CONF", c.conf())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("start the driver");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(DRIVER_TIMEOUT) else {
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        panic!(
            "{driver} did not finish within {DRIVER_TIMEOUT:?}\n{}",
            c.logs()
        );
    };
    let out = out.expect("wait for the driver");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{driver} failed:\n{stdout}\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        c.logs()
    );
    stdout
}

#[test]
fn submitit_runs_functions_arrays_exceptions_and_cancels() {
    let c = Cluster::start(2);
    let folder = c.work.join("submitit");
    let out = drive(&c, "submitit_driver.py", &folder);
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["ok function", "ok array", "ok exception", "ok cancel"],
        "{out}"
    );
}

#[test]
fn dask_jobqueue_workers_compute_a_sum() {
    let c = Cluster::start(2);
    let logs = c.work.join("dask-logs");
    let out = drive(&c, "dask_driver.py", &logs);
    assert!(out.contains("ok sum 450 on 2 workers"), "{out}");
    assert!(out.contains("ok closed"), "{out}");
    // Closing the cluster cancelled both worker jobs with scancel.
    let acct = c.ok(
        "sacct",
        &[
            "-X",
            "-n",
            "-P",
            "-o",
            "JobName,State",
            "--name",
            "dask-worker",
        ],
    );
    let states: Vec<&str> = acct.lines().collect();
    assert_eq!(states.len(), 2, "{acct}");
    assert!(
        states
            .iter()
            .all(|l| l.starts_with("dask-worker|CANCELLED")),
        "{acct}"
    );
}
