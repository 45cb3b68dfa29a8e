//! Ingest of the controllers' accounting records (`RecordBatch`).
//!
//! Each controller numbers its records with a sequence of its outbox stream (a random 64-bit id it
//! made with its state store) and resends a batch until the dbd acknowledges it. A batch is applied
//! in ONE transaction together with the `record_cursors.applied_seq` of its (cluster, stream):
//!
//! * records with `seq <= applied_seq` were applied before and are skipped, so a batch delivered
//!   twice (the reply was lost) is stored once, and a batch overlapping an applied one stores
//!   only its new records;
//! * the rest are applied in ascending seq (a batch out of order is sorted; a seq repeated inside
//!   a batch counts once) and the cursor moves to the highest seq applied;
//! * sequences need to increase, not to be dense: a gap (seqs never written, or records the
//!   controller dropped) does not stall the cluster's accounting. A record arriving later with a
//!   seq below the cursor is taken for a duplicate and skipped, so a controller must ship in
//!   seq order and wait for each reply, which its shipper does;
//! * a failure rolls back the whole batch, cursor included; the controller simply resends;
//! * a controller whose state directory was wiped makes a new stream: its seqs count from 1 again
//!   and apply from its first record, while a batch of the old stream replayed late is still
//!   skipped by the old stream's cursor.
//!
//! Record semantics (see [`apply`]): a submit creates (or refreshes) the run row keyed by
//! (cluster, job_id, run); start, end and suspend update it, creating it if its submit record
//! never came; suspended time accumulates; an end with state `REQUEUED` ends the run and the job
//! waits again as run + 1; a resize keeps the run's allocation until then as an earlier record
//! of the run (`job_resizes`) and gives the run its new one; a step record replaces the step (keeping what an end
//! record without its start leaves empty); node events open and close periods; a submit
//! record's wckey is the job's (`job_wckeys`), and so is its place in a heterogeneous job
//! (`job_het`).
//! An empty account becomes the user's default account, when the user exists in the dbd.

mod apply;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::db::schema::users;
use diesel::prelude::*;

use self::apply::{Batch, Tracked};
use super::conn::AnyConnection;
use super::error::StoreError;
use super::models::bulk::IN_CHUNK;
use super::models::node_events::NewNodeEvent;
use super::models::{
    clusters, job_het, job_resizes, job_spans, job_wckeys, jobs, node_events, record_cursors, steps,
};

use super::types::records::{Record, RecordKind};

/// A seq as stored (seqs come from a SQLite rowid, so they fit; larger ones are clamped).
fn stored_seq(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// Applies the records of `cluster`'s outbox stream `stream` not applied yet and returns the
/// stream's applied seq.
pub(super) fn ingest(
    conn: &mut AnyConnection,
    cluster: &str,
    stream: u64,
    records: &[Record],
) -> Result<u64, StoreError> {
    if clusters::get_live(conn, cluster)?.is_none() {
        return Err(StoreError::UnknownCluster {
            name: cluster.to_string(),
        });
    }
    let cursor = record_cursors::get(conn, cluster, stream)?;
    let applied = cursor.unwrap_or(0);
    let mut fresh: Vec<&Record> = records
        .iter()
        .filter(|r| stored_seq(r.seq) > applied)
        .collect();
    fresh.sort_by_key(|r| r.seq);
    fresh.dedup_by_key(|r| r.seq);
    let Some(last) = fresh.last().map(|r| stored_seq(r.seq)) else {
        return Ok(u64::try_from(applied).unwrap_or(0));
    };
    let mut batch = load(conn, cluster, &fresh)?;
    for record in &fresh {
        batch.apply(&record.kind);
    }
    save(conn, cluster, batch)?;
    // Capacity events, suspensions, and the rolled-up hours these records make stale.
    super::usage::ingested(conn, cluster, &fresh)?;
    match cursor {
        Some(_) => record_cursors::set(conn, cluster, stream, last)?,
        None => record_cursors::insert(conn, cluster, stream, last)?,
    }
    Ok(u64::try_from(last).unwrap_or(0))
}

/// Loads every row the records can touch.
fn load(conn: &mut AnyConnection, cluster: &str, records: &[&Record]) -> Result<Batch, StoreError> {
    let mut job_ids = BTreeSet::new();
    let mut step_job_ids = BTreeSet::new();
    let mut resized_job_ids = BTreeSet::new();
    let mut nodes = BTreeSet::new();
    let mut users_to_resolve = BTreeSet::new();
    for r in records {
        match &r.kind {
            RecordKind::JobSubmitted(s) => {
                job_ids.insert(i64::from(s.job_id));
                if s.account.is_empty() && !s.user.is_empty() {
                    users_to_resolve.insert(s.user.clone());
                }
            }
            RecordKind::JobStarted(s) => _ = job_ids.insert(i64::from(s.job_id)),
            RecordKind::JobEnded(s) => _ = job_ids.insert(i64::from(s.job_id)),
            RecordKind::JobSuspended(s) => _ = job_ids.insert(i64::from(s.job_id)),
            RecordKind::JobResized(s) => {
                job_ids.insert(i64::from(s.job_id));
                resized_job_ids.insert(i64::from(s.job_id));
            }
            RecordKind::Step(s) => _ = step_job_ids.insert(i64::from(s.job_id)),
            RecordKind::NodeEvent(e) => _ = nodes.insert(e.node.clone()),
            RecordKind::ClusterCapacity(_) => {}
        }
    }
    let job_ids: Vec<i64> = job_ids.into_iter().collect();
    let step_job_ids: Vec<i64> = step_job_ids.into_iter().collect();
    let nodes: Vec<String> = nodes.into_iter().collect();
    let runs = jobs::runs_of(conn, cluster, &job_ids)?;
    let steps = steps::steps_of(conn, cluster, &step_job_ids)?;
    let open = node_events::open_of(conn, cluster, &nodes)?;
    let resized: Vec<i64> = resized_job_ids.into_iter().collect();
    let resizes = job_resizes::of_jobs(conn, cluster, &resized)?;
    let defaults = default_accounts(conn, &users_to_resolve.into_iter().collect::<Vec<_>>())?;
    Ok(Batch::new(cluster, runs, steps, open, resizes, defaults))
}

/// The default accounts of the live users among `names`.
fn default_accounts(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<HashMap<String, String>, StoreError> {
    let mut map = HashMap::new();
    for chunk in names.chunks(IN_CHUNK) {
        let rows: Vec<(String, String)> = users::table
            .filter(users::name.eq_any(chunk))
            .filter(users::deleted.eq(false))
            .select((users::name, users::default_account))
            .load(conn)?;
        map.extend(rows);
    }
    Ok(map)
}

/// The rows to write, and the jobs whose stored rows must go first. The batch holds every run
/// (step) of each job it touches, so a job with a changed stored row is rewritten whole: its rows
/// deleted and inserted again, a few statements per batch where row-by-row updates would take a
/// round trip each on MariaDB and PostgreSQL.
fn rewrite<K, T>(rows: BTreeMap<K, Tracked<T>>, job_of: impl Fn(&T) -> i64) -> (Vec<i64>, Vec<T>) {
    let jobs: BTreeSet<i64> = rows
        .values()
        .filter(|t| t.dirty && t.stored)
        .map(|t| job_of(&t.row))
        .collect();
    let write = rows
        .into_values()
        .filter(|t| (t.dirty && !t.stored) || jobs.contains(&job_of(&t.row)))
        .map(|t| t.row)
        .collect();
    (jobs.into_iter().collect(), write)
}

/// Writes what the batch changed (see [`rewrite`]); changed events are updated one by one.
fn save(conn: &mut AnyConnection, cluster: &str, batch: Batch) -> Result<(), StoreError> {
    let wckeys: Vec<(i64, i64, String)> = batch
        .wckeys
        .into_iter()
        .map(|(job, (submit, wckey))| (job, submit, wckey))
        .collect();
    job_wckeys::set(conn, cluster, &wckeys)?;
    let hets: Vec<(i64, i64, i64, i32)> = batch
        .hets
        .into_iter()
        .map(|(job, (submit, leader, offset))| (job, submit, leader, offset))
        .collect();
    job_het::set(conn, cluster, &hets)?;
    let (jobs_to_delete, runs) = rewrite(batch.runs, |r| r.job_id);
    jobs::delete_jobs(conn, cluster, &jobs_to_delete)?;
    jobs::insert_many(conn, &runs)?;
    job_spans::widen(conn, cluster, &runs)?;
    let (step_jobs_to_delete, step_rows) = rewrite(batch.steps, |s| s.job_id);
    steps::delete_jobs(conn, cluster, &step_jobs_to_delete)?;
    steps::insert_many(conn, &step_rows)?;
    let mut new_events = Vec::new();
    for t in batch.events.into_iter().filter(|t| t.dirty) {
        if t.stored {
            node_events::update(conn, &t.row)?;
        } else {
            let r = t.row;
            new_events.push(NewNodeEvent {
                cluster: r.cluster,
                node_name: r.node_name,
                time_start: r.time_start,
                time_end: r.time_end,
                kind: r.kind,
                reason: r.reason,
                reason_uid: r.reason_uid,
                cpus: r.cpus,
            });
        }
    }
    node_events::insert_many(conn, &new_events)?;
    job_resizes::insert_many(conn, &batch.resizes)?;
    for (job_id, qos) in &batch.qos {
        super::qos::record_job(conn, cluster, *job_id, qos)?;
    }
    Ok(())
}
