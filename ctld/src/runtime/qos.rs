//! The accounting daemon's QOS for the controller: fetched with the associations at start and
//! at every refresh (see [`super::admins`]); while the dbd is away the core keeps the last
//! list, and the state store saves it with the associations for a restart
//! ([`crate::core::assoc::cache`]).

use sluice_vocab::assoc_limits::Tres;
use sluice_vocab::qos::{Qos, QosFlags, QosLimits, UsageFactor};
use sluice_wire::client::DbdClient;
use sluice_wire::proto::{self, ListQosRequest};
use std::time::Duration;

use crate::core::qos::QosTable;

/// How long one fetch may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);

/// A TRES list as the dbd sends it; an unreadable one limits nothing (and is logged).
fn tres(s: &str) -> Tres {
    if s.is_empty() {
        return Tres::default();
    }
    Tres::from_stored(s).unwrap_or_else(|| {
        tracing::warn!(tres = s, "unreadable QOS TRES limit from the dbd (ignored)");
        Tres::default()
    })
}

/// The core's form of a listed QOS.
fn qos(q: proto::Qos) -> Qos {
    let l = q.limits.unwrap_or_default();
    Qos {
        name: q.name,
        description: q.description,
        priority: q.priority,
        flags: QosFlags::parse(&q.flags).unwrap_or_else(|e| {
            tracing::warn!(flags = q.flags, "unreadable QOS flags from the dbd: {e}");
            QosFlags::default()
        }),
        limits: QosLimits {
            max_wall_minutes: l.max_wall_minutes,
            max_tres_per_job: tres(&l.max_tres_per_job),
            max_tres_per_user: tres(&l.max_tres_per_user),
            max_jobs_per_user: l.max_jobs_per_user,
            max_submit_jobs_per_user: l.max_submit_jobs_per_user,
            grp_tres: tres(&l.grp_tres),
            grp_jobs: l.grp_jobs,
            grp_submit_jobs: l.grp_submit_jobs,
            max_tres_mins_per_job: tres(&l.max_tres_mins_per_job),
            max_tres_per_account: tres(&l.max_tres_per_account),
            max_jobs_per_account: l.max_jobs_per_account,
            max_submit_jobs_per_account: l.max_submit_jobs_per_account,
            min_tres_per_job: tres(&l.min_tres_per_job),
            max_tres_per_node: tres(&l.max_tres_per_node),
            grp_tres_mins: tres(&l.grp_tres_mins),
        },
        usage_factor: q
            .usage_factor
            .and_then(UsageFactor::from_f64)
            .unwrap_or_default(),
    }
}

/// The dbd's live QOS.
pub async fn fetch(dbd: &mut DbdClient) -> Result<QosTable, tonic::Status> {
    let mut req = tonic::Request::new(ListQosRequest::default());
    req.set_timeout(RPC_TIMEOUT);
    let list = dbd.list_qos(req).await?.into_inner().qos;
    Ok(QosTable::new(list.into_iter().map(qos)))
}
