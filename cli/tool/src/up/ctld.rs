//! Talking to a local controller while bringing it up: waiting until it answers, then until
//! each of its node daemons has registered.

use std::path::Path;
use std::time::{Duration, Instant};

use sluice_wire::auth::{Key, Signer};
use sluice_wire::client::{CtldClient, connect};
use sluice_wire::proto::{ListNodesRequest, NodeInfo, PingRequest};

use super::UpError;
use super::cluster_conf::ClusterConf;
use super::process;
use super::stop::Started;

/// How long `up` waits for a controller to answer (it restores its state first).
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `up` waits for a cluster's node daemons to register.
pub const NODES_TIMEOUT: Duration = Duration::from_secs(60);
/// Pause between looks at the node list.
const POLL_EVERY: Duration = Duration::from_millis(100);

/// Polls the controller of `cluster` with Ping until it answers, `child` exits, or `timeout`
/// passes.
pub async fn wait_ready(
    cluster: &ClusterConf,
    key: &Key,
    child: Option<&mut tokio::process::Child>,
    log: &Path,
    timeout: Duration,
) -> Result<CtldClient, UpError> {
    let (host, port) = (cluster.ctld_host.as_str(), cluster.ctld_port);
    let address = format!("{host}:{port}");
    process::wait_ready("sluice-ctld", &address, child, log, timeout, || {
        let signer = Signer::for_current_user(key.clone());
        async move {
            let mut client = CtldClient::new(connect(host, port, signer).await.ok()?);
            client.ping(PingRequest {}).await.ok()?;
            Some(client)
        }
    })
    .await
}

/// Whether `node` has registered: it answers (not `*`) and its state is known.
pub fn registered(node: &NodeInfo) -> bool {
    !node.not_responding && node.state != "UNKNOWN"
}

/// The nodes whose daemon this `up` started, with the daemon's process id: each must register
/// as that process (the registration of a daemon killed before is still listed for a while).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fresh(pub Vec<(String, u32)>);

impl Fresh {
    /// Whether `node`'s registration is one `up` may count: any for a daemon it did not
    /// start, the started process's own for one it started.
    pub fn counts(&self, node: &NodeInfo) -> bool {
        registered(node)
            && self
                .0
                .iter()
                .all(|(name, pid)| *name != node.name || node.slurmd_pid == *pid)
    }
}

/// Waits until every node of `cluster` has registered with its controller (those of `fresh`
/// anew); returns the nodes as the controller shows them. A node daemon of `started` exiting
/// meanwhile is an error; `logs` is named in the timeout's.
pub async fn wait_nodes(
    client: &mut CtldClient,
    cluster: &ClusterConf,
    (started, fresh): (&mut [Started], &Fresh),
    logs: &Path,
    timeout: Duration,
) -> Result<Vec<NodeInfo>, UpError> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(e) = started.iter_mut().find_map(Started::exited) {
            return Err(e);
        }
        let request = ListNodesRequest {
            names: cluster.nodes.clone(),
        };
        let nodes = match client.list_nodes(request).await {
            Ok(reply) => reply.into_inner().nodes,
            Err(status) => {
                return Err(UpError::Rpc {
                    what: format!("listing the nodes of cluster {}", cluster.name),
                    message: status.message().to_string(),
                });
            }
        };
        let waiting: Vec<&str> = cluster
            .nodes
            .iter()
            .filter(|name| !nodes.iter().any(|n| &n.name == *name && fresh.counts(n)))
            .map(String::as_str)
            .collect();
        if waiting.is_empty() {
            return Ok(nodes);
        }
        if Instant::now() >= deadline {
            return Err(UpError::NodesTimeout {
                cluster: cluster.name.clone(),
                nodes: waiting.join(","),
                secs: timeout.as_secs(),
                logs: logs.to_path_buf(),
            });
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_daemon_counts_only_once_it_registered_anew() {
        let node = |name: &str, pid: u32| NodeInfo {
            name: name.into(),
            state: "IDLE".into(),
            slurmd_pid: pid,
            ..Default::default()
        };
        let fresh = Fresh(vec![("n1".into(), 1_000)]);
        assert!(
            !fresh.counts(&node("n1", 999)),
            "the killed daemon's registration"
        );
        assert!(fresh.counts(&node("n1", 1_000)));
        assert!(
            fresh.counts(&node("n2", 5)),
            "already running: any registration"
        );
        let unknown = NodeInfo {
            state: "UNKNOWN".into(),
            ..node("n2", 5)
        };
        assert!(!fresh.counts(&unknown));
    }
}
