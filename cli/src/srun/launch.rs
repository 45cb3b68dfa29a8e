//! Running a step: `RunStep` on every node of the step at once, output printed as it arrives,
//! task exits reported as srun reports them, Ctrl-C and SIGTERM forwarded to the tasks. A node
//! daemon that goes away mid-step (restarted) is waited for: its tasks run on under their
//! supervisors, which keep their output, and once it is back it gives that output from the
//! bytes srun has on, then their exits (`AwaitStep`); a node the controller set DOWN, or a job
//! whose run ended, ends the wait ([`super::watch`]).

use std::io::Write;
use std::time::{Duration, Instant};

use sluice_vocab::jobacct::StepUsage;
use sluice_wire::auth::Signer;
use sluice_wire::client::{NodedClient, connect_lazy};
use sluice_wire::proto::{NodeAddr, RunStepRequest, SignalJobRequest, SignalKind, TaskExit};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::Interrupt;
use super::interrupt::{Action, Interrupts, Passed, other_signal};
use super::layout::{NodeTasks, Outcome, exit_messages, task_list};
use super::node_stream::{Event, stream_node};
use super::output::{TaskIo, TaskOutput, io_of};
use super::watch::{JobWatch, Verdict};
use super::{stdio, tty};
use crate::interrupts::sig;
use crate::jobspec;

/// A step ready to launch.
#[derive(Debug)]
pub struct Step {
    /// What every node is sent; node-specific fields are filled per node.
    pub template: RunStepRequest,
    /// The step's nodes, in step order.
    pub nodes: Vec<NodeAddr>,
    /// Which tasks run where.
    pub layout: Vec<NodeTasks>,
    /// How the tasks' output is shown (`-l`, `-u`, `-o/-e <task>`): one entry for a step of
    /// one job, one per component (by first rank) for a step across a heterogeneous job's.
    pub io: Vec<TaskIo>,
    /// srun's stdin, when it is forwarded and read.
    pub stdin: Option<mpsc::Receiver<Vec<u8>>>,
    /// `-X` and `--quit-on-interrupt`.
    pub interrupts: Interrupts,
    /// When srun ends the step itself (`-K`, `-W`).
    pub ending: Ending,
    /// `-T`: launch requests in flight at once.
    pub threads: u32,
    /// The controller, asked about the job and a node whose daemon went away.
    pub watch: Option<JobWatch>,
    /// A step across a heterogeneous job's components (`--het-group`): for each node (by its
    /// index in the step), the component's job and step and the credential for it; empty
    /// for a step of one job (the template's).
    pub parts: Vec<NodePart>,
    /// What the nodes of each component of such a step are sent instead of the template
    /// (its command, environment and streams: its own options), by [`NodePart::component`].
    pub components: Vec<RunStepRequest>,
}

/// Which job's step a node of a step across a heterogeneous job's components runs.
#[derive(Debug, Clone, PartialEq)]
pub struct NodePart {
    /// The component's job id.
    pub job_id: u32,
    /// Its step id.
    pub step_id: u32,
    /// The controller's credential for that step.
    pub credential: Option<sluice_wire::proto::JobCredential>,
    /// The component's index in [`Step::components`].
    pub component: usize,
}

impl Step {
    /// The launch of a step of `ntasks` tasks on `nodes` laid out as `layout`, with `opts`'s output, input,
    /// interrupt and ending settings (and slurm.conf's defaults for them); `watch` is the
    /// controller's view of the job, `None` for a step without a job (`-Z`).
    pub fn from_opts(
        opts: &super::args::SrunOpts,
        conf: &crate::slurm_conf::SlurmConf,
        mut template: RunStepRequest,
        (nodes, layout, ntasks): (Vec<NodeAddr>, Vec<NodeTasks>, u32),
        stdin: Option<mpsc::Receiver<Vec<u8>>>,
        watch: Option<JobWatch>,
    ) -> Self {
        template.step_layout = layout.iter().map(NodeTasks::to_wire).collect();
        Self {
            template,
            layout,
            nodes,
            io: vec![TaskIo::of(opts, 0, ntasks)],
            stdin,
            interrupts: Interrupts::new(opts.disable_status, opts.quit_on_interrupt),
            ending: Ending {
                kill_on_bad_exit: opts.step.kill_on_bad_exit(conf.srun.kill_on_bad_exit),
                wait: opts.step.wait_after_first(conf.srun.wait_time),
                kill_wait: conf.srun.kill_wait,
            },
            threads: opts.step.threads.unwrap_or(super::step_opts::MAX_THREADS),
            watch,
            parts: Vec::new(),
            components: Vec::new(),
        }
    }
}

/// When srun ends the step before its tasks all ended by themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ending {
    /// `-K` (or `KillOnBadExit=1`): once a task exits non-zero or is killed.
    pub kill_on_bad_exit: bool,
    /// `-W` (or `WaitTime`): this many seconds after the first task ended.
    pub wait: Option<u32>,
    /// `KillWait`: seconds between srun's SIGTERM and its SIGKILL.
    pub kill_wait: u32,
}

/// Where srun is in ending the step itself.
#[derive(Debug, Default)]
struct Terminating {
    /// When the first task ended plus `-W` (set once).
    wait_until: Option<tokio::time::Instant>,
    /// When SIGKILL follows the SIGTERM srun sent (until it is sent).
    kill_at: Option<tokio::time::Instant>,
    /// srun has ended the step.
    ended: bool,
}

/// Sleeps until `at`, for ever when there is none.
async fn until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Runs the step to its end; returns how its tasks ended and what they used (the nodes'
/// usage merged, when measured).
pub async fn run(
    step: Step,
    signer: &Signer,
    out: &mut dyn Write,
    err: &mut dyn Write,
    interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
) -> (Outcome, Option<StepUsage>) {
    let Step {
        template,
        nodes,
        layout,
        io,
        stdin,
        interrupts: mut policy,
        ending,
        threads,
        watch,
        parts,
        components,
    } = step;
    let launches = std::sync::Arc::new(tokio::sync::Semaphore::new(threads.max(1) as usize));
    let mut ends = Terminating::default();
    let step_name = format!("StepId={}.{}", template.job_id, template.step_id);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut clients: Vec<Option<NodedClient>> = Vec::new();
    // The job and step each client's tasks belong to (for signals).
    let mut targets: Vec<(u32, u32)> = Vec::new();
    let mut handles: Vec<JoinHandle<()>> = Vec::new();
    let mut stdin_slots = Vec::new();
    let mut outcome = Outcome::default();
    let mut usage: Option<StepUsage> = None;
    for place in &layout {
        let node = &nodes[place.node];
        let host = if node.addr.is_empty() {
            &node.name
        } else {
            &node.addr
        };
        // Port 0: a node the controller does not know (`srun -Z -w` names any host).
        let port = u16::try_from(node.port).unwrap_or(0);
        let client = (port != 0)
            .then(|| connect_lazy(host, port, signer.clone()).ok())
            .flatten()
            .map(NodedClient::new);
        // A component's node is sent the component's request (with the step's layout).
        let part = parts.get(place.node);
        let mut req = match part.and_then(|p| components.get(p.component)) {
            Some(own) => RunStepRequest {
                step_layout: template.step_layout.clone(),
                ..own.clone()
            },
            None => template.clone(),
        };
        req.node_index = u32::try_from(place.node).unwrap_or(u32::MAX);
        req.first_task = place.first();
        req.tasks_here = place.count();
        req.task_ranks = place.listed_ranks();
        if let Some(part) = part {
            req.job_id = part.job_id;
            req.step_id = part.step_id;
            req.credential.clone_from(&part.credential);
        }
        targets.push((req.job_id, req.step_id));
        // --multi-prog: each node gets its own tasks' command lines.
        req.task_argv.retain(|t| place.runs(t.task));
        let tx = tx.clone();
        let index = place.node;
        let stream_client = client.clone();
        let watched = watch.clone().map(|w| (w, node.name.clone()));
        let slot = stdio::node_reads(&req, place).then(|| {
            let (slot, waiting) = oneshot::channel();
            stdin_slots.push(waiting);
            slot
        });
        let launches = std::sync::Arc::clone(&launches);
        handles.push(tokio::spawn(async move {
            stream_node(index, stream_client, req, &tx, slot, &launches, watched).await;
            let _ = tx.send(Event::Closed { node: index });
        }));
        clients.push(client);
    }
    drop(tx);
    let (windows, window_changes) = mpsc::unbounded_channel();
    if !stdin_slots.is_empty() {
        tokio::spawn(stdio::feed(
            stdin_slots,
            stdin,
            window_changes,
            template.window,
        ));
    }
    let ntasks = layout.iter().map(NodeTasks::count).sum();
    let mut exited: Vec<TaskExit> = Vec::new();
    let mut cancelled = false;
    let mut open = layout.len();
    let mut output = TaskOutput::per_component(out, err, ntasks, &io);
    while open > 0 {
        tokio::select! {
            event = rx.recv() => match event {
                Some(Event::Output { task, stderr, data }) => {
                    if io_of(&io, task).is_none_or(|c| c.shows(task, stderr)) {
                        let _ = output.write(task, stderr, &data);
                    }
                }
                Some(Event::Exits { node, exits, usage: here }) => {
                    match (&mut usage, here) {
                        (Some(u), Some(here)) => u.merge(&here),
                        (u @ None, here) => *u = here.map(|h| *h),
                        (Some(_), None) => {}
                    }
                    let exits: Vec<TaskExit> = exits
                        .into_iter()
                        .filter(|e| !exited.iter().any(|x| x.task == e.task))
                        .collect();
                    for e in &exits {
                        outcome.add(e);
                    }
                    for line in exit_messages(&nodes[node].name, &exits, cancelled) {
                        jobspec::print_error(output_err(&mut output), "srun", &line);
                    }
                    let bad = exits.iter().any(|e| e.exit_code != 0 || e.signal != 0);
                    exited.extend(exits);
                    if !ends.ended && !cancelled {
                        if ending.kill_on_bad_exit && bad {
                            terminate(&mut output, &step_name, ending, &mut ends);
                            signal_all(&clients, &targets, sig::TERM).await;
                        } else if let (None, Some(secs)) = (ends.wait_until, ending.wait) {
                            ends.wait_until = Some(
                                tokio::time::Instant::now() + Duration::from_secs(u64::from(secs)),
                            );
                        }
                    }
                }
                Some(Event::Failed { node, text }) => {
                    outcome.exit_code = outcome.exit_code.max(1);
                    let msg = format!(
                        "Task launch for {step_name} failed on node {}: {text}",
                        nodes[node].name
                    );
                    jobspec::print_error(output_err(&mut output), "srun", &msg);
                }
                Some(Event::Lost { node, text }) => {
                    let msg = format!(
                        "{}: lost the connection to the node daemon ({text}); {step_name}'s tasks there run on, waiting for it",
                        nodes[node].name
                    );
                    jobspec::print_error(output_err(&mut output), "srun", &msg);
                }
                Some(Event::Back { node }) => {
                    let _ = writeln!(
                        output_err(&mut output),
                        "srun: {}: node daemon back; the tasks' output while it was away follows",
                        nodes[node].name
                    );
                }
                Some(Event::Gone { node, text }) => {
                    outcome.exit_code = outcome.exit_code.max(1);
                    let msg = format!("{}: {step_name}'s tasks are lost: {text}", nodes[node].name);
                    jobspec::print_error(output_err(&mut output), "srun", &msg);
                }
                Some(Event::Abandoned { node, verdict }) => {
                    outcome.exit_code = outcome.exit_code.max(1);
                    let name = &nodes[node].name;
                    let msg = match verdict {
                        Verdict::NodeDown | Verdict::Wait => format!("Node failure on {name}"),
                        Verdict::RunOver(state) => format!(
                            "{step_name} aborted: job {} is {} (its tasks on {name} are lost)",
                            template.job_id,
                            state.long_name()
                        ),
                    };
                    jobspec::print_error(output_err(&mut output), "srun", &msg);
                }
                Some(Event::Closed { node }) => {
                    open -= 1;
                    let place = layout.iter().find(|p| p.node == node);
                    let reported = exited.iter().filter(|e| place.is_some_and(|p| {
                        p.runs(e.task)
                    })).count();
                    if place.is_some_and(|p| reported < p.ranks.len()) {
                        outcome.exit_code = outcome.exit_code.max(1);
                    }
                }
                None => break,
            },
            () = until(ends.wait_until), if !ends.ended && open > 0 => {
                let e = output_err(&mut output);
                let _ = writeln!(e, "srun: First task exited {}s ago", ending.wait.unwrap_or(0));
                print_status(e, &step_name, &layout, &exited);
                terminate(&mut output, &step_name, ending, &mut ends);
                signal_all(&clients, &targets, sig::TERM).await;
            }
            () = until(ends.kill_at), if ends.kill_at.is_some() => {
                ends.kill_at = None;
                signal_all(&clients, &targets, sig::KILL).await;
            }
            Some(got) = interrupts.recv() => {
                let action = match got {
                    Interrupt::Int => policy.on_interrupt(Instant::now()),
                    Interrupt::Term => {
                        cancelled = true;
                        signal_all(&clients, &targets, sig::TERM).await;
                        continue;
                    }
                    Interrupt::Other(n) => {
                        match other_signal(n) {
                            Passed::Forward => signal_all(&clients, &targets, n).await,
                            Passed::End => {
                                if n == sig::QUIT {
                                    let _ = writeln!(output_err(&mut output), "srun: Quit");
                                }
                                cancelled = true;
                                signal_all(&clients, &targets, sig::TERM).await;
                            }
                            Passed::Window => {
                                if let Some(size) = template.pty.then(tty::window).flatten() {
                                    let _ = windows.send(size);
                                }
                            }
                            Passed::Ignore => {}
                        }
                        continue;
                    }
                };
                let e = output_err(&mut output);
                match action {
                    Action::Status => {
                        let _ = writeln!(e, "srun: interrupt (one more within 1 sec to abort)");
                        print_status(e, &step_name, &layout, &exited);
                    }
                    Action::ForwardInt | Action::ForwardIntAndKill => {
                        cancelled = true;
                        let _ = writeln!(e, "srun: sending Ctrl-C to {step_name}");
                        signal_all(&clients, &targets, sig::INT).await;
                        if action == Action::ForwardIntAndKill {
                            signal_all(&clients, &targets, sig::KILL).await;
                        }
                    }
                    Action::Kill => {
                        let _ = writeln!(e, "srun: forcing job termination");
                        signal_all(&clients, &targets, sig::KILL).await;
                    }
                    Action::Abandon => {
                        let _ = writeln!(e, "srun: job abort in progress");
                        for h in &handles {
                            h.abort();
                        }
                        outcome.signal = outcome.signal.max(sig::KILL);
                        break;
                    }
                }
            }
        }
    }
    let _ = output.finish();
    (outcome, usage)
}

/// srun ends the step itself (`-K`, `-W`): Slurm's lines, then SIGTERM (sent by the caller)
/// and SIGKILL once `KillWait` has passed.
fn terminate(output: &mut TaskOutput<'_>, step_name: &str, ending: Ending, ends: &mut Terminating) {
    let e = output_err(output);
    let _ = writeln!(
        e,
        "srun: launch/slurm: _step_signal: Terminating {step_name}"
    );
    let _ = writeln!(
        e,
        "srun: Job step aborted: Waiting up to {} seconds for job step to finish.",
        ending.kill_wait + 2
    );
    ends.ended = true;
    ends.kill_at =
        Some(tokio::time::Instant::now() + Duration::from_secs(u64::from(ending.kill_wait)));
}

/// The error stream behind the task output (srun's own messages go there too).
fn output_err<'a>(output: &'a mut TaskOutput<'_>) -> &'a mut dyn Write {
    output.err_stream()
}

/// Sends `signal` to the step's tasks on every node (best effort: a node that is gone has
/// no tasks left to signal).
async fn signal_all(clients: &[Option<NodedClient>], targets: &[(u32, u32)], signal: i32) {
    for (client, &(job_id, step_id)) in clients.iter().zip(targets) {
        let Some(client) = client else {
            continue;
        };
        let mut c = client.clone();
        let _ = c
            .signal_job(SignalJobRequest {
                job_id,
                kind: SignalKind::Signal as i32,
                signal,
                step_id: Some(step_id),
                batch_only: false,
            })
            .await;
    }
}

/// `srun: StepId=J.S tasks 0-3: running` and the same for tasks that already ended.
fn print_status(err: &mut dyn Write, step: &str, layout: &[NodeTasks], exited: &[TaskExit]) {
    let all = layout.iter().flat_map(|p| p.ranks.iter().copied());
    let running: Vec<u32> = all
        .filter(|t| !exited.iter().any(|e| e.task == *t))
        .collect();
    let normal: Vec<u32> = exited
        .iter()
        .filter(|e| e.signal == 0 && e.exit_code == 0)
        .map(|e| e.task)
        .collect();
    let abnormal: Vec<u32> = exited
        .iter()
        .filter(|e| e.signal != 0 || e.exit_code != 0)
        .map(|e| e.task)
        .collect();
    for (tasks, state) in [
        (running, "running"),
        (normal, "exited"),
        (abnormal, "exited abnormally"),
    ] {
        if !tasks.is_empty() {
            let _ = writeln!(err, "srun: {step} {}: {state}", task_list(&tasks));
        }
    }
}
