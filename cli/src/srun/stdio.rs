//! srun's side of its tasks' standard streams (`-i/-o/-e`, `--open-mode`, `--cpu-bind`'s
//! request fields) and the forwarding of srun's own stdin.
//!
//! Files (`-o out.%t`) are opened on the nodes by the tasks themselves, so srun only names
//! them. Stdin (`-i all`, the default, or `-i <task>`) is read on a thread of its own (a read
//! on a terminal cannot be cancelled; the thread ends with srun) and written to a `StepInput`
//! stream of every node that runs a reading task; each stream opens once the node has started
//! its tasks, and no chunk is sent before every node is ready or failed, so all tasks see the
//! same bytes. srun's EOF ends the streams, which closes the tasks' stdin.

use std::io::Read;

use sluice_wire::client::NodedClient;
use sluice_wire::proto::{RunStepRequest, StepStdin, WindowSize};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;

use super::args::{IoTarget, SrunOpts};
use super::layout::NodeTasks;

/// Largest chunk of stdin sent in one message.
const CHUNK: usize = 16 * 1024;
const DEV_NULL: &str = "/dev/null";

/// A node's stdin stream, once it is open.
pub type Sink = mpsc::Sender<StepStdin>;

/// Fills the I/O fields of the request of a step of `ntasks` tasks from `opts`.
pub fn fill(req: &mut RunStepRequest, opts: &SrunOpts, ntasks: u32) {
    if opts.pty {
        // Task 0's three streams are its terminal, fed from srun's stdin; the other tasks'
        // go to /dev/null, as with Slurm's --pty.
        req.pty = true;
        req.window = super::tty::window();
        req.stdin_from_srun = true;
        req.stdin_task = Some(0);
        req.stdout_file = DEV_NULL.to_string();
        req.stderr_file = DEV_NULL.to_string();
        fill_binding(req, opts);
        return;
    }
    match &opts.input.within(ntasks) {
        IoTarget::All => req.stdin_from_srun = true,
        IoTarget::Task(t) => {
            req.stdin_from_srun = true;
            req.stdin_task = Some(*t);
        }
        IoTarget::None => req.stdin_file = DEV_NULL.to_string(),
        IoTarget::File(p) => req.stdin_file = p.clone(),
    }
    req.stdout_file = file_of(&opts.output.within(ntasks));
    req.stderr_file = file_of(&opts.stderr_target().within(ntasks));
    req.open_append = opts.job.open_append.unwrap_or(false);
    fill_binding(req, opts);
}

fn fill_binding(req: &mut RunStepRequest, opts: &SrunOpts) {
    req.cpu_bind = opts
        .cpu_bind
        .as_ref()
        .map(|b| b.to_spec())
        .unwrap_or_default();
    req.cpus_per_task = opts.job.cpus_per_task.unwrap_or(1);
    req.mem_bind = opts.job.mem_bind.clone().unwrap_or_default();
    req.slurmd_debug = opts.slurmd_debug;
    req.cpu_freq = opts.job.cpu_freq.map(|f| f.env_value()).unwrap_or_default();
    req.acctg_task_secs = opts
        .job
        .acctg_freq
        .as_deref()
        .and_then(|a| sluice_vocab::acctg_freq::AcctgFreq::parse(a).ok())
        .and_then(|a| a.task);
}

fn file_of(target: &IoTarget) -> String {
    match target {
        IoTarget::None => DEV_NULL.to_string(),
        IoTarget::File(p) => p.clone(),
        IoTarget::All | IoTarget::Task(_) => String::new(),
    }
}

/// Whether the node running `place` gets srun's stdin.
pub fn node_reads(req: &RunStepRequest, place: &NodeTasks) -> bool {
    req.stdin_from_srun && req.stdin_task.is_none_or(|t| place.runs(t))
}

/// Reads `source` in chunks on a thread of its own.
pub fn read_chunks(mut source: Box<dyn Read + Send>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel(4);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; CHUNK];
        loop {
            match source.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    });
    rx
}

/// Opens `job.step`'s stdin stream on a node whose tasks have started.
pub fn open(client: &NodedClient, job_id: u32, step_id: u32) -> Sink {
    let (tx, rx) = mpsc::channel(8);
    let first = StepStdin {
        job_id,
        step_id,
        ..Default::default()
    };
    let _ = tx.try_send(first);
    let mut client = client.clone();
    tokio::spawn(async move {
        let _ = client.step_input(ReceiverStream::new(rx)).await;
    });
    tx
}

/// Waits for every node's stream (a node that failed sends none), then copies `chunks` and
/// the terminal's new sizes (`--pty`, sized `window` at launch) to each; returning drops the
/// streams, which is the tasks' EOF.
///
/// With `--pty` the size is read again before each chunk goes out: a key typed after the
/// terminal was resized then reaches the task after the resize, even when srun's SIGWINCH
/// handling has not run yet.
pub async fn feed(
    slots: Vec<oneshot::Receiver<Sink>>,
    chunks: Option<mpsc::Receiver<Vec<u8>>>,
    mut windows: mpsc::UnboundedReceiver<WindowSize>,
    mut window: Option<WindowSize>,
) {
    let mut sinks = Vec::new();
    for slot in slots {
        sinks.extend(slot.await.ok());
    }
    let Some(mut chunks) = chunks else {
        return;
    };
    loop {
        let mut msgs = Vec::with_capacity(2);
        tokio::select! {
            biased;
            Some(size) = windows.recv() => {
                if window.as_ref() != Some(&size) {
                    window = Some(size);
                    msgs.push(StepStdin { window: Some(size), ..Default::default() });
                }
            }
            data = chunks.recv() => match data {
                Some(data) => {
                    let now = window.is_some().then(super::tty::window).flatten();
                    if let Some(size) = now.filter(|s| window.as_ref() != Some(s)) {
                        window = Some(size);
                        msgs.push(StepStdin { window: Some(size), ..Default::default() });
                    }
                    msgs.push(StepStdin { data, ..Default::default() });
                }
                None => return,
            },
        }
        sinks.retain(|s| !s.is_closed());
        if sinks.is_empty() {
            return;
        }
        for msg in msgs {
            for sink in &sinks {
                let _ = sink.send(msg.clone()).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::srun::args::{Invocation, parse};

    fn filled(args: &str) -> RunStepRequest {
        let words: Vec<String> = args.split_whitespace().map(String::from).collect();
        let Ok(Invocation::Run(opts)) = parse(&words, &[]) else {
            panic!("{args} should parse");
        };
        let mut req = RunStepRequest::default();
        fill(&mut req, &opts, 4);
        req
    }

    #[test]
    fn targets_become_request_fields() {
        let r = filled("true");
        assert!(r.stdin_from_srun && r.stdin_task.is_none());
        assert_eq!((r.stdout_file.as_str(), r.stderr_file.as_str()), ("", ""));
        let r = filled("-o out.%t --open-mode=append -c2 --cpu-bind=v,rank true");
        assert_eq!(
            (r.stdout_file.as_str(), r.stderr_file.as_str()),
            ("out.%t", "out.%t")
        );
        assert!(r.open_append);
        assert_eq!((r.cpu_bind.as_str(), r.cpus_per_task), ("verbose,rank", 2));
        let r = filled("-i none -e err -o 1 true");
        assert!(!r.stdin_from_srun);
        assert_eq!(r.stdin_file, "/dev/null");
        assert_eq!(
            (r.stdout_file.as_str(), r.stderr_file.as_str()),
            ("", "err")
        );
    }

    #[test]
    fn only_the_node_of_the_input_task_reads_stdin() {
        let mut r = filled("-i 3 true");
        let place = |first: u32, count: u32| NodeTasks {
            node: 0,
            ranks: (first..first + count).collect(),
        };
        assert!(node_reads(&r, &place(2, 2)));
        assert!(!node_reads(&r, &place(0, 2)));
        r.stdin_task = None;
        assert!(node_reads(&r, &place(0, 2)));
        assert!(!node_reads(&filled("-i none true"), &place(0, 2)));
    }
}
