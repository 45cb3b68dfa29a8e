//! `sluice-dbd`: the accounting daemon, started as Slurm's slurmdbd is.
//!
//! Everything that can be checked on the terminal (configuration, key, listening address) is
//! checked before daemonizing, so mistakes are printed on stderr with a non-zero exit. The
//! tokio runtime is built only after `daemon(3)`, since a fork keeps just the calling thread.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use sluice_dbd::config::{DEFAULT_CONF_PATH, DbdConfig};
use sluice_dbd::daemon::{self, DaemonError, Prepared};
use tracing::level_filters::LevelFilter;

/// The environment variable naming a file the daemon writes its bound port to once it serves.
const PORT_FILE_ENV: &str = "SLUICE_PORT_FILE";

/// Command line of `sluice-dbd`.
#[derive(Debug, Parser)]
#[command(
    name = "sluice-dbd",
    version,
    about = "Sluice accounting daemon (slurmdbd)"
)]
struct Args {
    /// Run in the foreground instead of daemonizing.
    #[arg(short = 'D')]
    foreground: bool,
    /// The configuration file.
    #[arg(short = 'f', value_name = "FILE", env = "SLURMDBD_CONF", default_value = DEFAULT_CONF_PATH)]
    conf: PathBuf,
    /// Log more (repeatable): each -v raises the level one step above DebugLevel.
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sluice-dbd: error: {e}");
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), DaemonError> {
    let config = DbdConfig::load(&args.conf)?;
    // Checked here for the terminal; the daemon loads it again when it prepares.
    sluice_wire::auth::Key::load(&config.key_path())?;
    let listener = daemon::bind(&config)?;
    if !args.foreground {
        nix::unistd::daemon(false, false)?;
    }
    init_logging(&config, args.verbose)?;
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(DaemonError::Runtime)?;
    runtime.block_on(serve(config, listener))
}

async fn serve(config: DbdConfig, listener: std::net::TcpListener) -> Result<(), DaemonError> {
    let bind_err = |source| DaemonError::Bind {
        addr: format!("{}:{}", config.bind_host(), config.dbd_port),
        source,
    };
    let listener = tokio::net::TcpListener::from_std(listener).map_err(bind_err)?;
    let port = listener.local_addr().map_err(bind_err)?.port();
    let shutdown = daemon::shutdown_signal().map_err(DaemonError::Runtime)?;
    let prepared = Prepared::new(&config).await?;
    if let Some(pid_file) = &config.pid_file {
        daemon::write_file_atomically(pid_file, &format!("{}\n", std::process::id()))?;
    }
    // Written last: whoever waits for it may send requests at once.
    if let Some(port_file) = std::env::var_os(PORT_FILE_ENV) {
        daemon::write_file_atomically(&PathBuf::from(port_file), &format!("{port}\n"))?;
    }
    let result = prepared.serve(listener, shutdown).await;
    if let Some(pid_file) = &config.pid_file {
        // Best effort: a stale pid file is harmless, callers check that the pid is alive.
        let _ = std::fs::remove_file(pid_file);
    }
    result
}

fn init_logging(config: &DbdConfig, verbose: u8) -> Result<(), DaemonError> {
    let level = raise(config.log_level, verbose);
    let mut directives = level.to_string();
    if level >= LevelFilter::DEBUG {
        // The HTTP/2 stack's own debug output drowns the daemon's.
        directives.push_str(",h2=info,hyper=info,hyper_util=info,tower=info");
    }
    let filter = tracing_subscriber::EnvFilter::new(directives);
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match &config.log_file {
        Some(path) => {
            let err = |source| DaemonError::File {
                path: path.clone(),
                source,
            };
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

/// `level` raised by `steps` levels, saturating at TRACE.
fn raise(level: LevelFilter, steps: u8) -> LevelFilter {
    const ORDER: [LevelFilter; 6] = [
        LevelFilter::OFF,
        LevelFilter::ERROR,
        LevelFilter::WARN,
        LevelFilter::INFO,
        LevelFilter::DEBUG,
        LevelFilter::TRACE,
    ];
    let at = ORDER.iter().position(|l| *l == level).unwrap_or(3);
    ORDER[(at + usize::from(steps)).min(ORDER.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_raises_the_configured_level() {
        assert_eq!(raise(LevelFilter::INFO, 0), LevelFilter::INFO);
        assert_eq!(raise(LevelFilter::INFO, 1), LevelFilter::DEBUG);
        assert_eq!(raise(LevelFilter::OFF, 2), LevelFilter::WARN);
        assert_eq!(raise(LevelFilter::ERROR, 9), LevelFilter::TRACE);
    }

    #[test]
    fn command_line_follows_slurmdbd() {
        let a = Args::try_parse_from(["sluice-dbd", "-D", "-f", "/x.conf", "-vv"]).unwrap();
        assert!(a.foreground);
        assert_eq!(a.conf, PathBuf::from("/x.conf"));
        assert_eq!(a.verbose, 2);
    }
}
