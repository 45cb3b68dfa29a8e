//! Keeping federated jobs in line with the federations' membership and fed states:
//!
//! * [`reconcile`] applies the removal rules ([`super::removal`]) to every live job that refers
//!   to a cluster no longer in its federation; it runs in the transaction of every admin change
//!   of clusters or federations, and after a cluster leaves by DRAIN+REMOVE.
//! * [`settle`] finishes draining: a DRAIN cluster that takes part in no live federated job
//!   becomes DRAINED; a DRAIN+REMOVE one leaves its federation. Each tells the federation's
//!   members through a `FederationChanged` event.

use std::collections::{BTreeMap, BTreeSet};

use crate::db::schema::clusters;
use diesel::prelude::*;
use sluice_vocab::FedState;

use crate::store::conn::AnyConnection;
use crate::store::models::clusters::{self as cluster_rows, ClusterRow};
use crate::store::models::fed_jobs::{self as job_rows, FedJobRow, split_set};
use crate::store::models::{to_i32, to_u32};

use super::log;
use super::removal::{on_departure, touches_departed};
use super::types::FedEventKind;

/// The DRAIN and REMOVE flags of a stored fed state.
const DRAIN_FLAG: u32 = 0x10;
const REMOVE_FLAG: u32 = 0x20;
/// The flag bits of a stored fed state.
const FLAGS: u32 = 0xfff0;

/// The live member names of `federation`.
pub(super) fn member_names(
    conn: &mut AnyConnection,
    federation: &str,
) -> QueryResult<BTreeSet<String>> {
    Ok(cluster_rows::members(conn, federation)?
        .into_iter()
        .map(|r| r.name)
        .collect())
}

/// Applies the removal rules to every live job touching a departed cluster; returns how many
/// jobs changed.
pub(crate) fn reconcile(conn: &mut AnyConnection, now: i64) -> QueryResult<usize> {
    let mut members: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut changed = 0;
    for (federation, job_id, origin, viable, active, winner, lock) in job_rows::live_refs(conn)? {
        if !members.contains_key(&federation) {
            let names = member_names(conn, &federation)?;
            members.insert(federation.clone(), names);
        }
        let names = &members[&federation];
        let refs = [origin, winner, lock]
            .into_iter()
            .chain(split_set(&viable))
            .chain(split_set(&active));
        if refs.filter(|c| !c.is_empty()).all(|c| names.contains(&c)) {
            continue;
        }
        // Take the row's lock, then decide on the version we hold.
        let job_id = u32::try_from(job_id).unwrap_or(0);
        job_rows::claim(conn, &federation, job_id)?;
        let Some(row) = job_rows::get(conn, &federation, job_id)? else {
            continue;
        };
        let mut job = row.into_job();
        if job.phase.is_terminal() || !touches_departed(&job, names) {
            continue;
        }
        let events = on_departure(&mut job, names, now);
        job_rows::update(conn, &FedJobRow::from_job(&job, now))?;
        log::append(conn, &federation, names, events, now)?;
        changed += 1;
    }
    Ok(changed)
}

/// Whether a stored fed state is DRAIN or DRAIN+REMOVE (draining, not yet drained).
fn draining(fed_state: u32) -> bool {
    fed_state & DRAIN_FLAG != 0
        && FedState::from_stored(fed_state & !FLAGS) == Some(FedState::Active)
}

/// Sets `row`'s fed state from `old` to `new` (or takes it out of its federation when `leave`)
/// unless someone changed it meanwhile; returns whether it changed.
fn set_state(
    conn: &mut AnyConnection,
    row: &ClusterRow,
    new: u32,
    leave: bool,
    now: i64,
) -> QueryResult<bool> {
    let target = clusters::table
        .filter(clusters::name.eq(&row.name))
        .filter(clusters::federation.eq(&row.federation))
        .filter(clusters::fed_state.eq(row.fed_state));
    let n = if leave {
        diesel::update(target)
            .set((
                clusters::federation.eq(""),
                clusters::fed_id.eq(0),
                clusters::fed_state.eq(0),
                clusters::mod_time.eq(now),
            ))
            .execute(conn)?
    } else {
        diesel::update(target)
            .set((
                clusters::fed_state.eq(to_i32(new)),
                clusters::mod_time.eq(now),
            ))
            .execute(conn)?
    };
    Ok(n == 1)
}

/// Finishes draining the draining clusters among `only` (every cluster when `None`) that take
/// part in no live federated job; returns the clusters that changed.
pub(crate) fn settle(
    conn: &mut AnyConnection,
    only: Option<&BTreeSet<String>>,
    now: i64,
) -> QueryResult<Vec<String>> {
    let mut changed = Vec::new();
    let candidates: Vec<ClusterRow> = cluster_rows::all(conn, false)?
        .into_iter()
        .filter(|r| !r.federation.is_empty() && draining(to_u32(r.fed_state)))
        .filter(|r| only.is_none_or(|o| o.contains(&r.name)))
        .collect();
    for row in candidates {
        if !job_rows::live_involving(conn, &row.federation, &row.name, 1)?.is_empty() {
            continue;
        }
        let members = member_names(conn, &row.federation)?;
        let state = to_u32(row.fed_state);
        let remove = state & REMOVE_FLAG != 0;
        let drained = FedState::Inactive.stored() | (state & FLAGS);
        if !set_state(conn, &row, drained, remove, now)? {
            continue;
        }
        if remove {
            reconcile(conn, now)?;
        }
        let events = members
            .iter()
            .map(|m| (m.clone(), FedEventKind::FederationChanged))
            .collect();
        log::append(conn, &row.federation, &members, events, now)?;
        changed.push(row.name);
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::draining;

    #[test]
    fn only_drain_and_drain_remove_are_draining() {
        assert!(draining(17));
        assert!(draining(49));
        for done in [0, 1, 2, 18, 50] {
            assert!(!draining(done), "{done}");
        }
    }
}
