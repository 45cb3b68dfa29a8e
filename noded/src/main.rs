//! `sluice-noded`: the node daemon, started as Slurm's slurmd is.
//!
//! Configuration, key and listening address are checked before daemonizing, so mistakes are
//! printed on stderr with a non-zero exit; the process concerns are [`sluice_wire::daemon`]'s.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use sluice_noded::daemon::{self, Prepared};
use sluice_noded::{NodedConfig, NodedError};
use sluice_wire::daemon::{LevelFilter, Process, StateDir, raise};

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
    if !config.stepd.is_file() {
        return Err(NodedError::NoSupervisor { path: config.stepd });
    }
    let key = sluice_wire::auth::Key::load(&config.key_path())?;
    let listener = daemon::bind(&config)?;
    let process = Process {
        foreground: args.foreground,
        log_level: raise(LevelFilter::INFO, args.verbose),
        log_file: config.log_file.clone(),
        pid_file: config.pid_file.clone(),
        warnings: config.warnings.iter().map(ToString::to_string).collect(),
        state_dir: Some(StateDir {
            path: config.spool_dir.clone(),
            daemon: "sluice-noded",
        }),
    };
    process.run(listener, |listener, shutdown| async move {
        let prepared = Prepared::new(config, key, listener)?;
        Ok(prepared.serve(shutdown))
    })
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
