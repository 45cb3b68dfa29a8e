//! The signals that stop a daemon.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Completes on the first SIGTERM or SIGINT, for a graceful stop. The handlers are installed by
/// [`ShutdownSignal::install`], not when the future is first polled, so a signal arriving right
/// after start-up is not lost. (SIGHUP keeps its default action.)
#[derive(Debug)]
pub struct ShutdownSignal {
    term: Signal,
    int: Signal,
}

impl ShutdownSignal {
    /// Installs the SIGTERM and SIGINT handlers; needs a running tokio runtime.
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }
}

impl Future for ShutdownSignal {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.term.poll_recv(cx).is_ready() {
            tracing::info!("SIGTERM received, shutting down");
            return Poll::Ready(());
        }
        if this.int.poll_recv(cx).is_ready() {
            tracing::info!("SIGINT received, shutting down");
            return Poll::Ready(());
        }
        Poll::Pending
    }
}
