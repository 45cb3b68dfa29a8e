//! This cluster's event log at the dbd. The stream starts after the core's cursor (the last
//! event applied and committed); events that arrive together are applied in one core call,
//! whose commit also saves the new cursor; only then are they acknowledged, so a crash at any
//! point redelivers at most events the cursor already skips: nothing lost, nothing applied
//! twice. A `FederationChanged` event fetches the view again. A batch the core could not
//! commit (a full or failing state store) was not applied: the stream is opened again from the
//! saved cursor, after a backoff, and the batch comes again.
//!
//! Acknowledgements only move the dbd's floor for the stream (the cursor here is what the stream
//! starts from), so they are sent by a task of their own, the newest cursor at most every
//! [`ACK_GATHER`]: a burst of event batches (a federated job is offered, locked, started and
//! revoked within milliseconds) is one write at the dbd rather than one per batch.

use super::{Backoff, FedHandle, convert, register};
use crate::core::federation::{self, FedEvent, FedEventKind};
use crate::runtime::{CallError, CoreHandle, Kick};
use sluice_wire::proto::{FedAckRequest, FedClusterRequest, FedEventsRequest};
use std::time::Duration;
use tokio::sync::watch;

/// Most events applied in one core call.
const MAX_BATCH: usize = 512;

/// How long the acknowledging task gathers cursors before it sends the newest.
const ACK_GATHER: Duration = Duration::from_millis(20);

/// Follows the event log until the task is stopped, reconnecting as needed.
pub async fn run(fed: FedHandle, core: CoreHandle) {
    let (acks, cursor) = watch::channel(0);
    // Ends once `acks` is dropped, after sending what it had not sent.
    tokio::spawn(acknowledge(fed.clone(), cursor));
    follow(&fed, &core, &acks).await;
}

/// Sends the newest applied cursor to the dbd whenever it moves, gathering for [`ACK_GATHER`]
/// first; returns when the follower is gone. A failed acknowledgement is not repeated: the next
/// cursor covers it.
async fn acknowledge(fed: FedHandle, mut cursor: watch::Receiver<u64>) {
    let mut client = fed.client.clone();
    while cursor.changed().await.is_ok() {
        tokio::time::sleep(ACK_GATHER).await;
        let seq = *cursor.borrow_and_update();
        let ack = FedAckRequest {
            cluster: fed.cluster.clone(),
            seq,
        };
        if let Err(status) = client.ack_events(ack).await {
            tracing::debug!("federation event ack failed: {}", status.message());
        }
    }
}

async fn follow(fed: &FedHandle, core: &CoreHandle, acks: &watch::Sender<u64>) {
    let mut backoff = Backoff::new();
    loop {
        let after = match core.query(|cx| cx.core.fed_cursor()).await {
            Ok(after) => after,
            Err(CallError::Gone) => return,
            Err(e) => {
                tracing::debug!("federation events: cursor not read: {e}");
                backoff.wait().await;
                continue;
            }
        };
        let mut client = fed.client.clone();
        let req = FedEventsRequest {
            cluster: fed.cluster.clone(),
            after,
        };
        let mut stream = match client.events(req).await {
            Ok(s) => s.into_inner(),
            Err(status) => {
                tracing::debug!("federation events: {}", status.message());
                backoff.wait().await;
                continue;
            }
        };
        backoff.reset();
        loop {
            let first = match stream.message().await {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(status) => {
                    tracing::debug!("federation event stream ended: {}", status.message());
                    break;
                }
            };
            let mut batch: Vec<FedEvent> = convert::event(first).into_iter().collect();
            // Whatever else has already arrived goes in the same commit.
            while batch.len() < MAX_BATCH {
                match tokio::time::timeout(Duration::ZERO, stream.message()).await {
                    Ok(Ok(Some(ev))) => batch.extend(convert::event(ev)),
                    _ => break,
                }
            }
            if batch.is_empty() {
                continue;
            }
            match apply(fed, core, acks, batch).await {
                Applied::Kept => {}
                // Not saved (the state store failed): the stream starts again from the
                // saved cursor, so the batch comes again.
                Applied::NotKept => break,
                Applied::Gone => return,
            }
        }
        backoff.wait().await;
    }
}

/// What became of a batch of events.
enum Applied {
    /// Applied and committed with the new cursor.
    Kept,
    /// Not kept: the commit failed (the state store is full, read-only, failing), or the core
    /// took it too late; nothing of it was applied.
    NotKept,
    /// The core stopped.
    Gone,
}

/// Applies `batch`, then has it acknowledged.
async fn apply(
    fed: &FedHandle,
    core: &CoreHandle,
    acks: &watch::Sender<u64>,
    batch: Vec<FedEvent>,
) -> Applied {
    let refresh = batch
        .iter()
        .any(|e| e.kind == FedEventKind::FederationChanged);
    // A copy offered for a job this cluster does not hold is a new pending job, as a
    // submission is: the pass after it considers the new jobs alone (`core::fresh`); any other
    // event may free resources or change what waits, and asks for a whole pass.
    let applied = core
        .submit(move |cx| {
            let mut any = false;
            for ev in batch {
                let new_copy = matches!(&ev.kind, FedEventKind::SiblingOffered { job, .. }
                    if cx.core.job(*job).is_none());
                if !new_copy {
                    cx.pass_after(Kick::Full);
                }
                any |= federation::on_fed_event(cx.core, cx.out, cx.now, ev);
            }
            if any {
                cx.out.touch();
            }
            cx.core.fed_cursor()
        })
        .await;
    let cursor = match applied {
        Ok(cursor) => cursor,
        Err(CallError::Gone) => return Applied::Gone,
        Err(e) => {
            tracing::debug!("federation events not applied: {e}");
            return Applied::NotKept;
        }
    };
    acks.send_replace(cursor);
    if refresh {
        let mut client = fed.client.clone();
        let req = FedClusterRequest {
            cluster: fed.cluster.clone(),
        };
        if let Ok(view) = client.get_federation_view(req).await {
            // Not saved: the view's own watch delivers it again (see `register`).
            let _ = register::apply_view(core, view.into_inner()).await;
        }
    }
    Applied::Kept
}
