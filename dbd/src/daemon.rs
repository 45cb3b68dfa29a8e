//! Running the accounting daemon: binding, connecting the store, serving the authenticated
//! gRPC service and shutting down gracefully.
//!
//! [`serve`] is the whole daemon minus process concerns (daemonizing, logging, signals, pid
//! and port files), so tests and benchmarks can run it in-process; `main.rs` adds those.

use std::future::Future;
use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_vocab::conf::ConfError;
use sluice_wire::auth::{AuthError, Key, Verifier};
use tonic::service::interceptor::InterceptedService;
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
    /// The key next to the configuration is missing, unreadable or readable by others.
    #[error(transparent)]
    Key(#[from] AuthError),
    /// The database could not be opened or migrated.
    #[error("storage: {0}")]
    Store(#[from] StoreError),
    /// The task opening the database died.
    #[error("storage: connection task failed: {0}")]
    StoreTask(#[from] tokio::task::JoinError),
    /// The listening address could not be resolved or bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// A pid, port or log file could not be written.
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The process could not detach from the terminal.
    #[error("cannot daemonize: {0}")]
    Daemonize(#[from] nix::Error),
    /// The async runtime or the signal handlers could not be set up.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The gRPC server failed.
    #[error("server: {0}")]
    Serve(#[from] tonic::transport::Error),
}

/// Binds the configured `DbdAddr|DbdHost:DbdPort` (port 0 picks a free port). Done before
/// daemonizing and before the runtime exists, so a taken port is reported on the terminal.
pub fn bind(config: &DbdConfig) -> Result<std::net::TcpListener, DaemonError> {
    let addr = format!("{}:{}", config.bind_host(), config.dbd_port);
    let bind_err = |source| DaemonError::Bind {
        addr: addr.clone(),
        source,
    };
    let addrs: Vec<_> = (config.bind_host(), config.dbd_port)
        .to_socket_addrs()
        .map_err(bind_err)?
        .collect();
    let listener = std::net::TcpListener::bind(&addrs[..]).map_err(bind_err)?;
    listener.set_nonblocking(true).map_err(bind_err)?;
    Ok(listener)
}

/// A daemon whose key is loaded and whose database is open and migrated: ready to serve.
pub struct Prepared {
    key: Key,
    store: Arc<Store>,
    admin_uids: Vec<u32>,
    purge: PurgePolicy,
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
        let verifier = Verifier::new(self.key);
        // Job records from the controllers and sacct's reads, behind the same verifier.
        let records = RecordsService::new(Arc::clone(&self.store), self.admin_uids.clone());
        let records = InterceptedService::new(records.into_server(), verifier.clone());
        // The federation arbiter; its endless streams end first at shutdown.
        let federation = FederationService::new(Arc::clone(&self.store), self.admin_uids.clone());
        let settler = federation.spawn_settler(SETTLE_PERIOD);
        let stopper = federation.clone();
        let shutdown = async move {
            shutdown.await;
            stopper.stop_streams();
        };
        let federation = InterceptedService::new(federation.into_server(), verifier.clone());
        // sreport's usage reports, and the task rolling usage up as hours close (days and months
        // in the local zone, as slurmdbd's).
        let cal = sluice_reports::Calendar::local();
        let reports = ReportsService::new(Arc::clone(&self.store), cal, Arc::new(unix_now));
        let reports = InterceptedService::new(reports.into_server(), verifier.clone());
        let rollups = tokio::spawn(usage::task::run(
            Arc::clone(&self.store),
            cal,
            self.purge,
            usage::task::ROLLUP_INTERVAL,
            unix_now,
        ));
        let service = AccountingService::new(self.store, self.admin_uids).into_server();
        let service = InterceptedService::new(service, verifier);
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

/// Completes on the first SIGTERM or SIGINT. The handlers are installed when this is called,
/// not when the future is first polled, so a signal arriving right after start-up is not lost.
pub fn shutdown_signal() -> Result<impl Future<Output = ()> + Send, std::io::Error> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received, shutting down"),
            _ = int.recv() => tracing::info!("SIGINT received, shutting down"),
        }
    })
}

/// Writes `contents` to `path` through a temporary file and a rename, so a reader polling for
/// the file never sees it half written.
pub fn write_file_atomically(path: &Path, contents: &str) -> Result<(), DaemonError> {
    let err = |source| DaemonError::File {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, contents).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_create_directories_and_replace_contents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/dbd.pid");
        write_file_atomically(&path, "1\n").unwrap();
        write_file_atomically(&path, "42\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "42\n");
        assert_eq!(
            std::fs::read_dir(dir.path().join("run")).unwrap().count(),
            1
        );
    }

    #[test]
    fn binding_a_taken_port_names_the_address() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let file = sluice_vocab::conf::ConfFile::parse(
            Path::new("/x/slurmdbd.conf"),
            &format!("DbdHost=127.0.0.1 DbdPort={port}\n"),
        )
        .unwrap();
        let config = DbdConfig::from_conf(&file, |_| None).unwrap();
        let e = bind(&config).unwrap_err().to_string();
        assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
    }
}
