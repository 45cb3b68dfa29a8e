//! Registration and the federation view. The controller registers (again after every lost
//! connection), applies the view the dbd returns, then follows `WatchFederation`: every change
//! made with sacctmgr, every drain settled, every sibling (dis)connecting reaches the core as a
//! new view. After the first registration of this process it also resends what a restart left
//! owed to the dbd (submissions not yet recorded, run ends, offers).
//!
//! A dbd without the federation service (or unreachable) leaves the cluster as it was:
//! outside a federation it behaves as before.

use super::requests::Sender;
use super::{Backoff, FedHandle, FedSetup, RPC_VERSION, convert};
use crate::core::federation::{self, FedView};
use crate::runtime::{CallError, CoreHandle};
use sluice_wire::proto::{FedClusterRequest, FedRegisterRequest, FederationView};

/// Applies `view` to the core (its change is committed with the core's next batch).
pub async fn apply_view(core: &CoreHandle, view: FederationView) -> Result<(), CallError> {
    let view: FedView = convert::view(view);
    core.call(move |cx| {
        if federation::on_fed_view(cx.core, cx.out, cx.now, view) {
            cx.out.touch();
        }
    })
    .await
}

/// Registers and follows the view until the task is stopped.
pub async fn run(fed: FedHandle, core: CoreHandle, setup: FedSetup, sender: Sender) {
    let mut backoff = Backoff::new();
    let mut recovered = false;
    loop {
        let mut client = fed.client.clone();
        let reg = FedRegisterRequest {
            cluster: setup.cluster.clone(),
            control_host: setup.control_host.clone(),
            control_port: setup.control_port,
            rpc_version: RPC_VERSION,
            start_time: setup.start_time,
        };
        match client.register(reg).await {
            Ok(view) => {
                if let Err(e) = apply_view(&core, view.into_inner()).await {
                    tracing::debug!("federation view not applied: {e}");
                    if matches!(e, CallError::Gone) {
                        return;
                    }
                    backoff.wait().await;
                    continue;
                }
                backoff.reset();
            }
            Err(status) => {
                tracing::debug!("federation registration failed: {}", status.message());
                backoff.wait().await;
                continue;
            }
        }
        if !std::mem::replace(&mut recovered, true) {
            sender.recover().await;
        }
        let watch = FedClusterRequest {
            cluster: setup.cluster.clone(),
        };
        match client.watch_federation(watch).await {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                // A view the core could not save ends the watch: registering again applies
                // the current one.
                while let Ok(Some(view)) = stream.message().await {
                    match apply_view(&core, view).await {
                        Ok(()) => {}
                        Err(CallError::Gone) => return,
                        Err(e) => {
                            tracing::debug!("federation view not applied: {e}");
                            break;
                        }
                    }
                }
            }
            Err(status) => tracing::debug!("federation watch failed: {}", status.message()),
        }
        backoff.wait().await;
    }
}
