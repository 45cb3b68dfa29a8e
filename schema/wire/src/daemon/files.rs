//! The files a daemon leaves for others: its pid while it runs and the port it bound.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::ProcessError;

/// The environment variable naming a file the daemon writes its bound port to once it serves
/// (how tests and `sluice up` learn the port a daemon picked for port 0).
pub const PORT_FILE_ENV: &str = "SLUICE_PORT_FILE";

/// Writes `contents` to `path` through a synced temporary file and a rename, so a reader
/// polling for the file never sees it half written, even after a crash. Creates the directory.
pub fn write_file_atomically(path: &Path, contents: &str) -> Result<(), ProcessError> {
    replace_file(path, contents, true)
}

/// [`write_file_atomically`], the temporary file fsynced only when `sync`: without it the file
/// is still whole or absent after a crash of the writing process (the kernel has the data),
/// only an OS crash or power loss may leave the old file or none.
pub fn replace_file(
    path: &Path,
    contents: impl AsRef<[u8]>,
    sync: bool,
) -> Result<(), ProcessError> {
    let err = |error| ProcessError::File {
        path: path.to_path_buf(),
        error,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut file = std::fs::File::create(&tmp).map_err(err)?;
    file.write_all(contents.as_ref()).map_err(err)?;
    if sync {
        file.sync_all().map_err(err)?;
    }
    drop(file);
    std::fs::rename(&tmp, path).map_err(err)
}

/// Makes `dir` (created with its parents if missing) a directory only its owner may enter:
/// mode 0700, also when it existed with a looser mode.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        }
        Err(e) => Err(e),
    }
}

/// Makes `path` a file only its owner may read: created empty with mode 0600 if missing, set
/// to 0600 if it existed (files of an earlier, looser version are tightened at start-up).
pub fn private_file(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

/// Sets every regular file directly in `dir` to mode 0600 (its subdirectories are left as
/// they are).
pub fn private_files_in(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

/// Writes `port` to the file named by [`PORT_FILE_ENV`], if the variable is set.
pub fn write_port_file(port: u16) -> Result<(), ProcessError> {
    match std::env::var_os(PORT_FILE_ENV) {
        Some(file) => write_file_atomically(Path::new(&file), &format!("{port}\n")),
        None => Ok(()),
    }
}

/// The daemon's pid file: written when created, removed when dropped.
#[derive(Debug)]
pub struct PidFile {
    path: PathBuf,
}

impl PidFile {
    /// Writes this process's pid to `path`.
    pub fn create(path: PathBuf) -> Result<Self, ProcessError> {
        write_file_atomically(&path, &format!("{}\n", std::process::id()))?;
        Ok(Self { path })
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        // Best effort: a stale pid file is harmless, callers check that the pid is alive.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_create_directories_and_replace_contents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/dbd.pid");
        write_file_atomically(&path, "1\n").unwrap();
        write_file_atomically(&path, "42\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "42\n");
        assert_eq!(
            std::fs::read_dir(dir.path().join("run")).unwrap().count(),
            1
        );
    }

    #[test]
    fn private_dirs_and_files_are_created_and_tightened() {
        use std::os::unix::fs::MetadataExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("a/state");
        private_dir(&state).unwrap();
        assert_eq!(mode(&state), 0o700);
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&state).unwrap();
        assert_eq!(mode(&state), 0o700, "an existing directory is tightened");
        let db = state.join("state.db");
        private_file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        std::fs::write(&db, "kept").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        private_file(&db).unwrap();
        assert_eq!(
            (mode(&db), std::fs::read_to_string(&db).unwrap().as_str()),
            (0o600, "kept")
        );
        let wal = state.join("state.db-wal");
        std::fs::write(&wal, "").unwrap();
        std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o664)).unwrap();
        std::fs::create_dir(state.join("sub")).unwrap();
        private_files_in(&state).unwrap();
        assert_eq!(mode(&wal), 0o600);
        assert!(private_dir(&db).is_err(), "a file is not made a directory");
    }

    #[test]
    fn pid_files_hold_the_pid_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/noded.pid");
        let pid_file = PidFile::create(path.clone()).unwrap();
        let pid = std::fs::read_to_string(&path).unwrap();
        assert_eq!(pid, format!("{}\n", std::process::id()));
        drop(pid_file);
        assert!(!path.exists());
    }
}
