//! One database connection of whichever backend the URL names, with the embedded migrations
//! run on open ("create or migrate on start").

use crate::db::{MYSQL_MIGRATIONS, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};
use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel::mysql::MysqlConnection;
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness};

use super::error::StoreError;

/// A connection to any supported backend. Queries are written once against this enum.
#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    Sqlite(SqliteConnection),
    Mysql(MysqlConnection),
    Postgresql(PgConnection),
}

impl AnyConnection {
    /// Runs `f` in a transaction that takes SQLite's write lock when it begins (`BEGIN
    /// IMMEDIATE`): a second writer then waits on the busy timeout, where a deferred
    /// transaction that read first fails at its first write with "database is locked" (its
    /// snapshot is stale). MySQL and PostgreSQL lock rows as they go: plain `transaction`.
    pub fn write_transaction<T, E, F>(&mut self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut AnyConnection) -> Result<T, E>,
        E: From<diesel::result::Error>,
    {
        use diesel::connection::{AnsiTransactionManager, TransactionManager};
        let AnyConnection::Sqlite(sqlite) = self else {
            return self.transaction(f);
        };
        AnsiTransactionManager::begin_transaction_sql(sqlite, "BEGIN IMMEDIATE")?;
        // Ended through the enum's manager, which hands over to the same SQLite connection.
        match f(self) {
            Ok(value) => {
                <Self as Connection>::TransactionManager::commit_transaction(self)?;
                Ok(value)
            }
            Err(e) => match <Self as Connection>::TransactionManager::rollback_transaction(self) {
                Ok(()) | Err(diesel::result::Error::BrokenTransactionManager) => Err(e),
                Err(rollback) => Err(rollback.into()),
            },
        }
    }
}

/// Runs `$body` with `$c` bound to the backend's own connection, for the hottest queries.
///
/// A query through [`AnyConnection`] pays for the multi-backend layer on every run: its
/// `SerializedQuery` renders the statement's whole SQL text on each of diesel's passes over
/// it (the cache check, the bind collection), cached statement or not. Under federated
/// submissions that was 16% of the dbd's CPU, more than SQLite's own work for those
/// statements. The backend's own connection looks a cached statement up by its Rust type and
/// only collects the binds. The body is compiled once per backend, so it must be a query the
/// three accept alike.
macro_rules! native {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            $crate::store::conn::AnyConnection::Sqlite($c) => $body,
            $crate::store::conn::AnyConnection::Mysql($c) => $body,
            $crate::store::conn::AnyConnection::Postgresql($c) => $body,
        }
    };
}
pub(crate) use native;

/// The backend a database URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Mysql,
    Postgres,
}

/// How long a SQLite writer waits for a lock held by another process, in milliseconds.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// WAL pages after which a commit checkpoints (SQLite's default is 1,000). A checkpoint copies
/// the pages into the database file and syncs it, in the committing thread: at the default, an
/// ingest of 1,000-record batches checkpointed every few batches, copying the same index pages
/// again each time, and waited for each sync (a sixth of the dbd's CPU time, and more of its
/// wall time). At 10,000 pages (40 MB of 4 KiB pages) a page is copied once per many batches.
const SQLITE_WAL_AUTOCHECKPOINT: u32 = 10_000;

/// The size the WAL file is cut back to after a checkpoint, in bytes: a little above what
/// [`SQLITE_WAL_AUTOCHECKPOINT`] lets it grow to, so a rare larger transaction does not leave
/// a larger file behind.
const SQLITE_JOURNAL_SIZE_LIMIT: u64 = 64 << 20;

/// Picks the backend from the URL scheme and returns the URL in the form diesel wants:
/// `sqlite://<path>` or a bare path → SQLite (the path); `mysql://` or `mariadb://` → MySQL;
/// `postgres://` or `postgresql://` → PostgreSQL.
pub fn parse_url(url: &str) -> Result<(Backend, String), StoreError> {
    let unsupported = || StoreError::UnsupportedUrl { url: redact(url) };
    match url.split_once("://") {
        Some(("sqlite", path)) if !path.is_empty() => Ok((Backend::Sqlite, path.to_string())),
        Some(("mysql", _)) => Ok((Backend::Mysql, url.to_string())),
        Some(("mariadb", rest)) => Ok((Backend::Mysql, format!("mysql://{rest}"))),
        Some(("postgres" | "postgresql", _)) => Ok((Backend::Postgres, url.to_string())),
        Some(_) => Err(unsupported()),
        None if url.is_empty() => Err(unsupported()),
        None => Ok((Backend::Sqlite, url.to_string())),
    }
}

/// The URL with any password replaced by `***`, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// Makes the SQLite database at `path` and its `-wal`/`-shm` files readable by the daemon's
/// user only (0600): the file is created that way (SQLite gives the WAL and shared-memory
/// files the database's mode) and existing files are tightened. In-memory and URI-named
/// databases are left to SQLite.
fn make_sqlite_private(path: &str) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    if path == ":memory:" || path.starts_with("file:") {
        return Ok(());
    }
    let err = |path: &str| {
        let path = path.to_string();
        move |source| StoreError::DbFile { path, source }
    };
    sluice_wire::daemon::private_file(std::path::Path::new(path)).map_err(err(path))?;
    for suffix in ["-wal", "-shm"] {
        let side = format!("{path}{suffix}");
        match std::fs::set_permissions(&side, std::fs::Permissions::from_mode(0o600)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(err(&side)(e)),
            _ => {}
        }
    }
    Ok(())
}

/// A read-only diesel connection to the SQLite database file at `path` (opened and migrated
/// by [`open`] first), for reads beside the writing connection (see `readers`).
pub(crate) fn open_sqlite_reader(path: &str) -> Result<AnyConnection, StoreError> {
    let mut conn = SqliteConnection::establish(path).map_err(|source| StoreError::Connect {
        url: redact(path),
        source,
    })?;
    // `query_only`: this connection never writes, whatever a bug would ask of it.
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}; PRAGMA query_only = ON; \
         PRAGMA temp_store = MEMORY; PRAGMA mmap_size = 0;"
    ))?;
    Ok(AnyConnection::Sqlite(conn))
}

/// Opens the database `url`, applies the backend's connection settings and runs the pending
/// embedded migrations.
pub fn open(url: &str) -> Result<AnyConnection, StoreError> {
    let (backend, diesel_url) = parse_url(url)?;
    let connect_err = |source| StoreError::Connect {
        url: redact(url),
        source,
    };
    match backend {
        Backend::Sqlite => {
            make_sqlite_private(&diesel_url)?;
            let mut conn = SqliteConnection::establish(&diesel_url).map_err(connect_err)?;
            // WAL lets readers run beside the writer; NORMAL is durable across application
            // crashes in WAL mode; the busy timeout covers a second process on the same file.
            // Statement journals (kept while a multi-row INSERT runs, to undo it alone) and
            // temporary tables stay in memory instead of going through a file.
            conn.batch_execute(&format!(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                 PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}; PRAGMA foreign_keys = ON; \
                 PRAGMA temp_store = MEMORY; PRAGMA mmap_size = 0; \
                 PRAGMA wal_autocheckpoint = {SQLITE_WAL_AUTOCHECKPOINT}; \
                 PRAGMA journal_size_limit = {SQLITE_JOURNAL_SIZE_LIMIT};"
            ))?;
            migrate(&mut conn, SQLITE_MIGRATIONS)?;
            Ok(AnyConnection::Sqlite(conn))
        }
        Backend::Mysql => {
            let mut conn = MysqlConnection::establish(&diesel_url).map_err(connect_err)?;
            migrate(&mut conn, MYSQL_MIGRATIONS)?;
            Ok(AnyConnection::Mysql(conn))
        }
        Backend::Postgres => {
            let mut conn = PgConnection::establish(&diesel_url).map_err(connect_err)?;
            migrate(&mut conn, POSTGRES_MIGRATIONS)?;
            Ok(AnyConnection::Postgresql(conn))
        }
    }
}

fn migrate<C>(conn: &mut C, migrations: EmbeddedMigrations) -> Result<(), StoreError>
where
    C: MigrationHarness<C::Backend> + Connection,
{
    conn.run_pending_migrations(migrations)
        .map(|_| ())
        .map_err(|e| StoreError::Migration {
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_files_are_made_private_and_older_loose_ones_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("acct.db");
        drop(open(&format!("sqlite://{}", db.display())).unwrap());
        assert_eq!(mode(&db), 0o600);
        // Files an earlier version left readable by others.
        let wal = dir.path().join("acct.db-wal");
        std::fs::write(&wal, "").unwrap();
        for path in [&db, &wal] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let conn = open(db.to_str().unwrap()).unwrap();
        for path in [&db, &wal] {
            assert_eq!(mode(path), 0o600, "{}", path.display());
        }
        drop(conn);
    }

    #[test]
    fn sqlite_connections_get_the_ingest_settings() {
        use diesel::RunQueryDsl;
        use diesel::sql_types::BigInt;

        // `PRAGMA x` answers in a column named x.
        #[derive(diesel::QueryableByName)]
        struct TempStore {
            #[diesel(sql_type = BigInt)]
            temp_store: i64,
        }
        #[derive(diesel::QueryableByName)]
        struct WalAutocheckpoint {
            #[diesel(sql_type = BigInt)]
            wal_autocheckpoint: i64,
        }
        #[derive(diesel::QueryableByName)]
        struct JournalSizeLimit {
            #[diesel(sql_type = BigInt)]
            journal_size_limit: i64,
        }
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("acct.db").display());
        let AnyConnection::Sqlite(mut conn) = open(&url).unwrap() else {
            panic!("{url} is not an SQLite URL");
        };
        let temp: TempStore = diesel::sql_query("PRAGMA temp_store")
            .get_result(&mut conn)
            .unwrap();
        assert_eq!(temp.temp_store, 2, "MEMORY");
        let wal: WalAutocheckpoint = diesel::sql_query("PRAGMA wal_autocheckpoint")
            .get_result(&mut conn)
            .unwrap();
        assert_eq!(wal.wal_autocheckpoint, i64::from(SQLITE_WAL_AUTOCHECKPOINT));
        let limit: JournalSizeLimit = diesel::sql_query("PRAGMA journal_size_limit")
            .get_result(&mut conn)
            .unwrap();
        assert_eq!(
            limit.journal_size_limit,
            i64::try_from(SQLITE_JOURNAL_SIZE_LIMIT).unwrap()
        );
    }

    #[test]
    fn urls_pick_their_backend() {
        let cases = [
            (
                "sqlite:///var/lib/sluice/acct.db",
                Backend::Sqlite,
                "/var/lib/sluice/acct.db",
            ),
            ("/tmp/a.db", Backend::Sqlite, "/tmp/a.db"),
            (
                "mysql://root@h:3306/db",
                Backend::Mysql,
                "mysql://root@h:3306/db",
            ),
            ("mariadb://root@h/db", Backend::Mysql, "mysql://root@h/db"),
            ("postgres://u@h/db", Backend::Postgres, "postgres://u@h/db"),
            (
                "postgresql://u@h/db",
                Backend::Postgres,
                "postgresql://u@h/db",
            ),
        ];
        for (url, backend, diesel_url) in cases {
            assert_eq!(
                parse_url(url).unwrap(),
                (backend, diesel_url.to_string()),
                "{url}"
            );
        }
        assert!(matches!(
            parse_url("oracle://x"),
            Err(StoreError::UnsupportedUrl { .. })
        ));
        assert!(matches!(
            parse_url(""),
            Err(StoreError::UnsupportedUrl { .. })
        ));
        assert!(matches!(
            parse_url("sqlite://"),
            Err(StoreError::UnsupportedUrl { .. })
        ));
    }

    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            redact("mysql://u:secret@h:3306/db"),
            "mysql://u:***@h:3306/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("/tmp/a.db"), "/tmp/a.db");
        let unsupported = parse_url("foo://u:pw@h").unwrap_err().to_string();
        assert!(!unsupported.contains("pw"), "{unsupported}");
    }
}
