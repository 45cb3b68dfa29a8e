//! The `--storage` option of `sluice up`: which database the local dbd keeps, written out as
//! `slurmdbd.conf` storage keys.

use std::path::{Path, PathBuf};

use super::UpError;

/// Where the local dbd keeps its records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageSpec {
    /// An SQLite file; `None` means `DIR/slurm_acct.db`.
    Sqlite(Option<PathBuf>),
    /// A MariaDB/MySQL or PostgreSQL server.
    Server {
        /// `mysql` or `pgsql`, as in `accounting_storage/<plugin>`.
        plugin: &'static str,
        host: String,
        port: Option<u16>,
        user: String,
        pass: String,
        database: String,
    },
}

impl StorageSpec {
    /// Parses `sqlite`, `sqlite:///abs/path`, `mysql://[user[:pass]@]host[:port]/db` (also
    /// `mariadb://`) or `postgres://…` (also `postgresql://`).
    pub fn parse(value: &str) -> Result<Self, UpError> {
        let bad = |reason: &str| UpError::BadStorage {
            value: value.to_string(),
            reason: reason.to_string(),
        };
        if value == "sqlite" {
            return Ok(Self::Sqlite(None));
        }
        let (scheme, rest) = value
            .split_once("://")
            .ok_or_else(|| bad("expected sqlite, sqlite:///PATH, mysql://… or postgres://…"))?;
        let plugin = match scheme {
            "sqlite" => {
                return if rest.starts_with('/') {
                    Ok(Self::Sqlite(Some(PathBuf::from(rest))))
                } else {
                    Err(bad("an SQLite path must be absolute (sqlite:///PATH)"))
                };
            }
            "mysql" | "mariadb" => "mysql",
            "postgres" | "postgresql" => "pgsql",
            _ => {
                return Err(bad(
                    "unknown scheme; expected sqlite, mysql, mariadb or postgres",
                ));
            }
        };
        let (authority, database) = rest
            .split_once('/')
            .ok_or_else(|| bad("the database name is missing (…/DBNAME)"))?;
        let database =
            decode(database).ok_or_else(|| bad("bad percent-encoding in the database name"))?;
        if database.is_empty() || database.contains(['/', '?']) {
            return Err(bad("the database name is missing or invalid"));
        }
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, pass) = match userinfo {
            None => (String::new(), String::new()),
            Some(u) => {
                let (user, pass) = u.split_once(':').unwrap_or((u, ""));
                let user = decode(user).ok_or_else(|| bad("bad percent-encoding in the user"))?;
                let pass =
                    decode(pass).ok_or_else(|| bad("bad percent-encoding in the password"))?;
                (user, pass)
            }
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h,
                Some(
                    p.parse::<u16>()
                        .map_err(|_| bad("the port is not a number"))?,
                ),
            ),
            None => (hostport, None),
        };
        if host.is_empty() {
            return Err(bad("the host is missing"));
        }
        for (what, text) in [
            ("user", &user),
            ("password", &pass),
            ("database name", &database),
        ] {
            if text.contains(['"', '\n', '\r']) {
                return Err(bad(&format!(
                    "the {what} cannot be written to slurmdbd.conf"
                )));
            }
        }
        Ok(Self::Server {
            plugin,
            host: host.to_string(),
            port,
            user,
            pass,
            database,
        })
    }

    /// The `slurmdbd.conf` lines selecting this storage; an SQLite file defaults to `dir/slurm_acct.db`.
    pub fn conf_lines(&self, dir: &Path) -> Vec<String> {
        match self {
            Self::Sqlite(path) => {
                let path = path.clone().unwrap_or_else(|| dir.join("slurm_acct.db"));
                vec![
                    "StorageType=accounting_storage/sqlite".into(),
                    format!("StorageLoc={}", quote(&path.display().to_string())),
                ]
            }
            Self::Server {
                plugin,
                host,
                port,
                user,
                pass,
                database,
            } => {
                let mut lines = vec![
                    format!("StorageType=accounting_storage/{plugin}"),
                    format!("StorageHost={host}"),
                ];
                if let Some(port) = port {
                    lines.push(format!("StoragePort={port}"));
                }
                if !user.is_empty() {
                    lines.push(format!("StorageUser={}", quote(user)));
                }
                if !pass.is_empty() {
                    lines.push(format!("StoragePass={}", quote(pass)));
                }
                lines.push(format!("StorageLoc={}", quote(database)));
                lines
            }
        }
    }
}

/// Quotes a value the conf syntax would otherwise split or cut at a comment.
fn quote(value: &str) -> String {
    if value.is_empty() || value.contains(|c: char| c.is_whitespace() || c == '#' || c == '=') {
        format!("\"{value}\"")
    } else {
        value.to_string()
    }
}

/// Decodes `%XX` escapes; `None` for a malformed escape or non-UTF-8 result.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_forms() {
        assert_eq!(
            StorageSpec::parse("sqlite").unwrap(),
            StorageSpec::Sqlite(None)
        );
        let spec = StorageSpec::parse("sqlite:///var/lib/acct.db").unwrap();
        assert_eq!(
            spec.conf_lines(Path::new("/d")),
            [
                "StorageType=accounting_storage/sqlite",
                "StorageLoc=/var/lib/acct.db"
            ]
        );
        assert_eq!(
            StorageSpec::Sqlite(None).conf_lines(Path::new("/my dir")),
            [
                "StorageType=accounting_storage/sqlite",
                "StorageLoc=\"/my dir/slurm_acct.db\""
            ]
        );
    }

    #[test]
    fn server_urls_become_storage_keys() {
        let spec = StorageSpec::parse("mariadb://slurm:p%40ss%20word@db1:3307/acct").unwrap();
        assert_eq!(
            spec.conf_lines(Path::new("/d")),
            [
                "StorageType=accounting_storage/mysql",
                "StorageHost=db1",
                "StoragePort=3307",
                "StorageUser=slurm",
                "StoragePass=\"p@ss word\"",
                "StorageLoc=acct",
            ]
        );
        let spec = StorageSpec::parse("postgres://127.0.0.1/test").unwrap();
        assert_eq!(
            spec.conf_lines(Path::new("/d")),
            [
                "StorageType=accounting_storage/pgsql",
                "StorageHost=127.0.0.1",
                "StorageLoc=test",
            ]
        );
    }

    #[test]
    fn bad_values_say_why() {
        for (value, why) in [
            ("oracle", "expected sqlite"),
            ("oracle://h/db", "unknown scheme"),
            ("sqlite://relative.db", "absolute"),
            ("mysql://host", "database name is missing"),
            ("mysql://host/", "database name is missing"),
            ("mysql://host:port/db", "port is not a number"),
            ("mysql:///db", "host is missing"),
            ("mysql://u:%zz@h/db", "percent-encoding"),
            ("mysql://u:a%22b@h/db", "cannot be written"),
        ] {
            let e = StorageSpec::parse(value).unwrap_err().to_string();
            assert!(e.contains(value) && e.contains(why), "{value}: {e}");
        }
    }
}
