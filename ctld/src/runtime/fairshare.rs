//! The fair-share table of `priority/multifactor`: a task asks the accounting daemon for this
//! cluster's associations with their shares and decayed usage (`ListAssociations` with
//! `with_usage`: the dbd computes usage from the job runs it holds, see
//! `sluice_dbd::store::fairshare`), computes each association's classic fair-share factor
//! (`sluice_vocab::fairshare`) and hands the table to the core, which recomputes the queue.
//! It runs at start and every `PriorityCalcPeriod`; while the dbd is away the last table stays.
//! The same listing gives each association's decayed TRES usage, which the core keeps for
//! `GrpTRESMins` (as Slurm, that limit is only enforced under `priority/multifactor`).
//! Under `priority/basic` it asks nothing.

use super::CoreHandle;
use crate::core::assoc::{self, AssocKey, TresSecs};
use crate::core::priority;
use sluice_vocab::cluster_conf::PriorityType;
use sluice_vocab::fairshare::{self, AssocInput, Shares};
use sluice_wire::client::DbdClient;
use sluice_wire::proto::ListAssociationsRequest;
use std::collections::HashMap;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long one fetch may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the task looks whether `priority/multifactor` is on (after a reconfigure).
const IDLE_CHECK: Duration = Duration::from_secs(30);

/// The fair-share factors of the user associations, and the TRES-seconds each has used.
pub type Fetched = (HashMap<AssocKey, f64>, HashMap<AssocKey, TresSecs>);

/// The factor and usage of each (account, user) association of `cluster`, from the dbd.
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
    let secs = |v: f64| {
        if v.is_finite() && v > 0.0 {
            v as u64
        } else {
            0
        }
    };
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
    let inputs: Vec<AssocInput> = assocs
        .into_iter()
        .map(|a| AssocInput {
            account: a.account,
            user: a.user,
            parent: a.parent_account,
            shares: Shares::from_raw(a.shares),
            raw_usage: a.raw_usage,
        })
        .collect();
    let factors = fairshare::compute(&inputs)
        .into_iter()
        .filter(|r| !r.user.is_empty())
        .map(|r| ((r.account, r.user), r.fairshare))
        .collect();
    Ok((factors, used))
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
            if prio.kind != PriorityType::Multifactor {
                tokio::time::sleep(IDLE_CHECK).await;
                continue;
            }
            let now = chrono::Utc::now().timestamp();
            let half_life = i64::try_from(prio.decay_half_life_secs).unwrap_or(i64::MAX);
            let since = prio.usage_reset.since(now, started);
            match fetch(&mut dbd, &cluster, half_life, since).await {
                Ok((table, used)) => {
                    let posted = core
                        .query(move |cx| {
                            assoc::set_used(cx.core, used);
                            priority::on_fairshare(cx.core, cx.now, table);
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
