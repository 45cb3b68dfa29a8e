//! `sluice-dbd`: the accounting daemon, started as Slurm's slurmdbd is.
//!
//! Everything that can be checked on the terminal (configuration, key, listening address) is
//! checked before daemonizing, so mistakes are printed on stderr with a non-zero exit; the
//! process concerns are [`sluice_wire::daemon`]'s.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use sluice_dbd::config::{DEFAULT_CONF_PATH, DbdConfig};
use sluice_dbd::daemon::{self, DaemonError, Prepared};
use sluice_wire::daemon::{Process, StateDir, raise};

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
    daemon::check_conf_file(&config)?;
    // Checked here for the terminal; the daemon loads it again when it prepares.
    sluice_wire::auth::Key::load(&config.key_path())?;
    let listener = daemon::bind(&config)?;
    let process = Process {
        foreground: args.foreground,
        log_level: raise(config.log_level, args.verbose),
        log_file: config.log_file.clone(),
        pid_file: config.pid_file.clone(),
        warnings: config.warnings.clone(),
        state_dir: config.storage.sqlite_dir().map(|path| StateDir {
            path,
            daemon: "sluice-dbd",
        }),
    };
    process.run(listener, |listener, shutdown| async move {
        let prepared = Prepared::new(&config).await?;
        Ok(prepared.serve(listener, shutdown))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_follows_slurmdbd() {
        let a = Args::try_parse_from(["sluice-dbd", "-D", "-f", "/x.conf", "-vv"]).unwrap();
        assert!(a.foreground);
        assert_eq!(a.conf, PathBuf::from("/x.conf"));
        assert_eq!(a.verbose, 2);
    }
}
