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
