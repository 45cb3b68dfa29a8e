//! Talking to the local dbd while bringing it up: waiting until it answers, registering the
//! clusters and the federation.

use std::path::Path;
use std::time::Duration;

use sluice_wire::auth::{Key, Signer};
use sluice_wire::client::{DbdClient, connect_dbd};
use sluice_wire::proto::{
    AddClustersRequest, AddFederationsRequest, ListClustersRequest, ListFederationsRequest,
    ModifyFederationsRequest, PingRequest,
};

use super::UpError;
use super::process;

/// How long `up` waits for a freshly started dbd to answer.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Polls `host:port` with Ping until it answers, `child` exits, or `timeout` passes.
pub async fn wait_ready(
    host: &str,
    port: u16,
    key: &Key,
    child: Option<&mut tokio::process::Child>,
    log: &Path,
    timeout: Duration,
) -> Result<DbdClient, UpError> {
    let address = format!("{host}:{port}");
    process::wait_ready("sluice-dbd", &address, child, log, timeout, || {
        let signer = Signer::for_current_user(key.clone());
        async move {
            let mut client = connect_dbd(host, port, signer).await.ok()?;
            client.ping(PingRequest {}).await.ok()?;
            Some(client)
        }
    })
    .await
}

fn rpc(what: String) -> impl FnOnce(tonic::Status) -> UpError {
    move |status| UpError::Rpc {
        what,
        message: status.message().to_string(),
    }
}

/// Adds every one of `clusters` the dbd does not know yet. Returns the names it added.
pub async fn register_clusters(
    client: &mut DbdClient,
    clusters: &[String],
) -> Result<Vec<String>, UpError> {
    let what = || format!("registering clusters {}", clusters.join(","));
    let known: Vec<String> = client
        .list_clusters(ListClustersRequest {
            names: clusters.to_vec(),
            ..Default::default()
        })
        .await
        .map_err(rpc(what()))?
        .into_inner()
        .clusters
        .into_iter()
        .filter(|c| !c.deleted)
        .map(|c| c.name)
        .collect();
    let missing: Vec<String> = clusters
        .iter()
        .filter(|c| !known.contains(c))
        .cloned()
        .collect();
    if missing.is_empty() {
        return Ok(missing);
    }
    client
        .add_clusters(AddClustersRequest {
            names: missing.clone(),
            commit: true,
            ..Default::default()
        })
        .await
        .map_err(rpc(what()))?;
    Ok(missing)
}

/// Makes `clusters` members of `federation`, creating it if needed; members it already has
/// are kept. Returns whether anything changed.
pub async fn register_federation(
    client: &mut DbdClient,
    federation: &str,
    clusters: &[String],
) -> Result<bool, UpError> {
    let what = || format!("registering federation {federation}");
    let existing = client
        .list_federations(ListFederationsRequest {
            names: vec![federation.to_string()],
            ..Default::default()
        })
        .await
        .map_err(rpc(what()))?
        .into_inner()
        .federations
        .into_iter()
        .find(|f| f.name == federation && !f.deleted);
    let Some(existing) = existing else {
        client
            .add_federations(AddFederationsRequest {
                names: vec![federation.to_string()],
                clusters: clusters.to_vec(),
                commit: true,
            })
            .await
            .map_err(rpc(what()))?;
        return Ok(true);
    };
    let added: Vec<String> = clusters
        .iter()
        .filter(|c| !existing.clusters.iter().any(|m| &m.name == *c))
        .map(|c| format!("+{c}"))
        .collect();
    if added.is_empty() {
        return Ok(false);
    }
    client
        .modify_federations(ModifyFederationsRequest {
            names: vec![federation.to_string()],
            clusters: added,
            commit: true,
        })
        .await
        .map_err(rpc(what()))?;
    Ok(true)
}
