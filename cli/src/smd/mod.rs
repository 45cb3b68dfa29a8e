//! `smd`: the command line of the failure management (Slurm's smd), built on libsmd
//! ([`::smd::Client`]). Operations on a running job's nodes by job id, events as they happen,
//! and, run inside a job without arguments, the automatic handling that `nonstop.sh` runs
//! between a batch script's steps.
//!
//! * [`args`]: the command line; [`policy`]: `SMD_NONSTOP_FAILED`/`SMD_NONSTOP_FAILING`.
//! * [`handle`]: the automatic handling over injected requests and effects (tested without a
//!   controller or a clock); [`nodefile`]: `/tmp/smd_job_<id>_nodes.sh`.
//! * [`show`]: human and parsable output.
//!
//! Exit status: 0; 1 when a request failed, the command line or environment is invalid, or (the
//! automatic handling) the job should exit.

pub mod args;
pub mod handle;
pub mod nodefile;
pub mod policy;
pub mod show;

#[cfg(test)]
mod args_tests;
#[cfg(test)]
mod handle_tests;

use std::io::Write;
use std::time::Duration;

use ::smd::{Client, Endpoint, SmdError};

use crate::getopt::Ambiguity;
use crate::jobspec;
use crate::timefmt::Zone;
use args::{Action, ArgsError, Command};
use handle::{Handler, Outcome, SystemEffects};
use policy::Policy;

/// The guide's time between replacement attempts.
pub const DEFAULT_RETRY_INTERVAL: Duration = Duration::from_secs(20);
/// The variable that changes it (whole seconds, from 1).
pub const RETRY_INTERVAL_VAR: &str = "SMD_RETRY_INTERVAL";

/// Runs the `smd` binary.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let environ = jobspec::process_environ();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(&args, &environ, &mut stdout.lock(), &mut stderr.lock())
}

fn env<'a>(environ: &'a [(String, String)], name: &str) -> Option<&'a str> {
    environ
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn fail(err: &mut dyn Write, msg: &str) -> i32 {
    jobspec::print_error(err, "smd", msg);
    1
}

/// Runs smd with `args` (without the program name) in `environ`; returns the exit code.
pub fn run(
    args: &[String],
    environ: &[(String, String)],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let (job, action, parsable) = match args::parse(args, env(environ, "SLURM_JOB_ID")) {
        Ok(Command::Print(text)) => {
            let _ = out.write_all(text.as_bytes());
            return 0;
        }
        Ok(Command::Version) => {
            let _ = writeln!(out, "sluice {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Ok(Command::Run {
            job,
            action,
            parsable,
        }) => (job, action, parsable),
        Err(ArgsError::Getopt(e)) => {
            let _ = writeln!(err, "{}", e.usage_text("smd", Ambiguity::Listed));
            return 1;
        }
        Err(e) => return fail(err, &e.to_string()),
    };
    // The environment is checked before anything is asked.
    let (failed, failing) = match action {
        Action::Auto => match Policy::from_environ(environ) {
            Ok(p) => p,
            Err(e) => return fail(err, &e.to_string()),
        },
        _ => (None, None),
    };
    let interval = match env(environ, RETRY_INTERVAL_VAR) {
        None => DEFAULT_RETRY_INTERVAL,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(s) if s > 0 => Duration::from_secs(s),
            _ => {
                return fail(
                    err,
                    &format!("invalid {RETRY_INTERVAL_VAR}=\"{v}\": whole seconds, from 1"),
                );
            }
        },
    };
    let endpoint = match Endpoint::from_slurm_conf(&jobspec::conf_path(environ)) {
        Ok(e) => e,
        Err(e) => return fail(err, &e.to_string()),
    };
    let mut client = match Client::connect(&endpoint) {
        Ok(c) => c,
        Err(e) => return fail(err, &e.to_string()),
    };
    let zone = Zone::Local;
    let done = match action {
        Action::Auto => {
            let mut effects = SystemEffects;
            let mut handler = Handler {
                ops: &mut client,
                effects: &mut effects,
                out,
                job,
                interval,
            };
            return match handler.run(failed.as_ref(), failing.as_ref()) {
                Ok(Outcome::Continue) => 0,
                Ok(Outcome::ExitJob) => 1,
                Err(e) => fail(err, &format!("job {job}: {e}")),
            };
        }
        other => operation(&client, job, other, parsable, zone, out),
    };
    match done {
        Ok(()) => 0,
        Err(e) => fail(err, &e),
    }
}

/// One operation of the command line; the error is the line to print.
fn operation(
    client: &Client,
    job: u32,
    action: Action,
    parsable: bool,
    zone: Zone,
    out: &mut dyn Write,
) -> Result<(), String> {
    let rpc = |what: &str, e: SmdError| format!("{what} job {job}: {e}");
    let io = |e: std::io::Error| e.to_string();
    match action {
        Action::Query(filter) => {
            let a = client.job_nodes(job).map_err(|e| rpc("query", e))?;
            show::nodes(out, &a, filter, parsable).map_err(io)
        }
        Action::Replace(node) => {
            let before = client.job_nodes(job).map_err(|e| rpc("query", e))?;
            let after = client
                .replace_node(job, &node)
                .map_err(|e| rpc(&format!("replace {node} of"), e))?;
            let by = show::new_node(&before, &after);
            show::change(
                out,
                parsable,
                &["JobID", "NodeName", "Replacement", "NodeList"],
                vec![
                    job.to_string(),
                    node.clone(),
                    by.clone(),
                    after.node_list.clone(),
                ],
                &format!(
                    "Job {job}: node {node} replaced by {by} (nodes {})",
                    after.node_list
                ),
            )
            .map_err(io)
        }
        Action::Drop(node) => {
            let after = client
                .drop_node(job, &node)
                .map_err(|e| rpc(&format!("drop {node} of"), e))?;
            show::change(
                out,
                parsable,
                &["JobID", "NodeName", "NodeList"],
                vec![job.to_string(), node.clone(), after.node_list.clone()],
                &format!("Job {job}: node {node} dropped (nodes {})", after.node_list),
            )
            .map_err(io)
        }
        Action::Drain { node, reason } => {
            let after = client
                .drain_node(job, &node, &reason)
                .map_err(|e| rpc(&format!("drain {node} of"), e))?;
            let state = after
                .nodes
                .iter()
                .find(|n| n.name == node)
                .map_or("", |n| n.state.word());
            show::change(
                out,
                parsable,
                &["JobID", "NodeName", "State", "Reason"],
                vec![
                    job.to_string(),
                    node.clone(),
                    state.to_string(),
                    reason.clone(),
                ],
                &format!("Job {job}: node {node} drained ({state}): {reason}"),
            )
            .map_err(io)
        }
        Action::Extend(minutes) => {
            let after = client
                .extend_time(job, minutes)
                .map_err(|e| rpc("extend the time limit of", e))?;
            let limit = show::limit(after.time_limit_minutes);
            show::change(
                out,
                parsable,
                &["JobID", "Extended", "TimeLimit", "ExtendAvailable"],
                vec![
                    job.to_string(),
                    minutes.to_string(),
                    limit.clone(),
                    after.extend_available_minutes.to_string(),
                ],
                &format!(
                    "Job {job}: time limit extended by {minutes} minutes to {limit} ({} more minutes available)",
                    after.extend_available_minutes
                ),
            )
            .map_err(io)
        }
        Action::Wait => {
            let mut sub = client.subscribe(job).map_err(|e| rpc("watch", e))?;
            show::event_header(out, parsable).map_err(io)?;
            loop {
                match sub.next_event() {
                    Ok(e) => show::event(out, &e, job, parsable, zone).map_err(io)?,
                    Err(SmdError::StreamEnded) => return Ok(()),
                    Err(e) => return Err(rpc("watch", e)),
                }
            }
        }
        Action::Auto => Ok(()),
    }
}
