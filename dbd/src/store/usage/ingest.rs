//! What a batch of accounting records means for the rollups, applied in the batch's
//! transaction right after its job and event rows:
//!
//! * capacity records close the open capacity event and open one with the new counts (a record
//!   repeating the counts in force changes nothing);
//! * suspend and resume records open and close suspensions of the run;
//! * every timed record moves the cluster's rolled mark back to its time when that is earlier:
//!   the hours from there on were rolled without it and roll again (a record at `t` can only
//!   change usage from `t` on: a start turns waiting into running from then, an end stops the
//!   run from then, a node event or a capacity change counts from then). The mark never goes
//!   back before the purge mark: those hours' records are gone.

use std::collections::BTreeMap;

use super::events::{self, SuspendRow};
use super::rows::{self, wide};
use crate::store::conn::AnyConnection;
use crate::store::error::StoreError;
use crate::store::types::records::{ClusterCapacity, Record, RecordKind};

/// The earliest time from which a record changes usage; `None` for records that do not.
pub fn effective_from(kind: &RecordKind) -> Option<i64> {
    let earliest = |times: &[i64]| times.iter().copied().filter(|&t| t > 0).min();
    match kind {
        RecordKind::JobSubmitted(r) => earliest(&[r.submit, r.eligible]),
        RecordKind::JobStarted(r) => earliest(&[r.start, r.eligible]),
        RecordKind::JobEnded(r) => earliest(&[r.end]),
        RecordKind::JobSuspended(r) => earliest(&[r.at]),
        RecordKind::JobResized(r) => earliest(&[r.at]),
        RecordKind::NodeEvent(r) => earliest(&[r.at]),
        RecordKind::ClusterCapacity(r) => earliest(&[r.at]),
        RecordKind::Step(_) => None,
    }
}

/// Applies the rollup side of `records` (fresh records of `cluster`, in seq order).
pub fn ingested(
    conn: &mut AnyConnection,
    cluster: &str,
    records: &[&Record],
) -> Result<(), StoreError> {
    let capacity: Vec<&ClusterCapacity> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::ClusterCapacity(c) => Some(c),
            _ => None,
        })
        .collect();
    if !capacity.is_empty() {
        capacity_changed(conn, cluster, &capacity)?;
    }
    suspensions(conn, cluster, records)?;
    if let Some(from) = records.iter().filter_map(|r| effective_from(&r.kind)).min() {
        mark_stale(conn, cluster, from)?;
    }
    Ok(())
}

fn counts(c: &ClusterCapacity) -> (i64, i64, i64) {
    (wide(c.cpus), wide(c.mem_mb), i64::from(c.nodes))
}

fn capacity_changed(
    conn: &mut AnyConnection,
    cluster: &str,
    records: &[&ClusterCapacity],
) -> Result<(), StoreError> {
    let mut open = events::open_capacity(conn, cluster)?;
    for c in records {
        let new = counts(c);
        match &mut open {
            Some(row) if (row.cpus, row.mem_mb, row.node_count) == new => {}
            // A change at (or, with a clock that went back, before) the open period's start
            // replaces its counts.
            Some(row) if c.at <= row.time_start => {
                events::update_capacity(conn, row.id, 0, new)?;
                (row.cpus, row.mem_mb, row.node_count) = new;
            }
            _ => {
                if let Some(row) = &open {
                    let old = (row.cpus, row.mem_mb, row.node_count);
                    events::update_capacity(conn, row.id, c.at, old)?;
                }
                events::insert_capacity(conn, cluster, c.at, new)?;
                open = events::open_capacity(conn, cluster)?;
            }
        }
    }
    Ok(())
}

/// Opens a suspension at a suspend record and closes it at the resume record. A run that ends
/// while suspended keeps its suspension open: the rollup clips it to the run.
fn suspensions(
    conn: &mut AnyConnection,
    cluster: &str,
    records: &[&Record],
) -> Result<(), StoreError> {
    let events: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::JobSuspended(s) => Some(s),
            _ => None,
        })
        .collect();
    if events.is_empty() {
        return Ok(());
    }
    let mut job_ids: Vec<i64> = events.iter().map(|s| i64::from(s.job_id)).collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let mut open: BTreeMap<(i64, i32), SuspendRow> =
        events::suspends_of(conn, cluster, &job_ids, true)?
            .into_iter()
            .map(|r| ((r.job_id, r.run), r))
            .collect();
    let mut new = Vec::new();
    for s in events {
        let key = (
            i64::from(s.job_id),
            i32::try_from(s.run).unwrap_or(i32::MAX),
        );
        if s.suspended {
            if !open.contains_key(&key)
                && !new
                    .iter()
                    .any(|r: &SuspendRow| (r.job_id, r.run) == key && r.time_end == 0)
            {
                new.push(SuspendRow {
                    cluster: cluster.to_string(),
                    job_id: key.0,
                    run: key.1,
                    time_start: s.at,
                    time_end: 0,
                });
            }
        } else if let Some(pending) = new
            .iter_mut()
            .find(|r| (r.job_id, r.run) == key && r.time_end == 0)
        {
            pending.time_end = s.at.max(pending.time_start);
        } else if let Some(mut row) = open.remove(&key) {
            row.time_end = s.at.max(row.time_start);
            events::close_suspend(conn, &row)?;
        }
    }
    // A run suspended twice at the same second keeps one suspension.
    new.sort_by_key(|r| (r.job_id, r.run, r.time_start));
    new.dedup_by_key(|r| (r.job_id, r.run, r.time_start));
    events::insert_suspends(conn, &new)?;
    Ok(())
}

/// Moves `cluster`'s rolled mark back to `from` if it is later (creating the state at `from`).
fn mark_stale(conn: &mut AnyConnection, cluster: &str, from: i64) -> Result<(), StoreError> {
    match rows::state(conn, cluster)? {
        None => rows::insert_state(conn, cluster, from)?,
        Some(state) if from < state.rolled_until => {
            let to = from.max(state.purged_until);
            if to < state.rolled_until {
                rows::move_rolled(conn, cluster, state.rolled_until, to)?;
            }
        }
        Some(_) => {}
    }
    Ok(())
}
