//! Throwaway MariaDB / PostgreSQL databases for end-to-end tests: created with a unique name,
//! dropped on `Drop`. A server that does not answer fails the test with a clear message (CI
//! starts the servers; tests never skip silently).

use std::sync::atomic::{AtomicU32, Ordering};

use diesel::{Connection, RunQueryDsl};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Which server a throwaway database lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Mysql,
    Postgres,
}

impl Server {
    /// The administrative URL: env `SLUICE_TEST_MYSQL_URL` / `SLUICE_TEST_PG_URL`, or the local default.
    fn admin_url(self) -> String {
        let (var, default) = match self {
            Server::Mysql => ("SLUICE_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"),
            Server::Postgres => (
                "SLUICE_TEST_PG_URL",
                "postgres://postgres@127.0.0.1:5432/test",
            ),
        };
        std::env::var(var).unwrap_or_else(|_| default.to_string())
    }

    fn execute(self, sql: &str) -> Result<(), String> {
        let url = self.admin_url();
        let result = match self {
            Server::Mysql => diesel::MysqlConnection::establish(&url)
                .map_err(|e| e.to_string())
                .and_then(|mut c| {
                    diesel::sql_query(sql)
                        .execute(&mut c)
                        .map_err(|e| e.to_string())
                }),
            Server::Postgres => diesel::PgConnection::establish(&url)
                .map_err(|e| e.to_string())
                .and_then(|mut c| {
                    diesel::sql_query(sql)
                        .execute(&mut c)
                        .map_err(|e| e.to_string())
                }),
        };
        result.map(drop).map_err(|e| format!("{url}: {sql}: {e}"))
    }
}

/// A database created for one test and dropped when this is dropped.
#[derive(Debug)]
pub struct ThrowawayDb {
    server: Server,
    name: String,
    url: String,
}

impl ThrowawayDb {
    /// Creates `sluice_e2e_<pid>_<n>` on `server`; panics with the reason if the server is unreachable.
    pub fn create(server: Server) -> Self {
        let name = format!(
            "sluice_e2e_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        if let Err(e) = server.execute(&format!("CREATE DATABASE {name}")) {
            panic!("cannot create a test database (is the server running? .ci/run starts it): {e}");
        }
        let admin = server.admin_url();
        let base = admin
            .rsplit_once('/')
            .map_or(admin.as_str(), |(base, _)| base);
        let url = format!("{base}/{name}");
        Self { server, name, url }
    }

    /// The database's URL, as `sluice up --storage` takes it.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for ThrowawayDb {
    fn drop(&mut self) {
        let sql = match self.server {
            Server::Mysql => format!("DROP DATABASE IF EXISTS {}", self.name),
            Server::Postgres => format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        };
        if let Err(e) = self.server.execute(&sql) {
            eprintln!("warning: could not drop test database: {e}");
        }
    }
}
