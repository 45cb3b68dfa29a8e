//! `srun`: runs a command as a job step, streaming its output back live.
//!
//! Outside an allocation srun asks the controller for one (`Allocate`, printing Slurm's
//! `queued and waiting` / `has been allocated` lines when the job had to wait); inside one
//! (`SLURM_JOB_ID` or `--jobid`) it uses that job. Either way it then creates a step
//! (`CreateStep`, waiting while the job's other steps hold the CPUs it needs), runs the tasks
//! on the step's node daemons (`RunStep`, laid out by `-m/--distribution`),
//! exits with Slurm's rule (the highest exit code; `128 + signal` when a signal ended a task)
//! and reports the step's end (`StepDone`, ending the job when srun created it).
//!
//! * [`args`]: options and input environment; [`layout`]: task placement and exit codes;
//!   [`launch`]: the node streams; [`output`]: `-l` labels and `-u`; [`stdio`]: `-i/-o/-e`
//!   and stdin forwarding; [`interrupt`]: Ctrl-C;
//!   [`step`]: creating the step (and waiting for its CPUs); [`no_alloc`]: `-Z`, a step of
//!   no job; [`het_step`]: `--het-group`, a step across a heterogeneous job's components.

pub mod args;
pub mod bcast;
pub mod het_step;
pub mod input_env;
pub mod interrupt;
pub mod launch;
pub mod layout;
pub mod multi_prog;
pub mod no_alloc;
mod node_stream;
pub mod output;
pub mod scripts;
pub mod stdio;
pub mod step;
pub mod step_opts;
pub mod template;
pub mod test_only;
pub mod tty;
pub mod watch;

use sluice_wire::jobacct::StepUsageWire;
use std::io::Write;

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{CancelRequest, StepDoneRequest, allocation_event};
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;

use sluice_vocab::cpu_bind::CpuBindError;
use sluice_vocab::distribution::{DistributionError, NodeDist};

use crate::getopt::Ambiguity;
use crate::jobspec::{self, Submitter, request::workdir};
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::salloc::args::Immediate;
use crate::sbatch::submit::MAX_RETRIES;
use crate::slurm_conf::{CliError, SlurmConf};
use args::{ArgsError, Invocation};

pub use crate::interrupts::Interrupt;

/// Runs the `srun` binary: real signals feed [`run_async`].
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let environ = jobspec::process_environ();
    let who = Submitter::current();
    crate::interrupts::run_catching("srun", interrupt::CAUGHT, |rx| async move {
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let io = Io {
            out: &mut stdout.lock(),
            err: &mut stderr.lock(),
            stdin: Some(Box::new(std::io::stdin())),
        };
        run_with(&args, &environ, &who, io, rx).await
    })
}

/// Runs srun with `args` (without the program name), reading signals from `interrupts`;
/// returns the exit code. The tasks' stdin is empty.
pub async fn run_async(
    args: &[String],
    environ: &[(String, String)],
    who: &Submitter,
    out: &mut dyn Write,
    err: &mut dyn Write,
    interrupts: mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let io = Io {
        out,
        err,
        stdin: None,
    };
    run_with(args, environ, who, io, interrupts).await
}

/// srun's own streams.
pub struct Io<'a> {
    /// Where the tasks' stdout goes.
    pub out: &'a mut dyn Write,
    /// Where the tasks' stderr and srun's messages go.
    pub err: &'a mut dyn Write,
    /// What the tasks read (`None`: nothing).
    pub stdin: Option<Box<dyn std::io::Read + Send>>,
}

/// [`run_async`] with srun's stdin forwarded to the tasks.
pub async fn run_with(
    args: &[String],
    environ: &[(String, String)],
    who: &Submitter,
    io: Io<'_>,
    mut interrupts: mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let Io { out, err, stdin } = io;
    let opts = match args::parse(args, environ) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => return print(out, args::HELP),
        Ok(Invocation::Usage) => return print(out, args::USAGE),
        Ok(Invocation::CpuBindHelp) => return print(out, args::CPU_BIND_HELP),
        Ok(Invocation::MpiList) => return print(out, args::MPI_LIST),
        Ok(Invocation::HintHelp) => return print(out, sluice_vocab::hint::HELP),
        // Seen on Slurm 22.05: the help, then exit 255.
        Ok(Invocation::MemBindHelp) => {
            print(out, sluice_vocab::mem_bind::HELP);
            return 255;
        }
        Ok(Invocation::Version) => {
            return print(out, &format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
        }
        Err(ArgsError::Getopt(e)) => {
            let _ = writeln!(err, "{}", e.usage_text("srun", Ambiguity::Listed));
            return 1;
        }
        Err(ArgsError::NoCommand) => {
            let _ = writeln!(err, "srun: fatal: No command given to execute.");
            return 1;
        }
        Err(ArgsError::Opt(jobspec::OptError::CpuBind(e))) => {
            fail(err, &e.to_string());
            let _ = writeln!(err, "srun: fatal: {}", CpuBindError::FATAL);
            return 1;
        }
        Err(ArgsError::Opt(jobspec::OptError::Distribution(e))) => {
            // Slurm's srun adds its general line after a bad plane size, and exits 255.
            fail(err, &e.to_string());
            if e != DistributionError::Invalid {
                fail(err, DistributionError::LAST);
            }
            return 255;
        }
        Err(ArgsError::Opt(
            e @ (jobspec::OptError::MemBind(_)
            | jobspec::OptError::CpuFreq(_)
            | jobspec::OptError::AcctgFreq(_)),
        )) => {
            // Slurm's srun exits 255 for these, the frequency's with a second line.
            fail(err, &e.to_string());
            if matches!(e, jobspec::OptError::CpuFreq(_)) {
                fail(err, sluice_vocab::cpu_freq::CpuFreqError::LAST);
            }
            return 255;
        }
        Err(ArgsError::Opt(e)) if e.is_fatal() => {
            let _ = writeln!(err, "srun: fatal: {e}");
            return 1;
        }
        Err(ArgsError::Opt(e)) if e.is_submit_refusal() => {
            return fail(err, &format!("Unable to allocate resources: {e}"));
        }
        Err(e) => return fail(err, &e.to_string()),
    };
    // -Z: Slurm's srun says so first, then checks the node list.
    let no_alloc = if opts.no_allocate {
        if !opts.job.quiet {
            let _ = writeln!(err, "{}", no_alloc::NOTE);
        }
        match no_alloc::plan(&opts) {
            Ok(plan) => Some(plan),
            Err(e) => {
                for line in e.lines() {
                    fail(err, &line);
                }
                return 1;
            }
        }
    } else {
        None
    };
    if opts.slurmd_debug_capped {
        let _ = writeln!(err, "srun: {}", args::SLURMD_DEBUG_CAPPED);
    }
    if let Some(line) = &opts.compress_unknown {
        jobspec::print_error(err, "srun", line);
    }
    let arbitrary = opts.job.distribution.and_then(|d| d.nodes) == Some(NodeDist::Arbitrary);
    if arbitrary && opts.nodelist.is_empty() {
        return fail(
            err,
            "With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option",
        );
    }
    // --bcast: the executable is read before anything is asked of the controller.
    let path = environ
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    let bcast = match opts.bcast.file(
        &opts.command[0],
        Path::new(&workdir(opts.job.chdir.as_deref(), &who.cwd)),
        path,
    ) {
        Ok(file) => file,
        Err(program) => {
            let _ = writeln!(err, "srun: fatal: Can not execute {program}");
            return 1;
        }
    };
    if opts.step.launch_cmd {
        // Only launch plugins other than launch/slurm print a launch command.
        return fail(err, "--launch-cmd option is invalid with launch/slurm");
    }
    let mut opts = opts;
    let multi_prog = match opts
        .step
        .multi_prog
        .then(|| multi_prog::MultiProg::read(Path::new(&opts.command[0])))
    {
        None => None,
        Some(Ok(m)) => {
            if opts.job.ntasks.is_none() && opts.job.ntasks_per_node.is_none() {
                opts.job.ntasks = m.ntasks();
            }
            Some(m)
        }
        Some(Err(e)) => return fail(err, &e.to_string()),
    };
    // `srun A : B`: a component with a --multi-prog file and no task count runs as many tasks
    // as its file names, as a single step does. Each file is read once, here, for the step too.
    let mut component_progs = Vec::with_capacity(opts.het_components.len());
    for c in &mut opts.het_components {
        let read = c
            .command
            .first()
            .filter(|_| c.step.multi_prog)
            .map(|file| multi_prog::MultiProg::read(Path::new(file)))
            .transpose();
        match read {
            Ok(m) => {
                if let Some(m) = &m
                    && c.job.ntasks.is_none()
                    && c.job.ntasks_per_node.is_none()
                {
                    c.job.ntasks = m.ntasks();
                }
                component_progs.push(m);
            }
            Err(e) => return fail(err, &e.to_string()),
        }
    }
    if opts.step.relative.is_some() && opts.job_id.is_none() && !opts.step.test_only {
        let _ = writeln!(
            err,
            "srun: fatal: --relative option invalid for job allocation request"
        );
        return 1;
    }
    for note in &opts.job.notes {
        jobspec::print_error(err, "srun", note);
    }
    let conf = match SlurmConf::read(&jobspec::conf_path(environ)) {
        Ok(c) => c,
        Err(e) => return fail(err, &e.to_string()),
    };
    let signer = match conf.signer() {
        Ok(signer) => signer,
        Err(e) => return fail(err, &e.to_string()),
    };
    if let Some(plan) = no_alloc {
        let launch = no_alloc::Launch {
            plan,
            conf: &conf,
            signer: &signer,
            bcast,
            multi_prog,
            name: opts
                .job
                .job_name
                .clone()
                .unwrap_or_else(|| command_name(&opts.command)),
            stdin,
        };
        return no_alloc::run(&opts, environ, who, launch, (out, err), &mut interrupts).await;
    }
    // -M a,b: the listed cluster that would start the job soonest (as sbatch picks it).
    let probe_name = opts
        .job
        .job_name
        .clone()
        .unwrap_or_else(|| command_name(&opts.command));
    let probe = opts
        .job
        .to_request(&probe_name, String::new(), who, environ);
    let target = match jobspec::clusters::pick(&conf, &probe).await {
        Ok(t) => t,
        Err(e) => {
            jobspec::print_error(err, "srun", &e.to_string());
            return 1;
        }
    };
    let connected = match &target {
        Some(m) => crate::multicluster::connect(&conf, m).await,
        None => conf.connect_ctld().await,
    };
    let mut ctld = match connected {
        Ok(c) => c,
        Err(CliError::Connect { .. }) => {
            return fail(
                err,
                &format!("Unable to allocate resources: {CONNECT_FAILURE}"),
            );
        }
        Err(e) => return fail(err, &e.to_string()),
    };
    let name = opts
        .job
        .job_name
        .clone()
        .unwrap_or_else(|| command_name(&opts.command));
    if opts.step.test_only {
        let mut req = opts.job.to_request(&name, String::new(), who, environ);
        req.nodelist = opts.nodelist.join(",");
        req.het_components = het_requests(&opts, &name, who, environ);
        return test_only::run(&mut ctld, req, err).await;
    }
    let patience = opts.step.immediate.map(|i| match i {
        Immediate::Now => Duration::ZERO,
        Immediate::Within(secs) => Duration::from_secs(u64::from(secs)),
    });
    let mut het_env: Vec<(String, String)> = Vec::new();
    let (job_id, allocated_here) = match opts.job_id {
        Some(id) => (id, false),
        None => {
            let mut req = opts.job.to_request(&name, String::new(), who, environ);
            // Outside an allocation, -w asks the job for those nodes (its step then runs there).
            req.nodelist = opts.nodelist.join(",");
            // `srun A : B`: srun's own heterogeneous job, one component per part.
            req.het_components = het_requests(&opts, &name, who, environ);
            // srun's tasks need every node: its allocation waits for all (as Slurm's srun).
            req.wait_all_nodes = Some(true);
            let asked = Asked {
                quiet: opts.job.quiet,
                immediate: opts.step.immediate,
            };
            match allocate(&mut ctld, req, asked, err, &mut interrupts).await {
                Ok((id, env)) => {
                    het_env = env;
                    (id, true)
                }
                Err(code) => return code,
            }
        }
    };
    // `A : B` (inside a heterogeneous allocation, or srun's own heterogeneous job): one step
    // across the components, each part with its component's options. --het-group inside an
    // allocation: one step across the components named; outside one srun's own allocation
    // is a single job, and Slurm's srun runs it as such.
    let parts = 1 + u32::try_from(opts.het_components.len()).unwrap_or(0);
    let het_groups = match &opts.het_group {
        _ if parts > 1 => Some((0..parts).collect::<Vec<u32>>()),
        Some(g) if !allocated_here => Some(g.clone()),
        _ => None,
    };
    if let Some(groups) = het_groups {
        // srun's own heterogeneous job: its components' variables came with the grant.
        let mut env_here: Vec<(String, String)> = environ
            .iter()
            .filter(|(k, _)| !het_env.iter().any(|(h, _)| h == k))
            .cloned()
            .collect();
        env_here.extend(het_env);
        let (group_opts, group_progs): (Vec<&args::SrunOpts>, Vec<_>) = if parts > 1 {
            std::iter::once((&*opts, multi_prog.as_ref()))
                .chain(
                    opts.het_components
                        .iter()
                        .zip(component_progs.iter().map(Option::as_ref)),
                )
                .unzip()
        } else {
            (Vec::new(), Vec::new())
        };
        let s = het_step::HetStep {
            opts: &opts,
            environ: &env_here,
            who,
            conf: &conf,
            signer: &signer,
            job_id,
            name: &name,
            bcast,
            stdin,
            patience,
            group_opts,
            multi_prog: multi_prog.as_ref(),
            group_progs,
            end_job: allocated_here,
        };
        return het_step::run(s, &mut ctld, &groups, (out, err), &mut interrupts).await;
    }
    let step_req = step::request(&opts, job_id, &name, !allocated_here);
    let created = if opts.resv_ports.is_some() {
        Err(step::StepFailure::Refused(
            args::RESV_PORTS_REFUSED.to_string(),
        ))
    } else {
        step::create(
            &mut ctld,
            step_req,
            (opts.job.quiet, patience),
            err,
            &mut interrupts,
        )
        .await
    };
    let step = match created {
        Ok(s) => s,
        Err(failure) => {
            if allocated_here {
                let _ = ctld
                    .cancel(CancelRequest {
                        job_ids: vec![job_id],
                        ..Default::default()
                    })
                    .await;
            }
            return match failure {
                step::StepFailure::Refused(text) => fail(
                    err,
                    &format!("Unable to create step for job {job_id}: {text}"),
                ),
                step::StepFailure::Interrupted(_) => 1,
            };
        }
    };
    let alloc = step.allocation.unwrap_or_default();
    let ntasks = match (alloc.ntasks, opts.job.ntasks) {
        (n, _) if n > 0 => n,
        (_, Some(n)) => n,
        _ => u32::try_from(alloc.nodes.len()).unwrap_or(1),
    };
    let node_count = alloc.nodes.len().min(ntasks as usize);
    // The step runs with the group the controller's credential names (the job's), in the
    // run it names.
    let body = step
        .credential
        .as_ref()
        .and_then(sluice_wire::auth::credential::read_unchecked);
    let gid = body.as_ref().map_or(who.gid, |body| body.gid);
    let run = body.as_ref().map_or(0, |body| body.restart_count);
    let names: Vec<String> = alloc.nodes.iter().map(|n| n.name.clone()).collect();
    let step_layout = layout::for_step(
        opts.job.distribution.and_then(|d| d.nodes),
        ntasks,
        &names,
        &opts.nodelist,
        &alloc.tasks_per_node,
    );
    let parts = template::StepParts {
        ids: (job_id, step.step_id),
        gid,
        node_list: &alloc.node_list,
        node_count,
        ntasks,
        name: &name,
        credential: step.credential.clone(),
        layout: &step_layout,
    };
    let mut template = template::step_template(&opts, environ, &conf, who, bcast, parts);
    (template.array_job_id, template.array_task_id) = array_ids(environ, job_id);
    if let Some(m) = &multi_prog
        && let Err(e) = template::task_argvs(&mut template, m, 0, ntasks)
    {
        fail(err, &e.to_string());
        end_step(&mut ctld, (job_id, step.step_id), allocated_here, 1).await;
        return 1;
    }
    let scripts = scripts::Scripts::new(
        &opts,
        &conf,
        environ,
        (job_id, step.step_id),
        &alloc.node_list,
    );
    if let Err(code) = scripts.prolog(out, err).await {
        end_step(&mut ctld, (job_id, step.step_id), allocated_here, code).await;
        return code;
    }
    let stdin = stdin
        .filter(|_| template.stdin_from_srun)
        .map(stdio::read_chunks);
    // --pty: keys go to task 0's terminal as they are typed, until srun returns.
    let _raw = opts.pty.then(tty::Raw::enter).flatten();
    let launch = launch::Step::from_opts(
        &opts,
        &conf,
        template,
        (alloc.nodes, step_layout, ntasks),
        stdin,
        Some(watch::JobWatch::new(ctld.clone(), job_id, run)),
    );
    let (outcome, usage) = launch::run(launch, &signer, out, err, &mut interrupts).await;
    let _ = ctld
        .step_done(StepDoneRequest {
            job_id,
            step_id: step.step_id,
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            end_job: allocated_here,
            usage: usage.map(|u| u.to_proto()),
        })
        .await;
    scripts.epilog(out, err).await;
    outcome.exit_status()
}

/// Reports a step that never ran its tasks (a failed srun prolog, a bad `--multi-prog` file)
/// as ended with `exit_code`, ending the job when srun made it.
pub(super) async fn end_step(
    ctld: &mut CtldClient,
    (job_id, step_id): (u32, u32),
    end_job: bool,
    exit_code: i32,
) {
    let _ = ctld
        .step_done(StepDoneRequest {
            job_id,
            step_id,
            exit_code,
            signal: 0,
            end_job,
            usage: None,
        })
        .await;
}

/// The array job id and index of job `job_id` when srun runs inside that array element (its
/// batch script's `SLURM_ARRAY_*` variables name it), for the `%A`/`%a` of `-o/-e/-i`.
fn array_ids(environ: &[(String, String)], job_id: u32) -> (u32, Option<u32>) {
    let var = |name: &str| {
        environ
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse::<u32>().ok())
    };
    match (
        var("SLURM_JOB_ID"),
        var("SLURM_ARRAY_JOB_ID"),
        var("SLURM_ARRAY_TASK_ID"),
    ) {
        (Some(id), Some(array), Some(index)) if id == job_id => (array, Some(index)),
        _ => (0, None),
    }
}

fn print(out: &mut dyn Write, text: &str) -> i32 {
    let _ = out.write_all(text.as_bytes());
    0
}

fn fail(err: &mut dyn Write, msg: &str) -> i32 {
    jobspec::print_error(err, "srun", msg);
    1
}

/// The job requests of `srun A : B`'s components after the first (none without `:`), named
/// `name`: each with its own options and `-w`, waiting for all its nodes as srun's tasks need.
fn het_requests(
    opts: &args::SrunOpts,
    name: &str,
    who: &Submitter,
    environ: &[(String, String)],
) -> Vec<sluice_wire::proto::SubmitJobRequest> {
    opts.het_components
        .iter()
        .map(|o| {
            let mut r = o.job.to_request(name, String::new(), who, environ);
            r.nodelist = o.nodelist.join(",");
            r.wait_all_nodes = Some(true);
            r
        })
        .collect()
}

/// The job's default name: the command's file name.
fn command_name(command: &[String]) -> String {
    command
        .first()
        .and_then(|c| std::path::Path::new(c).file_name())
        .map_or_else(|| "srun".to_string(), |n| n.to_string_lossy().into_owned())
}

/// How long `-I` without a value lets the allocation wait (Slurm's srun gives it a second).
const IMMEDIATE: Duration = Duration::from_secs(1);

/// How srun waits for its allocation.
#[derive(Debug, Clone, Copy)]
struct Asked {
    /// `-Q`.
    quiet: bool,
    /// `-I`.
    immediate: Option<Immediate>,
}

/// Sleeps until `at`, for ever when there is none.
async fn until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// What srun (as sbatch) says when the controller asks it to try again later.
const BUSY_RETRYING: &str = "Slurm temporarily unable to accept job, sleeping and retrying.";

/// Whether the controller asks to try again later (`EAGAIN`).
fn is_busy(status: &tonic::Status) -> bool {
    status
        .message()
        .contains("Resource temporarily unavailable")
}

/// Asks for an allocation and waits for it; prints Slurm's waiting lines. `Err` is the exit
/// code after the error was printed.
async fn allocate(
    ctld: &mut CtldClient,
    req: sluice_wire::proto::SubmitJobRequest,
    asked: Asked,
    err: &mut dyn Write,
    interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
) -> Result<(u32, Vec<(String, String)>), i32> {
    // `-I` alone: granted at once (within a second, as Slurm's srun waits) or not at all, and
    // quietly; `-I<secs>`: within that many seconds.
    let quiet = asked.quiet || asked.immediate == Some(Immediate::Now);
    let deadline = asked.immediate.map(|i| {
        tokio::time::Instant::now()
            + match i {
                Immediate::Now => IMMEDIATE,
                Immediate::Within(secs) => Duration::from_secs(u64::from(secs)),
            }
    });
    let unable = |err: &mut dyn Write, text: &str| {
        fail(err, &format!("Unable to allocate resources: {text}"))
    };
    let mut retries = 0;
    let mut stream = loop {
        match ctld.allocate(req.clone()).await {
            Ok(s) => break s.into_inner(),
            // EAGAIN (no job ids leased yet, MaxJobCount): Slurm's srun waits and asks again,
            // saying so the first time, as sbatch does.
            Err(status) if is_busy(&status) && retries < MAX_RETRIES => {
                if retries == 0 {
                    jobspec::print_error(err, "srun", BUSY_RETRYING);
                }
                retries += 1;
                let pause = tokio::time::sleep(std::time::Duration::from_secs(retries));
                tokio::pin!(pause);
                loop {
                    tokio::select! {
                        () = &mut pause => break,
                        Some(sig) = interrupts.recv() => if sig.ends_wait() {
                            return Err(1);
                        },
                    }
                }
            }
            Err(status) => {
                crate::rpc_error::print_note(err, "srun", &status);
                return Err(unable(err, &status_text(&status, Asker::Jobs)));
            }
        }
    };
    let mut job_id = None;
    let mut waited = false;
    loop {
        tokio::select! {
            msg = stream.message() => match msg {
                Ok(Some(ev)) => {
                    job_id = Some(ev.job_id);
                    match ev.event {
                        Some(allocation_event::Event::Queued(_)) if !waited => {
                            waited = true;
                            if !quiet {
                                let _ = writeln!(err, "srun: job {} queued and waiting for resources", ev.job_id);
                            }
                        }
                        Some(allocation_event::Event::Granted(alloc)) => {
                            if waited && !quiet {
                                let _ = writeln!(err, "srun: job {} has been allocated resources", ev.job_id);
                            }
                            let het = alloc.het_env.into_iter().map(|v| (v.name, v.value)).collect();
                            return Ok((ev.job_id, het));
                        }
                        Some(allocation_event::Event::Failed(text)) => return Err(unable(err, &text)),
                        _ => {}
                    }
                }
                Ok(None) => return Err(unable(err, CONNECT_FAILURE)),
                Err(status) => return Err(unable(err, &status_text(&status, Asker::Jobs))),
            },
            () = until(deadline) => {
                let why = match asked.immediate {
                    Some(Immediate::Now) => "Requested nodes are busy",
                    _ => "Connection timed out",
                };
                unable(err, why);
                if let Some(id) = job_id {
                    let _ = ctld.cancel(CancelRequest { job_ids: vec![id], ..Default::default() }).await;
                    let _ = writeln!(err, "srun: Job allocation {id} has been revoked.");
                }
                return Err(1);
            }
            Some(sig) = interrupts.recv() => {
                if !sig.ends_wait() {
                    continue;
                }
                if let Some(id) = job_id {
                    let _ = ctld.cancel(CancelRequest { job_ids: vec![id], ..Default::default() }).await;
                    let _ = writeln!(err, "srun: Job allocation {id} has been revoked.");
                }
                return Err(1);
            }
        }
    }
}
