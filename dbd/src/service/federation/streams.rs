//! The federation service's server streams.
//!
//! * `WatchFederation`: the view, then the view again whenever it differs from the last one
//!   sent. Woken by the store's change signal (sacctmgr edits through this dbd, registrations,
//!   settled drains, event streams opening or closing) and by a poll, so changes made through
//!   another dbd on the same database arrive too, within [`POLL`].
//! * `Events`: a cluster's backlog after its cursor, a `caught_up` marker, then live events as
//!   they are appended (woken by the store's event signal for that cluster, and by the poll).
//!
//! Both stop when the client goes away.

use std::sync::Arc;
use std::time::Duration;

use sluice_wire::proto;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use super::{FederationService, blocking, convert};

/// How often a stream looks at the database without being woken.
const POLL: Duration = Duration::from_millis(500);
/// Events per read of the log; also the stream's buffer depth.
const PAGE: usize = 256;

/// Waits for a signal, the poll period, the client going away or the daemon stopping; false
/// when the stream should end.
async fn wait<T>(
    rx: &mut watch::Receiver<u64>,
    stop: &mut watch::Receiver<bool>,
    tx: &mpsc::Sender<T>,
) -> bool {
    if *stop.borrow_and_update() {
        return false;
    }
    tokio::select! {
        _ = stop.changed() => false,
        changed = rx.changed() => {
            if changed.is_err() {
                // The store's signal is gone: fall back to polling.
                tokio::time::sleep(POLL).await;
            }
            !tx.is_closed()
        }
        () = tokio::time::sleep(POLL) => !tx.is_closed(),
        () = tx.closed() => false,
    }
}

/// The `WatchFederation` stream of `cluster`.
pub(super) fn watch(
    svc: FederationService,
    cluster: String,
) -> ReceiverStream<Result<proto::FederationView, Status>> {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        let store = svc.store();
        let mut signal = store.fed_signals().watch_federation();
        let mut stop = svc.stop.subscribe();
        let mut last: Option<proto::FederationView> = None;
        loop {
            signal.borrow_and_update();
            let (s, c) = (Arc::clone(&store), cluster.clone());
            let view = match blocking(move || s.fed_view(&c)).await {
                Ok(v) => svc.wire_view(v),
                Err(status) => {
                    let _ = tx.send(Err(status)).await;
                    return;
                }
            };
            if last.as_ref() != Some(&view) {
                last = Some(view.clone());
                if tx.send(Ok(view)).await.is_err() {
                    return;
                }
            }
            if !wait(&mut signal, &mut stop, &tx).await {
                return;
            }
        }
    });
    ReceiverStream::new(rx)
}

/// Counts an open event stream of a cluster while it lives.
struct StreamGuard {
    svc: FederationService,
    cluster: String,
}

impl StreamGuard {
    fn open(svc: FederationService, cluster: String) -> Self {
        svc.connected.add(&cluster, 1);
        svc.store().fed_signals().federation_changed();
        Self { svc, cluster }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.svc.connected.add(&self.cluster, -1);
        self.svc.store().fed_signals().federation_changed();
    }
}

/// The `Events` stream of `cluster` from `after`.
pub(super) fn events(
    svc: FederationService,
    cluster: String,
    after: u64,
) -> ReceiverStream<Result<proto::FedEvent, Status>> {
    let (tx, rx) = mpsc::channel(PAGE);
    tokio::spawn(async move {
        let store = svc.store();
        let mut stop = svc.stop.subscribe();
        let _guard = StreamGuard::open(svc, cluster.clone());
        let mut signal = store.fed_signals().watch_events(&cluster);
        let mut cursor = after;
        let mut caught_up = false;
        loop {
            signal.borrow_and_update();
            let (s, c) = (Arc::clone(&store), cluster.clone());
            let page = match blocking(move || s.fed_events(&c, cursor, PAGE)).await {
                Ok(page) => page,
                Err(status) => {
                    let _ = tx.send(Err(status)).await;
                    return;
                }
            };
            let full = page.events.len() == PAGE;
            for e in page.events {
                cursor = cursor.max(e.seq);
                if tx.send(Ok(convert::event(e))).await.is_err() {
                    return;
                }
            }
            if full {
                continue;
            }
            if !caught_up {
                caught_up = true;
                let marker = proto::FedEvent {
                    caught_up: true,
                    ..Default::default()
                };
                if tx.send(Ok(marker)).await.is_err() {
                    return;
                }
            }
            if !wait(&mut signal, &mut stop, &tx).await {
                return;
            }
        }
    });
    ReceiverStream::new(rx)
}
