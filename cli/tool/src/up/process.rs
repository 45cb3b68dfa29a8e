//! Daemon processes of a local federation: finding their binaries, starting them, telling
//! whether a pid file names a live one, and stopping them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::UpError;

/// How long `down` (and `up` on Ctrl-C) waits for a daemon to exit after SIGTERM.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// The directory holding the running `sluice` executable, where the other binaries live too.
pub fn bin_dir() -> Result<PathBuf, UpError> {
    let exe = std::env::current_exe().map_err(|source| UpError::Exe { source })?;
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| UpError::Exe {
            source: std::io::Error::other("the executable has no directory"),
        })
}

/// `bin_dir/name`, or a clear error if it is not there.
pub fn binary(bin_dir: &Path, name: &str) -> Result<PathBuf, UpError> {
    let path = bin_dir.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(UpError::MissingBinary { path })
    }
}

/// The pid recorded in `pid_file`, if the file exists and holds a number.
pub fn read_pid(pid_file: &Path) -> Option<i32> {
    std::fs::read_to_string(pid_file).ok()?.trim().parse().ok()
}

/// Whether `pid` is a running (not zombie) process whose program is named `program`.
/// Checking the program guards against a stale pid file naming a reused pid.
pub fn is_running(pid: i32, program: &str) -> bool {
    if pid <= 0 || kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    let proc = PathBuf::from(format!("/proc/{pid}"));
    if !proc.exists() {
        // No procfs: trust the signal probe.
        return true;
    }
    let zombie = std::fs::read_to_string(proc.join("stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    let named = std::fs::read(proc.join("cmdline"))
        .map(|cmd| {
            let argv0 = cmd.split(|b| *b == 0).next().unwrap_or_default();
            Path::new(&*String::from_utf8_lossy(argv0)).file_name() == Some(program.as_ref())
        })
        .unwrap_or(false);
    named && !zombie
}

/// The live pid named by `pid_file` for `program`, if any.
pub fn live_pid(pid_file: &Path, program: &str) -> Option<i32> {
    read_pid(pid_file).filter(|pid| is_running(*pid, program))
}

/// Starts `program args…` in its own process group (so a Ctrl-C at the terminal reaches only
/// `sluice up`, which stops it in order), stdin closed, stdout and stderr appended to `log`
/// (mode 0600: logs are the daemons' user's only, an older looser log is tightened).
pub fn spawn(program: &Path, args: &[&str], log: &Path) -> Result<tokio::process::Child, UpError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let err = |source| UpError::Write {
        path: log.to_path_buf(),
        source,
    };
    let open_log = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(log)
            .map_err(err)
    };
    std::fs::set_permissions(log, std::fs::Permissions::from_mode(0o600))
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Ok(()),
            _ => Err(e),
        })
        .map_err(err)?;
    tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        // Logs go to a file: no terminal colour codes in it.
        .env("NO_COLOR", "1")
        .stdout(open_log()?)
        .stderr(open_log()?)
        .process_group(0)
        .spawn()
        .map_err(|source| UpError::Spawn {
            path: program.to_path_buf(),
            source,
        })
}

/// Sends SIGTERM to `pid` and waits up to `timeout` for `program` to be gone.
pub async fn stop(pid: i32, program: &str, timeout: Duration) -> Result<(), UpError> {
    if !is_running(pid, program) {
        return Ok(());
    }
    // ESRCH here means it exited between the check and the signal: what we wanted.
    let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    let deadline = Instant::now() + timeout;
    while is_running(pid, program) {
        if Instant::now() >= deadline {
            return Err(UpError::StopTimeout {
                program: program.to_string(),
                pid,
                secs: timeout.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// Lines of a log shown when a daemon fails to start.
pub const LOG_TAIL_LINES: usize = 20;
/// Pause between readiness probes.
const PROBE_EVERY: Duration = Duration::from_millis(100);

/// Calls `probe` until it gives a value, `child` (the daemon, when this run started it) exits,
/// or `timeout` passes. Errors name `program` and `address` and carry the tail of `log`.
pub async fn wait_ready<T, F, Fut>(
    program: &str,
    address: &str,
    mut child: Option<&mut tokio::process::Child>,
    log: &Path,
    timeout: Duration,
    mut probe: F,
) -> Result<T, UpError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(child) = child.as_deref_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            return Err(UpError::Exited {
                program: program.to_string(),
                status: status.to_string(),
                log: log.to_path_buf(),
                tail: tail(log, LOG_TAIL_LINES),
            });
        }
        if let Some(value) = probe().await {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            return Err(UpError::Timeout {
                program: program.to_string(),
                address: address.to_string(),
                secs: timeout.as_secs(),
                log: log.to_path_buf(),
                tail: tail(log, LOG_TAIL_LINES),
            });
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
}

/// The last `lines` lines of `path` (empty if it cannot be read), for error messages.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_files_name_live_processes_only_if_the_program_matches() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("x.pid");
        assert_eq!(live_pid(&pid_file, "sluice-dbd"), None, "no file");
        std::fs::write(&pid_file, "garbage\n").unwrap();
        assert_eq!(read_pid(&pid_file), None);
        let me = std::process::id() as i32;
        std::fs::write(&pid_file, format!("{me}\n")).unwrap();
        assert_eq!(
            live_pid(&pid_file, "sluice-dbd"),
            None,
            "a reused pid is not the dbd"
        );
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_str().unwrap();
        assert_eq!(live_pid(&pid_file, name), Some(me));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("a.log");
        std::fs::write(&log, "1\n2\n3\n4\n").unwrap();
        assert_eq!(tail(&log, 2), "3\n4");
        assert_eq!(tail(&log, 10), "1\n2\n3\n4");
        assert_eq!(tail(&dir.path().join("none"), 3), "");
    }

    #[tokio::test]
    async fn stop_terminates_a_running_program_and_waits_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let sleep = which("sleep");
        let mut child = spawn(&sleep, &["300"], &dir.path().join("log")).unwrap();
        let pid = child.id().unwrap() as i32;
        // Bounded: procfs may show the new program's name a moment after spawn returns.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !is_running(pid, "sleep") {
            assert!(Instant::now() < deadline, "sleep never showed as running");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Reap it concurrently, as `sluice up` does for the daemons it started.
        let reaper = tokio::spawn(async move { child.wait().await });
        stop(pid, "sleep", STOP_TIMEOUT).await.unwrap();
        let status = reaper.await.unwrap().unwrap();
        assert_eq!(status.code(), None, "ended by SIGTERM");
        assert!(!is_running(pid, "sleep"));
    }

    fn which(name: &str) -> PathBuf {
        ["/bin", "/usr/bin"]
            .iter()
            .map(|d| Path::new(d).join(name))
            .find(|p| p.is_file())
            .unwrap()
    }
}
