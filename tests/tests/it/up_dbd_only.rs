//! `sluice up --dbd-only` and `sluice down`, driven as a user would from a shell.

use crate::common;
use common::procs::{interrupt, up_in_foreground};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{CmdOutput, bin, exit_code, run};

fn sluice(args: &[&str]) -> CmdOutput {
    run(Command::new(bin("sluice")).args(args), None)
}

/// Runs `script` in `sh` after sourcing `dir/env.sh`, with a PATH that has no Sluice binaries.
fn shell(dir: &Path, script: &str) -> CmdOutput {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(". '{}/env.sh' && {script}", dir.display()))
        .env("PATH", "/usr/bin:/bin")
        .env_remove("SLURM_CONF");
    run(&mut cmd, None)
}

/// Stops whatever `up` started in the directory, even when a test fails half-way.
struct Down(PathBuf);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = Command::new(bin("sluice"))
            .args(["down", "--dir"])
            .arg(&self.0)
            .stdout(Stdio::null())
            .status();
    }
}

fn dbd_pid(dir: &Path) -> i32 {
    std::fs::read_to_string(dir.join("run/dbd.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Running and not a zombie (a detached dbd's parent may be an init that reaps late).
fn alive(pid: i32) -> bool {
    sluice_tool::up::process::is_running(pid, "sluice-dbd")
}

#[test]
fn up_detached_then_commands_work_then_up_again_keeps_everything_then_down() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fed");
    let d = dir.to_str().unwrap();
    let _down = Down(dir.clone());

    let out = sluice(&[
        "up",
        "--dir",
        d,
        "--dbd-only",
        "--detach",
        "--cluster",
        "alpha",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("sacctmgr show cluster") && out.stdout.contains("env.sh"),
        "{}",
        out.stdout
    );
    let pid = dbd_pid(&dir);
    assert!(alive(pid));

    let out = shell(&dir, "sacctmgr show cluster");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("alpha"), "{}", out.stdout);
    let out = shell(&dir, "sacctmgr -i add cluster beta");
    assert_eq!(out.code, 0, "{out:?}");

    // An admin's edit survives, and nothing is restarted.
    let conf = dir.join("alpha").join("slurm.conf");
    let edited = std::fs::read_to_string(&conf).unwrap() + "# edited by an admin\n";
    std::fs::write(&conf, &edited).unwrap();
    let dbd_conf = std::fs::read_to_string(dir.join("slurmdbd.conf")).unwrap();
    let out = sluice(&[
        "up",
        "--dir",
        d,
        "--dbd-only",
        "--detach",
        "--cluster",
        "ignored",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("already running"), "{}", out.stdout);
    assert!(
        out.stderr.contains("--clusters is ignored"),
        "{}",
        out.stderr
    );
    assert_eq!(dbd_pid(&dir), pid);
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), edited);
    assert_eq!(
        std::fs::read_to_string(dir.join("slurmdbd.conf")).unwrap(),
        dbd_conf
    );

    let out = sluice(&["down", "--dir", d]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains(&format!("Stopped sluice-dbd (pid {pid})")),
        "{}",
        out.stdout
    );
    assert!(!alive(pid), "the dbd is still running after down");
    let out = shell(&dir, "sacctmgr show cluster");
    assert_ne!(out.code, 0, "sacctmgr reached a stopped dbd: {out:?}");

    // Up again on the same directory: the data is still there.
    let out = sluice(&["up", "--dir", d, "--dbd-only", "--detach"]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = shell(&dir, "sacctmgr -n -P show cluster format=cluster");
    assert_eq!(out.code, 0, "{out:?}");
    let mut names: Vec<&str> = out.stdout.lines().collect();
    names.sort_unstable();
    assert_eq!(names, ["alpha", "beta"], "{}", out.stdout);

    sluice(&["down", "--dir", d]);
    let out = sluice(&["down", "--dir", d]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Nothing is running"), "{}", out.stdout);
}

#[test]
fn in_the_foreground_ctrl_c_stops_the_dbd() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fg");
    let _down = Down(dir.clone());
    let (mut child, _) = up_in_foreground(&["--dbd-only"], &dir);
    let pid = dbd_pid(&dir);
    assert!(alive(pid));
    let status = interrupt(&mut child);
    assert_eq!(exit_code(status), 0);
    assert!(!alive(pid), "Ctrl-C left the dbd running");
}

#[test]
fn bad_storage_and_unusable_directories_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("x");
    let out = sluice(&[
        "up",
        "--dir",
        d.to_str().unwrap(),
        "--dbd-only",
        "--storage",
        "oracle://db/acct",
    ]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("bad --storage \"oracle://db/acct\""),
        "{}",
        out.stderr
    );
    assert!(!d.exists(), "a rejected command created files");

    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let below = file.join("fed");
    let out = sluice(&[
        "up",
        "--dir",
        below.to_str().unwrap(),
        "--dbd-only",
        "--detach",
    ]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("cannot create directory") && out.stderr.contains("a-file"),
        "{}",
        out.stderr
    );
}
