//! Processes the end-to-end tests start or watch: `sluice up` in the foreground, job scripts
//! that trap signals, process states from `/proc`.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{DAEMON_TIMEOUT, bin};

/// A script that records the signals it gets in `sig.txt` and exits on SIGTERM; it writes
/// its shell's and its child's pids first.
pub const TRAPPER: &str = r#"#!/bin/sh
trap 'echo USR1 >> sig.txt' USR1
trap 'echo TERM >> sig.txt; exit 0' TERM
echo $$ > pid.txt
while true; do
    sleep 300 &
    echo $! > child.txt
    wait $!
done
"#;

/// The one-letter state of process `pid` (`/proc/<pid>/stat`), e.g. `S`, `T`.
pub fn proc_state(pid: &str) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_default()
        .to_string()
}

/// Starts `sluice up args… --dir dir` in the foreground and returns once it says it is up
/// ("Stop it with Ctrl-C"), with what it printed so far.
pub fn up_in_foreground(args: &[&str], dir: &Path) -> (Child, Vec<String>) {
    let mut child = Command::new(bin("sluice"))
        .arg("up")
        .args(args)
        .arg("--dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|l: &String| l.contains("Stop it with Ctrl-C"))
    {
        match rx.recv_timeout(DAEMON_TIMEOUT) {
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = child.kill();
                panic!("sluice up never reported being up: {seen:?}");
            }
        }
    }
    (child, seen)
}

/// Sends SIGINT (Ctrl-C) to `child` and waits (bounded) until it exits.
pub fn interrupt(child: &mut Child) -> ExitStatus {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let deadline = Instant::now() + DAEMON_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("sluice up did not stop after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
