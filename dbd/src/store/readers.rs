//! Read-only SQLite connections beside the store's one writing connection. WAL lets readers
//! run beside the writer, so a read neither waits for nor holds up the record ingest, the
//! federation's writes and sacctmgr's changes on the store's connection:
//! * rusqlite connections for sacct's job stream: each page is read through SQLite's own
//!   cached prepared statements (see `jobs::sqlite_scan`);
//! * diesel connections for every other read of the store (`Store::read`: sacctmgr's lists,
//!   sreport, the coordinators' realms), through the same queries as on the other backends.
//!
//! A read begins its own transaction, so it sees every change committed before it began (a
//! request's own committed change included). Connections are opened on demand and kept for
//! the next read (up to [`KEEP`] of each kind), each with its statement cache. Only a
//! database in a file can be shared this way: an in-memory one has no readers, and its reads
//! stay on the writing connection.

use std::sync::{Mutex, PoisonError};

use diesel::Connection as _;
use rusqlite::{Connection, OpenFlags};

use super::conn::{AnyConnection, open_sqlite_reader};
use super::error::StoreError;

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
    idle_diesel: Mutex<Vec<AnyConnection>>,
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
            idle_diesel: Mutex::new(Vec::new()),
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

    /// Runs `f` in one read transaction on a diesel reader connection.
    pub(crate) fn read_diesel<T>(
        &self,
        f: impl FnOnce(&mut AnyConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let taken = self
            .idle_diesel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut conn = match taken {
            Some(c) => c,
            None => open_sqlite_reader(&self.path)?,
        };
        let result = conn.transaction(f);
        // A connection whose transaction could not end is not given to the next read.
        if idle_between_transactions(&mut conn) {
            let mut idle = self
                .idle_diesel
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if idle.len() < KEEP {
                idle.push(conn);
            }
        }
        result
    }
}

/// Whether `conn` is outside any transaction, as a connection handed to the next read must be.
fn idle_between_transactions(conn: &mut AnyConnection) -> bool {
    use diesel::connection::{AnsiTransactionManager, TransactionManager};
    let AnyConnection::Sqlite(c) = conn else {
        return false;
    };
    matches!(
        AnsiTransactionManager::transaction_manager_status_mut(c).transaction_depth(),
        Ok(None)
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use diesel::RunQueryDsl;

    use crate::store::{ClusterFilter, Store, StoreError};

    fn store_with_c1(dir: &tempfile::TempDir) -> Store {
        crate::store::test_support::sqlite_with_c1(dir, 1)
    }

    fn cluster_names(store: &Store) -> Vec<String> {
        let all = store.list_clusters(&ClusterFilter::default()).unwrap();
        all.into_iter().map(|c| c.name).collect()
    }

    #[test]
    fn a_read_runs_while_the_writing_connection_is_busy_and_sees_what_was_committed() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with_c1(&dir);
        // A write in progress holds the writing connection for as long as it runs.
        let writing = store.lock();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| tx.send(cluster_names(&store)).unwrap());
            // A read that queued behind the write would never answer while it is held: the
            // timeout only turns that hang into a failure.
            let names = rx.recv_timeout(Duration::from_secs(60));
            drop(writing);
            assert_eq!(names.expect("the read waited for the writer"), ["c1"]);
        });
    }

    #[test]
    fn a_reader_never_writes_and_a_failed_read_leaves_it_usable() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with_c1(&dir);
        let write = store.read(|c| Ok(diesel::sql_query("DELETE FROM clusters").execute(c)?));
        let err = write
            .expect_err("a reader connection refused the write")
            .to_string();
        assert!(err.contains("readonly"), "{err}");
        let failed: Result<(), _> = store.read(|_| {
            Err(StoreError::Migration {
                message: "a read's own failure".into(),
            })
        });
        assert!(failed.is_err());
        assert_eq!(cluster_names(&store), ["c1"]);
        let idle = store
            .readers
            .as_ref()
            .unwrap()
            .idle_diesel
            .lock()
            .unwrap()
            .len();
        assert_eq!(idle, 1, "every read used and gave back the same connection");
    }
}
