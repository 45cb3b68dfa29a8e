//! Whether the state files can be written now. SQLite writes its WAL index through a shared
//! memory mapping of the `-shm` file; on a file made immutable (`chattr +i`), or on a file
//! system that went read-only under it, writing a mapped page is a SIGBUS that kills the
//! controller, where a write(2) would have been an error. So every commit first checks that
//! each state file can still be opened for writing, and a store that cannot is read back
//! through a fresh read-only connection.
//!
//! That reader shares the process's read-write mapping of the index (SQLite keeps one per
//! inode for all of a process's connections), and a reader writes there too when no connection
//! has yet read the newest commit: it claims a read mark for it. So every write transaction on
//! the state file (the core's commits, the shipper's deletes) is followed at once by a read on
//! the same connection ([`mark_read`]), which leaves a read mark at the end of the WAL; a
//! reader after the files turned immutable then finds it and writes nothing. (Found when the
//! shipper's deletes were paced: the last write before the files turned immutable was a delete
//! nobody had read after, and the controller's read-back after its refused commit was a SIGBUS.)

use super::{STATE_FILE, StateStore, StoreError, schema};
use crate::core::federation::FedView;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// `Ok` when every file of the state database `db` (the database, its WAL and its
/// shared-memory index) can be opened for writing (a missing one is made by SQLite when
/// needed); else which cannot and why (immutable, append-only, read-only file system).
/// Nothing is written.
pub fn check_writable(db: &Path) -> Result<(), StoreError> {
    let dir = db.parent().unwrap_or(Path::new("."));
    for suffix in ["", "-wal", "-shm"] {
        let path: PathBuf = dir.join(format!("{STATE_FILE}{suffix}"));
        match std::fs::OpenOptions::new().write(true).open(&path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(StoreError::NotWritable { path, source }),
        }
    }
    Ok(())
}

/// Reads the database header in a transaction of its own, so a read mark for the newest
/// commit is in the WAL index (see the module doc). Call right after each write transaction.
pub fn mark_read(conn: &Connection) -> rusqlite::Result<()> {
    conn.prepare_cached("PRAGMA schema_version")?
        .query_row([], |r| r.get::<_, i64>(0))
        .map(drop)
}

impl StateStore {
    /// [`check_writable`] for this store's files.
    pub fn check_writable(&self) -> Result<(), StoreError> {
        check_writable(&self.path)
    }

    /// Everything committed ([`StateStore::load`]), read through this store's connection
    /// when the files are writable, else through a new read-only one.
    pub fn load_committed(&self) -> Result<super::Snapshot, StoreError> {
        match self.read_only_twin()? {
            None => self.load(),
            Some(reader) => reader.load(),
        }
    }

    /// The saved federation state ([`StateStore::load_fed`]), read as
    /// [`StateStore::load_committed`] reads.
    pub fn load_fed_committed(&self) -> Result<Option<(FedView, u64)>, StoreError> {
        match self.read_only_twin()? {
            None => self.load_fed(),
            Some(reader) => reader.load_fed(),
        }
    }

    /// The saved associations and users ([`StateStore::load_dbd_cache`]), read as
    /// [`StateStore::load_committed`] reads.
    pub fn load_dbd_cache_committed(
        &self,
    ) -> Result<Option<crate::core::assoc::cache::DbdCache>, StoreError> {
        match self.read_only_twin()? {
            None => self.load_dbd_cache(),
            Some(reader) => reader.load_dbd_cache(),
        }
    }

    /// `None` when the files are writable; else a store over a new read-only connection.
    fn read_only_twin(&self) -> Result<Option<StateStore>, StoreError> {
        if self.check_writable().is_ok() {
            return Ok(None);
        }
        let sql = |source| StoreError::Sqlite {
            path: self.path.clone(),
            source,
        };
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_millis(schema::BUSY_TIMEOUT_MS))
            .map_err(sql)?;
        conn.pragma_update(None, "mmap_size", 0).map_err(sql)?;
        let mut reader = StateStore::over(self.path.clone(), conn);
        reader.read_cursors()?;
        Ok(Some(reader))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_whose_files_cannot_be_written_says_which_and_is_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        store.check_writable().unwrap();
        // What a read-only file system or an immutable file answers, as root too: replace
        // the WAL with a directory, which cannot be opened for writing.
        let wal = dir.path().join(format!("{STATE_FILE}-wal"));
        let _ = std::fs::remove_file(&wal);
        std::fs::create_dir(&wal).unwrap();
        let e = store.check_writable().unwrap_err().to_string();
        assert!(e.contains(&format!("{STATE_FILE}-wal")), "{e}");
        assert!(e.contains("cannot be written"), "{e}");
        std::fs::remove_dir(&wal).unwrap();
        store.check_writable().unwrap();
    }
}
