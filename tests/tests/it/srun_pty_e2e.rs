//! `srun --pty` with a real terminal (`script` gives srun one): task 0 runs on a
//! pseudo-terminal of the size of srun's, which is its controlling terminal, so a Ctrl-C typed
//! at srun's terminal (raw mode: it is a byte like any other) is the task's SIGINT.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::cluster::Cluster;
use common::lines::Lines;
use sluice_testkit::site::federation::bin_dir;

/// `script` running `inner` (a shell line) on a terminal of its own, against `c`.
fn on_terminal(c: &Cluster, inner: &str) -> Command {
    let mut cmd = Command::new("script");
    cmd.args(["-qefc", inner, "/dev/null"])
        .current_dir(&c.work)
        .env("SLURM_CONF", c.conf())
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir().display()))
        .env("TERM", "xterm");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("SLURM_") && name != "SLURM_CONF" {
            cmd.env_remove(name);
        }
    }
    cmd
}

#[test]
fn srun_pty_gives_task_zero_a_terminal_of_srun_size() {
    let c = Cluster::start(1);
    let inner = "stty rows 33 cols 101; \
                 srun --pty sh -c 'tty; stty size; test -t 0 && test -t 2 && echo all-terminal'";
    let mut script = Lines::spawn(on_terminal(&c, inner).stdin(Stdio::piped()));
    // script's stdin stays open (its end could end the session) until the task is done.
    let keys = script.child.stdin.take();
    let (out, err, code) = script.finish();
    drop(keys);
    assert_eq!(code, 0, "{out:?} {err}");
    let lines: Vec<&str> = out.iter().map(|l| l.trim_end_matches('\r')).collect();
    assert!(
        lines.iter().any(|l| l.starts_with("/dev/pts/")),
        "{lines:?}"
    );
    assert!(lines.contains(&"33 101"), "srun's size: {lines:?}");
    assert!(lines.contains(&"all-terminal"), "{lines:?}");
}

#[test]
fn ctrl_c_typed_at_srun_pty_interrupts_task_zero() {
    let c = Cluster::start(1);
    let task = "trap 'echo got-int; exit 7' INT; echo ready; while :; do sleep 0.1; done";
    let inner = format!("srun --pty sh -c \"{task}\"");
    let mut script = Lines::spawn(on_terminal(&c, &inner).stdin(Stdio::piped()));
    script.expect("ready", false);
    let mut keys = script.child.stdin.take().unwrap();
    keys.write_all(b"\x03").unwrap();
    // The task's terminal echoes the key as `^C`, then the task's trap speaks.
    script.expect("^Cgot-int", false);
    drop(keys);
    let (_, err, code) = script.finish();
    assert_eq!(code, 7, "the task's exit code: {err}");
}

#[test]
fn srun_pty_passes_a_window_change_on() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    use std::io::Read;
    let c = Cluster::start(1);
    // srun's terminal is one the test holds the master of.
    let pair = nix::pty::openpty(None, None::<&nix::sys::termios::Termios>).unwrap();
    let slave = || Stdio::from(pair.slave.try_clone().unwrap());
    let stty = |size: [&str; 4]| {
        let ok = Command::new("stty").args(size).stdin(slave()).status();
        assert!(ok.unwrap().success());
    };
    stty(["rows", "20", "cols", "70"]);
    let task = "stty size; echo ready; read x; stty size";
    let mut srun = c
        .command("srun", &["--pty", "sh", "-c", task])
        .stdin(slave())
        .stdout(slave())
        .stderr(slave())
        .spawn()
        .unwrap();
    let mut master = std::fs::File::from(pair.master.try_clone().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let mut reader = std::fs::File::from(pair.master);
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0
                || tx
                    .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                    .is_err()
            {
                return;
            }
        }
    });
    let mut seen = String::new();
    let mut wait_for = |want: &str| {
        while !seen.contains(want) {
            match rx.recv_timeout(common::cluster::STATE_TIMEOUT) {
                Ok(text) => seen.push_str(&text),
                Err(_) => panic!("no {want:?} in {seen:?}"),
            }
        }
    };
    wait_for("ready");
    // The terminal is nobody's controlling one here, so the test tells srun of the change.
    stty(["rows", "50", "cols", "120"]);
    kill(Pid::from_raw(srun.id() as i32), Signal::SIGWINCH).unwrap();
    master.write_all(b"go\r").unwrap();
    wait_for("50 120");
    assert!(seen.contains("20 70"), "the size at launch: {seen:?}");
    let status = srun.wait().unwrap();
    assert!(status.success(), "{seen:?}");
}

#[test]
fn an_srun_pty_task_outlives_a_restart_of_its_node_daemon() {
    let c = Cluster::start(1);
    // The task is supervised as the other step tasks are: the terminal is its supervisor's,
    // so it stays the task's terminal while the node daemon is killed and started again.
    let task = "touch started; while [ ! -e go ]; do sleep 0.1; done; \
                test -t 0 && test -t 1 && echo still-terminal > after.out; exit 5";
    let inner = format!("srun --pty sh -c '{task}'; echo srun=$? > srun.rc");
    let mut script = Lines::spawn(on_terminal(&c, &inner).stdin(Stdio::piped()));
    let keys = script.child.stdin.take();
    c.wait_for("the pty task to run", || c.work.join("started").exists());
    let launches = c.dir().join("cluster/spool/clustern1/launches");
    let records: Vec<String> = std::fs::read_dir(&launches)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    assert!(
        records
            .iter()
            .any(|r| r.starts_with("step.") && r.ends_with(".0.0")),
        "the pty task has a supervisor's launch record: {records:?}"
    );
    c.kill9_noded("clustern1");
    c.up();
    std::fs::write(c.work.join("go"), "").unwrap();
    let (out, err, _) = script.finish();
    drop(keys);
    assert_eq!(c.read("srun.rc"), "srun=5\n", "{out:?} {err}");
    assert_eq!(c.read("after.out"), "still-terminal\n");
}
