//! Read-only SQLite connections beside the store's one diesel connection, for sacct's job
//! stream: each page is read through SQLite's own cached prepared statements (see
//! `jobs::sqlite_scan`), and, WAL letting readers run beside the writer, a long sacct
//! neither waits for nor holds up the record ingest and sacctmgr traffic on the store's
//! connection.
//!
//! Connections are opened on demand and kept for the next read (up to [`KEEP`]), each with
//! its statement cache. Only a database in a file can be shared this way: an in-memory one
//! has no readers, and its reads stay on the diesel connection.

use std::sync::{Mutex, PoisonError};

use rusqlite::{Connection, OpenFlags};

/// Idle reader connections kept for the next read.
const KEEP: usize = 4;
/// Statements kept prepared per connection (sacct's shapes differ by filters and list sizes).
const CACHED_STATEMENTS: usize = 64;
/// SQLite's page cache per reader, in KiB (a negative `cache_size`): a scan's index and table
/// pages stay cached between its pages and across runs.
const CACHE_KIB: i64 = 32 * 1024;

/// A small pool of reader connections to one SQLite file.
pub(crate) struct Readers {
    path: String,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    /// Readers for the SQLite database at `path` (as diesel takes it), or `None` for an
    /// in-memory or URI-named database. The file must exist (the store opened it first).
    pub(crate) fn for_path(path: &str) -> Option<Self> {
        if path == ":memory:" || path.starts_with("file:") {
            return None;
        }
        Some(Self {
            path: path.to_string(),
            idle: Mutex::new(Vec::new()),
        })
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        // `query_only`: this connection never writes, whatever a bug would ask of it.
        conn.execute_batch(&format!(
            "PRAGMA busy_timeout = 5000; PRAGMA query_only = ON; PRAGMA cache_size = -{CACHE_KIB};"
        ))?;
        conn.set_prepared_statement_cache_capacity(CACHED_STATEMENTS);
        Ok(conn)
    }

    /// Runs `f` in one read transaction on a reader connection, so all its statements see
    /// one state of the database.
    pub(crate) fn read<T, E>(&self, f: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<rusqlite::Error>,
    {
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match taken {
            Some(c) => c,
            None => self.open()?,
        };
        let result = {
            let tx = conn.unchecked_transaction()?;
            let value = f(&tx)?;
            // A read changed nothing: ending the transaction only releases its snapshot.
            tx.commit()?;
            value
        };
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < KEEP {
            idle.push(conn);
        }
        Ok(result)
    }
}
