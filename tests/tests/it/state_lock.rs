//! A state directory belongs to one daemon at a time: a second controller, accounting daemon
//! or node daemon started on a directory in use (on another port) refuses to start, naming the
//! directory and the holder's pid, and the first keeps working; a holder killed with `kill -9`
//! leaves nothing behind that stops its restart.

use std::path::{Path, PathBuf};

use sluice_testkit::cmd::{CmdOutput, bin, run};

use crate::common;
use common::cluster::Cluster;

/// A copy of `conf` (and the key beside it) in a new directory under `dir`, its lines passed
/// through `edit` and `extra` appended: the same state directories, another port.
fn second_conf(dir: &Path, conf: &Path, edit: impl Fn(&str) -> String, extra: &[&str]) -> PathBuf {
    let other = dir.join("second");
    std::fs::create_dir_all(&other).unwrap();
    let text = std::fs::read_to_string(conf).unwrap();
    let mut lines: Vec<String> = text.lines().map(edit).collect();
    lines.extend(extra.iter().map(|l| l.to_string()));
    let copy = other.join(conf.file_name().unwrap());
    std::fs::write(&copy, lines.join("\n") + "\n").unwrap();
    // Private as its original (the dbd refuses a slurmdbd.conf others may read).
    let mode = std::fs::metadata(conf).unwrap().permissions();
    std::fs::set_permissions(&copy, mode).unwrap();
    let key = conf.parent().unwrap().join("slurm.key");
    std::fs::copy(&key, other.join("slurm.key")).unwrap();
    copy
}

/// Runs daemon `program -D -f conf args…` in the foreground: it must refuse at once (a daemon
/// that started would run until the bounded wait kills it and fails the test).
fn start_second(program: &str, conf: &Path, args: &[&str]) -> CmdOutput {
    let mut cmd = std::process::Command::new(bin(program));
    cmd.arg("-D").arg("-f").arg(conf).args(args);
    run(&mut cmd, None)
}

fn assert_refused(out: &CmdOutput, program: &str, dir: &Path, holder: i32) {
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        format!(
            "{program}: error: {} is in use by another {program} (pid {holder}): one daemon per directory; stop it first",
            dir.display()
        ),
        "{out:?}"
    );
}

#[test]
fn a_second_daemon_on_a_directory_in_use_refuses_to_start_and_the_first_keeps_working() {
    let c = Cluster::start(1);
    let dir = c.dir();
    let cluster = dir.join("cluster");
    let ctld_pid = c.pid("ctld-cluster").expect("controller pid");

    // A second controller on the same StateSaveLocation, on a free port.
    let conf = second_conf(&dir, &c.conf(), str::to_string, &["SlurmctldPort=0"]);
    let out = start_second("sluice-ctld", &conf, &[]);
    assert_refused(&out, "sluice-ctld", &cluster.join("state"), ctld_pid);

    // A second node daemon on the same spool, on a free port.
    let node = "clustern1";
    let noded_pid = c.pid(&format!("noded-cluster-{node}")).expect("noded pid");
    let conf = second_conf(
        &dir,
        &c.conf(),
        |l| match l.strip_prefix(&format!("NodeName={node} ")) {
            Some(rest) => {
                let kept: Vec<&str> = rest
                    .split_whitespace()
                    .filter(|w| !w.starts_with("Port="))
                    .collect();
                format!("NodeName={node} {} Port=0", kept.join(" "))
            }
            None => l.to_string(),
        },
        &[],
    );
    let out = start_second("sluice-noded", &conf, &["-N", node]);
    assert_refused(
        &out,
        "sluice-noded",
        &cluster.join("spool").join(node),
        noded_pid,
    );

    // A second accounting daemon on the same SQLite directory, on a free port.
    let dbd_pid = c.pid("dbd").expect("dbd pid");
    let conf = second_conf(
        &dir,
        &dir.join("slurmdbd.conf"),
        |l| {
            if l.starts_with("PidFile=") || l.starts_with("LogFile=") {
                String::new()
            } else {
                l.to_string()
            }
        },
        &["DbdPort=0"],
    );
    let out = start_second("sluice-dbd", &conf, &[]);
    assert_refused(&out, "sluice-dbd", &dir, dbd_pid);

    // The first daemons still serve: a job runs and reaches accounting.
    let job = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    c.wait_for("the job in sacct", || {
        let out = c.cmd(
            "sacct",
            &["-n", "-X", "-P", "-o", "State", "-j", &job.to_string()],
        );
        out.stdout.trim() == "COMPLETED"
    });
}

#[test]
fn a_controller_killed_with_kill_9_restarts_on_its_locked_directory() {
    let c = Cluster::start(1);
    let lock = c.dir().join("cluster/state/sluice-ctld.lock");
    let first = c.pid("ctld-cluster").expect("controller pid");
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        format!("{first}\n")
    );
    c.kill9_ctld();
    c.up();
    let second = c.pid("ctld-cluster").expect("controller pid");
    assert_ne!(first, second);
    c.wait_for("the restarted controller to hold the lock", || {
        std::fs::read_to_string(&lock).unwrap_or_default() == format!("{second}\n")
    });
    let job = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
}
