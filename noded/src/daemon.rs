//! Running the node daemon: binding, opening the spool, the controller link, the signed gRPC
//! service and the local credential service (`sack.socket`), and shutting down.
//!
//! [`serve`] is the whole daemon minus process concerns (daemonizing, logging, signals, pid and
//! port files), so tests run real node daemons in-process; `main.rs` adds those with
//! [`sluice_wire::daemon`]. Stopping the daemon does not stop its jobs' processes (they are not
//! killed when their handles drop).

use std::future::Future;
use std::sync::Arc;

use sluice_wire::auth::credential::CredentialKey;
use sluice_wire::auth::{Key, Signer, Verifier, sack};
use sluice_wire::client::connect_lazy;
use sluice_wire::daemon as process;
use sluice_wire::proto::controller_client::ControllerClient;
use tonic::transport::server::TcpIncoming;

use crate::config::NodedConfig;
use crate::error::NodedError;
use crate::node::Node;
use crate::service::NodeService;
use crate::{adopt, launch_request, link, step_adopt};

/// Binds the node's `NodeAddr:Port` (port 0 picks a free port). Done before daemonizing and
/// before the runtime exists, so a taken port is reported on the terminal.
pub fn bind(config: &NodedConfig) -> Result<std::net::TcpListener, NodedError> {
    Ok(process::bind(&config.addr, config.port)?)
}

/// A node daemon whose spool is open and whose listener is bound: ready to serve.
pub struct Prepared {
    node: Arc<Node>,
    key: Key,
    listener: tokio::net::TcpListener,
}

impl Prepared {
    /// Opens the spool directory (loading unsent exit reports) for a daemon on `listener`.
    pub fn new(
        config: NodedConfig,
        key: Key,
        listener: tokio::net::TcpListener,
    ) -> Result<Self, NodedError> {
        let port = listener
            .local_addr()
            .map_err(|source| NodedError::Bind {
                addr: format!("{}:{}", config.addr, config.port),
                source,
            })?
            .port();
        let node = Arc::new(Node::open(config, port)?);
        Ok(Self {
            node,
            key,
            listener,
        })
    }

    /// The port the daemon listens on (and registers).
    pub fn port(&self) -> u16 {
        self.node.port
    }

    /// Registers with the controller, serves requests until `shutdown` completes, then stops.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send) -> Result<(), NodedError> {
        let config = &self.node.config;
        let signer = Signer::new(self.key.clone(), nix::unistd::geteuid().as_raw());
        let channel =
            connect_lazy(&config.ctld_host, config.ctld_port, signer).map_err(|source| {
                NodedError::CtldAddr {
                    addr: format!("{}:{}", config.ctld_host, config.ctld_port),
                    source,
                }
            })?;
        let client = ControllerClient::new(channel);
        adopt::adopt_orphans(&self.node).await;
        step_adopt::adopt_steps(&self.node).await;
        launch_request::resume_interrupted(&self.node).await;
        let registrar = tokio::spawn(link::keep_registered(
            Arc::clone(&self.node),
            client.clone(),
        ));
        let reporter = tokio::spawn(link::report_exits(Arc::clone(&self.node), client));
        // Users of this host who cannot read the key get their tokens here (or from another
        // daemon of this configuration that serves the socket). Only a root daemon offers them:
        // one that is not root runs every job as its own user, so another user's token would
        // run that user's jobs as this daemon's user.
        let credentials = if nix::unistd::geteuid().is_root() {
            Some(tokio::spawn(sack::offer(
                config.credential_socket(),
                self.key.clone(),
                std::future::pending(),
            )))
        } else {
            tracing::info!(
                "not root: jobs run as this daemon's user, so no credential service is offered to other users"
            );
            None
        };
        tracing::info!(
            node = %config.node_name,
            addr = %config.addr,
            port = self.node.port,
            "node daemon listening"
        );
        let creds = CredentialKey::derive(&self.key);
        let service = NodeService::new(Arc::clone(&self.node), creds).into_server();
        let service = Verifier::new(self.key)
            .serving("sluice-noded")
            .with_auth(&self.node.config.auth)
            .guard(service);
        let result = tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming_shutdown(
                TcpIncoming::from(self.listener).with_nodelay(Some(true)),
                shutdown,
            )
            .await;
        registrar.abort();
        reporter.abort();
        if let Some(credentials) = credentials {
            credentials.abort();
        }
        tracing::info!("node daemon stopped");
        Ok(result?)
    }
}

/// Runs the node daemon described by `config` on `listener` until `shutdown` completes.
pub async fn serve(
    config: NodedConfig,
    key: Key,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), NodedError> {
    Prepared::new(config, key, listener)?.serve(shutdown).await
}
