//! `WatchAssociations`: controllers keep a stream open and hear of every committed change
//! that may touch associations, users or limits, so a `sacctmgr modify` applies at once
//! instead of at their next periodic refresh (Slurm's dbd pushes such updates to the
//! controllers it knows). The stream carries only a count; the controller reads the lists
//! again itself, through the same requests as at start.

use std::sync::Arc;

use sluice_wire::proto::AssociationsChanged;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

/// The count of committed changes, and the signal that ends every stream at shutdown.
#[derive(Debug, Clone)]
pub struct ChangeSignal {
    changes: Arc<watch::Sender<u64>>,
    stop: Arc<watch::Sender<bool>>,
}

impl Default for ChangeSignal {
    fn default() -> Self {
        Self {
            changes: Arc::new(watch::Sender::new(0)),
            stop: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl ChangeSignal {
    /// Notes a committed change: every open stream sends the new count.
    pub fn bump(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Ends every open stream (at shutdown: a graceful stop waits for open streams).
    pub fn stop_streams(&self) {
        self.stop.send_replace(true);
    }

    /// A new stream: the current count at once, then each new one (changes in quick
    /// succession may be told once, with the last count).
    pub fn stream(&self) -> ReceiverStream<Result<AssociationsChanged, Status>> {
        let (tx, rx) = mpsc::channel(1);
        let mut changes = self.changes.subscribe();
        let mut stop = self.stop.subscribe();
        tokio::spawn(async move {
            loop {
                let generation = *changes.borrow_and_update();
                if *stop.borrow() {
                    return;
                }
                if tx
                    .send(Ok(AssociationsChanged { generation }))
                    .await
                    .is_err()
                {
                    return;
                }
                tokio::select! {
                    r = changes.changed() => if r.is_err() { return },
                    _ = stop.changed() => return,
                    () = tx.closed() => return,
                }
            }
        });
        ReceiverStream::new(rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_stream::StreamExt;

    #[tokio::test]
    async fn a_stream_tells_the_count_at_once_then_each_change_and_ends_at_stop() {
        let signal = ChangeSignal::default();
        let mut s = signal.stream();
        assert_eq!(s.next().await.unwrap().unwrap().generation, 0);
        signal.bump();
        assert_eq!(s.next().await.unwrap().unwrap().generation, 1);
        signal.stop_streams();
        assert!(s.next().await.is_none());
    }
}
