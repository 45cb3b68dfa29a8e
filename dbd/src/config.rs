//! Reading `slurmdbd.conf`: where the daemon listens, which database it keeps, how it logs.
//!
//! Interpretation is pure: [`DbdConfig::from_conf`] takes the split file and a user resolver, so
//! tests need no files and no password database. Unknown keys do not stop the daemon; they are
//! returned as [`DbdConfig::warnings`] so the daemon can log them once logging is set up.

use std::path::{Path, PathBuf};

use sluice_reports::purge::PurgeAfter;
use sluice_vocab::auth_conf::AuthConf;
use sluice_vocab::conf::{ConfError, ConfFile, Pair};
use sluice_vocab::private_data::PrivateData;
use tracing::level_filters::LevelFilter;

use crate::store::usage::PurgePolicy;

/// The port Slurm's slurmdbd listens on unless told otherwise.
pub const DEFAULT_DBD_PORT: u16 = 6819;
/// Where the daemon looks for its configuration unless `-f` or `SLURMDBD_CONF` says otherwise.
pub const DEFAULT_CONF_PATH: &str = "/etc/slurm/slurmdbd.conf";
/// The database (or SQLite file) name used when `StorageLoc` is not given.
pub const DEFAULT_STORAGE_LOC: &str = "slurm_acct_db";

const KNOWN_KEYS: &[&str] = &[
    "DbdHost",
    "DbdAddr",
    "DbdPort",
    "StorageType",
    "StorageHost",
    "StoragePort",
    "StorageUser",
    "StoragePass",
    "StorageLoc",
    "LogFile",
    "DebugLevel",
    "SlurmUser",
    "PrivateData",
    "PidFile",
    "PurgeJobAfter",
    "PurgeStepAfter",
    "PurgeSuspendAfter",
    "PurgeEventAfter",
    "PurgeUsageAfter",
    "AuthType",
    "AuthInfo",
];

/// The database the daemon keeps its records in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// An SQLite file (`accounting_storage/sqlite`), absolute path.
    Sqlite { path: PathBuf },
    /// A MariaDB/MySQL (`accounting_storage/mysql`) or PostgreSQL (`accounting_storage/pgsql`) server.
    Server {
        kind: ServerKind,
        host: String,
        port: u16,
        user: String,
        pass: String,
        database: String,
    },
}

/// Which network database a [`Storage::Server`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// MariaDB or MySQL.
    Mysql,
    /// PostgreSQL.
    Postgres,
}

impl Storage {
    /// The directory holding the SQLite file, which the daemon locks for its lifetime; `None`
    /// for a database server.
    pub fn sqlite_dir(&self) -> Option<PathBuf> {
        match self {
            Storage::Sqlite { path } => path.parent().map(Path::to_path_buf),
            Storage::Server { .. } => None,
        }
    }

    /// The URL handed to the store: `sqlite://<abs path>`, `mysql://user:pass@host:port/db` or
    /// `postgres://user:pass@host:port/db`, user and password percent-encoded.
    pub fn url(&self) -> String {
        match self {
            Storage::Sqlite { path } => format!("sqlite://{}", path.display()),
            Storage::Server {
                kind,
                host,
                port,
                user,
                pass,
                database,
            } => {
                let scheme = match kind {
                    ServerKind::Mysql => "mysql",
                    ServerKind::Postgres => "postgres",
                };
                let auth = match (user.is_empty(), pass.is_empty()) {
                    (true, _) => String::new(),
                    (false, true) => format!("{}@", percent_encode(user)),
                    (false, false) => format!("{}:{}@", percent_encode(user), percent_encode(pass)),
                };
                format!(
                    "{scheme}://{auth}{host}:{port}/{}",
                    percent_encode(database)
                )
            }
        }
    }

    /// The URL with the password masked, for logs.
    pub fn display_url(&self) -> String {
        match self {
            Storage::Server { pass, .. } if !pass.is_empty() => {
                self.url()
                    .replacen(&format!(":{}@", percent_encode(pass)), ":***@", 1)
            }
            _ => self.url(),
        }
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The daemon's configuration, every path absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbdConfig {
    /// The file it was read from.
    pub path: PathBuf,
    /// `DbdHost`: the host name the daemon runs on (default `localhost`).
    pub dbd_host: String,
    /// `DbdAddr`: the address to bind, when it differs from `DbdHost`.
    pub dbd_addr: Option<String>,
    /// `DbdPort` (default 6819; 0 binds an ephemeral port).
    pub dbd_port: u16,
    /// Where records are kept.
    pub storage: Storage,
    /// `LogFile`; `None` logs to stderr.
    pub log_file: Option<PathBuf>,
    /// `DebugLevel` as a tracing filter (default `info`).
    pub log_level: LevelFilter,
    /// `SlurmUser` (default `root`).
    pub slurm_user: String,
    /// The uid of `SlurmUser`; it and root are the daemon's administrators.
    pub slurm_uid: u32,
    /// `PidFile`, if the daemon should write one.
    pub pid_file: Option<PathBuf>,
    /// `PrivateData` (default none): what users below `AdminLevel=Operator` see only of
    /// their own (`jobs`, `users`, `accounts`, `usage`).
    pub private_data: PrivateData,
    /// `PurgeJobAfter`, `PurgeStepAfter`, `PurgeSuspendAfter`, `PurgeEventAfter`,
    /// `PurgeUsageAfter` (Slurm's syntax: `12month`, `30days`, `24hours`; default: keep).
    pub purge: PurgePolicy,
    /// `AuthType` and `AuthInfo`: how requests are authenticated.
    pub auth: AuthConf,
    /// Unknown keys, each naming file, line and key.
    pub warnings: Vec<String>,
}

impl DbdConfig {
    /// Reads `path`, resolving `SlurmUser` through the system's user database.
    pub fn load(path: &Path) -> Result<Self, ConfError> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let file = ConfFile::read(&path)?;
        Self::from_conf(&file, |name| {
            nix::unistd::User::from_name(name)
                .ok()
                .flatten()
                .map(|u| u.uid.as_raw())
        })
    }

    /// Interprets a split file; `uid_of` maps a user name to its uid.
    pub fn from_conf(
        file: &ConfFile,
        uid_of: impl Fn(&str) -> Option<u32>,
    ) -> Result<Self, ConfError> {
        let base = file.path.parent().unwrap_or(Path::new("/"));
        let text = |key: &str| file.get(key).map(|p| p.value.trim().to_string());
        let resolve = |p: &Pair| -> PathBuf { base.join(p.value.trim()) };

        let warnings = file
            .pairs()
            .filter(|p| !KNOWN_KEYS.iter().any(|k| p.is(k)))
            .map(|p| {
                format!(
                    "{}:{}: unknown key {} ignored",
                    file.path.display(),
                    p.line,
                    p.key
                )
            })
            .collect();

        let port = |key: &str, default: u16| match file.get(key) {
            Some(p) => file.number::<u16>(p),
            None => Ok(default),
        };
        let storage = match file.get("StorageType") {
            None => ServerOrSqlite::Sqlite,
            Some(p) => match p.value.trim().to_ascii_lowercase().as_str() {
                "accounting_storage/sqlite" => ServerOrSqlite::Sqlite,
                "accounting_storage/mysql" => ServerOrSqlite::Server(ServerKind::Mysql),
                "accounting_storage/pgsql" => ServerOrSqlite::Server(ServerKind::Postgres),
                _ => {
                    return Err(file.bad_value(
                        p,
                        "expected accounting_storage/sqlite, accounting_storage/mysql or accounting_storage/pgsql",
                    ));
                }
            },
        };
        let storage = match storage {
            ServerOrSqlite::Sqlite => Storage::Sqlite {
                path: match file.get("StorageLoc") {
                    Some(p) => resolve(p),
                    None => base.join(DEFAULT_STORAGE_LOC),
                },
            },
            ServerOrSqlite::Server(kind) => Storage::Server {
                kind,
                host: text("StorageHost").unwrap_or_else(|| "localhost".into()),
                port: port(
                    "StoragePort",
                    match kind {
                        ServerKind::Mysql => 3306,
                        ServerKind::Postgres => 5432,
                    },
                )?,
                user: text("StorageUser").unwrap_or_default(),
                pass: file
                    .get("StoragePass")
                    .map(|p| p.value.clone())
                    .unwrap_or_default(),
                database: text("StorageLoc").unwrap_or_else(|| DEFAULT_STORAGE_LOC.into()),
            },
        };
        let log_level = match file.get("DebugLevel") {
            Some(p) => parse_debug_level(&p.value).ok_or_else(|| {
                file.bad_value(
                    p,
                    "expected quiet, fatal, error, info, verbose, debug or debug2..debug5",
                )
            })?,
            None => LevelFilter::INFO,
        };
        let (slurm_user, slurm_uid) = match file.get("SlurmUser") {
            Some(p) => {
                let name = p.value.trim();
                let uid = uid_of(name)
                    .or_else(|| name.parse::<u32>().ok())
                    .ok_or_else(|| file.bad_value(p, "no such user"))?;
                (name.to_string(), uid)
            }
            None => ("root".to_string(), 0),
        };
        let private_data = match file.get("PrivateData") {
            Some(p) => PrivateData::parse(&p.value).map_err(|e| file.bad_value(p, e))?,
            None => PrivateData::default(),
        };
        let purge_after = |key: &str| match file.get(key) {
            Some(p) => PurgeAfter::parse(&p.value).map_err(|e| file.bad_value(p, e)),
            None => Ok(None),
        };
        let purge = PurgePolicy {
            jobs: purge_after("PurgeJobAfter")?,
            steps: purge_after("PurgeStepAfter")?,
            suspends: purge_after("PurgeSuspendAfter")?,
            events: purge_after("PurgeEventAfter")?,
            usage: purge_after("PurgeUsageAfter")?,
        };
        Ok(Self {
            path: file.path.clone(),
            dbd_host: text("DbdHost").unwrap_or_else(|| "localhost".into()),
            dbd_addr: text("DbdAddr"),
            dbd_port: port("DbdPort", DEFAULT_DBD_PORT)?,
            storage,
            log_file: file.get("LogFile").map(resolve),
            log_level,
            slurm_user,
            slurm_uid,
            pid_file: file.get("PidFile").map(resolve),
            private_data,
            purge,
            auth: AuthConf::from_file(file)?,
            warnings,
        })
    }

    /// The address to bind: `DbdAddr`, else `DbdHost`.
    pub fn bind_host(&self) -> &str {
        self.dbd_addr.as_deref().unwrap_or(&self.dbd_host)
    }

    /// The shared key, next to the configuration file.
    pub fn key_path(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or(Path::new("/"))
            .join(sluice_wire::auth::KEY_FILE)
    }

    /// The uids allowed to administer the daemon: root and `SlurmUser`.
    pub fn admin_uids(&self) -> Vec<u32> {
        let mut uids = vec![0, self.slurm_uid];
        uids.dedup();
        uids
    }
}

enum ServerOrSqlite {
    Sqlite,
    Server(ServerKind),
}

/// Maps Slurm's `DebugLevel` names onto tracing levels.
pub fn parse_debug_level(value: &str) -> Option<LevelFilter> {
    Some(match value.trim().to_ascii_lowercase().as_str() {
        "quiet" => LevelFilter::OFF,
        "fatal" | "error" => LevelFilter::ERROR,
        "info" | "verbose" => LevelFilter::INFO,
        "debug" => LevelFilter::DEBUG,
        "debug2" | "debug3" | "debug4" | "debug5" => LevelFilter::TRACE,
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
