//! `sluice-ctld`: the cluster controller, started as Slurm's slurmctld is.
//!
//! `sluice-ctld [-D] [-f slurm.conf] [-v]`. Everything that can be checked on the terminal
//! (configuration, key, listening address) is checked before daemonizing, so mistakes are
//! printed on stderr with a non-zero exit; the process concerns are [`sluice_wire::daemon`]'s.

use anyhow::Context;
use clap::Parser;
use sluice_ctld::conf::CtldConf;
use sluice_ctld::service::server;
use sluice_wire::auth::{KEY_FILE, Key};
use sluice_wire::daemon::{self, LevelFilter, Process, raise};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// mimalloc rather than glibc's malloc: a submission allocates and frees many small buffers
/// across the runtime's threads (HTTP/2 frames, protobuf messages, the batch's records).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Where slurm.conf is when neither `-f` nor `SLURM_CONF` says.
const DEFAULT_CONF: &str = "/etc/slurm/slurm.conf";

/// Command line of `sluice-ctld`.
#[derive(Debug, Parser)]
#[command(
    name = "sluice-ctld",
    version,
    about = "Sluice cluster controller (slurmctld)"
)]
struct Args {
    /// Run in the foreground instead of daemonizing.
    #[arg(short = 'D')]
    foreground: bool,
    /// The configuration file.
    #[arg(short = 'f', value_name = "FILE", env = "SLURM_CONF", default_value = DEFAULT_CONF)]
    conf: PathBuf,
    /// Log more (repeatable): info, then debug, then trace.
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sluice-ctld: error: {e:#}");
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let path = std::path::absolute(&args.conf).unwrap_or_else(|_| args.conf.clone());
    let (conf, warnings) = CtldConf::load(&path)?;
    let key_path = path.parent().unwrap_or(Path::new("/")).join(KEY_FILE);
    let key = Key::load(&key_path)?;
    server::admin_uids(&conf)?;
    // `SlurmctldHost`'s address (else all addresses) at `SlurmctldPort` (0: a free port).
    let host = conf
        .ctld_hosts
        .first()
        .map_or("0.0.0.0", |h| h.addr.as_deref().unwrap_or(&h.name));
    let listener = daemon::bind(host, conf.ctld_port)?;
    let process = Process {
        foreground: args.foreground,
        log_level: raise(LevelFilter::INFO, args.verbose),
        log_file: conf.slurmctld_log_file.clone(),
        pid_file: conf.slurmctld_pid_file.clone(),
        warnings: warnings.iter().map(ToString::to_string).collect(),
        state_dir: Some(daemon::StateDir {
            path: conf.state_save_location.clone(),
            daemon: "sluice-ctld",
        }),
    };
    process.run(listener, |listener, shutdown| async move {
        // The controller runs as a task of its own; it restores its state once it runs, while
        // connections queue on the bound socket.
        let served = tokio::spawn(server::serve(conf, key, listener, shutdown));
        anyhow::Ok(async move {
            served.await.context("controller task failed")??;
            Ok(())
        })
    })
}
