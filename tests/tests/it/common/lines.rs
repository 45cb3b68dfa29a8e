//! A command run in the background whose output the test reads line by line as it comes,
//! to act at the right moment (send a signal once a task is ready, attach once it runs).

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::cluster::STATE_TIMEOUT;

/// A running command whose stdout and stderr lines are read as they come.
pub struct Lines {
    pub child: Child,
    pub out: Receiver<String>,
    pub err: Receiver<String>,
}

fn read_lines(pipe: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

impl Lines {
    /// Starts `cmd` (stdin closed unless set) with its output read line by line.
    pub fn spawn(cmd: &mut std::process::Command) -> Lines {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = read_lines(child.stdout.take().unwrap());
        let err = read_lines(child.stderr.take().unwrap());
        Lines { child, out, err }
    }

    /// Waits for a stdout line equal to `want` (`stderr`: a stderr line containing it);
    /// earlier lines are dropped. Kills the command and fails if none comes.
    pub fn expect(&mut self, want: &str, stderr: bool) {
        let rx = if stderr { &self.err } else { &self.out };
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + STATE_TIMEOUT;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left) {
                // A line from a terminal ends with `\r\n`.
                Ok(line) if line.trim_end_matches('\r') == want => return,
                Ok(line) if stderr && line.contains(want) => return,
                Ok(line) => seen.push(line),
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        let other: Vec<String> = if stderr { &self.out } else { &self.err }
            .try_iter()
            .collect();
        panic!("no line {want:?} came after {seen:?} (other stream: {other:?})");
    }

    /// Waits for a stdout line equal to each of `want`, in any order (lines of different
    /// tasks may come in any order); other lines are dropped. Kills the command and fails if
    /// one does not come.
    pub fn expect_each(&mut self, want: &[&str]) {
        let mut missing: Vec<&str> = want.to_vec();
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + STATE_TIMEOUT;
        while !missing.is_empty() {
            let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else {
                break;
            };
            match self.out.recv_timeout(left) {
                Ok(line) => {
                    let line = line.trim_end_matches('\r').to_string();
                    match missing.iter().position(|w| *w == line) {
                        Some(i) => {
                            missing.remove(i);
                        }
                        None => seen.push(line),
                    }
                }
                Err(_) => break,
            }
        }
        if !missing.is_empty() {
            let _ = self.child.kill();
            panic!("no lines {missing:?} came; other lines: {seen:?}");
        }
    }

    /// Sends `sig` to the command.
    pub fn signal(&self, sig: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), sig).unwrap();
    }

    /// The rest of its stdout and stderr lines and its exit code.
    /// The command must end within [`STATE_TIMEOUT`] (it is killed, and the test fails,
    /// otherwise).
    pub fn finish(mut self) -> (Vec<String>, String, i32) {
        let deadline = std::time::Instant::now() + STATE_TIMEOUT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let out: Vec<String> = self.out.try_iter().collect();
                let err: Vec<String> = self.err.try_iter().collect();
                panic!("the command did not end: {out:?} {err:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let err: Vec<String> = self.err.iter().collect();
        (
            self.out.iter().collect(),
            err.join("\n"),
            super::exit_code(status),
        )
    }
}
