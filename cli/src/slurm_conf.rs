//! Finding the cluster's configuration (`SLURM_CONF`, default `/etc/slurm/slurm.conf`) and,
//! through it, the accounting daemon and the key that signs requests to it.
//!
//! Every command reads the same few keys; this module keeps them in one place so `sbatch`,
//! `squeue` and the others reuse it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sluice_vocab::auth_conf::AuthConf;
use sluice_vocab::cluster_conf::SrunConf;
use sluice_vocab::conf::{ConfError, ConfFile};
use sluice_wire::auth::{self, AuthError, NoCredential, Signer};
use sluice_wire::client::{
    CtldAdminClient, CtldClient, DbdClient, RecordsClient, SignedChannel, connect_bounded,
};
use sluice_wire::proto::DEFAULT_DBD_PORT;
use sluice_wire::proto::fed_arbiter_client::FedArbiterClient;
use sluice_wire::proto::reports_client::ReportsClient;

/// Where the configuration lives when `SLURM_CONF` is not set.
pub const DEFAULT_SLURM_CONF: &str = "/etc/slurm/slurm.conf";
/// Slurm's default `SlurmctldPort`.
pub const DEFAULT_CTLD_PORT: u16 = 6817;
/// `MessageTimeout`'s default, in seconds (as Slurm's).
pub const DEFAULT_MESSAGE_TIMEOUT: u64 = 10;

/// Why a command could not find or reach its daemons.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// `slurm.conf` could not be read or holds a bad value (names file, line and key).
    #[error("{0}")]
    Conf(#[from] ConfError),
    /// The key next to `slurm.conf` could not be loaded.
    #[error("{0}")]
    Key(#[from] AuthError),
    /// Neither the key next to `slurm.conf` nor the local credential service could sign.
    #[error("{0}")]
    Credential(#[from] NoCredential),
    /// The accounting daemon did not answer.
    #[error("failed to open connection to host:{host}:{port}: {reason}")]
    Connect {
        host: String,
        port: u16,
        reason: String,
    },
}

/// The parts of `slurm.conf` the commands need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmConf {
    /// The file that was read.
    pub path: PathBuf,
    /// `ClusterName`, if set.
    pub cluster_name: Option<String>,
    /// `AuthType` and `AuthInfo`: how requests are signed.
    pub auth: AuthConf,
    /// `AccountingStorageHost` (default `localhost`).
    pub dbd_host: String,
    /// `AccountingStoragePort` (default 6819).
    pub dbd_port: u16,
    /// The first `SlurmctldHost`'s address (default `localhost`).
    pub ctld_host: String,
    /// `SlurmctldPort` (default 6817).
    pub ctld_port: u16,
    /// `MessageTimeout` (default 10 s): how long each request a command makes may wait.
    pub message_timeout: Duration,
    /// The keys only srun reads (`KillOnBadExit`, `WaitTime`, `SrunProlog`, `SrunEpilog`,
    /// `KillWait`).
    pub srun: SrunConf,
    /// The resource limits a job carries from the submitting host when `--propagate` is not
    /// given: `PropagateResourceLimits` (default `ALL`), or all but
    /// `PropagateResourceLimitsExcept`.
    pub propagate: Vec<&'static str>,
}

/// `PropagateResourceLimits` / `PropagateResourceLimitsExcept` (one at most, as Slurm).
fn propagate_of(file: &ConfFile) -> Result<Vec<&'static str>, ConfError> {
    use sluice_wire::rlimits::{LIMITS, parse};
    let all: Vec<&'static str> = LIMITS.iter().map(|l| l.0).collect();
    match (
        file.get("PropagateResourceLimits"),
        file.get("PropagateResourceLimitsExcept"),
    ) {
        (Some(_), Some(except)) => Err(file.bad_value(
            except,
            "PropagateResourceLimits and PropagateResourceLimitsExcept are mutually exclusive",
        )),
        (Some(pair), None) => {
            parse(Some(&pair.value)).ok_or_else(|| file.bad_value(pair, "Bad propagation value"))
        }
        (None, Some(pair)) => {
            let except = parse(Some(&pair.value))
                .ok_or_else(|| file.bad_value(pair, "Bad propagation value"))?;
            Ok(all.into_iter().filter(|n| !except.contains(n)).collect())
        }
        (None, None) => Ok(all),
    }
}

impl SlurmConf {
    /// Reads the file named by `SLURM_CONF`, or [`DEFAULT_SLURM_CONF`].
    pub fn from_env() -> Result<Self, CliError> {
        let path = std::env::var_os("SLURM_CONF")
            .filter(|p| !p.is_empty())
            .map_or_else(|| PathBuf::from(DEFAULT_SLURM_CONF), PathBuf::from);
        Self::read(&path)
    }

    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Self, CliError> {
        let file = ConfFile::read(path)?;
        Ok(Self::from_file(&file)?)
    }

    /// Interprets an already split file.
    pub fn from_file(file: &ConfFile) -> Result<Self, ConfError> {
        let dbd_port = match file.get("AccountingStoragePort") {
            Some(pair) => {
                let port: u16 = file.number(pair)?;
                if port == 0 {
                    return Err(file.bad_value(pair, "port must be between 1 and 65535"));
                }
                port
            }
            None => DEFAULT_DBD_PORT,
        };
        let dbd_host = match file.get("AccountingStorageHost") {
            Some(pair) if pair.value.trim().is_empty() => {
                return Err(file.bad_value(pair, "host name is empty"));
            }
            Some(pair) => pair.value.trim().to_string(),
            None => "localhost".to_string(),
        };
        let ctld_port = match file.get("SlurmctldPort") {
            Some(pair) => {
                let port: u16 = file.number(pair)?;
                if port == 0 {
                    return Err(file.bad_value(pair, "port must be between 1 and 65535"));
                }
                port
            }
            None => DEFAULT_CTLD_PORT,
        };
        let ctld_host = file
            .pairs()
            .find(|p| p.is("SlurmctldHost"))
            .map_or_else(|| "localhost".to_string(), |p| ctld_address(&p.value));
        let message_timeout = match file.get("MessageTimeout") {
            Some(pair) => {
                let secs: u64 = file.number(pair)?;
                if secs == 0 {
                    return Err(file.bad_value(pair, "must be at least 1 second"));
                }
                secs
            }
            None => DEFAULT_MESSAGE_TIMEOUT,
        };
        let cluster_name = file
            .get("ClusterName")
            .map(|p| p.value.trim().to_string())
            .filter(|v| !v.is_empty());
        Ok(Self {
            path: file.path.clone(),
            cluster_name,
            auth: AuthConf::from_file(file)?,
            dbd_host,
            dbd_port,
            ctld_host,
            ctld_port,
            message_timeout: Duration::from_secs(message_timeout),
            srun: SrunConf::from_file(file)?,
            propagate: propagate_of(file)?,
        })
    }

    /// The shared key: `slurm.key` in the same directory as the configuration file.
    pub fn key_path(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(auth::KEY_FILE)
    }

    /// What signs the calling user's requests: munged with `AuthType=auth/munge`, else the
    /// key when the user can read it, else the local credential service next to the
    /// configuration (see [`Signer::for_caller_with`]).
    pub fn signer(&self) -> Result<Signer, CliError> {
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        Ok(Signer::for_caller_with(dir, &self.auth)?)
    }

    /// Connects to the accounting daemon, signing every request as the calling user.
    pub async fn connect_dbd(&self) -> Result<DbdClient, CliError> {
        let channel = self.signed_channel(&self.dbd_host, self.dbd_port).await?;
        Ok(DbdClient::new(channel))
    }

    pub async fn connect_records(&self) -> Result<RecordsClient, CliError> {
        let channel = self.signed_channel(&self.dbd_host, self.dbd_port).await?;
        Ok(RecordsClient::new(channel))
    }

    /// Connects to the accounting daemon's usage-report service (sreport), signing as the
    /// calling user.
    pub async fn connect_reports(&self) -> Result<ReportsClient<SignedChannel>, CliError> {
        let channel = self.signed_channel(&self.dbd_host, self.dbd_port).await?;
        Ok(ReportsClient::new(channel))
    }

    /// Connects to the cluster's controller, signing every request as the calling user.
    pub async fn connect_ctld(&self) -> Result<CtldClient, CliError> {
        let channel = self.signed_channel(&self.ctld_host, self.ctld_port).await?;
        Ok(CtldClient::new(channel))
    }

    /// Connects to the controller's administration service (`scontrol reconfigure`, `update
    /// SuspendExc*`), signing every request as the calling user.
    pub async fn connect_ctld_admin(&self) -> Result<CtldAdminClient, CliError> {
        let channel = self.signed_channel(&self.ctld_host, self.ctld_port).await?;
        Ok(CtldAdminClient::new(channel))
    }

    /// Connects to another cluster's controller at `host:port` (found through the accounting
    /// daemon: `-M`, `--federation`), signing every request as the calling user.
    pub async fn connect_ctld_at(&self, host: &str, port: u16) -> Result<CtldClient, CliError> {
        let channel = self.signed_channel(host, port).await?;
        Ok(CtldClient::new(channel))
    }

    /// Connects to the accounting daemon's federation service (`scontrol show federation` reads
    /// the view from it), signing as the calling user.
    pub async fn connect_fed_arbiter(&self) -> Result<FedArbiterClient<SignedChannel>, CliError> {
        let channel = self.signed_channel(&self.dbd_host, self.dbd_port).await?;
        Ok(FedArbiterClient::new(channel))
    }

    async fn signed_channel(&self, host: &str, port: u16) -> Result<SignedChannel, CliError> {
        connect_bounded(host, port, self.signer()?, self.message_timeout)
            .await
            .map_err(|e| CliError::Connect {
                host: host.to_string(),
                port,
                reason: root_cause(&e),
            })
    }
}

/// `SlurmctldHost=name(addr)` is reached at `addr`, a plain `name` at `name`.
fn ctld_address(value: &str) -> String {
    let value = value.trim();
    match value.split_once('(') {
        Some((_, addr)) => addr.trim_end_matches(')').to_string(),
        None => value.to_string(),
    }
}

/// The innermost error message (tonic wraps the OS error, e.g. "Connection refused").
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let text = cur.to_string();
    // "Connection refused (os error 111)" reads as Slurm's "Connection refused".
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SlurmConf, ConfError> {
        SlurmConf::from_file(&ConfFile::parse(Path::new("/etc/x/slurm.conf"), text)?)
    }

    #[test]
    fn defaults_apply_when_keys_are_missing() {
        let c = parse("SlurmctldPort=6817\n").unwrap();
        assert_eq!(c.dbd_host, "localhost");
        assert_eq!(c.dbd_port, 6819);
        assert_eq!(c.cluster_name, None);
        assert_eq!(c.key_path(), PathBuf::from("/etc/x/slurm.key"));
    }

    #[test]
    fn propagated_limits_follow_the_two_keys() {
        assert_eq!(parse("").unwrap().propagate.len(), 10, "ALL by default");
        assert_eq!(
            parse("PropagateResourceLimits=NONE\n").unwrap().propagate,
            Vec::<&str>::new()
        );
        assert_eq!(
            parse("PropagateResourceLimits=nofile,CORE\n")
                .unwrap()
                .propagate,
            vec!["NOFILE", "CORE"]
        );
        let except = parse("PropagateResourceLimitsExcept=MEMLOCK,STACK\n").unwrap();
        assert_eq!(except.propagate.len(), 8);
        assert!(!except.propagate.contains(&"MEMLOCK"));
        assert!(parse("PropagateResourceLimits=BOGUS\n").is_err());
        assert!(
            parse("PropagateResourceLimits=ALL\nPropagateResourceLimitsExcept=CORE\n").is_err()
        );
    }

    #[test]
    fn keys_are_read_case_insensitively() {
        let c = parse("clustername=c1\naccountingstoragehost=db1 AccountingStoragePort=7000\n")
            .unwrap();
        assert_eq!(c.cluster_name.as_deref(), Some("c1"));
        assert_eq!(c.dbd_host, "db1");
        assert_eq!(c.dbd_port, 7000);
    }

    #[test]
    fn the_controller_is_the_first_slurmctldhost() {
        let c = parse("SlurmctldHost=head(10.0.0.1)\nSlurmctldHost=backup\nSlurmctldPort=7817\n")
            .unwrap();
        assert_eq!((c.ctld_host.as_str(), c.ctld_port), ("10.0.0.1", 7817));
        let d = parse("ClusterName=c\n").unwrap();
        assert_eq!((d.ctld_host.as_str(), d.ctld_port), ("localhost", 6817));
        assert!(parse("SlurmctldPort=0\n").is_err());
    }

    #[test]
    fn bad_ports_name_file_line_and_key() {
        for bad in ["x", "0", "70000"] {
            let e = parse(&format!("ClusterName=c1\nAccountingStoragePort={bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("/etc/x/slurm.conf:2") && e.contains("AccountingStoragePort"),
                "{e}"
            );
        }
    }

    #[test]
    fn message_timeout_defaults_to_ten_seconds_and_must_be_positive() {
        let c = parse("ClusterName=c\n").unwrap();
        assert_eq!(c.message_timeout, Duration::from_secs(10));
        let c = parse("MessageTimeout=2\n").unwrap();
        assert_eq!(c.message_timeout, Duration::from_secs(2));
        for bad in ["0", "x", "-1"] {
            let e = parse(&format!("MessageTimeout={bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("MessageTimeout"), "{e}");
        }
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let e = SlurmConf::read(Path::new("/nonexistent/slurm.conf"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/slurm.conf"), "{e}");
    }
}
