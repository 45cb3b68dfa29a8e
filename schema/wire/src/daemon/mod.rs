//! Process concerns shared by the daemons (`sluice-dbd`, `sluice-ctld`, `sluice-noded`,
//! `sluice-sackd`): binding the listener before daemonizing, locking the directory the daemon
//! owns, detaching, logging, the pid and port files, and the signals that stop the daemon.
//!
//! Each daemon's `main` loads its configuration, checks its key, [`bind`]s, and hands the rest to
//! [`Process::run`] with a closure that prepares its service and returns the future serving it.
//! Everything that can fail on the terminal is done before daemonizing, so mistakes are printed
//! on stderr with a non-zero exit. The tokio runtime is built only after `daemon(3)`, since a
//! fork keeps just the calling thread.

pub mod fault;
mod files;
mod lock;
mod logging;
mod signal;

use std::future::Future;
use std::net::ToSocketAddrs;
use std::path::PathBuf;

pub use files::{
    PORT_FILE_ENV, PidFile, private_dir, private_file, private_files_in, replace_file,
    write_file_atomically, write_port_file,
};
pub use lock::{DirLock, StateDir};
pub use logging::{init_logging, raise};
pub use signal::ShutdownSignal;
pub use tracing::level_filters::LevelFilter;

/// Why a daemon process could not be set up.
///
/// The messages carry their cause themselves (there is no `source()`): `sluice-ctld` prints the
/// whole error chain, which would otherwise repeat the cause.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The listening address could not be resolved or bound.
    #[error("cannot listen on {addr}: {error}")]
    Bind { addr: String, error: std::io::Error },
    /// The bound socket could not be handed to the runtime.
    #[error("cannot use the listening socket: {0}")]
    Listener(std::io::Error),
    /// A pid, port or log file could not be written.
    #[error("{path}: {error}")]
    File {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The process could not detach from the terminal.
    #[error("cannot daemonize: {0}")]
    Daemonize(nix::Error),
    /// Another daemon holds the directory's lock (see [`StateDir`]).
    #[error("{} is in use by another {daemon} (pid {}): one daemon per directory; stop it first", dir.display(), holder.map_or_else(|| "unknown".to_string(), |p| p.to_string()))]
    DirInUse {
        dir: PathBuf,
        daemon: &'static str,
        holder: Option<u32>,
    },
    /// The async runtime or the signal handlers could not be set up.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
}

/// Binds `host:port` (port 0 picks a free port), non-blocking for the runtime to come. Done
/// before daemonizing and before the runtime exists, so a taken port is reported on the terminal.
pub fn bind(host: &str, port: u16) -> Result<std::net::TcpListener, ProcessError> {
    let bind_err = |error| ProcessError::Bind {
        addr: format!("{host}:{port}"),
        error,
    };
    let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(bind_err)?.collect();
    // A daemon started again right after its predecessor was killed may find the port still
    // held while the kernel tears the old process down (its listening socket closes with its
    // last thread, after the process already looks gone): ask again for a moment before
    // giving up. Port 0 is never taken.
    let deadline = std::time::Instant::now() + BIND_PATIENCE;
    let listener = loop {
        match std::net::TcpListener::bind(&addrs[..]) {
            Err(e)
                if port != 0
                    && e.kind() == std::io::ErrorKind::AddrInUse
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(BIND_RETRY);
            }
            other => break other.map_err(bind_err)?,
        }
    };
    listener.set_nonblocking(true).map_err(bind_err)?;
    Ok(listener)
}

/// How long [`bind`] asks again for a port in use before it reports it taken.
const BIND_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);
/// How long [`bind`] waits between two asks.
const BIND_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// How a daemon process runs, from its command line and configuration.
#[derive(Debug, Clone)]
pub struct Process {
    /// `-D`: stay in the foreground instead of detaching.
    pub foreground: bool,
    /// The level to log at (see [`raise`] for `-v`).
    pub log_level: LevelFilter,
    /// Where to log; stderr when `None`.
    pub log_file: Option<PathBuf>,
    /// Where to write the daemon's pid while it serves.
    pub pid_file: Option<PathBuf>,
    /// Configuration warnings, logged once logging is set up.
    pub warnings: Vec<String>,
    /// The directory this daemon owns, locked before anything else touches it and for the
    /// process lifetime (see [`StateDir`]); `None` when it keeps nothing on disk.
    pub state_dir: Option<StateDir>,
}

impl Process {
    /// Detaches (unless in the foreground), sets up logging, builds the runtime and runs the
    /// daemon on `listener`: `start` prepares the service and returns the future serving it
    /// until the [`ShutdownSignal`] completes. The process's umask becomes 0077 first, so that
    /// whatever the daemon creates (state, spool, logs, databases) is its own only. The pid
    /// file and the port file named by [`PORT_FILE_ENV`] are written once `start` succeeds (the port file last: whoever waits
    /// for it may send requests at once), and the pid file is removed when serving ends.
    pub fn run<E, P, S>(
        self,
        listener: std::net::TcpListener,
        start: impl FnOnce(tokio::net::TcpListener, ShutdownSignal) -> P,
    ) -> Result<(), E>
    where
        E: From<ProcessError>,
        P: Future<Output = Result<S, E>>,
        S: Future<Output = Result<(), E>>,
    {
        self.run_local(|shutdown| async move {
            let port = listener
                .local_addr()
                .map_err(ProcessError::Listener)?
                .port();
            let listener =
                tokio::net::TcpListener::from_std(listener).map_err(ProcessError::Listener)?;
            let serving = start(listener, shutdown).await?;
            // Written as serving begins, after the pid file: whoever waits for it may send
            // requests at once.
            Ok(async move {
                write_port_file(port)?;
                serving.await
            })
        })
    }

    /// Like [`Process::run`] for a daemon without a network listener (`sluice-sackd`): `start`
    /// prepares and returns the future serving until the [`ShutdownSignal`] completes; the pid
    /// file is written once `start` succeeds.
    pub fn run_local<E, P, S>(self, start: impl FnOnce(ShutdownSignal) -> P) -> Result<(), E>
    where
        E: From<ProcessError>,
        P: Future<Output = Result<S, E>>,
        S: Future<Output = Result<(), E>>,
    {
        let pid_file = self.pid_file.clone();
        self.launch(|shutdown| async move {
            let serving = start(shutdown).await?;
            let pid_file = pid_file.map(PidFile::create).transpose()?;
            let result = serving.await;
            drop(pid_file);
            result
        })
    }

    /// Locks the daemon's directory, sets the umask, detaches, sets up logging, builds the
    /// runtime and runs `body` on it, holding the lock until `body` ends.
    fn launch<E, F>(self, body: impl FnOnce(ShutdownSignal) -> F) -> Result<(), E>
    where
        E: From<ProcessError>,
        F: Future<Output = Result<(), E>>,
    {
        // Before detaching, so a directory in use is reported on the terminal; and before the
        // umask, so that directories it creates on the way keep the usual modes (each daemon
        // then sets its own directory's: a node spool must stay passable for its jobs' users).
        let mut dir_lock = self.state_dir.as_ref().map(DirLock::acquire).transpose()?;
        nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
        if !self.foreground {
            nix::unistd::daemon(false, false).map_err(ProcessError::Daemonize)?;
            if let Some(lock) = &mut dir_lock {
                lock.write_pid()?;
            }
        }
        init_logging(self.log_level, self.log_file.as_deref())?;
        for warning in &self.warnings {
            tracing::warn!("{warning}");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(ProcessError::Runtime)?;
        runtime.block_on(async move {
            let shutdown = ShutdownSignal::install().map_err(ProcessError::Runtime)?;
            let result = body(shutdown).await;
            drop(dir_lock);
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_picks_a_free_port_and_names_a_taken_one() {
        let free = bind("127.0.0.1", 0).unwrap();
        let port = free.local_addr().unwrap().port();
        assert_ne!(port, 0);
        let e = bind("127.0.0.1", port).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("cannot listen on 127.0.0.1:{port}: ")),
            "{e}"
        );
    }
}
