//! The signals an interactive command (`srun`, `salloc`) acts on while it runs.

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
