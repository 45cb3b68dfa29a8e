//! The signals an interactive command (`srun`, `salloc`) acts on while it runs.

use std::future::Future;

use tokio::sync::mpsc;

/// A signal the command received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT (Ctrl-C).
    Int,
    /// SIGTERM.
    Term,
}

/// Forwards SIGINT and SIGTERM into `tx` for as long as the command runs (they no longer
/// end the process: the command decides).
pub fn listen(tx: mpsc::UnboundedSender<Interrupt>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    tokio::spawn(async move {
        loop {
            let sig = tokio::select! {
                Some(()) = int.recv() => Interrupt::Int,
                Some(()) = term.recv() => Interrupt::Term,
                else => return,
            };
            if tx.send(sig).is_err() {
                return;
            }
        }
    });
}

/// Runs an interactive command's `body` on a runtime of its own, with SIGINT and SIGTERM fed to
/// it as [`Interrupt`]s; returns its exit code (1 when no runtime could be made).
pub fn run<Fut: Future<Output = i32>>(
    prog: &str,
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
        listen(tx);
        body(rx).await
    })
}
