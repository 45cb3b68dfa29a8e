//! The backend fixture of the store test suite: a fresh database per test on SQLite (in a
//! temp dir), MariaDB and PostgreSQL (a uniquely named database, dropped afterwards).
//!
//! MariaDB and PostgreSQL are expected to run (CI starts them); when one is unreachable the
//! test fails with a message saying so. URLs: `SLUICE_TEST_MYSQL_URL` (default
//! `mysql://root@127.0.0.1:3306/test`) and `SLUICE_TEST_PG_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`).

use std::sync::atomic::{AtomicUsize, Ordering};

use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel::mysql::MysqlConnection;
use diesel::pg::PgConnection;
use sluice_dbd::store::Store;

/// Which backend a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Mysql,
    Postgres,
}

/// The clock of the fixture's first open (creation time of the root rows).
pub const T0: i64 = 1_000;
/// The clock of the changes the suites make (after [`T0`]).
pub const T1: i64 = 2_000;

pub mod fed;
pub mod jobs;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh, empty database on one backend.
pub struct TestDb {
    pub kind: Kind,
    pub url: String,
    server: Option<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

/// `base` with its database path replaced by `db`.
fn with_database(base: &str, db: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("", base));
    let authority = rest.split('/').next().unwrap_or(rest);
    format!("{scheme}://{authority}/{db}")
}

fn admin_exec(kind: Kind, admin_url: &str, sql: &str) -> Result<(), String> {
    match kind {
        Kind::Mysql => MysqlConnection::establish(admin_url)
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string())),
        Kind::Postgres => PgConnection::establish(admin_url)
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string())),
        Kind::Sqlite => Ok(()),
    }
}

impl TestDb {
    /// Creates the database; panics with a clear message if the server is unreachable.
    pub fn new(kind: Kind) -> Self {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let name = format!("sluice_t_{}_{n}", std::process::id());
        match kind {
            Kind::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("acct.db").display());
                Self {
                    kind,
                    url,
                    server: None,
                    _dir: Some(dir),
                }
            }
            Kind::Mysql | Kind::Postgres => {
                let (var, default) = match kind {
                    Kind::Mysql => ("SLUICE_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"),
                    _ => (
                        "SLUICE_TEST_PG_URL",
                        "postgres://postgres@127.0.0.1:5432/test",
                    ),
                };
                let admin = std::env::var(var).unwrap_or_else(|_| default.to_string());
                if let Err(e) = admin_exec(kind, &admin, &format!("CREATE DATABASE {name}")) {
                    panic!(
                        "{kind:?} test server unreachable at {admin} ({e}); start it or set {var}"
                    );
                }
                let url = with_database(&admin, &name);
                Self {
                    kind,
                    url,
                    server: Some((admin, name)),
                    _dir: None,
                }
            }
        }
    }

    /// Opens (creating or migrating) the store, with the clock at [`T0`].
    pub fn open(&self) -> Store {
        Store::connect_at(&self.url, T0).unwrap_or_else(|e| panic!("open {}: {e}", self.url))
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = &self.server {
            let sql = match self.kind {
                Kind::Postgres => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                _ => format!("DROP DATABASE IF EXISTS {name}"),
            };
            if let Err(e) = admin_exec(self.kind, admin, &sql) {
                eprintln!("could not drop test database {name}: {e}");
            }
        }
    }
}

/// Owned strings from string literals.
pub fn s(items: &[&str]) -> Vec<String> {
    items.iter().map(|i| i.to_string()).collect()
}

/// Instantiates test cases (functions `fn(&TestDb)` in module `cases`) once per backend, as
/// `sqlite::case`, `mysql::case` and `postgres::case`.
#[macro_export]
macro_rules! per_backend {
    ($($case:ident),* $(,)?) => {
        $crate::per_backend!(@mod sqlite, Sqlite, $($case),*);
        $crate::per_backend!(@mod mysql, Mysql, $($case),*);
        $crate::per_backend!(@mod postgres, Postgres, $($case),*);
    };
    (@mod $m:ident, $kind:ident, $($case:ident),*) => {
        mod $m {
            $(
                #[test]
                fn $case() {
                    let db = super::common::TestDb::new(super::common::Kind::$kind);
                    super::cases::$case(&db);
                }
            )*
        }
    };
}
