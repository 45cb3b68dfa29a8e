//! Fair share in the accounting database: the shares of associations (`assoc_fairshare`, a
//! row only for an association whose `Fairshare=` was set; Slurm's default is 1) and the
//! decayed usage of each association, computed from the job runs when asked.
//!
//! Usage lives here, not in the controller: the runs of every cluster are already in the
//! database (so a restarted controller, or `sshare` on a login host, sees the same numbers),
//! and the decay is a closed form over each run (`sluice_vocab::fairshare::decayed_usage`),
//! so nothing has to be rolled up or stored as usage goes by.

use crate::db::schema::{assoc_fairshare, job_qos, job_runs, qos};
use crate::store::conn::AnyConnection;
use crate::store::models::associations as assoc_rows;
use crate::store::{Association, AssociationFilter, StoreError};
use diesel::prelude::*;
use sluice_vocab::fairshare::{Shares, decayed_usage};
use sluice_vocab::qos::UsageFactor;
use std::collections::HashMap;

/// Shares an association has when none were set (Slurm's default `Fairshare=1`).
pub const DEFAULT_SHARES: i64 = 1;

/// How usage is counted: decay half-life (0: none) and the reset boundary, at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageWindow {
    /// Unix seconds.
    pub now: i64,
    /// Seconds; 0 for no decay.
    pub half_life: i64,
    /// Runs count only after this (unix seconds; 0: all).
    pub since: i64,
}

/// An association's fair-share data.
#[derive(Debug, Clone, PartialEq)]
pub struct AssocShare {
    /// The association.
    pub assoc: Association,
    /// Its `Fairshare=` in stored form (-1: parent).
    pub shares: i64,
    /// Decayed CPU-seconds of the runs charged to it.
    pub raw_usage: f64,
    /// Decayed megabyte-seconds of memory of those runs (for `GrpTRESMins=mem=`).
    pub mem_usage: f64,
    /// Decayed node-seconds of those runs (for `GrpTRESMins=node=`).
    pub node_usage: f64,
    /// CPU-minutes its running jobs have left within their time limits.
    pub run_cpu_mins: u64,
}

/// What the runs charged to one association (or of one QOS) used, decayed, in TRES-seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Used {
    /// CPU-seconds.
    pub cpu: f64,
    /// Megabyte-seconds of memory.
    pub mem: f64,
    /// Node-seconds.
    pub node: f64,
    /// CPU-minutes the running ones have left within their time limits.
    pub run_cpu_mins: u64,
}

/// One run as usage counts it: CPUs, start, end (0: running), time limit in minutes, memory in
/// megabytes, nodes.
type RunUse = (i64, i64, i64, i64, i64, i64);

impl Used {
    /// Adds run `r`'s decayed usage in `w`, each second counting `factor` (its QOS's
    /// `UsageFactor`).
    fn charge(&mut self, r: RunUse, w: UsageWindow, factor: f64) {
        let (cpus, start, end, limit_min, mem_mb, nodes) = r;
        let running = end == 0;
        let end = if running { w.now } else { end };
        let cpus = cpus.max(0);
        // The decay is linear in the weight: one integral of time serves every resource.
        let secs = decayed_usage(1.0, start, end, w.now, w.half_life, w.since) * factor;
        if running && limit_min > 0 {
            let left_secs = (start + limit_min * 60 - w.now).max(0);
            let left_cpu_mins = (left_secs / 60 * cpus) as f64 * factor;
            self.run_cpu_mins += left_cpu_mins as u64;
        }
        self.cpu += secs * cpus as f64;
        self.mem += secs * mem_mb.max(0) as f64;
        self.node += secs * nodes.max(0) as f64;
    }
}

/// The columns of a run that its usage is charged from (see `Used::charge`).
const CHARGED: (
    job_runs::cpus,
    job_runs::time_start,
    job_runs::time_end,
    job_runs::time_limit_min,
    job_runs::mem_mb,
    job_runs::node_count,
) = (
    job_runs::cpus,
    job_runs::time_start,
    job_runs::time_end,
    job_runs::time_limit_min,
    job_runs::mem_mb,
    job_runs::node_count,
);

/// The oldest end a run may have and still count in `w`: with decay, runs that ended 64
/// half-lives ago weigh less than 2^-64 and are skipped.
fn cutoff(w: UsageWindow) -> i64 {
    let horizon = if w.half_life > 0 {
        w.now.saturating_sub(w.half_life.saturating_mul(64))
    } else {
        0
    };
    horizon.max(w.since)
}

/// What the jobs of each QOS used on `cluster` in `w` (every run that started, up to its end
/// or `now`), by QOS name: what QOS `GrpTRESMins` limits are compared with. A run is charged
/// to the QOS its job was recorded with.
pub(crate) fn qos_usage(
    conn: &mut AnyConnection,
    cluster: &str,
    w: UsageWindow,
) -> Result<HashMap<String, Used>, StoreError> {
    let runs: Vec<(String, RunUse)> = job_runs::table
        .inner_join(
            job_qos::table.on(job_qos::cluster
                .eq(job_runs::cluster)
                .and(job_qos::job_id.eq(job_runs::job_id))),
        )
        .filter(job_runs::cluster.eq(cluster))
        .filter(job_runs::time_start.gt(0))
        .filter(
            job_runs::time_end
                .eq(0)
                .or(job_runs::time_end.gt(cutoff(w))),
        )
        .select((job_qos::qos, CHARGED))
        .load(conn)?;
    let factors = usage_factors(conn)?;
    let mut out: HashMap<String, Used> = HashMap::new();
    for (qos, run) in runs {
        let factor = factor_of(&factors, Some(&qos));
        out.entry(qos).or_default().charge(run, w, factor);
    }
    Ok(out)
}

/// Each QOS's `UsageFactor` by name (a live QOS over a deleted one of the same name).
fn usage_factors(conn: &mut AnyConnection) -> Result<HashMap<String, f64>, StoreError> {
    // Deleted rows first, so a live QOS's factor is the one kept.
    let rows: Vec<(String, i64)> = qos::table
        .select((qos::name, qos::usage_factor))
        .order(qos::deleted.desc())
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(name, stored)| {
            let f = UsageFactor::from_millionths(stored).unwrap_or_default();
            (name, f.as_f64())
        })
        .collect())
}

/// What a second of a run of QOS `qos` counts for (1 without a QOS or for one not known).
fn factor_of(factors: &HashMap<String, f64>, qos: Option<&str>) -> f64 {
    qos.and_then(|q| factors.get(q)).copied().unwrap_or(1.0)
}

/// Sets `shares` on the live associations of `user` (`""`: the accounts' own) with
/// `accounts` (empty: all of the user's) on `clusters` (empty: all); returns whether any
/// association's shares changed.
pub(crate) fn set(
    conn: &mut AnyConnection,
    clusters: &[String],
    accounts: &[String],
    user: &str,
    shares: Shares,
) -> Result<bool, StoreError> {
    let rows = assoc_rows::live(conn, clusters, accounts, &[user.to_string()])?;
    let mut changed = false;
    for row in rows {
        changed |= set_one(conn, row.id, shares)?;
    }
    Ok(changed)
}

/// Sets `shares` on association `id`; returns whether they changed.
pub(crate) fn set_one(
    conn: &mut AnyConnection,
    id: i64,
    shares: Shares,
) -> Result<bool, StoreError> {
    let want = shares.to_raw();
    let current = shares_of(conn, &[id])?;
    if current.get(&id).copied().unwrap_or(DEFAULT_SHARES) == want {
        return Ok(false);
    }
    diesel::delete(assoc_fairshare::table.find(id)).execute(conn)?;
    diesel::insert_into(assoc_fairshare::table)
        .values((
            assoc_fairshare::assoc_id.eq(id),
            assoc_fairshare::shares.eq(want),
        ))
        .execute(conn)?;
    Ok(true)
}

/// The shares set on the associations `ids` (those without a row are absent).
fn shares_of(conn: &mut AnyConnection, ids: &[i64]) -> Result<HashMap<i64, i64>, StoreError> {
    let mut out = HashMap::new();
    for chunk in ids.chunks(500) {
        let rows: Vec<(i64, i64)> = assoc_fairshare::table
            .filter(assoc_fairshare::assoc_id.eq_any(chunk))
            .select((assoc_fairshare::assoc_id, assoc_fairshare::shares))
            .load(conn)?;
        out.extend(rows);
    }
    Ok(out)
}

/// The live associations matching `filter`, with their shares, and their usage in `window`
/// when given (else 0).
pub(crate) fn list(
    conn: &mut AnyConnection,
    filter: &AssociationFilter,
    window: Option<UsageWindow>,
) -> Result<Vec<AssocShare>, StoreError> {
    let rows = assoc_rows::live(conn, &filter.clusters, &filter.accounts, &filter.users)?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let shares = shares_of(conn, &ids)?;
    let mut clusters: Vec<String> = rows.iter().map(|r| r.cluster.clone()).collect();
    clusters.sort();
    clusters.dedup();
    let mut usage = HashMap::new();
    if let Some(w) = window {
        let factors = usage_factors(conn)?;
        for cluster in &clusters {
            usage_of(conn, cluster, w, &factors, &mut usage)?;
        }
    }
    // With the limits and the QOS in force (the listing shows them all).
    let mut assocs = super::limits::with_limits(conn, rows.clone())?;
    super::qos::with_qos(conn, &rows, &mut assocs)?;
    Ok(assocs
        .into_iter()
        .map(|a| {
            let key = (a.cluster.clone(), a.account.clone(), a.user.clone());
            let used = usage.get(&key).copied().unwrap_or_default();
            let id = i64::try_from(a.id).unwrap_or(0);
            AssocShare {
                shares: shares.get(&id).copied().unwrap_or(DEFAULT_SHARES),
                raw_usage: used.cpu,
                mem_usage: used.mem,
                node_usage: used.node,
                run_cpu_mins: used.run_cpu_mins,
                assoc: a,
            }
        })
        .collect())
}

/// Adds each (cluster, account, user)'s usage on `cluster` to `out`: every run that started,
/// up to its end or `now`; running ones also give the CPU-minutes left of their time limit.
fn usage_of(
    conn: &mut AnyConnection,
    cluster: &str,
    w: UsageWindow,
    factors: &HashMap<String, f64>,
    out: &mut HashMap<(String, String, String), Used>,
) -> Result<(), StoreError> {
    let runs: Vec<(String, String, Option<String>, RunUse)> = job_runs::table
        .left_join(
            job_qos::table.on(job_qos::cluster
                .eq(job_runs::cluster)
                .and(job_qos::job_id.eq(job_runs::job_id))),
        )
        .filter(job_runs::cluster.eq(cluster))
        .filter(job_runs::time_start.gt(0))
        .filter(
            job_runs::time_end
                .eq(0)
                .or(job_runs::time_end.gt(cutoff(w))),
        )
        .select((
            job_runs::account,
            job_runs::user_name,
            job_qos::qos.nullable(),
            CHARGED,
        ))
        .load(conn)?;
    for (account, user, qos, run) in runs {
        let factor = factor_of(factors, qos.as_deref());
        out.entry((cluster.to_string(), account, user))
            .or_default()
            .charge(run, w, factor);
    }
    Ok(())
}
