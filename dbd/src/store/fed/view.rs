//! A controller's federation view and its registration (control address, rpc version, start
//! time). A controller that registers with a new start time was restarted: the start locks its
//! previous process held are released, so its siblings need not wait for the leases to expire.

use crate::db::schema::clusters;
use diesel::prelude::*;

use crate::store::StoreError;
use crate::store::conn::AnyConnection;
use crate::store::models::clusters::{self as cluster_rows, ClusterRow};
use crate::store::models::fed_events as event_rows;
use crate::store::models::fed_jobs::{self as job_rows, FedJobRow};
use crate::store::models::{to_i32, to_u32};

use super::error::FedError;
use super::types::{FedMember, FedPhase, FedView, Registration};
use super::viable::Candidate;

/// The most locks one restart releases in one request (the rest expire on their own).
const MAX_RELEASED: usize = 100_000;

fn member(r: &ClusterRow) -> FedMember {
    FedMember {
        name: r.name.clone(),
        fed_id: to_u32(r.fed_id),
        fed_state: to_u32(r.fed_state),
        features: r.feature_list(),
        control_host: r.control_host.clone(),
        control_port: to_u32(r.control_port),
        rpc_version: to_u32(r.rpc_version),
    }
}

/// The live cluster `name`.
pub(super) fn live_cluster(conn: &mut AnyConnection, name: &str) -> Result<ClusterRow, FedError> {
    cluster_rows::get_live(conn, name)?.ok_or_else(|| {
        FedError::Store(StoreError::UnknownCluster {
            name: name.to_string(),
        })
    })
}

/// The live cluster `name` and its federation; `NotInFederation` when it is in none.
pub(super) fn federated_cluster(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<ClusterRow, FedError> {
    let row = live_cluster(conn, name)?;
    if row.federation.is_empty() {
        return Err(FedError::NotInFederation {
            cluster: name.to_string(),
        });
    }
    Ok(row)
}

/// The members of `federation` as the viable-set rules see them.
pub(super) fn candidates(
    conn: &mut AnyConnection,
    federation: &str,
) -> Result<Vec<Candidate>, FedError> {
    Ok(cluster_rows::members(conn, federation)?
        .into_iter()
        .map(|r| Candidate {
            fed_state: to_u32(r.fed_state),
            features: r.feature_list(),
            name: r.name,
        })
        .collect())
}

/// `cluster`'s view of its federation.
pub(super) fn view(conn: &mut AnyConnection, cluster: &str) -> Result<FedView, FedError> {
    let row = live_cluster(conn, cluster)?;
    let mut siblings = Vec::new();
    if !row.federation.is_empty() {
        siblings = cluster_rows::members(conn, &row.federation)?
            .iter()
            .filter(|m| m.name != row.name)
            .map(member)
            .collect();
        siblings.sort_by(|a: &FedMember, b| a.name.cmp(&b.name));
    }
    Ok(FedView {
        cluster: row.name.clone(),
        federation: row.federation.clone(),
        this: member(&row),
        siblings,
    })
}

/// Records a registration; returns whether the control address or rpc version changed (the
/// siblings' views then change) and how many start locks a restart released.
pub(super) fn register(
    conn: &mut AnyConnection,
    reg: &Registration,
    now: i64,
) -> Result<(bool, usize), FedError> {
    let row = live_cluster(conn, &reg.cluster)?;
    let (port, version) = (to_i32(reg.control_port), to_i32(reg.rpc_version));
    let moved = row.control_host != reg.control_host
        || row.control_port != port
        || row.rpc_version != version;
    if moved {
        diesel::update(clusters::table.find(&row.name))
            .set((
                clusters::control_host.eq(&reg.control_host),
                clusters::control_port.eq(port),
                clusters::rpc_version.eq(version),
            ))
            .execute(conn)?;
    }
    let previous = event_rows::controller_start(conn, &row.name)?;
    event_rows::set_controller(conn, &row.name, reg.start_time, now)?;
    let restarted = previous.is_some_and(|p| p != reg.start_time);
    let mut released = 0;
    if restarted && !row.federation.is_empty() {
        released = release_locks_of(conn, &row.federation, &row.name, now)?;
    }
    Ok((moved, released))
}

/// Drops every start lock `cluster` holds on a pending job of `federation`.
fn release_locks_of(
    conn: &mut AnyConnection,
    federation: &str,
    cluster: &str,
    now: i64,
) -> Result<usize, FedError> {
    let mut released = 0;
    for row in job_rows::live_involving(conn, federation, cluster, MAX_RELEASED)? {
        if row.lock_cluster != cluster || row.phase != FedPhase::Pending.stored() {
            continue;
        }
        let id = u32::try_from(row.job_id).unwrap_or(0);
        job_rows::claim(conn, federation, id)?;
        let Some(row) = job_rows::get(conn, federation, id)? else {
            continue;
        };
        let mut job = row.into_job();
        if job.phase == FedPhase::Pending && job.lock.as_ref().is_some_and(|l| l.cluster == cluster)
        {
            job.lock = None;
            job_rows::update(conn, &FedJobRow::from_job(&job, now))?;
            released += 1;
        }
    }
    Ok(released)
}
