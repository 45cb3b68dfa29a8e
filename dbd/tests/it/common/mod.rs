//! The backend fixture of the store test suite: a fresh database per test on SQLite (in a
//! temp dir), MariaDB and PostgreSQL (a uniquely named database, dropped afterwards), made by
//! the testkit's [`TestDatabase`] (which says how the servers are found).

use sluice_dbd::store::Store;
use sluice_testkit::dbd::TestDatabase;

/// Which backend a test runs on.
pub use sluice_testkit::dbd::Backend as Kind;

/// The clock of the fixture's first open (creation time of the root rows).
pub const T0: i64 = 1_000;
/// The clock of the changes the suites make (after [`T0`]).
pub const T1: i64 = 2_000;

pub mod fed;
pub mod jobs;

/// A fresh, empty database on one backend.
pub struct TestDb {
    pub kind: Kind,
    pub url: String,
    _db: TestDatabase,
}

impl TestDb {
    /// Creates the database; panics with a clear message if the server is unreachable.
    pub fn new(kind: Kind) -> Self {
        let db = TestDatabase::create(kind);
        Self {
            kind,
            url: db.url().to_string(),
            _db: db,
        }
    }

    /// Opens (creating or migrating) the store, with the clock at [`T0`].
    pub fn open(&self) -> Store {
        Store::connect_at(&self.url, T0).unwrap_or_else(|e| panic!("open {}: {e}", self.url))
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
