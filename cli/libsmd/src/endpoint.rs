//! Where the controller's `Nonstop` service listens. The controller of slurm.conf
//! (`SlurmctldHost`, `SlurmctldPort`) serves it; when `nonstop.conf` next to slurm.conf gives a
//! `Port`, the plugin's address is `ControlAddr:Port` (default: the controller's host), with
//! `BackupAddr:Port` tried next. Only those three keys of nonstop.conf are read here; the
//! controller validates the whole file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sluice_vocab::auth_conf::AuthConf;
use sluice_vocab::conf::{ConfError, ConfFile};

/// slurm.conf's path when `SLURM_CONF` is not set.
pub const DEFAULT_SLURM_CONF: &str = "/etc/slurm/slurm.conf";
/// Slurm's default `SlurmctldPort`.
pub const DEFAULT_CTLD_PORT: u16 = 6817;
/// `MessageTimeout`'s default, in seconds.
pub const DEFAULT_MESSAGE_TIMEOUT: u64 = 10;
/// The file name of the plugin's configuration, beside slurm.conf.
pub const NONSTOP_CONF: &str = "nonstop.conf";

/// The addresses to try, in order, and the bound of each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `(host, port)` pairs: the controller (or `ControlAddr`), then `BackupAddr` if given.
    pub targets: Vec<(String, u16)>,
    /// slurm.conf's `MessageTimeout`: connecting and each request until its reply (or a
    /// stream's first message).
    pub timeout: Duration,
    /// The directory of slurm.conf: the key or the credential service that signs requests.
    pub conf_dir: PathBuf,
    /// slurm.conf's `AuthType` and `AuthInfo`.
    pub auth: AuthConf,
}

impl Endpoint {
    /// The endpoint of the cluster whose slurm.conf `SLURM_CONF` names (or the default path).
    pub fn from_env() -> Result<Self, ConfError> {
        let path = std::env::var_os("SLURM_CONF")
            .filter(|p| !p.is_empty())
            .map_or_else(|| PathBuf::from(DEFAULT_SLURM_CONF), PathBuf::from);
        Self::from_slurm_conf(&path)
    }

    /// Reads `slurm_conf` and, if present beside it, `nonstop.conf`.
    pub fn from_slurm_conf(slurm_conf: &Path) -> Result<Self, ConfError> {
        let file = ConfFile::read(slurm_conf)?;
        let dir = slurm_conf.parent().unwrap_or_else(|| Path::new("."));
        let nonstop_path = dir.join(NONSTOP_CONF);
        let nonstop = match ConfFile::read(&nonstop_path) {
            Ok(f) => Some(f),
            Err(ConfError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                None
            }
            Err(e) => return Err(e),
        };
        Self::from_files(&file, nonstop.as_ref())
    }

    /// Interprets already split files (`nonstop` when nonstop.conf exists).
    pub fn from_files(slurm: &ConfFile, nonstop: Option<&ConfFile>) -> Result<Self, ConfError> {
        let ctld_port = match slurm.get("SlurmctldPort") {
            Some(pair) => port(slurm, pair)?,
            None => DEFAULT_CTLD_PORT,
        };
        let ctld_host = slurm
            .pairs()
            .find(|p| p.is("SlurmctldHost"))
            .map_or_else(|| "localhost".to_string(), |p| host_address(&p.value));
        let timeout = match slurm.get("MessageTimeout") {
            Some(pair) => match slurm.number::<u64>(pair)? {
                0 => return Err(slurm.bad_value(pair, "must be at least 1 second")),
                secs => secs,
            },
            None => DEFAULT_MESSAGE_TIMEOUT,
        };
        let mut targets = vec![(ctld_host.clone(), ctld_port)];
        if let Some(ns) = nonstop
            && let Some(pair) = ns.get("Port")
        {
            let port = port(ns, pair)?;
            let control = match ns.get("ControlAddr") {
                Some(p) => address(ns, p)?,
                None => ctld_host,
            };
            targets = vec![(control, port)];
            if let Some(p) = ns.get("BackupAddr") {
                targets.push((address(ns, p)?, port));
            }
        }
        Ok(Self {
            targets,
            timeout: Duration::from_secs(timeout),
            conf_dir: slurm
                .path
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .to_path_buf(),
            auth: AuthConf::from_file(slurm)?,
        })
    }
}

fn port(file: &ConfFile, pair: &sluice_vocab::conf::Pair) -> Result<u16, ConfError> {
    match file.number::<u16>(pair)? {
        0 => Err(file.bad_value(pair, "port must be between 1 and 65535")),
        p => Ok(p),
    }
}

fn address(file: &ConfFile, pair: &sluice_vocab::conf::Pair) -> Result<String, ConfError> {
    let value = pair.value.trim();
    if value.is_empty() || value.contains(char::is_whitespace) {
        return Err(file.bad_value(pair, "not a host name or address"));
    }
    Ok(value.to_string())
}

/// `SlurmctldHost=name(addr)` is reached at `addr`, a plain `name` at `name`.
fn host_address(value: &str) -> String {
    let value = value.trim();
    match value.split_once('(') {
        Some((_, addr)) => addr.trim_end_matches(')').to_string(),
        None => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(slurm: &str, nonstop: Option<&str>) -> Result<Endpoint, ConfError> {
        let s = ConfFile::parse(Path::new("/etc/x/slurm.conf"), slurm)?;
        let n = match nonstop {
            Some(t) => Some(ConfFile::parse(Path::new("/etc/x/nonstop.conf"), t)?),
            None => None,
        };
        Endpoint::from_files(&s, n.as_ref())
    }

    #[test]
    fn without_nonstop_conf_the_controller_of_slurm_conf_is_asked() {
        let e = files(
            "SlurmctldHost=head(10.0.0.1)\nSlurmctldPort=7000\nMessageTimeout=3\n",
            None,
        )
        .unwrap();
        assert_eq!(e.targets, vec![("10.0.0.1".to_string(), 7000)]);
        assert_eq!(e.timeout, Duration::from_secs(3));
        assert_eq!(e.conf_dir, PathBuf::from("/etc/x"));
        let d = files("ClusterName=c\n", Some("Debug=0\nControlAddr=z\n")).unwrap();
        assert_eq!(d.targets, vec![("localhost".to_string(), 6817)]);
        assert_eq!(d.timeout, Duration::from_secs(10));
    }

    #[test]
    fn a_nonstop_port_names_control_then_backup_address() {
        let e = files(
            "SlurmctldHost=head\n",
            Some("BackupAddr=bacco\nControlAddr=prometeo\nPort=9114\nHotSpareCount=batch:8\n"),
        )
        .unwrap();
        assert_eq!(
            e.targets,
            vec![("prometeo".to_string(), 9114), ("bacco".to_string(), 9114)]
        );
        let e = files("SlurmctldHost=head\n", Some("Port=9114\n")).unwrap();
        assert_eq!(e.targets, vec![("head".to_string(), 9114)]);
    }

    #[test]
    fn bad_values_name_file_line_and_key() {
        for (text, key) in [
            (
                "Debug=1\nPort=x\n",
                "/etc/x/nonstop.conf:2: invalid value for Port",
            ),
            ("Port=0\n", "/etc/x/nonstop.conf:1: invalid value for Port"),
            (
                "Port=9\nControlAddr=\"\"\n",
                "invalid value for ControlAddr",
            ),
        ] {
            let e = files("ClusterName=c\n", Some(text))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{e}");
        }
        let e = files("MessageTimeout=0\n", None).unwrap_err().to_string();
        assert!(e.contains("MessageTimeout"), "{e}");
    }

    #[test]
    fn a_missing_slurm_conf_is_named() {
        let e = Endpoint::from_slurm_conf(Path::new("/nonexistent/slurm.conf"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/slurm.conf"), "{e}");
    }
}
