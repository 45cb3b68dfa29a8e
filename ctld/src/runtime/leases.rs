//! Job ids. With an accounting daemon configured, the controller leases blocks of ids from it
//! (`LeaseJobIds`) at start and whenever fewer than a quarter of a block remain, in the
//! background; each block is added to the core's id source and saved with the next commit, so
//! ids stay unique across restarts and the controller keeps accepting jobs while the dbd is
//! away, until its ids run out (then submissions get `EAGAIN`'s text and sbatch retries).
//!
//! Without an accounting daemon, as Slurm's controller, it counts up from `FirstJobId`; the
//! counter is the core's id source ([`crate::core::IdLease::counter`]), saved like a lease.

use super::{CoreHandle, Msg};
use crate::core::Core;
use sluice_wire::client::{DbdClient, connect_lazy};
use sluice_wire::proto::LeaseJobIdsRequest;
use sluice_wire::proto::accounting_client::AccountingClient;
use std::time::{Duration, Instant};

/// Ids asked for per lease.
pub const LEASE_SIZE: u32 = 1000;
/// Ask for more when fewer than this many remain.
pub const LOW_WATER: u64 = (LEASE_SIZE / 4) as u64;
/// Wait this long after a failed lease request before the next.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// Fetches leases in the background, one request at a time.
pub struct Leaser {
    dbd: Option<DbdClient>,
    cluster: String,
    in_flight: bool,
    not_before: Option<Instant>,
}

impl Leaser {
    /// A leaser for `cluster` talking to `dbd`; `None` for a controller without one.
    pub fn new(dbd: Option<DbdClient>, cluster: String) -> Self {
        Self {
            dbd,
            cluster,
            in_flight: false,
            not_before: None,
        }
    }

    /// A lazily connected, signed dbd client for `host:port`.
    pub fn connect(
        host: &str,
        port: u16,
        signer: sluice_wire::auth::Signer,
    ) -> Result<DbdClient, tonic::transport::Error> {
        Ok(AccountingClient::new(connect_lazy(host, port, signer)?))
    }

    /// Asks for a lease when ids run low and none is being fetched (core's thread, in the
    /// tokio runtime context).
    pub fn check(&mut self, core: &Core, handle: &CoreHandle) {
        let Some(dbd) = &self.dbd else { return };
        if self.in_flight
            || core.job_ids_left() >= LOW_WATER
            || self.not_before.is_some_and(|t| Instant::now() < t)
        {
            return;
        }
        self.in_flight = true;
        let req = LeaseJobIdsRequest {
            cluster: self.cluster.clone(),
            count: LEASE_SIZE,
            in_use: core.jobs().map(|j| j.id.local().get()).collect(),
        };
        let mut dbd = dbd.clone();
        let handle = handle.clone();
        tokio::spawn(async move {
            let mut r = tonic::Request::new(req);
            r.set_timeout(Duration::from_secs(10));
            match dbd.lease_job_ids(r).await {
                Ok(reply) => {
                    let ranges = reply
                        .into_inner()
                        .ranges
                        .into_iter()
                        .map(|r| (r.first, r.count))
                        .collect();
                    handle.post(Msg::LeaseGranted(ranges));
                }
                Err(e) => {
                    tracing::warn!(
                        "job id lease from the accounting daemon failed: {}",
                        e.message()
                    );
                    handle.post(Msg::LeaseFailed);
                }
            }
        });
    }

    /// A lease arrived: adds its blocks to the core's ids (saved with the batch's commit).
    pub fn granted(&mut self, core: &mut Core, ranges: &[(u32, u32)]) {
        self.in_flight = false;
        for &(first, count) in ranges {
            match sluice_vocab::LocalJobId::new(first) {
                Ok(first) => core.job_ids_mut().add_range(first, count),
                Err(e) => tracing::warn!("ignoring a leased block: {e}"),
            }
        }
        tracing::info!(?ranges, left = core.job_ids_left(), "job ids leased");
    }

    /// A lease request failed: try again a little later.
    pub fn failed(&mut self) {
        self.in_flight = false;
        self.not_before = Some(Instant::now() + RETRY_AFTER);
    }
}
