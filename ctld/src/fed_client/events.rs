//! This cluster's event log at the dbd. The stream starts after the core's cursor (the last
//! event applied and committed); events that arrive together are applied in one core call,
//! whose commit also saves the new cursor; only then are they acknowledged, so a crash at any
//! point redelivers at most events the cursor already skips: nothing lost, nothing applied
//! twice. A `FederationChanged` event fetches the view again.

use super::{Backoff, FedHandle, convert, register};
use crate::core::federation::{self, FedEvent, FedEventKind};
use crate::runtime::CoreHandle;
use sluice_wire::proto::{FedAckRequest, FedClusterRequest, FedEventsRequest};
use std::time::Duration;

/// Most events applied in one core call.
const MAX_BATCH: usize = 512;

/// Follows the event log until the task is stopped, reconnecting as needed.
pub async fn run(fed: FedHandle, core: CoreHandle) {
    let mut backoff = Backoff::new();
    loop {
        let Ok(after) = core.query(|cx| cx.core.fed_cursor()).await else {
            return;
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
            if !apply(&fed, &core, batch).await {
                return;
            }
        }
        backoff.wait().await;
    }
}

/// Applies `batch`, then acknowledges it; `false` when the core is gone.
async fn apply(fed: &FedHandle, core: &CoreHandle, batch: Vec<FedEvent>) -> bool {
    let refresh = batch
        .iter()
        .any(|e| e.kind == FedEventKind::FederationChanged);
    let applied = core
        .call(move |cx| {
            let mut any = false;
            for ev in batch {
                any |= federation::on_fed_event(cx.core, cx.out, cx.now, ev);
            }
            if any {
                cx.out.touch();
            }
            cx.core.fed_cursor()
        })
        .await;
    let Ok(cursor) = applied else {
        return false;
    };
    let mut client = fed.client.clone();
    let ack = FedAckRequest {
        cluster: fed.cluster.clone(),
        seq: cursor,
    };
    if let Err(status) = client.ack_events(ack).await {
        tracing::debug!("federation event ack failed: {}", status.message());
    }
    if refresh {
        let req = FedClusterRequest {
            cluster: fed.cluster.clone(),
        };
        if let Ok(view) = client.get_federation_view(req).await {
            register::apply_view(core, view.into_inner()).await;
        }
    }
    true
}
