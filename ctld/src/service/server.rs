//! The whole controller minus process concerns (daemonizing, logging, signals, pid and port
//! files): the runtime, the federation client connected to the runtime's port (with a dbd) and
//! the authenticated gRPC server on a bound listener, until shutdown. `main.rs` adds the
//! process concerns; tests run this in-process.

use super::ControllerService;
use crate::conf::CtldConf;
use crate::fed_client::{self, FedHandle, FedSetup};
use crate::runtime::{self, Runtime, RuntimeConfig, RuntimeError};
use sluice_wire::auth::credential::CredentialKey;
use sluice_wire::auth::{Guarded, Key, Signer, Verifier};
use sluice_wire::client::{FedArbiterClient, connect_lazy};
use sluice_wire::proto::nonstop_server::NonstopServer;
use std::future::Future;
use std::sync::Arc;
use tonic::transport::server::TcpIncoming;

/// The controller's administrators: root and `SlurmUser` (a name or a uid).
pub fn admin_uids(conf: &CtldConf) -> Result<Vec<u32>, RuntimeError> {
    let name = conf.slurm_user.as_str();
    let uid = nix::unistd::User::from_name(name)
        .ok()
        .flatten()
        .map(|u| u.uid.as_raw())
        .or_else(|| name.parse().ok())
        .ok_or_else(|| RuntimeError::UnknownSlurmUser(name.to_string()))?;
    let mut uids = vec![0, uid];
    uids.dedup();
    Ok(uids)
}

/// The address node daemons report to: the first `SlurmctldHost`'s address (else its name)
/// and the port actually bound.
pub fn ctld_addr(conf: &CtldConf, port: u16) -> String {
    let host = conf
        .ctld_hosts
        .first()
        .map_or("localhost", |h| h.addr.as_deref().unwrap_or(&h.name));
    format!("{host}:{port}")
}

/// Runs the controller for `conf` on `listener` until `shutdown` completes: restores the
/// state, serves requests, then stops accepting, lets the core commit what is pending, and
/// returns.
pub async fn serve(
    conf: CtldConf,
    key: Key,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RuntimeError> {
    let port = listener.local_addr()?.port();
    let rt = runtime::start(RuntimeConfig {
        conf: conf.clone(),
        key: key.clone(),
        ctld_addr: ctld_addr(&conf, port),
    })?;
    serve_runtime(rt, conf, key, listener, shutdown).await
}

/// Serves an already started runtime (tests start it over their own store) on `listener`
/// until `shutdown` completes, then stops the runtime.
pub async fn serve_runtime(
    mut rt: Runtime,
    conf: CtldConf,
    key: Key,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RuntimeError> {
    let port = listener.local_addr()?.port();
    let admins = admin_uids(&conf)?;
    let fed = connect_federation(&mut rt, &conf, &key)?;
    let started = rt
        .handle()
        .query(|cx| cx.now)
        .await
        .map_err(|_| RuntimeError::Stopped)?;
    tracing::info!(cluster = %conf.cluster_name, port, "controller listening");
    let conf_nonstop = conf.nonstop.clone();
    let auth = conf.auth.clone();
    let creds = CredentialKey::derive(&key);
    let service = ControllerService::new(rt.handle(), Arc::new(conf), admins, started, creds)
        .with_dbd_admins(rt.dbd_admins())
        .with_fed(fed);
    let verifier = Verifier::new(key).serving("sluice-ctld").with_auth(&auth);
    let federation = super::federation::FederationInfoService::new(rt.handle()).into_server();
    let federation = verifier.guard(federation);
    let (service, admin, nonstop) = service.into_servers();
    let admin = verifier.guard(admin);
    let nonstop = verifier.guard(nonstop);
    let service = verifier.guard(service);
    // Shutdown stops the extra failure management port too.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let extra = extra_nonstop_port(
        &conf_nonstop,
        listener.local_addr()?.ip(),
        nonstop.clone(),
        stop_rx,
    )
    .await?;
    let result = tonic::transport::Server::builder()
        .add_service(service)
        .add_service(admin)
        .add_service(federation)
        .add_service(nonstop)
        .serve_with_incoming_shutdown(
            TcpIncoming::from(listener).with_nodelay(Some(true)),
            async move {
                shutdown.await;
                let _ = stop_tx.send(true);
            },
        )
        .await;
    if let Some(extra) = extra {
        let _ = extra.await;
    }
    rt.shutdown().await;
    tracing::info!("controller stopped");
    result.map_err(RuntimeError::from)
}

/// Serves `nonstop` on `nonstop.conf`'s `Port` at `ip` too, when given (not 0), until `stop`
/// turns true.
async fn extra_nonstop_port(
    conf: &Option<sluice_vocab::nonstop_conf::NonstopConf>,
    ip: std::net::IpAddr,
    nonstop: Guarded<NonstopServer<ControllerService>>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<Option<tokio::task::JoinHandle<()>>, RuntimeError> {
    let Some(port) = conf.as_ref().map(|c| c.port).filter(|&p| p != 0) else {
        return Ok(None);
    };
    let listener = tokio::net::TcpListener::bind((ip, port)).await?;
    tracing::info!(port, "failure management (nonstop) listening");
    Ok(Some(tokio::spawn(async move {
        let served = tonic::transport::Server::builder()
            .add_service(nonstop)
            .serve_with_incoming_shutdown(
                TcpIncoming::from(listener).with_nodelay(Some(true)),
                async move {
                    let _ = stop.wait_for(|s| *s).await;
                },
            )
            .await;
        if let Err(e) = served {
            tracing::error!("failure management port stopped: {e}");
        }
    })))
}

/// Connects the federation client to `rt`'s port, with a dbd (the client of its `FedArbiter`,
/// signed with `key`); the service takes federated paths through the handle returned. The
/// runtime keeps the client and stops it first at shutdown.
fn connect_federation(
    rt: &mut Runtime,
    conf: &CtldConf,
    key: &Key,
) -> Result<Option<FedHandle>, RuntimeError> {
    let (Some(port), Some(host)) = (rt.take_federation_port(), &conf.accounting_storage_host)
    else {
        return Ok(None);
    };
    let signer = Signer::for_current_user(key.clone());
    let channel = connect_lazy(host, conf.accounting_storage_port, signer)?;
    let (control_host, control_port) = port.control_host_port();
    let setup = FedSetup {
        cluster: conf.cluster_name.clone(),
        control_host,
        control_port,
        start_time: i64::try_from(port.started.secs()).unwrap_or(0),
        client: FedArbiterClient::new(channel),
        key: key.clone(),
    };
    let (handle, tasks) = fed_client::spawn(setup, port.core, port.requests);
    rt.attach_federation(Box::new(tasks));
    Ok(Some(handle))
}
