//! `sluice-sackd`: the local credential service for hosts that run no node daemon (login
//! hosts), started as Slurm's sackd is. Users of the host who cannot read `slurm.key` get
//! tokens for their own uid from the socket `sack.socket` next to `slurm.conf` (see
//! [`sluice_wire::auth::sack`]); `sluice-noded` offers the same service on compute hosts.
//!
//! Configuration, key and socket are checked before daemonizing, so mistakes are printed on
//! stderr with a non-zero exit; the process concerns are [`sluice_wire::daemon`]'s.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use sluice_vocab::conf::{ConfError, ConfFile};
use sluice_wire::auth::{AuthError, KEY_FILE, Key, sack};
use sluice_wire::daemon::{LevelFilter, Process, ProcessError, raise};

/// Where slurm.conf is when neither `-f` nor `SLURM_CONF` says.
const DEFAULT_CONF_PATH: &str = "/etc/slurm/slurm.conf";

/// Command line of `sluice-sackd`.
#[derive(Debug, Parser)]
#[command(
    name = "sluice-sackd",
    version,
    about = "Sluice credential daemon (sackd): signs tokens for this host's users"
)]
struct Args {
    /// Run in the foreground (logging to stderr) instead of daemonizing.
    #[arg(short = 'D')]
    foreground: bool,
    /// The cluster's slurm.conf; the key and the socket are next to it.
    #[arg(short = 'f', value_name = "FILE", env = "SLURM_CONF", default_value = DEFAULT_CONF_PATH)]
    conf: PathBuf,
    /// Log more (repeatable).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbose: u8,
}

/// Why the daemon could not start or stopped.
#[derive(Debug, thiserror::Error)]
enum SackdError {
    #[error(transparent)]
    Config(#[from] ConfError),
    #[error(transparent)]
    Key(#[from] AuthError),
    #[error("cannot offer the credential service at {path}: {source}")]
    Socket {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("a credential service already answers at {0}")]
    Taken(PathBuf),
    #[error(transparent)]
    Process(#[from] ProcessError),
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sluice-sackd: error: {e}");
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), SackdError> {
    let conf = std::path::absolute(&args.conf).unwrap_or_else(|_| args.conf.clone());
    // Read for its mistakes: a broken slurm.conf is reported here rather than by every command.
    ConfFile::read(&conf)?;
    let dir = conf.parent().unwrap_or(Path::new("/"));
    let key = Key::load(&dir.join(KEY_FILE))?;
    let path = sack::socket_path(dir);
    let claimed = sack::claim(&path)
        .map_err(|source| SackdError::Socket {
            path: path.clone(),
            source,
        })?
        .ok_or_else(|| SackdError::Taken(path.clone()))?;
    let process = Process {
        foreground: args.foreground,
        log_level: raise(LevelFilter::INFO, args.verbose),
        log_file: None,
        pid_file: None,
        warnings: Vec::new(),
        // The socket is claimed above; sackd keeps nothing on disk.
        state_dir: None,
    };
    process.run_local(|shutdown| async move {
        Ok::<_, SackdError>(async move {
            sack::serve(claimed, key, shutdown)
                .await
                .map_err(|source| SackdError::Socket { path, source })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_follows_sackd() {
        let a = Args::try_parse_from(["sluice-sackd", "-D", "-f", "/x.conf", "-v"]).unwrap();
        assert!(a.foreground);
        assert_eq!(a.conf, PathBuf::from("/x.conf"));
        assert_eq!(a.verbose, 1);
    }
}
