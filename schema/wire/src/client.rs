//! Connecting to Sluice daemons with signed requests.

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

use crate::auth::{Signed, Signer};
use crate::proto::accounting_client::AccountingClient;
use crate::proto::accounting_records_client::AccountingRecordsClient;
use crate::proto::controller_admin_client::ControllerAdminClient;
use crate::proto::controller_client::ControllerClient;
use crate::proto::controller_federation_client::ControllerFederationClient;
use crate::proto::fed_arbiter_client;
use crate::proto::node_daemon_client::NodeDaemonClient;

/// A channel whose every request carries the caller's signed token.
pub type SignedChannel = Signed<Channel>;

/// The metadata key of a controller's note on a refused request: the line Slurm's controller
/// sends with some refusals (its `err_msg`, e.g. `invalid partition specified: nope`), which
/// the commands print before the error itself. Binary, so any UTF-8 survives.
pub const NOTE_KEY: &str = "sluice-note-bin";
/// A client of `sluice-dbd`'s admin service.
pub type DbdClient = AccountingClient<SignedChannel>;
/// A client of `sluice-dbd`'s job-record service.
pub type RecordsClient = AccountingRecordsClient<SignedChannel>;
/// A client of a cluster's `sluice-ctld`.
pub type CtldClient = ControllerClient<SignedChannel>;
/// A client of `sluice-dbd`'s federation arbiter (controllers only).
pub type FedArbiterClient = fed_arbiter_client::FedArbiterClient<SignedChannel>;
/// A client of a controller's administration service (`scontrol reconfigure`, `update SuspendExc*`).
pub type CtldAdminClient = ControllerAdminClient<SignedChannel>;
/// A client of a controller's federation view (`scontrol show federation`).
pub type CtldFedClient = ControllerFederationClient<SignedChannel>;
/// A client of a node's `sluice-noded`.
pub type NodedClient = NodeDaemonClient<SignedChannel>;

/// Opens a channel to `host:port` and signs every request with `signer`.
pub async fn connect(
    host: &str,
    port: u16,
    signer: Signer,
) -> Result<SignedChannel, tonic::transport::Error> {
    let channel = endpoint(host, port)?.connect().await?;
    Ok(signer.wrap(channel))
}

/// Like [`connect`], for the commands: connecting and every request made on the channel
/// (until its reply, or a stream's first message, arrives) are bounded by `timeout`
/// (slurm.conf's `MessageTimeout`). A request that runs out fails with [`is_timeout`].
pub async fn connect_bounded(
    host: &str,
    port: u16,
    signer: Signer,
    timeout: Duration,
) -> Result<SignedChannel, tonic::transport::Error> {
    let channel = endpoint(host, port)?
        .connect_timeout(timeout)
        .timeout(timeout)
        .connect()
        .await?;
    Ok(signer.wrap_bounded(channel, timeout))
}

/// Whether `status` says the request ran out of time: the channel's bound of
/// [`connect_bounded`] expired, or the server gave up on its deadline.
pub fn is_timeout(status: &tonic::Status) -> bool {
    match status.code() {
        tonic::Code::DeadlineExceeded => true,
        tonic::Code::Cancelled => status.message() == tonic::TimeoutExpired(()).to_string(),
        _ => false,
    }
}

/// Like [`connect`], but connects on first use: for daemons that must start while a peer is down.
pub fn connect_lazy(
    host: &str,
    port: u16,
    signer: Signer,
) -> Result<SignedChannel, tonic::transport::Error> {
    let channel = endpoint(host, port)?.connect_lazy();
    Ok(signer.wrap(channel))
}

fn endpoint(host: &str, port: u16) -> Result<Endpoint, tonic::transport::Error> {
    Ok(Endpoint::from_shared(format!("http://{host}:{port}"))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true))
}

/// Connects to the dbd at `host:port`.
pub async fn connect_dbd(
    host: &str,
    port: u16,
    signer: Signer,
) -> Result<DbdClient, tonic::transport::Error> {
    Ok(AccountingClient::new(connect(host, port, signer).await?))
}
