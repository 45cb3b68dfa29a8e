//! `sacct --federation` without `-D`: Slurm's `_remove_duplicate_fed_jobs`. The store shows one
//! run per job id and cluster, but across the clusters of a federation one id may be shown
//! several times: siblings of one federated job (every copy of a pending job that was cancelled
//! ends CANCELLED on its own cluster), or, once ids roll over, an older job. Slurm keeps them
//! all unless the result also holds a run with that id submitted more than a day later: job ids
//! do not roll over within a day, so only older runs are taken for another job and left out.
//!
//! The newer run may be on any searched cluster, on any page: one read by job id (the primary
//! key, cluster by cluster) finds it, and it counts only if it matches the query itself.

use std::collections::{HashMap, HashSet};

use super::query::RunSource;
use super::types::JobQuery;
use super::window;
use crate::store::models::bulk::IN_CHUNK;
use crate::store::models::jobs::JobRunRow;

/// How much later a run with the same id must have been submitted to hide an older one.
const DAY_SECS: i64 = 86_400;

/// `rows` (runs in the result of `query`; `nodes` its expanded node filter) without those a
/// run of the result with the same job id, submitted more than a day later, supersedes.
pub(super) fn drop_superseded<S: RunSource>(
    src: &mut S,
    query: &JobQuery,
    nodes: &HashSet<String>,
    rows: Vec<JobRunRow>,
) -> Result<Vec<JobRunRow>, S::Error> {
    let Some(oldest) = rows.iter().map(|r| r.time_submit).min() else {
        return Ok(rows);
    };
    if !query.federation || query.duplicates {
        return Ok(rows);
    }
    let newest = newest_submits(src, query, nodes, &rows, oldest.saturating_add(DAY_SECS))?;
    Ok(rows
        .into_iter()
        .filter(|r| {
            newest
                .get(&r.job_id)
                .is_none_or(|&n| n <= r.time_submit.saturating_add(DAY_SECS))
        })
        .collect())
}

/// For each job id of `rows`, the latest submit time after `after` of a run in the result of
/// `query` (only ids that have one).
fn newest_submits<S: RunSource>(
    src: &mut S,
    query: &JobQuery,
    nodes: &HashSet<String>,
    rows: &[JobRunRow],
    after: i64,
) -> Result<HashMap<i64, i64>, S::Error> {
    let mut ids: Vec<i64> = rows.iter().map(|r| r.job_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let names = if query.clusters.is_empty() {
        src.cluster_names()?
    } else {
        query.clusters.clone()
    };
    let mut newest: HashMap<i64, i64> = HashMap::new();
    for cluster in names {
        for chunk in ids.chunks(IN_CHUNK) {
            let later = src.newer_runs(&cluster, query, chunk, after)?;
            for r in later.iter().filter(|r| in_result(r, query, nodes)) {
                let n = newest.entry(r.job_id).or_insert(r.time_submit);
                *n = (*n).max(r.time_submit);
            }
        }
    }
    Ok(newest)
}

/// Whether `r`, a newest non-REVOKED run of a searched cluster, is in the result of `query`.
fn in_result(r: &JobRunRow, query: &JobQuery, nodes: &HashSet<String>) -> bool {
    let named = |id: i64| query.job_ids.iter().any(|&j| i64::from(j) == id);
    let by_id = query.job_ids.is_empty() || named(r.job_id) || named(r.array_job_id);
    by_id && window::keep_record(r, query, nodes)
}
