//! The controller's state directory on a device that fails: full (a small tmpfs filled up),
//! or its files made immutable (an ext4 image: there, SQLite's write through its mapping of
//! the `-shm` index file was a SIGBUS). During the fault `squeue` and `sinfo` answer and
//! `sbatch` fails at once with Slurm's error; the refused job never runs; once the fault is
//! gone submissions work again without a restart, and nothing accepted before was lost.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::cluster::Cluster;

/// Slurm's line for a submission the controller could not save.
const REFUSED: &str = "sbatch: error: Batch job submission failed: I/O error writing \
                       script/environment to file";

/// A mount, lazily unmounted when dropped.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .arg("-R")
            .arg("-i")
            .arg(&self.0)
            .status();
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn sh(program: &str, args: &[&str]) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stops the controller (SIGTERM, so its WAL is checkpointed away), moves its state onto
/// what `mount` mounts on the state directory, and starts it again there.
fn move_state(c: &Cluster, mount: impl FnOnce(&Path)) -> PathBuf {
    let state = c.dir().join("cluster/state");
    let pid = c.pid("ctld-cluster").expect("ctld pid");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    );
    c.wait_for("the controller to stop", || {
        !sluice_tool::up::process::is_running(pid, "sluice-ctld")
    });
    let aside = c.work.join("state-aside");
    std::fs::rename(&state, &aside).unwrap();
    std::fs::create_dir(&state).unwrap();
    mount(&state);
    sh("chmod", &["0700", state.to_str().unwrap()]);
    for entry in std::fs::read_dir(&aside).unwrap().flatten() {
        std::fs::copy(entry.path(), state.join(entry.file_name())).unwrap();
    }
    c.up();
    state
}

/// A job script that leaves `marker` in the work directory, padded to `size` bytes so its
/// commit needs fresh space in the WAL.
fn script(c: &Cluster, marker: &str, size: usize) -> String {
    let path = c.work.join(format!("{marker}.sh"));
    let mut text = format!("#!/bin/sh\ntouch {}\n", c.work.join(marker).display());
    while text.len() < size {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// During the fault: reads answer, a submission is refused at once (not a timeout).
fn refused_while_faulty(c: &Cluster, marker: &str) {
    assert!(c.ok("squeue", &[]).contains("JOBID"));
    assert!(c.ok("sinfo", &[]).contains("PARTITION"));
    let job = script(c, marker, 1 << 20);
    for _ in 0..3 {
        let out = c.cmd("sbatch", &[&job]);
        assert_eq!(out.code, 1, "{out:?}");
        assert_eq!(out.stderr.trim(), REFUSED, "{out:?}\n{}", c.logs());
    }
    assert!(c.ok("squeue", &[]).contains("JOBID"));
}

/// After the fault: the long job is still there, a new job runs, the refused one never.
fn recovered(c: &Cluster, long: u32, marker: &str) {
    let job = script(c, "after", 1 << 20);
    let after = c.sbatch(&[&job]);
    assert_eq!(c.wait_done(after), "COMPLETED", "{}", c.logs());
    assert!(c.work.join("after").exists());
    assert_eq!(c.state(&long.to_string()), "RUNNING");
    assert!(!c.work.join(marker).exists(), "a refused job ran");
    let queue = c.ok("squeue", &["-h", "-o", "%i"]);
    assert_eq!(queue.trim(), long.to_string(), "{queue}");
    c.ok("scancel", &[&long.to_string()]);
    let log = std::fs::read_to_string(c.dir().join("log/ctld-cluster.log")).unwrap_or_default();
    assert_eq!(
        log.matches("state commit failed").count(),
        1,
        "one failure logged per episode:\n{log}"
    );
    assert!(log.contains("state commit works again"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to mount a tmpfs")]
fn a_full_state_directory_refuses_submissions_at_once_and_recovers_when_freed() {
    let mut mounted: Option<Mounted> = None;
    let c = Cluster::start(2);
    let state = move_state(&c, |dir| {
        let d = dir.to_str().unwrap();
        sh(
            "mount",
            &["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", d],
        );
        mounted = Some(Mounted(dir.to_path_buf()));
    });
    let long = c.sbatch(&["--wrap", "sleep 300"]);
    c.wait_state(long, "RUNNING");

    // Fill the device up.
    let fill = state.join("fill");
    let mut f = std::fs::File::create(&fill).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    drop(f);
    refused_while_faulty(&c, "refused");

    std::fs::remove_file(&fill).unwrap();
    recovered(&c, long, "refused");
    assert!(
        c.pid("ctld-cluster")
            .is_some_and(|p| sluice_tool::up::process::is_running(p, "sluice-ctld")),
        "the controller is the one that started"
    );
    drop(c);
    drop(mounted);
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to mount an ext4 image")]
fn immutable_state_files_kill_nothing_and_submissions_work_again_once_writable() {
    let mut mounted: Option<Mounted> = None;
    let c = Cluster::start(2);
    let image = c.work.join("state.ext4");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    sh("mkfs.ext4", &["-q", "-F", image.to_str().unwrap()]);
    let state = move_state(&c, |dir| {
        let d = dir.to_str().unwrap();
        sh("mount", &["-o", "loop", image.to_str().unwrap(), d]);
        mounted = Some(Mounted(dir.to_path_buf()));
    });
    let pid = c.pid("ctld-cluster").unwrap();
    let long = c.sbatch(&["--wrap", "sleep 300"]);
    c.wait_state(long, "RUNNING");

    let files: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .filter(|p| p.contains("ctld-state"))
        .collect();
    let mut args = vec!["+i"];
    args.extend(files.iter().map(String::as_str));
    sh("chattr", &args);
    // Written back, so the next write to a mapped page of the index asks the file system
    // (which refuses it for an immutable file: a SIGBUS).
    sh("sync", &[]);
    refused_while_faulty(&c, "refused");
    assert!(
        sluice_tool::up::process::is_running(pid, "sluice-ctld"),
        "the controller died:\n{}",
        c.logs()
    );

    let mut args = vec!["-i"];
    args.extend(files.iter().map(String::as_str));
    sh("chattr", &args);
    recovered(&c, long, "refused");
    assert!(sluice_tool::up::process::is_running(pid, "sluice-ctld"));
    drop(c);
    drop(mounted);
}

/// Whether `sacct` lists `job`'s allocation.
fn in_sacct(c: &Cluster, job: u32) -> bool {
    let out = c.cmd(
        "sacct",
        &["-n", "-X", "-P", "-o", "jobid", "-j", &job.to_string()],
    );
    out.code == 0 && out.stdout.lines().any(|l| l.trim() == job.to_string())
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to mount a tmpfs")]
fn a_full_accounting_database_keeps_records_in_the_outbox_and_refuses_changes_until_freed() {
    let disk = tempfile::tempdir().unwrap();
    let d = disk.path().to_str().unwrap();
    sh(
        "mount",
        &["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", d],
    );
    let mounted = Mounted(disk.path().to_path_buf());
    let db = disk.path().join("acct.db");
    let storage = format!("sqlite://{}", db.display());
    let c = Cluster::start_args(&[], |args| {
        args.nodes = Some(1);
        args.storage = Some(storage);
    });
    let before = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(before), "COMPLETED");
    c.wait_for("the first job in sacct", || in_sacct(&c, before));
    let dbd = c.pid("dbd").unwrap();

    let fill = disk.path().join("fill");
    let mut f = std::fs::File::create(&fill).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    drop(f);
    // The controller does not depend on the accounting database to run jobs.
    let during = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(during), "COMPLETED");
    // Reads answer; a change is refused with an error, not a hang.
    assert!(in_sacct(&c, before));
    let out = c.cmd("sacctmgr", &["-i", "add", "account", "physics"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Database error"), "{out:?}");
    assert!(
        !in_sacct(&c, during),
        "recorded while the database was full"
    );

    std::fs::remove_file(&fill).unwrap();
    // The records waited in the controller's outbox and arrive by themselves.
    c.wait_for("the job run during the fault in sacct", || {
        in_sacct(&c, during)
    });
    c.sacctmgr(&["add", "account", "physics"]);
    assert!(
        c.ok("sacctmgr", &["-n", "-P", "show", "account", "physics"])
            .contains("physics")
    );
    assert!(sluice_tool::up::process::is_running(dbd, "sluice-dbd"));
    let log = std::fs::read_to_string(c.dir().join("log/dbd.log")).unwrap_or_default();
    assert_eq!(
        log.matches("accounting database failed").count(),
        1,
        "one failure logged per episode:\n{log}"
    );
    assert!(log.contains("accounting database works again"), "{log}");
    drop(c);
    drop(mounted);
}
