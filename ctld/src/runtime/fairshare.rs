//! The fair-share table of `priority/multifactor`: a task asks the accounting daemon for this
//! cluster's associations with their shares and decayed usage (`ListAssociations` with
//! `with_usage`: the dbd computes usage from the job runs it holds, see
//! `sluice_dbd::store::fairshare`) and hands them to the core, which computes each
//! association's fair-share factor (Fair Tree or classic) and recomputes the queue.
//! It runs at start and every `PriorityCalcPeriod`; while the dbd is away the last table stays.
//! The same listing gives each association's decayed TRES usage, which the core keeps for
//! `GrpTRESMins` (as Slurm, that limit is only enforced under `priority/multifactor`), and a
//! `ListQos` with usage gives what the jobs of each QOS used, for QOS `GrpTRESMins`.
//! Under `priority/basic` it asks too: the jobs' order ignores the numbers, `sshare` shows
//! them.

use super::CoreHandle;
use crate::core::assoc::{self, AssocKey, TresSecs};
use crate::core::{priority, qos};
use sluice_vocab::fairshare::{AssocInput, Shares};
use sluice_wire::client::DbdClient;
use sluice_wire::proto::{ListAssociationsRequest, ListQosRequest};
use std::collections::HashMap;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long one fetch may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);

/// What the dbd says of the associations of a cluster: their shares and decayed usage, their
/// ids, and the TRES-seconds each user association has used.
type Fetched = (
    Vec<AssocInput>,
    HashMap<(String, String), u64>,
    HashMap<AssocKey, TresSecs>,
);

/// The associations of `cluster` with their shares and decayed usage, their ids and their
/// TRES usage, from the dbd.
pub async fn fetch(
    dbd: &mut DbdClient,
    cluster: &str,
    half_life: i64,
    since: i64,
) -> Result<Fetched, tonic::Status> {
    let mut req = tonic::Request::new(ListAssociationsRequest {
        clusters: vec![cluster.to_string()],
        with_usage: true,
        usage_half_life: half_life,
        usage_since: since,
        ..ListAssociationsRequest::default()
    });
    req.set_timeout(RPC_TIMEOUT);
    let assocs = dbd.list_associations(req).await?.into_inner().associations;
    let used = assocs
        .iter()
        .filter(|a| !a.user.is_empty())
        .map(|a| {
            let t = TresSecs {
                cpu: secs(a.raw_usage),
                mem: secs(a.raw_mem_usage),
                node: secs(a.raw_node_usage),
            };
            ((a.account.clone(), a.user.clone()), t)
        })
        .collect();
    let ids = assocs
        .iter()
        .map(|a| ((a.account.clone(), a.user.clone()), a.id))
        .collect();
    let inputs = assocs
        .into_iter()
        .map(|a| AssocInput {
            account: a.account,
            user: a.user,
            parent: a.parent_account,
            shares: Shares::from_raw(a.shares),
            raw_usage: a.raw_usage,
        })
        .collect();
    Ok((inputs, ids, used))
}

/// What the jobs of each QOS used on `cluster`, decayed, from the dbd (QOS `GrpTRESMins`).
pub async fn fetch_qos_used(
    dbd: &mut DbdClient,
    cluster: &str,
    half_life: i64,
    since: i64,
) -> Result<HashMap<String, TresSecs>, tonic::Status> {
    let mut req = tonic::Request::new(ListQosRequest {
        usage_cluster: cluster.to_string(),
        usage_half_life: half_life,
        usage_since: since,
        ..ListQosRequest::default()
    });
    req.set_timeout(RPC_TIMEOUT);
    let list = dbd.list_qos(req).await?.into_inner().qos;
    Ok(list
        .into_iter()
        .map(|q| {
            let t = TresSecs {
                cpu: secs(q.raw_cpu_usage),
                mem: secs(q.raw_mem_usage),
                node: secs(q.raw_node_usage),
            };
            (q.name, t)
        })
        .collect())
}

/// Whole seconds of a decayed usage (0 for anything not a positive number).
fn secs(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    }
}

/// Keeps the core's fair-share table up to date from `dbd` (call from within a tokio
/// runtime). Aborting the handle stops it.
pub fn spawn_refresh(mut dbd: DbdClient, core: CoreHandle) -> JoinHandle<()> {
    let started = chrono::Utc::now().timestamp();
    tokio::spawn(async move {
        loop {
            let Ok((cluster, prio)) = core
                .query(|cx| {
                    let conf = cx.core.conf();
                    (conf.cluster_name.clone(), conf.priority.clone())
                })
                .await
            else {
                return;
            };
            let now = chrono::Utc::now().timestamp();
            let half_life = i64::try_from(prio.decay_half_life_secs).unwrap_or(i64::MAX);
            let since = prio.usage_reset.since(now, started);
            let fetched = match fetch(&mut dbd, &cluster, half_life, since).await {
                Ok(assocs) => fetch_qos_used(&mut dbd, &cluster, half_life, since)
                    .await
                    .map(|q| (assocs, q)),
                Err(e) => Err(e),
            };
            match fetched {
                Ok(((assocs, ids, used), qos_used)) => {
                    let posted = core
                        .query(move |cx| {
                            assoc::set_used(cx.core, used);
                            qos::set_used(cx.core, qos_used);
                            priority::on_assoc_usage(cx.core, cx.now, assocs, ids);
                        })
                        .await;
                    if posted.is_err() {
                        return;
                    }
                }
                Err(e) => tracing::debug!(
                    "cannot read fair share from the dbd (keeping the last table): {}",
                    e.message()
                ),
            }
            tokio::time::sleep(Duration::from_secs(prio.calc_period_secs.max(1))).await;
        }
    })
}
