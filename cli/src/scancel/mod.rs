//! `scancel`: cancels or signals jobs by id (`N`, `N_M`, `N_[1-3]`) or by filters
//! (`-u -n -t -p`), with Slurm's messages.
//!
//! * [`args`]: the command line into a [`CancelRequest`](sluice_wire::proto::CancelRequest).
//!
//! `--sibling=C` withdraws a federated job's pending copy on cluster C instead of cancelling;
//! `-M a,b|all` sends the request to each named cluster's controller.

pub mod args;

use std::io::Write;

use sluice_wire::proto::{CancelReply, CancelRequest};

use crate::getopt::{Ambiguity, GetoptError};
use crate::jobspec::{self, signals};
use crate::multicluster::{self, Member, Selection};
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};
use args::Command;

/// Why scancel stops; the text is Slurm's (printed after `scancel: error: `).
#[derive(Debug, thiserror::Error)]
pub enum ScancelError {
    /// An option the table does not accept (printed as getopt prints it).
    #[error("{0}")]
    Getopt(#[from] GetoptError),
    #[error("No job identification provided")]
    NoJobs,
    #[error("Invalid job id {0}")]
    JobId(String),
    #[error("Unknown job signal: {0}")]
    Signal(String),
    #[error(
        "Invalid job state specified: {0}\nValid job states are PENDING, RUNNING and SUSPENDED"
    )]
    State(String),
    #[error("Invalid user name: {0}")]
    User(String),
    /// The configuration could not be read.
    #[error("{0}")]
    Conf(#[from] CliError),
    /// The controller could not be asked.
    #[error("Kill job error: {0}")]
    Rpc(String),
}

impl ScancelError {
    /// Prints the error as Slurm does.
    pub fn print(&self, err: &mut dyn Write) {
        match self {
            Self::Getopt(e) => {
                let _ = writeln!(err, "{}", e.usage_text("scancel", Ambiguity::Listed));
            }
            _ => jobspec::print_error(err, "scancel", &self.to_string()),
        }
    }
}

/// Runs the `scancel` binary.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let environ = jobspec::process_environ();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(&args, &environ, &mut stdout.lock(), &mut stderr.lock())
}

/// Runs scancel with `args` (without the program name); returns the exit code.
pub fn run(
    args: &[String],
    environ: &[(String, String)],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let (request, verbose, clusters) = match args::parse(args) {
        Ok(Command::Print(text)) => {
            let _ = out.write_all(text.as_bytes());
            return 0;
        }
        Ok(Command::Version) => {
            let _ = writeln!(out, "sluice {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Ok(Command::Cancel {
            request,
            verbose,
            clusters,
            ..
        }) => (*request, verbose, clusters),
        Err(e) => {
            e.print(err);
            return 1;
        }
    };
    let conf = match SlurmConf::read(&jobspec::conf_path(environ)) {
        Ok(c) => c,
        Err(e) => {
            ScancelError::Conf(e).print(err);
            return 1;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            jobspec::print_error(err, "scancel", &e.to_string());
            return 1;
        }
    };
    let Some(clusters) = clusters else {
        return match runtime.block_on(cancel(&conf, None, request.clone())) {
            Ok(reply) => report(&request, &reply, verbose, err),
            Err(e) => {
                e.print(err);
                1
            }
        };
    };
    // -M: the same request to each named cluster's controller.
    let members = match runtime.block_on(multicluster::resolve(&conf, &Selection::parse(&clusters)))
    {
        Ok(m) => m,
        Err(e) => {
            e.print("scancel", err);
            return 1;
        }
    };
    let mut code = 0;
    for m in &members {
        code |= match runtime.block_on(cancel(&conf, Some(m), request.clone())) {
            Ok(reply) => report(&request, &reply, verbose, err),
            Err(e) => {
                e.print(err);
                1
            }
        };
    }
    code
}

async fn cancel(
    conf: &SlurmConf,
    member: Option<&Member>,
    request: CancelRequest,
) -> Result<CancelReply, ScancelError> {
    let connected = match member {
        Some(m) => multicluster::connect(conf, m).await,
        None => conf.connect_ctld().await,
    };
    let mut client = match connected {
        Ok(c) => c,
        Err(CliError::Connect { .. }) => return Err(ScancelError::Rpc(CONNECT_FAILURE.into())),
        Err(e) => return Err(e.into()),
    };
    client
        .cancel(request)
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| ScancelError::Rpc(status_text(&s, Asker::Jobs)))
}

/// The controller's text for a job id it does not know (never existed, or already purged).
const INVALID_JOB_ID: &str = "Invalid job id specified";
/// The controller's text for a job or step that has already ended.
const ALREADY_DONE: &str = "Job/step already completing or completed";

/// Prints the per-job errors (and, with `-v`, what was done); exit code 1 on any error.
///
/// As Slurm's scancel: a job that is unknown or already done is not worth an error — its
/// message shows only with `-v` (for a step, only "already done" is hidden), and when the
/// signal is SIGKILL (the default) it does not fail the command either.
pub fn report(
    request: &CancelRequest,
    reply: &CancelReply,
    verbose: bool,
    err: &mut dyn Write,
) -> i32 {
    if verbose {
        for step in &request.job_steps {
            let _ = match request.signal {
                Some(sig) => writeln!(
                    err,
                    "scancel: Signal {sig} ({}) to step {step}",
                    signals::describe(sig)
                ),
                None => writeln!(err, "scancel: Terminating step {step}"),
            };
        }
        for id in &reply.cancelled {
            let _ = match request.signal {
                Some(sig) => writeln!(
                    err,
                    "scancel: Signal {sig} ({}) to job {id}",
                    signals::describe(sig)
                ),
                None => writeln!(err, "scancel: Terminating job {id}"),
            };
        }
    }
    let kill = request.signal.is_none_or(|sig| sig == 9);
    let mut failed = false;
    for e in &reply.errors {
        let job = if e.job.is_empty() {
            e.job_id.to_string()
        } else {
            e.job.clone()
        };
        let what = if job.contains('.') {
            "job step id"
        } else {
            "job id"
        };
        let ignorable =
            e.message == ALREADY_DONE || (e.message == INVALID_JOB_ID && !job.contains('.'));
        if verbose || !ignorable {
            jobspec::print_error(
                err,
                "scancel",
                &format!("Kill job error on {what} {job}: {}", e.message),
            );
        }
        failed |= !(ignorable && kill);
    }
    i32::from(failed)
}

#[cfg(test)]
mod tests;
