//! Why `sluice up` or `sluice down` failed. Each message says what to look at.

use std::path::PathBuf;

/// Why `sluice up` or `sluice down` failed.
#[derive(Debug, thiserror::Error)]
pub enum UpError {
    /// `--storage` is not a storage this can use.
    #[error("bad --storage \"{value}\": {reason}")]
    BadStorage { value: String, reason: String },
    /// `--clusters` or `--nodes` is not usable.
    #[error("bad {option} \"{value}\": {reason}")]
    BadOption {
        option: &'static str,
        value: String,
        reason: String,
    },
    /// The directory cannot be created or is not writable.
    #[error("cannot create directory {path}: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file in the directory cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file in the directory cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An existing configuration file is invalid.
    #[error(transparent)]
    Conf(#[from] sluice_vocab::conf::ConfError),
    /// The key cannot be created or is unsafe.
    #[error(transparent)]
    Key(#[from] sluice_wire::auth::AuthError),
    /// No free loopback port could be found.
    #[error("cannot find a free port on 127.0.0.1: {source}")]
    NoPort {
        #[source]
        source: std::io::Error,
    },
    /// The running executable cannot be located.
    #[error("cannot locate the sluice executable: {source}")]
    Exe {
        #[source]
        source: std::io::Error,
    },
    /// A daemon's binary is not next to `sluice`.
    #[error("{path} not found: build it with `cargo build --bins` (it must sit next to sluice)")]
    MissingBinary { path: PathBuf },
    /// A daemon could not be started.
    #[error("cannot start {path}: {source}")]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A daemon exited while starting.
    #[error("{program} exited while starting ({status}); end of {log}:\n{tail}")]
    Exited {
        program: String,
        status: String,
        log: PathBuf,
        tail: String,
    },
    /// A daemon did not answer in time.
    #[error("{program} did not answer on {address} within {secs} s; end of {log}:\n{tail}")]
    Timeout {
        program: String,
        address: String,
        secs: u64,
        log: PathBuf,
        tail: String,
    },
    /// Node daemons did not register with their controller in time.
    #[error(
        "nodes of cluster {cluster} did not register with its controller within {secs} s: {nodes}; see {logs}"
    )]
    NodesTimeout {
        cluster: String,
        nodes: String,
        secs: u64,
        logs: PathBuf,
    },
    /// A daemon refused a request.
    #[error("{what}: {message}")]
    Rpc { what: String, message: String },
    /// A daemon did not exit after SIGTERM.
    #[error("{program} (pid {pid}) did not stop within {secs} s of SIGTERM")]
    StopTimeout {
        program: String,
        pid: i32,
        secs: u64,
    },
    /// Signal handlers could not be installed.
    #[error("cannot handle signals: {source}")]
    Signals {
        #[source]
        source: std::io::Error,
    },
}
