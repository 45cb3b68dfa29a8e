//! The signals an interactive command (`srun`, `salloc`) acts on while it runs.

use std::future::Future;

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

/// A signal the command received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT (Ctrl-C).
    Int,
    /// SIGTERM.
    Term,
    /// Another signal the command handles itself (srun: the ones it passes on to its tasks,
    /// and Ctrl-Z, which it ignores); the signal's number.
    Other(i32),
}

/// Signal numbers (Linux values) the commands name.
pub mod sig {
    pub const HUP: i32 = 1;
    pub const INT: i32 = 2;
    pub const QUIT: i32 = 3;
    pub const KILL: i32 = 9;
    pub const USR1: i32 = 10;
    pub const USR2: i32 = 12;
    pub const ALRM: i32 = 14;
    pub const TERM: i32 = 15;
    pub const CONT: i32 = 18;
    pub const TSTP: i32 = 20;
    pub const WINCH: i32 = 28;
}

impl Interrupt {
    /// The signal's number.
    pub fn number(self) -> i32 {
        match self {
            Interrupt::Int => sig::INT,
            Interrupt::Term => sig::TERM,
            Interrupt::Other(n) => n,
        }
    }
}

impl Interrupt {
    /// Whether the signal ends an interactive command that is still waiting (for an
    /// allocation, for a step's CPUs): SIGINT, SIGTERM, SIGHUP and SIGQUIT do.
    pub fn ends_wait(self) -> bool {
        match self {
            Interrupt::Int | Interrupt::Term => true,
            Interrupt::Other(n) => n == sig::HUP || n == sig::QUIT,
        }
    }
}

/// Forwards SIGINT, SIGTERM and the `others` into `tx` for as long as the command runs (they
/// no longer have their default effect, ending or stopping the process: the command decides).
pub fn listen(tx: mpsc::UnboundedSender<Interrupt>, others: &[i32]) {
    let mut kinds = vec![
        (SignalKind::interrupt(), Interrupt::Int),
        (SignalKind::terminate(), Interrupt::Term),
    ];
    kinds.extend(
        others
            .iter()
            .map(|n| (SignalKind::from_raw(*n), Interrupt::Other(*n))),
    );
    for (kind, which) in kinds {
        let Ok(mut stream) = signal(kind) else {
            continue;
        };
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if tx.send(which).is_err() {
                    return;
                }
            }
        });
    }
}

/// Runs an interactive command's `body` on a runtime of its own, with SIGINT and SIGTERM fed to
/// it as [`Interrupt`]s; returns its exit code (1 when no runtime could be made).
pub fn run<Fut: Future<Output = i32>>(
    prog: &str,
    body: impl FnOnce(mpsc::UnboundedReceiver<Interrupt>) -> Fut,
) -> i32 {
    run_catching(prog, &[], body)
}

/// [`run`], with the signals `others` fed to `body` too.
pub fn run_catching<Fut: Future<Output = i32>>(
    prog: &str,
    others: &[i32],
    body: impl FnOnce(mpsc::UnboundedReceiver<Interrupt>) -> Fut,
) -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{prog}: error: {e}");
            return 1;
        }
    };
    runtime.block_on(async {
        let (tx, rx) = mpsc::unbounded_channel();
        listen(tx, others);
        body(rx).await
    })
}
