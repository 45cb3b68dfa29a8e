//! The `fed_jobs` table: one row per federated job the dbd arbitrates.

use std::collections::BTreeSet;

use crate::db::schema::fed_jobs;
use diesel::prelude::*;

use super::cached;
use crate::store::conn::{AnyConnection, native};
use crate::store::types::fed::{FedJob, FedPhase, RequeueMode, StartLock};

/// One row of `fed_jobs`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = fed_jobs, primary_key(federation, job_id))]
pub struct FedJobRow {
    pub federation: String,
    pub job_id: i64,
    pub origin: String,
    pub phase: i32,
    pub held: bool,
    pub is_array: bool,
    pub req_clusters: String,
    pub cluster_features: String,
    pub viable: String,
    pub active: String,
    pub lock_cluster: String,
    pub lock_token: i64,
    pub lock_expires: i64,
    pub winner: String,
    pub requeue: i32,
    pub final_state: i64,
    pub exit_code: i32,
    pub version: i64,
    pub time_submit: i64,
    pub time_start: i64,
    pub time_end: i64,
    pub mod_time: i64,
    pub job_desc: Vec<u8>,
}

/// A set of cluster names as stored: sorted, comma-joined.
pub fn join_set(set: &BTreeSet<String>) -> String {
    set.iter().map(String::as_str).collect::<Vec<_>>().join(",")
}

/// A stored set of cluster names.
pub fn split_set(s: &str) -> BTreeSet<String> {
    s.split(',')
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

fn u64_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl FedJobRow {
    /// The row of `job`, stamped with `now`.
    pub fn from_job(job: &FedJob, now: i64) -> Self {
        let (lock_cluster, lock_token, lock_expires) = match &job.lock {
            Some(l) => (l.cluster.clone(), i64_of(l.token), l.expires),
            None => (String::new(), 0, 0),
        };
        Self {
            federation: job.federation.clone(),
            job_id: i64::from(job.job_id),
            origin: job.origin.clone(),
            phase: job.phase.stored(),
            held: job.held,
            is_array: job.is_array,
            req_clusters: job.req_clusters.clone(),
            cluster_features: job.cluster_features.clone(),
            viable: join_set(&job.viable),
            active: join_set(&job.active),
            lock_cluster,
            lock_token,
            lock_expires,
            winner: job.winner.clone().unwrap_or_default(),
            requeue: job.requeue.stored(),
            final_state: i64::from(job.final_state),
            exit_code: job.exit_code,
            version: i64_of(job.version),
            time_submit: job.submit_time,
            time_start: job.start_time,
            time_end: job.end_time,
            mod_time: now,
            job_desc: job.desc.clone(),
        }
    }

    /// The job this row records.
    pub fn into_job(self) -> FedJob {
        let lock = (!self.lock_cluster.is_empty()).then(|| StartLock {
            cluster: self.lock_cluster,
            token: u64_of(self.lock_token),
            expires: self.lock_expires,
        });
        FedJob {
            federation: self.federation,
            job_id: u32::try_from(self.job_id).unwrap_or(0),
            origin: self.origin,
            phase: FedPhase::from_stored(self.phase),
            held: self.held,
            is_array: self.is_array,
            req_clusters: self.req_clusters,
            cluster_features: self.cluster_features,
            viable: split_set(&self.viable),
            active: split_set(&self.active),
            lock,
            winner: (!self.winner.is_empty()).then_some(self.winner),
            requeue: RequeueMode::from_stored(self.requeue),
            final_state: u32::try_from(self.final_state).unwrap_or(0),
            exit_code: self.exit_code,
            version: u64_of(self.version),
            submit_time: self.time_submit,
            start_time: self.time_start,
            end_time: self.time_end,
            desc: self.job_desc,
        }
    }
}

/// Bumps the job's version as the transaction's first write, which takes the row's lock on
/// every backend (and SQLite's write lock), so concurrent requests on one job run one after
/// the other. Returns whether the job exists.
pub fn claim(conn: &mut AnyConnection, federation: &str, job_id: u32) -> QueryResult<bool> {
    let claim = cached::update(
        fed_jobs::table,
        fed_jobs::federation
            .eq(federation)
            .and(fed_jobs::job_id.eq(i64::from(job_id))),
        fed_jobs::version.eq(fed_jobs::version + 1),
    );
    let n = native!(conn, c => claim.execute(c))?;
    Ok(n == 1)
}

/// The job `job_id` of `federation`.
pub fn get(
    conn: &mut AnyConnection,
    federation: &str,
    job_id: u32,
) -> QueryResult<Option<FedJobRow>> {
    native!(conn, c => fed_jobs::table
        .find((federation, i64::from(job_id)))
        .select(FedJobRow::as_select())
        .get_result(c)
        .optional())
}

/// Inserts a new job.
pub fn insert(conn: &mut AnyConnection, row: &FedJobRow) -> QueryResult<()> {
    native!(conn, c => diesel::insert_into(fed_jobs::table)
        .values(row)
        .execute(c)
        .map(|_| ()))
}

/// Writes every column of an existing job.
pub fn update(conn: &mut AnyConnection, row: &FedJobRow) -> QueryResult<()> {
    let update = cached::update(
        fed_jobs::table,
        fed_jobs::federation
            .eq(&row.federation)
            .and(fed_jobs::job_id.eq(row.job_id)),
        row,
    );
    native!(conn, c => update.execute(c)).map(|_| ())
}

/// The clusters a live job refers to: `(federation, job_id, origin, viable, active, winner,
/// lock_cluster)`, as stored.
pub type LiveRefs = (String, i64, String, String, String, String, String);

/// The cluster references of every live (pending or started) job, in one query.
pub fn live_refs(conn: &mut AnyConnection) -> QueryResult<Vec<LiveRefs>> {
    let live = [FedPhase::Pending.stored(), FedPhase::Started.stored()];
    fed_jobs::table
        .filter(fed_jobs::phase.eq_any(live))
        .select((
            fed_jobs::federation,
            fed_jobs::job_id,
            fed_jobs::origin,
            fed_jobs::viable,
            fed_jobs::active,
            fed_jobs::winner,
            fed_jobs::lock_cluster,
        ))
        .order((fed_jobs::federation, fed_jobs::job_id))
        .load(conn)
}

/// The live jobs of `federation` in which `cluster` takes part (origin, sibling, lock holder
/// or winner), at most `limit` of them.
pub fn live_involving(
    conn: &mut AnyConnection,
    federation: &str,
    cluster: &str,
    limit: usize,
) -> QueryResult<Vec<FedJobRow>> {
    let live = [FedPhase::Pending.stored(), FedPhase::Started.stored()];
    let pattern = format!("%{cluster}%");
    let rows: Vec<FedJobRow> = fed_jobs::table
        .filter(fed_jobs::federation.eq(federation))
        .filter(fed_jobs::phase.eq_any(live))
        .filter(
            fed_jobs::origin
                .eq(cluster)
                .or(fed_jobs::winner.eq(cluster))
                .or(fed_jobs::lock_cluster.eq(cluster))
                .or(fed_jobs::active.like(pattern)),
        )
        .order(fed_jobs::job_id)
        .select(FedJobRow::as_select())
        .load(conn)?;
    // `like` also matches names containing `cluster`; keep exact members only.
    Ok(rows
        .into_iter()
        .filter(|r| {
            r.origin == cluster
                || r.winner == cluster
                || r.lock_cluster == cluster
                || split_set(&r.active).contains(cluster)
        })
        .take(limit)
        .collect())
}
