//! This cluster's associations and their limits from the accounting daemon, for
//! `AccountingStorageEnforce`: fetched with the users (see [`super::admins`]) at start and at
//! every refresh; while the dbd is away the core keeps enforcing the last list.

use sluice_vocab::assoc_limits::{AssocLimits, Tres};
use sluice_wire::client::DbdClient;
use sluice_wire::proto::{self, ListAssociationsRequest};
use std::time::Duration;

use crate::core::assoc::{AssocRecord, AssocTable};

/// How long one fetch may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);

/// A TRES list as the dbd sends it; an unreadable one limits nothing (and is logged).
fn tres(s: &str) -> Tres {
    if s.is_empty() {
        return Tres::default();
    }
    Tres::from_stored(s).unwrap_or_else(|| {
        tracing::warn!(tres = s, "unreadable TRES limit from the dbd (ignored)");
        Tres::default()
    })
}

/// The core's form of the limits the dbd lists as in force.
fn limits(l: Option<proto::AssocLimits>) -> AssocLimits {
    let l = l.unwrap_or_default();
    AssocLimits {
        max_jobs: l.max_jobs,
        max_submit_jobs: l.max_submit_jobs,
        max_wall_minutes: l.max_wall_minutes,
        max_tres_per_job: tres(&l.max_tres_per_job),
        grp_jobs: l.grp_jobs,
        grp_submit_jobs: l.grp_submit_jobs,
        grp_tres: tres(&l.grp_tres),
        grp_tres_mins: tres(&l.grp_tres_mins),
    }
}

/// The associations of `cluster` in the dbd.
pub async fn fetch(dbd: &mut DbdClient, cluster: &str) -> Result<AssocTable, tonic::Status> {
    let mut req = tonic::Request::new(ListAssociationsRequest {
        clusters: vec![cluster.to_string()],
        ..ListAssociationsRequest::default()
    });
    req.set_timeout(RPC_TIMEOUT);
    let list = dbd.list_associations(req).await?.into_inner().associations;
    Ok(AssocTable::new(list.into_iter().map(|a| AssocRecord {
        account: a.account,
        user: a.user,
        parent_account: a.parent_account,
        limits: limits(a.limits),
        qos: a.qos,
        default_qos: a.default_qos,
    })))
}
