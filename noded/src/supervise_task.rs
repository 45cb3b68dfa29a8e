//! The supervisor of one srun step task: `sluice-stepd --task`, so a step's tasks outlive a
//! restart of the node daemon as batch scripts do (see [`crate::supervise`]).
//!
//! The node daemon starts it in a process group of its own; it starts the task (as the job's
//! user) in that same group, so the daemon's signals for the step reach the task directly and
//! a SIGKILL ends both. Signals that would end the supervisor are caught (not ignored: the task
//! starts with the default dispositions) and left to the task. It stays the task's parent:
//!
//! - the task's stdout and stderr are pipes the supervisor copies to its own (the daemon's
//!   pipes): when the daemon is gone its output goes to a private spill file beside the launch
//!   record, with what the daemon may have read and not passed on, for the daemon back to give
//!   srun (see [`crate::task_output`]), never ending the task with SIGPIPE;
//! - its stdin is the supervisor's own (srun's pipe from the daemon, or `/dev/null`);
//! - once it runs, the launch record (`<pgid> 0 <supervisor pid> <uid>`) is written, and once it
//!   ended its status (`<exit code> <signal>`) goes to the status file (synced under `full`)
//!   before the supervisor exits: a daemon that restarted meanwhile reads it there (see
//!   [`crate::step_adopt`]); the daemon that started it reads it once the supervisor exited.
//!
//! On a pseudo-terminal (`--pty`, `srun --pty`, see [`crate::pty::supervised_on`]) the
//! supervisor leads a session with the terminal's slave as its stderr and controlling terminal,
//! and the master as its stdin: the task gets the slave as its three streams (and the
//! supervisor's process group, the terminal's foreground one), and the supervisor copies the
//! master to its stdout. Once the task ended the supervisor lets go of the slave, so the
//! master's end is seen as soon as nothing else of the task holds it. The terminal is the
//! supervisor's, so it outlives a restart of the daemon as the task does.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::spawn::exit_parts;
use crate::supervise::{Ended, PROGRAM, Plan};
use crate::task_output::{Keeper, spill_path};

/// How long the output a task left in its pipes is copied after it ended (a background
/// process of its own may hold them open for ever; the step's end kills it).
const DRAIN_FOR: Duration = Duration::from_secs(2);
/// Largest chunk copied at once.
const CHUNK: usize = 16 * 1024;
/// How often the supervisor checks that the node daemon that started it is still its parent.
const DAEMON_POLL: Duration = Duration::from_millis(100);

/// Runs the task of `plan` to its end (the supervisor's whole life in `--task` mode).
pub fn supervise_task(plan: &Plan) -> Result<Ended, String> {
    // A runtime only for its signal handlers: installed before the task starts, kept to the end.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| format!("cannot start: {e}"))?;
    let _caught = runtime.block_on(async { catch_signals() })?;
    let mut cmd = Command::new(&plan.argv[0]);
    cmd.args(&plan.argv[1..]);
    if plan.pty {
        let slave = || {
            std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map(Stdio::from)
                .map_err(|e| format!("cannot use the terminal: {e}"))
        };
        cmd.stdin(slave()?).stdout(slave()?).stderr(slave()?);
    } else {
        cmd.stdin(Stdio::inherit())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    }
    if let Some(who) = plan.run_as {
        cmd.uid(who.uid).gid(who.gid);
    }
    crate::supervise::propagate_limits(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", plan.argv[0].to_string_lossy()))?;
    // Its copies of the task's streams (the terminal's slave, with --pty) close now.
    drop(cmd);
    let pgid = nix::unistd::getpgrp();
    let uid = plan
        .run_as
        .map_or_else(|| nix::unistd::geteuid().as_raw(), |r| r.uid);
    let record = format!("{pgid} {} {} {uid}\n", plan.restart, std::process::id());
    if let Err(e) = sluice_wire::daemon::replace_file(&plan.record, &record, plan.sync) {
        // The task runs on; only a restart of the node daemon would not find it.
        eprintln!("{PROGRAM}: cannot write the launch record: {e}");
    }
    let keepers = [
        Arc::new(Mutex::new(Keeper::new(
            Box::new(std::io::stdout()) as Box<dyn Write + Send>,
            spill_path(&plan.record, false),
        ))),
        Arc::new(Mutex::new(Keeper::new(
            Box::new(std::io::stderr()) as Box<dyn Write + Send>,
            spill_path(&plan.record, true),
        ))),
    ];
    let (done_tx, done_rx) = mpsc::channel();
    let mut relays = 0;
    let pipes: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ];
    for (pipe, keeper) in pipes.into_iter().zip(&keepers) {
        let Some(pipe) = pipe else { continue };
        relays += 1;
        let (done, keeper) = (done_tx.clone(), Arc::clone(keeper));
        std::thread::spawn(move || {
            relay(pipe, &*keeper);
            let _ = done.send(());
        });
    }
    if plan.pty {
        // The terminal's master (stdin) to the daemon: the task's output.
        relays += 1;
        // Kept like a pipe's output while the daemon is away.
        let (done, keeper) = (done_tx.clone(), Arc::clone(&keepers[0]));
        std::thread::spawn(move || {
            relay(std::io::stdin(), &*keeper);
            let _ = done.send(());
        });
    }
    drop(done_tx);
    // The node daemon gone (this supervisor handed to another parent): spill at once, so what
    // it read and never passed on is kept even if the task prints nothing more.
    let daemon = nix::unistd::getppid();
    let watching = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (keepers, watching) = (keepers.clone(), Arc::clone(&watching));
        std::thread::spawn(move || {
            while watching.load(Ordering::Relaxed) {
                if nix::unistd::getppid() != daemon {
                    spill_all(&keepers[..]);
                    return;
                }
                std::thread::sleep(DAEMON_POLL);
            }
        })
    };
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for the task: {e}"))?;
    if plan.pty {
        release_terminal();
    }
    for _ in 0..relays {
        if done_rx.recv_timeout(DRAIN_FOR).is_err() {
            break;
        }
    }
    watching.store(false, Ordering::Relaxed);
    let _ = watcher.join();
    if nix::unistd::getppid() != daemon {
        spill_all(&keepers[..]);
    }
    let (exit_code, signal) = exit_parts(status);
    let ended = Ended { exit_code, signal };
    sluice_wire::daemon::replace_file(&plan.status, format!("{}\n", ended.text()), plan.sync)
        .map_err(|e| e.to_string())?;
    Ok(ended)
}

/// Lets go of the terminal's slave (the supervisor's stderr): the master then ends once the
/// task's own copies are gone. Failing that, the output is copied until the drain limit.
fn release_terminal() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// Handlers for the signals a step's process group gets that would end the supervisor.
fn catch_signals() -> Result<Vec<Signal>, String> {
    [
        SignalKind::hangup(),
        SignalKind::interrupt(),
        SignalKind::quit(),
        SignalKind::terminate(),
        SignalKind::user_defined1(),
        SignalKind::user_defined2(),
        SignalKind::alarm(),
    ]
    .into_iter()
    .map(|kind| signal(kind).map_err(|e| format!("cannot catch signals: {e}")))
    .collect()
}

/// Copies `from` to `to` until its end (see [`Keeper`]: the daemon's pipe, or the spill file
/// once the daemon is gone), so the task never blocks on a full pipe.
fn relay<W: Write>(mut from: impl Read, to: &Mutex<Keeper<W>>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => to
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .write(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Every stream into its spill file from now on.
fn spill_all<W: Write>(keepers: &[Arc<Mutex<Keeper<W>>>]) {
    for k in keepers {
        k.lock().unwrap_or_else(|p| p.into_inner()).spill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relay_copies_all_and_keeps_what_a_gone_daemon_cannot_take() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill_path(&dir.path().join("step.1.0.0"), false);
        let out = Mutex::new(Keeper::new(Vec::new(), spill.clone()));
        relay(&b"hello\nworld\n"[..], &out);
        assert!(!spill.exists(), "nothing to keep");

        struct Gone;
        impl Write for Gone {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let long = vec![b'x'; 5 * CHUNK];
        // Read to its end although the daemon is gone, into the spill file.
        relay(&long[..], &Mutex::new(Keeper::new(Gone, spill.clone())));
        let kept = std::fs::read(&spill).unwrap();
        assert_eq!(kept.len(), "start=0\n".len() + 5 * CHUNK);
    }
}
