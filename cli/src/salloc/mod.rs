//! `salloc`: obtains an allocation (an interactive job), runs a command in it (the user's
//! shell when none is given) with the job's `SLURM_*` environment, and relinquishes the
//! allocation when the command exits, whose status becomes the job's (as Slurm's salloc does:
//! `exit 3` shows as FAILED 3:0 in sacct).
//!
//! While the command runs salloc follows the allocation (`follow_end` on the Allocate stream):
//! when it is revoked (scancel, time limit) salloc says so and, with `-K`, signals the command.
//! `--no-shell` leaves the allocation running once granted; `-I` gives up when it is not
//! granted in time. Ctrl-C while waiting withdraws the request; while the command runs, the
//! terminal's signals are the command's, and salloc ignores them.
//!
//! * [`args`]: options and input environment; [`environment`]: the command's environment.

pub mod args;
pub mod environment;

use std::io::Write;
use std::time::Duration;

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{
    Allocation, AllocationEvent, CancelRequest, CompleteAllocationRequest, allocation_event::Event,
};
use tokio::sync::mpsc;
use tonic::Streaming;

use crate::getopt::Ambiguity;
use crate::interrupts::{self, Interrupt};
use crate::jobspec::{self, Submitter};
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};
use args::{ArgsError, Immediate, Invocation, SallocOpts};

/// The exit code of a command line salloc refuses (as Slurm's salloc exits).
const BAD_ARGS: i32 = 255;
/// How long `-I` without a value waits for the grant.
const IMMEDIATE: Duration = Duration::from_secs(1);

/// Runs the `salloc` binary: real signals feed [`run_async`].
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let environ = jobspec::process_environ();
    let who = Submitter::current();
    interrupts::run("salloc", |rx| async move {
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        run_async(
            &args,
            &environ,
            &who,
            &mut stdout.lock(),
            &mut stderr.lock(),
            rx,
        )
        .await
    })
}

/// Runs salloc with `args` (without the program name), reading signals from `interrupts`;
/// returns the exit code.
pub async fn run_async(
    args: &[String],
    environ: &[(String, String)],
    who: &Submitter,
    out: &mut dyn Write,
    err: &mut dyn Write,
    mut interrupts: mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let opts = match args::parse(args, environ) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => return print(out, args::HELP),
        Ok(Invocation::Usage) => return print(out, args::USAGE),
        Ok(Invocation::Version) => {
            return print(out, &format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
        }
        Err(ArgsError::Getopt(e)) => {
            let _ = writeln!(err, "{}", e.usage_text("salloc", Ambiguity::Listed));
            return BAD_ARGS;
        }
        Err(ArgsError::Opt(e)) if e.is_fatal() => {
            let _ = writeln!(err, "salloc: fatal: {e}");
            return BAD_ARGS;
        }
        Err(ArgsError::Opt(e)) if e.is_submit_refusal() => {
            return fail(err, &format!("Job submit/allocate failed: {e}"));
        }
        Err(e) => {
            fail(err, &e.to_string());
            return BAD_ARGS;
        }
    };
    if opts.job.container.is_some() {
        return fail(err, jobspec::CONTAINER_NEEDS_INTERACTIVE_STEP);
    }
    // --get-user-env (root only): the login environment of the user the command runs as
    // (`--uid`'s, else the caller's) replaces salloc's own variables of the same names, as
    // Slurm's salloc loads it into its own environment before anything else.
    let with_login: Vec<(String, String)>;
    let environ = if opts.job.get_user_env {
        let user = opts.job.uid.as_ref().map_or(&who.user, |r| &r.name);
        match sluice_wire::login_env::load(user).await {
            Ok(login) => {
                with_login = overlay(environ, login);
                &with_login[..]
            }
            Err(e) => return fail(err, &e),
        }
    } else {
        environ
    };
    for note in &opts.job.notes {
        jobspec::print_error(err, "salloc", note);
    }
    let conf = match SlurmConf::read(&jobspec::conf_path(environ)) {
        Ok(c) => c,
        Err(e) => return fail(err, &e.to_string()),
    };
    let name = opts.job.job_name.clone().unwrap_or_else(|| {
        if opts.no_shell {
            "no-shell"
        } else {
            "interactive"
        }
        .to_string()
    });
    let mut req = opts.job.to_request(&name, String::new(), who, environ);
    req.het_components = opts
        .het
        .iter()
        .map(|j| j.to_request(&name, String::new(), who, environ))
        .collect();
    let (mut ctld, cluster) = match connect(&conf, &req, err).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    req.follow_end = !opts.no_shell;
    let stream = match ctld.allocate(req).await {
        Ok(s) => s.into_inner(),
        Err(status) => {
            crate::rpc_error::print_note(err, "salloc", &status);
            let text = status_text(&status, Asker::Jobs);
            return fail(err, &format!("Job submit/allocate failed: {text}"));
        }
    };
    let mut grant = Grant {
        ctld,
        stream,
        job_id: None,
    };
    let alloc = match grant.wait(&opts, err, &mut interrupts).await {
        Ok(alloc) => alloc,
        Err(code) => return code,
    };
    if opts.no_shell {
        return 0;
    }
    let env =
        environment::for_command(environ, &alloc, &name, &opts.job, who, &cluster, &conf.path);
    run_command(&opts, grant, alloc.job_id, env, err, &mut interrupts).await
}

/// Connects to the controller of the cluster the job goes to (`-M`: the one that would start
/// it soonest); returns it with that cluster's name.
async fn connect(
    conf: &SlurmConf,
    req: &sluice_wire::proto::SubmitJobRequest,
    err: &mut dyn Write,
) -> Result<(CtldClient, String), i32> {
    let target = match jobspec::clusters::pick(conf, req).await {
        Ok(t) => t,
        Err(e) => return Err(fail(err, &e.to_string())),
    };
    let connected = match &target {
        Some(m) => crate::multicluster::connect(conf, m).await,
        None => conf.connect_ctld().await,
    };
    let cluster = match &target {
        Some(m) => m.name.clone(),
        None => conf.cluster_name.clone().unwrap_or_default(),
    };
    match connected {
        Ok(c) => Ok((c, cluster)),
        Err(CliError::Connect { .. }) => Err(fail(
            err,
            &format!("Job submit/allocate failed: {CONNECT_FAILURE}"),
        )),
        Err(e) => Err(fail(err, &e.to_string())),
    }
}

/// The allocation request on its way: the controller, its event stream, and the job once known.
struct Grant {
    ctld: CtldClient,
    stream: Streaming<AllocationEvent>,
    job_id: Option<u32>,
}

impl Grant {
    /// Waits for the allocation, printing Slurm's lines; `Err` is the exit code after the
    /// request was withdrawn (interrupted, `-I` timed out) or refused.
    async fn wait(
        &mut self,
        opts: &SallocOpts,
        err: &mut dyn Write,
        interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
    ) -> Result<Allocation, i32> {
        let quiet = opts.job.quiet || opts.immediate == Some(Immediate::Now);
        let patience = match opts.immediate {
            None => None,
            Some(Immediate::Now) => Some(IMMEDIATE),
            Some(Immediate::Within(secs)) => Some(Duration::from_secs(u64::from(secs))),
        };
        let deadline = patience.map(|p| tokio::time::Instant::now() + p);
        let mut waited = false;
        loop {
            tokio::select! {
                msg = self.stream.message() => {
                    let ev = match msg {
                        Ok(Some(ev)) => ev,
                        Ok(None) => return Err(unable(err, CONNECT_FAILURE)),
                        Err(status) => return Err(unable(err, &status_text(&status, Asker::Jobs))),
                    };
                    self.job_id = Some(ev.job_id);
                    match ev.event {
                        Some(Event::Queued(_)) if !waited => {
                            waited = true;
                            if !quiet {
                                let _ = writeln!(err, "salloc: Pending job allocation {}", ev.job_id);
                                let _ = writeln!(err, "salloc: job {} queued and waiting for resources", ev.job_id);
                            }
                        }
                        Some(Event::Granted(alloc)) => {
                            if waited && !quiet {
                                let _ = writeln!(err, "salloc: job {} has been allocated resources", ev.job_id);
                            }
                            if opts.bell == Some(true) {
                                let _ = write!(err, "\x07");
                            }
                            if !opts.job.quiet {
                                let _ = writeln!(err, "salloc: Granted job allocation {}", ev.job_id);
                            }
                            return Ok(alloc);
                        }
                        Some(Event::Failed(text)) => return Err(unable(err, &text)),
                        _ => {}
                    }
                }
                () = sleep_until(deadline) => {
                    let why = match opts.immediate {
                        Some(Immediate::Now) => "Requested nodes are busy",
                        _ => "Connection timed out",
                    };
                    unable(err, why);
                    self.withdraw(err).await;
                    return Err(1);
                }
                Some(_) = interrupts.recv() => {
                    self.withdraw(err).await;
                    let _ = writeln!(err, "salloc: Job aborted due to signal");
                    return Err(1);
                }
            }
        }
    }

    /// Cancels the job asked for, if it exists yet.
    async fn withdraw(&mut self, err: &mut dyn Write) {
        if let Some(id) = self.job_id {
            let _ = self
                .ctld
                .cancel(CancelRequest {
                    job_ids: vec![id],
                    ..Default::default()
                })
                .await;
            revoked(err, id);
        }
    }
}

/// Runs the command in the allocation until it exits, telling of a revocation meanwhile;
/// then relinquishes the allocation with the command's status. Returns salloc's exit code.
async fn run_command(
    opts: &SallocOpts,
    mut grant: Grant,
    job_id: u32,
    env: Vec<(String, String)>,
    err: &mut dyn Write,
    interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let argv = environment::command_line(&opts.command, &env);
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]).env_clear().envs(env);
    // --uid (root only): the command runs as the job's user, with its primary group (or
    // --gid's); as for jobs on the nodes, without supplementary groups.
    if let Some(run_as) = &opts.job.uid {
        command
            .uid(run_as.uid)
            .gid(opts.job.gid.unwrap_or(run_as.gid));
    }
    let spawned = command.spawn();
    let (exit_code, signal) = match spawned {
        Err(e) => {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                format!("_fork_command: Unable to find command \"{}\"", argv[0])
            } else {
                format!("_fork_command: {}: {e}", argv[0])
            };
            fail(err, &why);
            (1, 0)
        }
        Ok(mut child) => {
            let mut following = true;
            let mut was_revoked = false;
            let status = loop {
                tokio::select! {
                    status = child.wait() => break status,
                    msg = grant.stream.message(), if following => match msg {
                        Ok(Some(AllocationEvent { event: Some(Event::Ended(_)), .. })) => {
                            was_revoked = true;
                            revoked(err, job_id);
                            if let (Some(sig), Some(pid)) = (opts.kill_signal, child.id()) {
                                signal_command(pid, sig);
                            }
                        }
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => following = false,
                    },
                    // The terminal's signals reach the command itself.
                    Some(_) = interrupts.recv() => {}
                }
            };
            let parts = status.map_or((1, 0), |s| exit_parts(&s));
            if was_revoked {
                return code_of(parts);
            }
            parts
        }
    };
    if !opts.job.quiet {
        let _ = writeln!(err, "salloc: Relinquishing job allocation {job_id}");
    }
    let done = CompleteAllocationRequest {
        job_id,
        exit_code,
        signal,
    };
    if let Err(status) = grant.ctld.complete_allocation(done).await {
        fail(
            err,
            &format!(
                "Unable to relinquish job allocation {job_id}: {}",
                status_text(&status, Asker::Jobs)
            ),
        );
    }
    code_of((exit_code, signal))
}

/// Exit code and terminating signal of the finished command.
fn exit_parts(status: &std::process::ExitStatus) -> (i32, i32) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (code, 0),
        (None, Some(sig)) => (0, sig),
        (None, None) => (1, 0),
    }
}

/// salloc's exit code: the command's, or 1 when a signal ended it (as Slurm's salloc exits for
/// SIGTERM and most other signals).
fn code_of((exit_code, signal): (i32, i32)) -> i32 {
    if signal == 0 { exit_code } else { 1 }
}

fn signal_command(pid: u32, sig: i32) {
    let (Ok(pid), Ok(sig)) = (i32::try_from(pid), nix::sys::signal::Signal::try_from(sig)) else {
        return;
    };
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn revoked(err: &mut dyn Write, job_id: u32) {
    let _ = writeln!(err, "salloc: Job allocation {job_id} has been revoked.");
}

fn unable(err: &mut dyn Write, text: &str) -> i32 {
    fail(err, &format!("Unable to allocate resources: {text}"))
}

fn print(out: &mut dyn Write, text: &str) -> i32 {
    let _ = out.write_all(text.as_bytes());
    0
}

/// `environ` with `login`'s variables in place of its own of the same names.
fn overlay(
    environ: &[(String, String)],
    mut login: std::collections::BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = environ
        .iter()
        .map(|(name, value)| {
            let value = login.remove(name).unwrap_or_else(|| value.clone());
            (name.clone(), value)
        })
        .collect();
    env.extend(login);
    env
}

fn fail(err: &mut dyn Write, msg: &str) -> i32 {
    jobspec::print_error(err, "salloc", msg);
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_environment_replaces_salloc_s_own_variables() {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        let login = [s("HOME", "/home/u"), s("LANG", "C.UTF-8")]
            .into_iter()
            .collect();
        let env = overlay(&[s("HOME", "/root"), s("TERM", "xterm")], login);
        assert_eq!(
            env,
            vec![
                s("HOME", "/home/u"),
                s("TERM", "xterm"),
                s("LANG", "C.UTF-8")
            ]
        );
    }

    #[test]
    fn a_signal_ends_salloc_with_1_and_an_exit_code_is_kept() {
        assert_eq!(code_of((3, 0)), 3);
        assert_eq!(code_of((0, 15)), 1);
        assert_eq!(code_of((0, 0)), 0);
    }
}
