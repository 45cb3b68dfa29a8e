//! The directory a daemon owns (the controller's `StateSaveLocation`, the accounting daemon's
//! SQLite directory, a node daemon's spool), held by one process at a time.
//!
//! The daemon takes an exclusive `flock(2)` on `<dir>/<daemon>.lock` before it touches anything
//! in the directory and keeps it for its lifetime; it then writes its pid into the file, so a
//! second daemon started on the same directory refuses to start naming the holder. The kernel
//! drops the lock when the holder exits however it exits (`kill -9` included), so a restart
//! after a crash takes it at once. The file is opened close-on-exec: job processes that outlive
//! a node daemon never hold it.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::ProcessError;

/// The directory a daemon locks, and the daemon's program name (the lock file's name).
#[derive(Debug, Clone)]
pub struct StateDir {
    /// The directory, created if missing.
    pub path: PathBuf,
    /// `sluice-ctld`, `sluice-dbd` or `sluice-noded`: the lock file is `<daemon>.lock`.
    pub daemon: &'static str,
}

impl StateDir {
    /// The lock file inside the directory.
    pub fn lock_file(&self) -> PathBuf {
        self.path.join(format!("{}.lock", self.daemon))
    }
}

/// The held lock on a [`StateDir`]; released when dropped or when the process ends.
#[derive(Debug)]
pub struct DirLock {
    file: Flock<File>,
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock without waiting; fails with [`ProcessError::DirInUse`] naming the holder's
    /// pid when another process holds it.
    pub fn acquire(dir: &StateDir) -> Result<Self, ProcessError> {
        let path = dir.lock_file();
        let err = |error| ProcessError::File {
            path: path.clone(),
            error,
        };
        std::fs::create_dir_all(&dir.path).map_err(|error| ProcessError::File {
            path: dir.path.clone(),
            error,
        })?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(err)?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(file) => {
                let mut lock = Self { file, path };
                lock.write_pid()?;
                Ok(lock)
            }
            Err((mut file, Errno::EWOULDBLOCK)) => {
                let mut text = String::new();
                // The holder may be between taking the lock and writing its pid.
                let _ = file.read_to_string(&mut text);
                Err(ProcessError::DirInUse {
                    dir: dir.path.clone(),
                    daemon: dir.daemon,
                    holder: text.trim().parse().ok(),
                })
            }
            Err((_, errno)) => Err(err(std::io::Error::from(errno))),
        }
    }

    /// Replaces the file's contents with this process's pid (again after daemonizing, which
    /// changes the pid but keeps the lock: `flock` locks belong to the open file, which the
    /// detached child shares).
    pub fn write_pid(&mut self) -> Result<(), ProcessError> {
        let err = |error| ProcessError::File {
            path: self.path.clone(),
            error,
        };
        let file: &mut File = &mut self.file;
        file.set_len(0).map_err(err)?;
        file.rewind().map_err(err)?;
        file.write_all(format!("{}\n", std::process::id()).as_bytes())
            .map_err(err)?;
        file.sync_data().map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_directory_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir {
            path: dir.path().join("state"),
            daemon: "sluice-ctld",
        };
        let held = DirLock::acquire(&state).unwrap();
        assert_eq!(
            std::fs::read_to_string(state.lock_file()).unwrap(),
            format!("{}\n", std::process::id())
        );
        let e = DirLock::acquire(&state).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{} is in use by another sluice-ctld (pid {}): one daemon per directory; stop it first",
                state.path.display(),
                std::process::id()
            )
        );
        drop(held);
        DirLock::acquire(&state).unwrap();
    }
}
