//! `sattach JOBID.STEP`: attaches to a running step (the attach mode of Slurm's design paper):
//! shows its tasks' output from now on as srun does (`-l` labels, `-u`, `--output-filter` /
//! `--error-filter` to one task's stream) and sends sattach's stdin to the tasks (or the
//! `--input-filter` task), without closing it when sattach ends. Only the step's owner or an
//! admin may attach (the node daemons check). `--layout` prints where the tasks run and exits;
//! `--pty` attaches to the terminal of a step started with `srun --pty` (raw mode, as srun).
//! Ctrl-C detaches: the step runs on. sattach exits 0 once the step ended, 1 on an error or an
//! output stream lost before the step's end.
//!
//! * [`args`]: options; [`attach`]: the controller's and node daemons' side.

pub mod args;
pub mod attach;

use std::io::Write;

use sluice_wire::client::NodedClient;
use sluice_wire::proto::{StepOutput, StepStdin};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use crate::interrupts::Interrupt;
use crate::jobspec;
use crate::slurm_conf::SlurmConf;
use crate::srun::output::TaskOutput;
use crate::srun::stdio::read_chunks;
use args::{Invocation, SattachOpts};
use attach::Attached;

const USAGE: &str = "Usage: sattach [options] <jobid.stepid>\n";

const HELP: &str = "Usage: sattach [options] <jobid.stepid>\n\
      --input-filter=taskid  send stdin to only the specified task\n\
      --output-filter=taskid only print stdout from the specified task\n\
      --error-filter=taskid  only print stderr from the specified task\n\
  -l, --label                prepend task number to lines of stdout & stderr\n\
      --layout               print task layout info and exit (does not attach to tasks)\n\
      --pty                  attach to the pseudo-terminal of task 0 (srun --pty)\n\
  -Q, --quiet                quiet mode (suppress informational messages)\n\
  -u, --unbuffered           do not line-buffer stdout or stderr\n\
  -v, --verbose              verbose mode\n\
\n\
Help options:\n\
  -h, --help                 show this help message\n\
      --usage                display brief usage message\n\
  -V, --version              output version information and exit\n";

/// Runs the `sattach` binary.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let environ = jobspec::process_environ();
    crate::interrupts::run("sattach", |rx| async move {
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let stdin: Box<dyn std::io::Read + Send> = Box::new(std::io::stdin());
        run(
            &args,
            &environ,
            &mut stdout.lock(),
            &mut stderr.lock(),
            Some(stdin),
            rx,
        )
        .await
    })
}

/// Runs sattach with `args`; `stdin` (if any) goes to the tasks.
pub async fn run(
    args: &[String],
    environ: &[(String, String)],
    out: &mut dyn Write,
    err: &mut dyn Write,
    stdin: Option<Box<dyn std::io::Read + Send>>,
    mut interrupts: mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let opts = match args::parse(args) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => return print(out, HELP),
        Ok(Invocation::Usage) => return print(out, USAGE),
        Ok(Invocation::Version) => {
            return print(out, &format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
        }
        Err(text) => {
            let _ = writeln!(err, "{text}");
            return 1;
        }
    };
    let conf = match SlurmConf::read(&jobspec::conf_path(environ)) {
        Ok(c) => c,
        Err(e) => return fail(err, &e.to_string()),
    };
    let parts = match attach::attach(&conf, opts.job_id, opts.step_id).await {
        Ok(p) => p,
        Err(text) => return fail(err, &text),
    };
    if opts.layout {
        return print(
            out,
            &attach::layout_text(parts.iter().map(|p| (p.node.as_str(), &p.layout))),
        );
    }
    if opts.pty && !parts.iter().any(|p| p.layout.pty) {
        return fail(
            err,
            &format!(
                "StepId={}.{} has no pseudo-terminal: it was not started with srun --pty",
                opts.job_id, opts.step_id
            ),
        );
    }
    // --pty: keys go to task 0's terminal as they are typed, until sattach returns.
    let _raw = opts.pty.then(crate::srun::tty::Raw::enter).flatten();
    if let Some(chunks) = stdin.map(read_chunks) {
        let clients = input_nodes(&parts, opts.input_filter);
        let first = StepStdin {
            job_id: opts.job_id,
            step_id: opts.step_id,
            attached: true,
            task: opts.input_filter,
            ..Default::default()
        };
        tokio::spawn(feed(clients, first, chunks));
    }
    stream(parts, &opts, out, err, &mut interrupts).await
}

/// The nodes whose tasks read sattach's stdin.
fn input_nodes(parts: &[Attached], only: Option<u32>) -> Vec<NodedClient> {
    parts
        .iter()
        .filter(|p| only.is_none_or(|t| attach::ranks(&p.layout).contains(&t)))
        .map(|p| p.client.clone())
        .collect()
}

/// Copies `chunks` to every node's `StepInput` stream, opened by `first` as an attached writer
/// (a step reading no stdin refuses it, and the bytes have nowhere to go, as in Slurm).
async fn feed(clients: Vec<NodedClient>, first: StepStdin, mut chunks: mpsc::Receiver<Vec<u8>>) {
    let mut sinks = Vec::new();
    for mut client in clients {
        let (tx, rx) = mpsc::channel(8);
        let _ = tx.try_send(first.clone());
        tokio::spawn(async move {
            let _ = client.step_input(ReceiverStream::new(rx)).await;
        });
        sinks.push(tx);
    }
    while let Some(data) = chunks.recv().await {
        sinks.retain(|s| !s.is_closed());
        if sinks.is_empty() {
            return;
        }
        for sink in &sinks {
            let msg = StepStdin {
                data: data.clone(),
                ..Default::default()
            };
            let _ = sink.send(msg).await;
        }
    }
}

/// Shows the nodes' output until every stream ended (or Ctrl-C detaches).
async fn stream(
    parts: Vec<Attached>,
    opts: &SattachOpts,
    out: &mut dyn Write,
    err: &mut dyn Write,
    interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let ntasks = parts.first().map_or(1, |p| p.layout.ntasks);
    let names: Vec<String> = parts.iter().map(|p| p.node.clone()).collect();
    let mut merged = tokio_stream::StreamMap::new();
    for (i, part) in parts.into_iter().enumerate() {
        merged.insert(i, part.stream);
    }
    let mut ended = vec![false; names.len()];
    let raw = opts.unbuffered || opts.pty;
    let mut output = TaskOutput::new(out, err, ntasks, opts.label, raw);
    loop {
        tokio::select! {
            next = merged.next() => match next {
                Some((i, Ok(msg))) => {
                    if !msg.exits.is_empty() || msg.usage.is_some() {
                        ended[i] = true;
                    }
                    show(&mut output, opts, &msg);
                }
                Some((i, Err(status))) => {
                    let _ = output.finish();
                    let text = format!("node {}: {}", names[i], status.message());
                    return fail(output.err_stream(), &text);
                }
                None => break,
            },
            Some(sig) = interrupts.recv() => {
                if matches!(sig, Interrupt::Int | Interrupt::Term) {
                    let _ = output.finish();
                    return 0;
                }
            }
        }
    }
    let _ = output.finish();
    let lost: Vec<&str> = names
        .iter()
        .zip(&ended)
        .filter(|(_, e)| !**e)
        .map(|(n, _)| n.as_str())
        .collect();
    if lost.is_empty() {
        0
    } else {
        let text = format!(
            "lost the output of node {} before StepId={}.{} ended",
            lost.join(","),
            opts.job_id,
            opts.step_id
        );
        fail(output.err_stream(), &text)
    }
}

/// Writes one chunk, unless a filter hides it.
fn show(output: &mut TaskOutput<'_>, opts: &SattachOpts, msg: &StepOutput) {
    if msg.data.is_empty() {
        return;
    }
    let filter = if msg.stderr {
        opts.error_filter
    } else {
        opts.output_filter
    };
    if filter.is_none_or(|t| t == msg.task) {
        let _ = output.write(msg.task, msg.stderr, &msg.data);
    }
}

fn print(out: &mut dyn Write, text: &str) -> i32 {
    let _ = out.write_all(text.as_bytes());
    0
}

fn fail(err: &mut dyn Write, msg: &str) -> i32 {
    jobspec::print_error(err, "sattach", msg);
    1
}
