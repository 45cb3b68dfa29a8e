//! `RunStep`: this node's tasks of an srun step, each under its supervisor (`sluice-stepd
//! --task`, see [`crate::supervise_task`]), so it outlives a restart of this daemon (see
//! [`crate::step_adopt`]). Each task's stdout and stderr stream back as chunks the moment they
//! are read; the last message carries every task's exit and what the tasks used here (see
//! [`crate::acct`]). When srun goes away (the response stream is dropped) the tasks are
//! killed. Their stdin, files and CPU binding: [`crate::step_io`],
//! [`crate::stdin`], [`crate::affinity`].

use sluice_wire::jobacct::StepUsageWire;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;

use nix::sys::signal::Signal;
use sluice_vocab::cpu_bind::CpuBind;
use sluice_vocab::cpu_freq::CpuFreq;
use sluice_vocab::jobacct::{StepUsage, TaskUsage};
use sluice_vocab::mem_bind::MemBind;
use sluice_wire::proto::{AttachedStep, RunStepRequest, StepOutput, TaskExit};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_stream::wrappers::ReceiverStream;

use crate::acct::{self, Tracker};
use crate::affinity;
use crate::bcast;
use crate::cpufreq;
use crate::env::{self, Env};
use crate::error::NodedError;
use crate::job_scripts;
use crate::jobs::{Part, signal_group};
use crate::mempolicy;
use crate::node::Node;
use crate::pty;
use crate::spawn::TaskStdin;
use crate::spawn::{self, RunAs, TaskIo};
use crate::stdin::{Pipes, Waiting};
use crate::step_adopt;
use crate::step_debug::{self, StepDebug};
use crate::step_io;
use crate::supervise::Ended;

/// The stream of a step's output, as the service returns it.
pub type OutputStream = ReceiverStream<Result<StepOutput, tonic::Status>>;

/// Messages buffered towards srun before readers wait (and tasks block on full pipes).
const CHANNEL_DEPTH: usize = 64;
/// Largest chunk sent in one message.
const CHUNK: usize = 16 * 1024;

/// Starts `req`'s tasks on this node (each after `TaskProlog`, whose `print` lines go first to
/// its output; `TaskEpilog` runs after it) and returns their output stream.
pub async fn run(node: &Arc<Node>, mut req: RunStepRequest) -> Result<OutputStream, NodedError> {
    if req.argv.is_empty() || req.tasks_here == 0 {
        return Err(NodedError::BadRequest {
            why: format!(
                "step {}.{} has no command or no task here",
                req.job_id, req.step_id
            ),
        });
    }
    let (job, step) = (req.job_id, req.step_id);
    // The run the step belongs to, from its (already checked) credential.
    let run = req
        .credential
        .as_ref()
        .and_then(sluice_wire::auth::credential::read_unchecked)
        .map_or(0, |body| body.restart_count);
    node.jobs.note_run(job, run);
    let run_as = RunAs::for_job(req.uid, req.gid);
    let dir = spawn::working_dir(&req.workdir);
    let mut tasks = plan(node, &req)?;
    if let Some(file) = req.bcast.take() {
        // srun --bcast: the tasks run this node's copy of the executable.
        let env = tasks.first().map(|t| t.env.clone()).unwrap_or_default();
        let at = bcast::dest_path(&req, &file.dest, &dir, &node.config.node_name);
        let copy = bcast::place(&file, &at, run_as, &dir, &env)
            .await
            .map_err(|why| NodedError::BadRequest { why })?;
        if let Some(program) = req.argv.first_mut() {
            *program = copy.display().to_string();
        }
        if file.send_libs {
            for t in &mut tasks {
                let path = bcast::library_path(&copy, &t.env);
                t.env.insert("LD_LIBRARY_PATH".to_string(), path);
            }
        }
    }
    let gather = acct::for_step(node.config.jobacct, req.acctg_task_secs);
    let freq = cpu_freq(&req, &tasks)?;
    let ios: Vec<TaskIo> = tasks.iter().map(|t| t.io.clone()).collect();
    let files = step_io::files_to_truncate(&req, &ios);
    if let (false, Some(first)) = (files.is_empty(), tasks.first()) {
        let status = spawn::truncate_command(run_as, &dir, &first.env, &files)
            .status()
            .await;
        // A file that cannot be made is reported by the task that opens it.
        if !status.is_ok_and(|s| s.success()) {
            tracing::warn!(job, step, "cannot empty the step's output files {files:?}");
        }
    }
    let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
    let layout = AttachedStep {
        node_list: req.node_list.clone(),
        node_index: req.node_index,
        ntasks: req.ntasks,
        first_task: req.first_task,
        tasks_here: req.tasks_here,
        pty: req.pty && req.first_task == 0,
        task_ranks: req.task_ranks.clone(),
        step_layout: req.step_layout.clone(),
    };
    node.attach.open(job, step, req.uid, layout);
    let mut readers = JoinSet::new();
    let mut waits = JoinSet::new();
    let mut groups = Vec::new();
    let mut stdin = Pipes::default();
    let debug = StepDebug::new(req.slurmd_debug, &node.config.node_name, &tx);
    if let (Some(d), Some(first)) = (&debug, tasks.first()) {
        d.line(first.rank, &format!("starting {} tasks", tasks.len()))
            .await;
    }
    for task in tasks {
        let rank = task.rank;
        let mut env = task.env;
        let printed = job_scripts::run_step_task_prolog(
            node,
            own_program(&req.task_prolog),
            &mut env,
            &dir,
            run_as,
        )
        .await;
        let spawned = match printed {
            Ok(lines) => {
                for line in lines {
                    let msg = StepOutput {
                        task: rank,
                        data: format!("{line}\n").into_bytes(),
                        injected: true,
                        ..Default::default()
                    };
                    node.attach.publish(job, step, &msg);
                    let _ = tx.try_send(Ok(msg));
                }
                let files = step_adopt::TaskFiles::new(node, job, step, rank);
                files.clear();
                let mut cmd = spawn::step_command(
                    files.supervisor(node, run),
                    run_as,
                    &dir,
                    &env,
                    (task_argv(&req, rank), &task.io),
                );
                match on_terminal(&mut cmd, &task.io, &req) {
                    Ok(master) => {
                        if master.is_some() {
                            stdin.tty = master;
                        }
                        mempolicy::spawn_with(&mut cmd, task.mems.as_ref(), |cmd| {
                            affinity::spawn_bound(cmd, task.cpus.as_deref())
                        })
                    }
                    Err(e) => Err(e),
                }
            }
            Err(why) => Err(std::io::Error::other(why)),
        };
        let mut child = match spawned {
            Ok(child) => child,
            Err(source) => {
                for pgid in &groups {
                    signal_group(*pgid, Some(Signal::SIGKILL));
                }
                node.jobs.remove_part(job, Part::Step(step));
                node.attach.close(job, step);
                return Err(NodedError::Spawn {
                    job_id: job,
                    source,
                });
            }
        };
        let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        if let Some(d) = &debug {
            d.line(rank, &step_debug::started(rank, pgid, chrono::Local::now()))
                .await;
        }
        groups.push(pgid);
        node.jobs.add_group(job, Part::Step(step), pgid);
        if let Some(pipe) = child.stdin.take() {
            stdin.pipes.push((rank, Box::new(pipe)));
        }
        let to = Readers {
            node: Arc::clone(node),
            job,
            step,
            tx: tx.clone(),
        };
        if task.io.stdin == TaskStdin::Terminal {
            // The terminal's master, written with srun's input (its supervisor copies what the
            // task writes to its stdout, read below).
            match terminal_writer(stdin.tty.as_ref()) {
                Ok(writer) => stdin.pipes.push((rank, Box::new(writer))),
                Err(e) => tracing::error!(job, step, "cannot use the task's terminal: {e}"),
            }
        }
        if let Some(out) = child.stdout.take() {
            readers.spawn(forward(out, rank, false, to.clone()));
        }
        if let Some(err) = child.stderr.take() {
            readers.spawn(forward(err, rank, true, to));
        }
        let tracker = Tracker::start(&gather, pgid, rank, req.node_index);
        if let Some(t) = &tracker {
            let step_no = i32::try_from(step).unwrap_or(i32::MAX);
            node.live.add(job, step_no, req.uid, &req.node_list, t);
        }
        let own_epilog = own_program(&req.task_epilog).map(Path::to_path_buf);
        let epilog =
            (node.config.prolog.task_epilog.is_some() || own_epilog.is_some()).then(|| {
                let dir = dir.clone();
                (Arc::clone(node), env, dir)
            });
        let files = step_adopt::TaskFiles::new(node, job, step, rank);
        let debug = debug.clone();
        waits.spawn(async move {
            // The last sample sees the exited supervisor (its reaped task's times included)
            // before it is reaped.
            acct::exited(pgid).await;
            let usage = tracker.map(Tracker::finish);
            let supervisor = child.wait().await;
            // The task's own status, as its supervisor left it; the supervisor's when it has
            // none (killed with the task, by SIGKILL).
            let status = match files.status() {
                Some(ended) => Ok(ended),
                None => supervisor.map(|s| {
                    let (exit_code, signal) = spawn::exit_parts(s);
                    Ended { exit_code, signal }
                }),
            };
            files.clear();
            if let (Some(d), Ok(e)) = (&debug, &status) {
                d.line(rank, &step_debug::ended(rank, pgid, e.exit_code, e.signal))
                    .await;
            }
            if let Some((node, env, dir)) = epilog {
                let own = own_epilog.as_deref();
                job_scripts::run_step_task_epilog(&node, own, job, &env, (&dir, run_as)).await;
            }
            (rank, status, usage)
        });
    }
    if req.stdin_from_srun {
        let waiting = Waiting {
            uid: req.uid,
            pipes: stdin,
        };
        node.stdin.register(job, step, waiting);
    }
    tracing::info!(job, step, tasks = req.tasks_here, "step tasks started");
    tokio::spawn(supervise(
        Arc::clone(node),
        job,
        step,
        groups,
        readers,
        waits,
        tx,
        freq,
    ));
    Ok(ReceiverStream::new(rx))
}

/// Task `rank`'s command line: its own under `srun --multi-prog`, else the step's.
fn task_argv(req: &RunStepRequest, rank: u32) -> &[String] {
    req.task_argv
        .iter()
        .find(|t| t.task == rank && !t.argv.is_empty())
        .map_or(req.argv.as_slice(), |t| t.argv.as_slice())
}

/// srun's `--task-prolog` or `--task-epilog` (`""`: none).
fn own_program(path: &str) -> Option<&Path> {
    (!path.is_empty()).then(|| Path::new(path))
}

/// Hands `cmd` (the task's supervisor) a new pseudo-terminal when `io` asks for one (`srun
/// --pty`); returns the terminal's master, which this daemon keeps to write srun's input to
/// and to resize (the supervisor holds its own copy, so the terminal outlives this daemon).
fn on_terminal(
    cmd: &mut tokio::process::Command,
    io: &TaskIo,
    req: &RunStepRequest,
) -> std::io::Result<Option<OwnedFd>> {
    if io.stdin != TaskStdin::Terminal {
        return Ok(None);
    }
    let size = req.window.unwrap_or_default();
    let tty = pty::open(size.rows, size.cols)?;
    pty::supervised_on(cmd, &tty)?;
    Ok(Some(tty.master))
}

/// A writer of a terminal's master.
fn terminal_writer(master: Option<&OwnedFd>) -> std::io::Result<tokio::fs::File> {
    let master = master.ok_or_else(|| std::io::Error::other("no terminal was opened"))?;
    Ok(tokio::fs::File::from_std(std::fs::File::from(
        master.try_clone()?,
    )))
}

/// One task ready to start.
struct Planned {
    rank: u32,
    io: TaskIo,
    /// The CPUs it is bound to (`None`: not bound).
    cpus: Option<Vec<u32>>,
    /// Its memory policy (`None`: the daemon's, the default).
    mems: Option<mempolicy::Policy>,
    env: Env,
}

/// Every task of this node: its environment, streams and CPUs, all checked before any starts.
fn plan(node: &Node, req: &RunStepRequest) -> Result<Vec<Planned>, NodedError> {
    let bad = |why: String| NodedError::BadRequest { why };
    let bind = match req.cpu_bind.as_str() {
        "" => None,
        spec => Some(CpuBind::parse(spec).map_err(|e| bad(e.to_string()))?),
    };
    let mem_bind = match req.mem_bind.as_str() {
        "" => None,
        spec => Some(MemBind::parse(spec).map_err(|e| bad(e.to_string()))?),
    };
    let avail = affinity::available_cpus();
    let numa = mempolicy::numa_nodes(Path::new("/"), &avail);
    let host = node.config.node_name.as_str();
    let mut tasks = Vec::new();
    for local in 0..req.tasks_here {
        let rank = env::task_rank(req, local);
        let mut env = env::step_env(req, node.facts(), rank, local);
        let mut io = step_io::task_io(req, host, rank);
        let mut cpus = None;
        if let Some(b) = &bind {
            cpus = b
                .cpus_for(local, req.cpus_per_task, &avail)
                .map_err(|why| bad(format!("--cpu-bind={}: {why}", req.cpu_bind)))?;
            env.extend(b.env().into_iter().map(|(k, v)| (k.to_string(), v)));
            if b.verbose {
                let mask = cpus.as_deref().unwrap_or(&avail);
                io.reports.push(b.verbose_line(host, rank, local, mask));
            }
        }
        let mut mems = None;
        if let Some(m) = &mem_bind {
            let policy = m
                .policy_for(local, cpus.as_deref(), &numa)
                .map_err(|why| bad(format!("--mem-bind={}: {why}", req.mem_bind)))?;
            env.extend(m.env().into_iter().map(|(k, v)| (k.to_string(), v)));
            if m.verbose {
                let nodes = policy.as_ref().map(|p| p.1.clone()).unwrap_or_default();
                io.reports.push(m.verbose_line(host, rank, local, &nodes));
            }
            mems = policy.map(|(mode, nodes)| mempolicy::Policy { mode, nodes });
        }
        tasks.push(Planned {
            rank,
            io,
            cpus,
            mems,
            env,
        });
    }
    Ok(tasks)
}

type Waits = JoinSet<(u32, std::io::Result<Ended>, Option<TaskUsage>)>;

/// `--cpu-freq`: sets the frequency of the CPUs the step's tasks are bound to (every CPU of
/// this daemon when they are not bound); returns the settings to put back at the step's end.
fn cpu_freq(req: &RunStepRequest, tasks: &[Planned]) -> Result<Vec<cpufreq::Saved>, NodedError> {
    if req.cpu_freq.is_empty() {
        return Ok(Vec::new());
    }
    let freq =
        CpuFreq::parse(&req.cpu_freq).map_err(|e| NodedError::BadRequest { why: e.to_string() })?;
    let mut cpus: Vec<u32> = tasks
        .iter()
        .flat_map(|t| t.cpus.clone().unwrap_or_else(affinity::available_cpus))
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpufreq::apply(Path::new("/"), &cpus, &freq))
}

#[allow(clippy::too_many_arguments)]
async fn supervise(
    node: Arc<Node>,
    job: u32,
    step: u32,
    groups: Vec<i32>,
    mut readers: JoinSet<()>,
    mut waits: Waits,
    tx: mpsc::Sender<Result<StepOutput, tonic::Status>>,
    freq: Vec<cpufreq::Saved>,
) {
    let mut exits = Vec::new();
    let mut usages = Vec::new();
    let mut cancelled = false;
    loop {
        tokio::select! {
            done = waits.join_next() => match done {
                None => break,
                Some(Ok((rank, status, usage))) => {
                    let exit = task_exit(rank, status);
                    // srun learns of each end as it happens (for -K and -W); attached readers
                    // only of the step's end.
                    let ended = StepOutput {
                        task: rank,
                        ended: vec![exit],
                        ..Default::default()
                    };
                    let _ = tx.send(Ok(ended)).await;
                    exits.push(exit);
                    usages.extend(usage);
                }
                Some(Err(e)) => tracing::error!(job, step, "task waiter failed: {e}"),
            },
            _ = tx.closed(), if !cancelled => {
                cancelled = true;
                tracing::info!(job, step, "srun went away: killing the step's tasks");
                for pgid in &groups {
                    signal_group(*pgid, Some(Signal::SIGKILL));
                }
            }
        }
    }
    // Whatever the tasks left running ends with the step, which also closes their pipes.
    for pgid in &groups {
        signal_group(*pgid, Some(Signal::SIGKILL));
    }
    while readers.join_next().await.is_some() {}
    cpufreq::restore(&freq);
    node.jobs.remove_part(job, Part::Step(step));
    // Pipes srun never came for close with the step.
    node.stdin.remove(job, step);
    exits.sort_by_key(|e| e.task);
    tracing::info!(job, step, "step tasks ended");
    usages.sort_by_key(|u| u.task);
    let last = StepOutput {
        exits,
        usage: StepUsage::from_tasks(&usages).map(|u| u.to_proto()),
        ..Default::default()
    };
    node.attach.publish(job, step, &last);
    node.attach.close(job, step);
    let _ = tx.send(Ok(last)).await;
}

fn task_exit(rank: u32, status: std::io::Result<Ended>) -> TaskExit {
    let (exit_code, signal) = match status {
        Ok(e) => (e.exit_code, e.signal),
        Err(_) => (1, 0),
    };
    TaskExit {
        task: rank,
        exit_code,
        signal,
    }
}

/// Where a task's output goes: srun's stream, and the step's attached readers.
#[derive(Clone)]
struct Readers {
    node: Arc<Node>,
    job: u32,
    step: u32,
    tx: mpsc::Sender<Result<StepOutput, tonic::Status>>,
}

async fn forward(mut pipe: impl AsyncRead + Unpin, task: u32, stderr: bool, to: Readers) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let msg = StepOutput {
                    task,
                    data: buf[..n].to_vec(),
                    stderr,
                    ..Default::default()
                };
                to.node.attach.publish(to.job, to.step, &msg);
                if to.tx.send(Ok(msg)).await.is_err() {
                    // srun is gone; keep draining so no task blocks on a full pipe.
                    continue;
                }
            }
        }
    }
}
