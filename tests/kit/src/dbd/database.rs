//! Fresh databases for tests: an SQLite file in a temp dir, or a uniquely named database on
//! the MariaDB or PostgreSQL test server, dropped when the value is dropped.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use diesel::Connection;
use diesel::connection::SimpleConnection;

/// The databases the accounting daemon runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Mysql,
    Postgres,
}

impl Backend {
    /// Every backend, for tests that run on each.
    pub const ALL: [Backend; 3] = [Backend::Sqlite, Backend::Mysql, Backend::Postgres];

    /// The server's admin URL and the variable that overrides it (`None` for SQLite).
    pub fn admin_url(self) -> Option<(String, &'static str)> {
        let (var, default) = match self {
            Backend::Sqlite => return None,
            Backend::Mysql => ("SLUICE_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"),
            Backend::Postgres => (
                "SLUICE_TEST_PG_URL",
                "postgres://postgres@127.0.0.1:5432/test",
            ),
        };
        Some((std::env::var(var).unwrap_or_else(|_| default.into()), var))
    }
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh, empty database on one backend; dropped (with its temp dir) when this is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    backend: Backend,
    url: String,
    /// The admin URL and database name on a server backend.
    server: Option<(String, String)>,
    dir: tempfile::TempDir,
}

impl TestDatabase {
    /// Creates the database; panics with a clear message if the server is unreachable.
    pub fn create(backend: Backend) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let Some((admin, var)) = backend.admin_url() else {
            let url = format!("sqlite://{}", dir.path().join("acct.db").display());
            return Self {
                backend,
                url,
                server: None,
                dir,
            };
        };
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let name = format!("sluice_t_{}_{n}", std::process::id());
        if let Err(e) = admin_exec(backend, &admin, &format!("CREATE DATABASE {name}")) {
            panic!("{backend:?} test server unreachable at {admin} ({e}); start it or set {var}");
        }
        Self {
            backend,
            url: with_database(&admin, &name),
            server: Some((admin, name)),
            dir,
        }
    }

    /// Which backend it is on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The store URL (`sqlite://<path>`, `mysql://...`, `postgres://...`), as `Store::connect`
    /// and `sluice up --storage` take it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A temp dir that lives as long as the database (the SQLite file is `acct.db` in it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The `slurmdbd.conf` lines selecting this database.
    pub(super) fn storage_conf(&self) -> String {
        let Some((admin, name)) = &self.server else {
            return format!(
                "StorageType=accounting_storage/sqlite\nStorageLoc={}\n",
                self.dir.path().join("acct.db").display()
            );
        };
        let server = ServerUrl::parse(admin);
        let kind = match self.backend {
            Backend::Mysql => "mysql",
            _ => "pgsql",
        };
        let mut conf = format!(
            "StorageType=accounting_storage/{kind}\nStorageHost={}\nStoragePort={}\n\
             StorageLoc={name}\n",
            server.host, server.port
        );
        if !server.user.is_empty() {
            conf.push_str(&format!("StorageUser={}\n", server.user));
        }
        if !server.pass.is_empty() {
            conf.push_str(&format!("StoragePass={}\n", server.pass));
        }
        conf
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Some((admin, name)) = &self.server else {
            return;
        };
        let sql = match self.backend {
            Backend::Postgres => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            _ => format!("DROP DATABASE IF EXISTS {name}"),
        };
        if let Err(e) = admin_exec(self.backend, admin, &sql) {
            eprintln!("could not drop test database {name}: {e}");
        }
    }
}

/// Runs `sql` on the server behind `admin_url`.
fn admin_exec(backend: Backend, admin_url: &str, sql: &str) -> Result<(), String> {
    match backend {
        Backend::Mysql => diesel::MysqlConnection::establish(admin_url)
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string())),
        Backend::Postgres => diesel::PgConnection::establish(admin_url)
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string())),
        Backend::Sqlite => Ok(()),
    }
}

/// `base` with its database path replaced by `db`.
fn with_database(base: &str, db: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("", base));
    let authority = rest.split('/').next().unwrap_or(rest);
    format!("{scheme}://{authority}/{db}")
}

/// The parts of a server URL `scheme://[user[:pass]@]host[:port][/db]` a `slurmdbd.conf` names.
#[derive(Debug, PartialEq, Eq)]
struct ServerUrl {
    user: String,
    pass: String,
    host: String,
    port: u16,
}

impl ServerUrl {
    fn parse(url: &str) -> Self {
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
        let authority = rest.split('/').next().unwrap_or(rest);
        let (auth, host_port) = authority.rsplit_once('@').unwrap_or(("", authority));
        let (user, pass) = auth.split_once(':').unwrap_or((auth, ""));
        let default_port = if scheme == "mysql" { 3306 } else { 5432 };
        let (host, port) = match host_port.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().unwrap_or(default_port)),
            None => (host_port, default_port),
        };
        Self {
            user: percent_decode(user),
            pass: percent_decode(pass),
            host: host.to_string(),
            port,
        }
    }
}

/// Undoes URL percent-encoding (`%40` → `@`); a malformed escape is kept as it is.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_give_their_parts() {
        let url = ServerUrl::parse("mysql://root@127.0.0.1:3306/test");
        assert_eq!(
            url,
            ServerUrl {
                user: "root".into(),
                pass: String::new(),
                host: "127.0.0.1".into(),
                port: 3306,
            }
        );
        let url = ServerUrl::parse("postgres://u:p%40ss@db.example/x");
        assert_eq!((url.user.as_str(), url.pass.as_str()), ("u", "p@ss"));
        assert_eq!((url.host.as_str(), url.port), ("db.example", 5432));
    }

    #[test]
    fn database_urls_name_the_database() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/test", "sluice_t_1_0"),
            "postgres://postgres@127.0.0.1:5432/sluice_t_1_0"
        );
    }
}
