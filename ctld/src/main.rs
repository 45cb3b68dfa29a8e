//! `sluice-ctld`: the cluster controller, started as Slurm's slurmctld is.
//!
//! `sluice-ctld [-D] [-f slurm.conf] [-v]`. Everything that can be checked on the terminal
//! (configuration, key, listening address) is checked before daemonizing, so mistakes are
//! printed on stderr with a non-zero exit. The tokio runtime is built only after `daemon(3)`,
//! since a fork keeps just the calling thread.

use anyhow::Context;
use clap::Parser;
use sluice_ctld::conf::CtldConf;
use sluice_ctld::service::server;
use sluice_wire::auth::{KEY_FILE, Key};
use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The environment variable naming a file the daemon writes its bound port to once it serves.
const PORT_FILE_ENV: &str = "SLUICE_PORT_FILE";
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
    let listener = bind(&conf)?;
    if !args.foreground {
        nix::unistd::daemon(false, false).context("cannot daemonize")?;
    }
    init_logging(&conf, args.verbose)?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(serve(conf, key, listener))
}

async fn serve(conf: CtldConf, key: Key, listener: std::net::TcpListener) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let port = listener.local_addr()?.port();
    let shutdown = shutdown_signal()?;
    let pid_file = conf.slurmctld_pid_file.clone();
    if let Some(p) = &pid_file {
        write_atomically(p, &format!("{}\n", std::process::id()))?;
    }
    let served = tokio::spawn(server::serve(conf, key, listener, shutdown));
    // Written once the server task runs: whoever waits for it may send requests at once
    // (connections queue on the bound socket meanwhile).
    if let Some(port_file) = std::env::var_os(PORT_FILE_ENV) {
        write_atomically(Path::new(&port_file), &format!("{port}\n"))?;
    }
    let result = served.await.context("controller task failed")?;
    if let Some(p) = &pid_file {
        // Best effort: a stale pid file is harmless, callers check that the pid is alive.
        let _ = std::fs::remove_file(p);
    }
    Ok(result?)
}

/// Binds `SlurmctldHost`'s address (else all addresses) at `SlurmctldPort` (0: a free port).
fn bind(conf: &CtldConf) -> anyhow::Result<std::net::TcpListener> {
    let host = conf
        .ctld_hosts
        .first()
        .map_or("0.0.0.0", |h| h.addr.as_deref().unwrap_or(&h.name));
    let addr = format!("{host}:{}", conf.ctld_port);
    let addrs: Vec<_> = (host, conf.ctld_port)
        .to_socket_addrs()
        .with_context(|| format!("cannot listen on {addr}"))?
        .collect();
    let listener = std::net::TcpListener::bind(&addrs[..])
        .with_context(|| format!("cannot listen on {addr}"))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Completes on the first SIGTERM or SIGINT (handlers installed now, not at first poll).
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send> {
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

fn write_atomically(path: &Path, contents: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    std::fs::write(&tmp, contents).with_context(|| path.display().to_string())?;
    std::fs::rename(&tmp, path).with_context(|| path.display().to_string())
}

fn init_logging(conf: &CtldConf, verbose: u8) -> anyhow::Result<()> {
    let level = ["info", "debug", "trace"][usize::from(verbose.min(2))];
    let directives = format!("{level},h2=info,hyper=info,hyper_util=info,tower=info");
    let builder =
        tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::new(directives));
    match &conf.slurmctld_log_file {
        Some(path) => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| path.display().to_string())?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}
