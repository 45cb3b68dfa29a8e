//! Running the accounting daemon: binding, connecting the store, serving the authenticated
//! gRPC service and shutting down gracefully.
//!
//! [`serve`] is the whole daemon minus process concerns (daemonizing, logging, signals, pid
//! and port files), so tests and benchmarks can run it in-process; `main.rs` adds those with
//! [`sluice_wire::daemon`].

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use sluice_vocab::conf::ConfError;
use sluice_wire::auth::{AuthError, Key, Verifier};
use sluice_wire::daemon::{self as process, ProcessError};
use tonic::transport::server::TcpIncoming;

use crate::config::DbdConfig;
use crate::service::{AccountingService, FederationService, RecordsService, ReportsService};
use crate::store::usage::{self, PurgePolicy};
use crate::store::{Store, StoreError};

/// How often draining clusters with no federated jobs left are settled (DRAIN → DRAINED).
const SETTLE_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The configuration file is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfError),
    /// `slurmdbd.conf` (which may hold the database password) is readable by group or others
    /// (slurmdbd's words).
    #[error("slurmdbd.conf file {path} should be 600 is {mode:o} accessible for group or others")]
    ConfMode { path: PathBuf, mode: u32 },
    /// `slurmdbd.conf` is not owned by `SlurmUser` (slurmdbd's words, with the names added).
    #[error(
        "slurmdbd.conf not owned by SlurmUser {owner}!={slurm_uid} ({path} must be owned by {slurm_user})"
    )]
    ConfOwner {
        path: PathBuf,
        owner: u32,
        slurm_uid: u32,
        slurm_user: String,
    },
    /// `slurmdbd.conf` cannot be examined.
    #[error("{path}: {source}")]
    ConfFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The key next to the configuration is missing, unreadable or readable by others.
    #[error(transparent)]
    Key(#[from] AuthError),
    /// The database could not be opened or migrated.
    #[error("storage: {0}")]
    Store(#[from] StoreError),
    /// The task opening the database died.
    #[error("storage: connection task failed: {0}")]
    StoreTask(#[from] tokio::task::JoinError),
    /// The listener, a pid, port or log file, the runtime or the signal handlers could not be
    /// set up.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// The gRPC server failed.
    #[error("server: {0}")]
    Serve(#[from] tonic::transport::Error),
}

/// Refuses a `slurmdbd.conf` that others than its owner may read or that `SlurmUser` does not
/// own, as slurmdbd does: it may hold the database password.
pub fn check_conf_file(config: &DbdConfig) -> Result<(), DaemonError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&config.path).map_err(|source| DaemonError::ConfFile {
        path: config.path.clone(),
        source,
    })?;
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(DaemonError::ConfMode {
            path: config.path.clone(),
            mode,
        });
    }
    if meta.uid() != config.slurm_uid {
        return Err(DaemonError::ConfOwner {
            path: config.path.clone(),
            owner: meta.uid(),
            slurm_uid: config.slurm_uid,
            slurm_user: config.slurm_user.clone(),
        });
    }
    Ok(())
}

/// Binds the configured `DbdAddr|DbdHost:DbdPort` (port 0 picks a free port). Done before
/// daemonizing and before the runtime exists, so a taken port is reported on the terminal.
pub fn bind(config: &DbdConfig) -> Result<std::net::TcpListener, DaemonError> {
    Ok(process::bind(config.bind_host(), config.dbd_port)?)
}

/// A daemon whose key is loaded and whose database is open and migrated: ready to serve.
pub struct Prepared {
    key: Key,
    store: Arc<Store>,
    admin_uids: Vec<u32>,
    purge: PurgePolicy,
    private: sluice_vocab::private_data::PrivateData,
    auth: sluice_vocab::auth_conf::AuthConf,
}

impl Prepared {
    /// Loads the key next to the configuration and connects (creating or migrating) the store.
    pub async fn new(config: &DbdConfig) -> Result<Self, DaemonError> {
        let key = Key::load(&config.key_path())?;
        let url = config.storage.url();
        tracing::info!(storage = %config.storage.display_url(), "connecting to the accounting database");
        let store = tokio::task::spawn_blocking(move || Store::connect(&url)).await??;
        Ok(Self {
            key,
            store: Arc::new(store),
            admin_uids: config.admin_uids(),
            purge: config.purge,
            private: config.private_data,
            auth: config.auth.clone(),
        })
    }

    /// Serves requests on `listener` until `shutdown` completes, then stops accepting, lets
    /// in-flight requests finish and returns.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), DaemonError> {
        if let Ok(addr) = listener.local_addr() {
            tracing::info!(%addr, "accounting daemon listening");
        }
        let verifier = Verifier::new(self.key)
            .serving("sluice-dbd")
            .with_auth(&self.auth);
        // Job records from the controllers and sacct's reads, behind the same verifier.
        let records = RecordsService::new(Arc::clone(&self.store), self.admin_uids.clone())
            .with_private_data(self.private);
        let records = verifier.guard(records.into_server());
        // The federation arbiter; its endless streams end first at shutdown.
        let federation = FederationService::new(Arc::clone(&self.store), self.admin_uids.clone());
        let settler = federation.spawn_settler(SETTLE_PERIOD);
        let stopper = federation.clone();
        let service = AccountingService::new(Arc::clone(&self.store), self.admin_uids.clone())
            .with_private_data(self.private);
        let watchers = service.change_signal();
        let shutdown = async move {
            shutdown.await;
            stopper.stop_streams();
            watchers.stop_streams();
        };
        let federation = verifier.guard(federation.into_server());
        // sreport's usage reports, and the task rolling usage up as hours close (days and months
        // in the local zone, as slurmdbd's).
        let cal = sluice_reports::Calendar::local();
        let reports = ReportsService::new(Arc::clone(&self.store), cal, Arc::new(unix_now))
            .with_privacy(self.admin_uids.clone(), self.private);
        let reports = verifier.guard(reports.into_server());
        let rollups = tokio::spawn(usage::task::run(
            Arc::clone(&self.store),
            cal,
            self.purge,
            usage::task::ROLLUP_INTERVAL,
            unix_now,
        ));
        let service = verifier.guard(service.into_server());
        let served = tonic::transport::Server::builder()
            .add_service(service)
            .add_service(records)
            .add_service(reports)
            .add_service(federation)
            .serve_with_incoming_shutdown(no_delay(listener), shutdown)
            .await;
        settler.abort();
        rollups.abort();
        served?;
        tracing::info!("accounting daemon stopped");
        Ok(())
    }
}

/// The real clock, in unix seconds: only the daemon's top level reads it.
fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Accepted connections with Nagle's algorithm off: replies are small and latency-bound, and
/// Nagle with delayed ACKs adds 40 ms to a reply that spans two segments.
fn no_delay(listener: tokio::net::TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener).with_nodelay(Some(true))
}

/// Runs the daemon described by `config` on `listener` until `shutdown` completes.
pub async fn serve(
    config: DbdConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), DaemonError> {
    Prepared::new(&config)
        .await?
        .serve(listener, shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_a_taken_port_names_the_address() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let file = sluice_vocab::conf::ConfFile::parse(
            std::path::Path::new("/x/slurmdbd.conf"),
            &format!("DbdHost=127.0.0.1 DbdPort={port}\n"),
        )
        .unwrap();
        let config = DbdConfig::from_conf(&file, |_| None).unwrap();
        let e = bind(&config).unwrap_err().to_string();
        assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
    }
}
