//! Running the real command and daemon binaries from a test: where the build put them, and
//! running one with a bounded wait, capturing what it printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// How long a daemon may take to come up (debug builds, database migrations) or to stop.
pub const DAEMON_TIMEOUT: Duration = Duration::from_secs(60);

/// What a command did.
#[derive(Debug, Clone)]
pub struct CmdOutput {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The path of the built binary `name`, next to the test executable's `deps/` directory.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable lives in target/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first",
        path.display()
    );
    path
}

/// Runs `cmd` with `stdin` (closed if `None`), waiting at most [`DAEMON_TIMEOUT`].
pub fn run(cmd: &mut Command, stdin: Option<&str>) -> CmdOutput {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A command may exit before reading everything; that is its business.
        let _ = pipe.write_all(text.as_bytes());
    }
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(DAEMON_TIMEOUT) {
        Ok(output) => output.unwrap_or_else(|e| panic!("waiting for {cmd:?}: {e}")),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("{cmd:?} did not finish within {DAEMON_TIMEOUT:?}");
        }
    };
    CmdOutput {
        code: exit_code(output.status),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The exit code, or 128+signal for a process killed by a signal (as a shell reports it).
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Runs `f` on a fresh single-threaded runtime (for gRPC calls from synchronous tests).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(f)
}
