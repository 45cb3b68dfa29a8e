//! `sluice-noded`: the node daemon, started as Slurm's slurmd is.
//!
//! Configuration, key and listening address are checked before daemonizing, so mistakes are
//! printed on stderr with a non-zero exit. The tokio runtime is built only after `daemon(3)`,
//! since a fork keeps just the calling thread.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use sluice_noded::daemon::{self, Prepared};
use sluice_noded::{NodedConfig, NodedError};
use tracing::level_filters::LevelFilter;

/// The environment variable naming a file the daemon writes its bound port to once it serves.
const PORT_FILE_ENV: &str = "SLUICE_PORT_FILE";
/// Where slurm.conf is when neither `-f` nor `SLURM_CONF` says.
const DEFAULT_CONF_PATH: &str = "/etc/slurm/slurm.conf";

/// Command line of `sluice-noded`.
#[derive(Debug, Parser)]
#[command(name = "sluice-noded", version, about = "Sluice node daemon (slurmd)")]
struct Args {
    /// Run in the foreground instead of daemonizing.
    #[arg(short = 'D')]
    foreground: bool,
    /// The cluster's slurm.conf.
    #[arg(short = 'f', value_name = "FILE", env = "SLURM_CONF", default_value = DEFAULT_CONF_PATH)]
    conf: PathBuf,
    /// This node's name in slurm.conf (default: the short host name).
    #[arg(short = 'N', value_name = "NODENAME")]
    node_name: Option<String>,
    /// Log more (repeatable).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sluice-noded: error: {e}");
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), NodedError> {
    let config = NodedConfig::load(&args.conf, args.node_name.as_deref())?;
    let key = sluice_wire::auth::Key::load(&config.key_path())?;
    let listener = daemon::bind(&config)?;
    if !args.foreground {
        nix::unistd::daemon(false, false)?;
    }
    init_logging(config.log_file.as_deref(), args.verbose)?;
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(NodedError::Runtime)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(NodedError::Runtime)?;
        let shutdown = daemon::shutdown_signal().map_err(NodedError::Runtime)?;
        let pid_file = config.pid_file.clone();
        let prepared = Prepared::new(config, key, listener)?;
        if let Some(pid_file) = &pid_file {
            daemon::write_file_atomically(pid_file, &format!("{}\n", std::process::id()))?;
        }
        // Written last: whoever waits for it may send requests at once.
        if let Some(port_file) = std::env::var_os(PORT_FILE_ENV) {
            let port = prepared.port();
            daemon::write_file_atomically(&PathBuf::from(port_file), &format!("{port}\n"))?;
        }
        let result = prepared.serve(shutdown).await;
        if let Some(pid_file) = &pid_file {
            // Best effort: a stale pid file is harmless, callers check that the pid is alive.
            let _ = std::fs::remove_file(pid_file);
        }
        result
    })
}

fn init_logging(log_file: Option<&std::path::Path>, verbose: u8) -> Result<(), NodedError> {
    let level = match verbose {
        0 => LevelFilter::INFO,
        1 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    let mut directives = level.to_string();
    if level >= LevelFilter::DEBUG {
        // The HTTP/2 stack's own debug output drowns the daemon's.
        directives.push_str(",h2=info,hyper=info,hyper_util=info,tower=info");
    }
    let filter = tracing_subscriber::EnvFilter::new(directives);
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match log_file {
        Some(path) => {
            let err = |source| NodedError::file(path, source);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(err)?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(err)?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_follows_slurmd() {
        let a = Args::try_parse_from(["sluice-noded", "-D", "-f", "/x.conf", "-N", "n3", "-vv"])
            .unwrap();
        assert!(a.foreground);
        assert_eq!(a.conf, PathBuf::from("/x.conf"));
        assert_eq!(a.node_name.as_deref(), Some("n3"));
        assert_eq!(a.verbose, 2);
    }
}
