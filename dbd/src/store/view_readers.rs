//! Reader connections for the federation's reads (event pages, views, a job's record) beside
//! the store's one writing connection: the controllers' event streams read a page after every
//! change, several times per federated job, and on the writing connection each of those reads
//! waited for, and held up, the submissions and record batches behind the same mutex.
//!
//! Connections are diesel ones (the reads are the store's own queries, written once for every
//! backend), opened on demand without migrations (the writer ran them) and kept for the next
//! read, up to [`KEEP`]. Each read is one transaction, so it sees one committed state. On
//! SQLite this needs WAL (readers see the last commit and never block the writer) and a file:
//! an in-memory database has no second connection, and its reads stay on the writer.

use std::sync::{Mutex, PoisonError};

use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel::mysql::MysqlConnection;
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;

use super::conn::{self, AnyConnection, Backend};
use super::error::StoreError;

/// Idle reader connections kept for the next read.
const KEEP: usize = 4;

/// A small pool of read-only connections to the store's database.
pub(crate) struct ViewReaders {
    backend: Backend,
    /// The URL as diesel takes it (see [`conn::parse_url`]).
    diesel_url: String,
    /// The URL as configured, for messages (redacted there).
    url: String,
    idle: Mutex<Vec<AnyConnection>>,
}

impl ViewReaders {
    /// Readers for the database at `url`, or `None` for an in-memory or URI-named SQLite
    /// database (no second connection sees it).
    pub(crate) fn for_url(url: &str) -> Result<Option<Self>, StoreError> {
        let (backend, diesel_url) = conn::parse_url(url)?;
        if backend == Backend::Sqlite
            && (diesel_url == ":memory:" || diesel_url.starts_with("file:"))
        {
            return Ok(None);
        }
        Ok(Some(Self {
            backend,
            diesel_url,
            url: url.to_string(),
            idle: Mutex::new(Vec::new()),
        }))
    }

    fn open(&self) -> Result<AnyConnection, StoreError> {
        let connect_err = |source| StoreError::Connect {
            url: conn::redact(&self.url),
            source,
        };
        Ok(match self.backend {
            Backend::Sqlite => {
                let mut c = SqliteConnection::establish(&self.diesel_url).map_err(connect_err)?;
                // `query_only`: this connection never writes, whatever a bug would ask of it.
                c.batch_execute(&format!(
                    "PRAGMA busy_timeout = {}; PRAGMA query_only = ON;",
                    conn::SQLITE_BUSY_TIMEOUT_MS
                ))?;
                AnyConnection::Sqlite(c)
            }
            Backend::Mysql => AnyConnection::Mysql(
                MysqlConnection::establish(&self.diesel_url).map_err(connect_err)?,
            ),
            Backend::Postgres => AnyConnection::Postgresql(
                PgConnection::establish(&self.diesel_url).map_err(connect_err)?,
            ),
        })
    }

    /// Runs `f` in one transaction on a reader connection. A connection whose read failed is
    /// dropped rather than kept (it may be broken: a server gone, a transaction left open).
    pub(crate) fn read<T, E>(
        &self,
        f: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<diesel::result::Error> + From<StoreError>,
    {
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut conn = match taken {
            Some(c) => c,
            None => self.open()?,
        };
        let result = conn.transaction(f);
        if result.is_ok() {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if idle.len() < KEEP {
                idle.push(conn);
            }
        }
        result
    }
}
