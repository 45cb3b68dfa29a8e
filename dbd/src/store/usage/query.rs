//! The report reads: cluster utilization and association usage from the rollup table Slurm's
//! rule picks for the window, job sizes from the job runs themselves.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::db::schema::{associations, clusters, job_runs};
use diesel::prelude::*;
use sluice_reports::period::sum;
use sluice_reports::tree::{lineage, subtree_totals};
use sluice_reports::{Calendar, Period, Span, Tres, UsageSecs, sizes};

use super::load;
use super::rows::{self, narrow};
use super::{
    AssocReport, AssocUsage, ClusterReport, ClusterUsage, JobSizesQuery, JobSizesReport,
    JobSizesRow, UsageQuery,
};
use crate::store::conn::AnyConnection;
use crate::store::error::StoreError;
use crate::store::models::bulk::IN_CHUNK;

/// The root of every account tree; accounts the tree does not know hang under it.
const ROOT: &str = "root";

fn tres_ids(tres: &[Tres]) -> Vec<i32> {
    if tres.is_empty() {
        vec![Tres::Cpu.id()]
    } else {
        tres.iter().map(|t| t.id()).collect()
    }
}

/// The clusters a report covers: those named, or every cluster with usage (naming them lets
/// the usage tables' keys, which lead with the cluster, find the rows).
fn covered(c: &mut AnyConnection, clusters: &[String]) -> Result<Vec<String>, StoreError> {
    if !clusters.is_empty() {
        return Ok(clusters.to_vec());
    }
    Ok(rows::states(c)?.into_iter().map(|(name, _)| name).collect())
}

/// Cluster usage per (cluster, TRES) over the window, from `period`'s rows.
fn cluster_usage(
    c: &mut AnyConnection,
    clusters: &[String],
    period: Period,
    window: Span,
    tres: &[Tres],
) -> Result<Vec<ClusterUsage>, StoreError> {
    let mut by_key: BTreeMap<(String, i32), Vec<(i64, UsageSecs)>> = BTreeMap::new();
    for r in rows::cluster_rows(
        c,
        clusters,
        period,
        window.start,
        window.end,
        &tres_ids(tres),
    )? {
        let u = r.usage();
        by_key
            .entry((r.cluster, r.tres))
            .or_default()
            .push((r.time_start, u));
    }
    Ok(by_key
        .into_iter()
        .filter_map(|((cluster, id), parts)| {
            Tres::from_id(id).map(|tres| ClusterUsage {
                cluster,
                tres,
                usage: sum(parts),
            })
        })
        .collect())
}

/// `ClusterUtilization`.
pub fn cluster_report(
    c: &mut AnyConnection,
    cal: &Calendar,
    q: &UsageQuery,
    now: i64,
) -> Result<ClusterReport, StoreError> {
    let period = Period::pick(cal, q.start, q.end, now);
    let clusters = covered(c, &q.clusters)?;
    let rows = cluster_usage(c, &clusters, period, Span::new(q.start, q.end), &q.tres)?;
    Ok(ClusterReport { period, rows })
}

/// Per cluster, account → parent account, from the live account associations.
fn parents(
    c: &mut AnyConnection,
    clusters: &[String],
) -> Result<HashMap<String, BTreeMap<String, String>>, StoreError> {
    let mut q = associations::table
        .filter(associations::user_name.eq(""))
        .filter(associations::deleted.eq(false))
        .into_boxed();
    if !clusters.is_empty() {
        q = q.filter(associations::cluster.eq_any(clusters));
    }
    let rows: Vec<(String, String, String)> = q
        .select((
            associations::cluster,
            associations::account,
            associations::parent_account,
        ))
        .load(c)?;
    let mut out: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for (cluster, account, parent) in rows {
        out.entry(cluster).or_default().insert(account, parent);
    }
    Ok(out)
}

/// The parent map of a cluster with every account in `accounts` placed: unknown ones under
/// `root`.
fn tree_with<'a>(
    known: Option<&BTreeMap<String, String>>,
    accounts: impl Iterator<Item = &'a String>,
) -> BTreeMap<String, String> {
    let mut tree = known.cloned().unwrap_or_default();
    for a in accounts {
        if a != ROOT && !tree.contains_key(a) {
            tree.insert(a.clone(), ROOT.to_string());
        }
    }
    tree
}

/// Whether `account` is one of `filter` or below one of them (an empty filter takes all).
fn selected(account: &str, tree: &BTreeMap<String, String>, filter: &[String]) -> bool {
    filter.is_empty()
        || lineage(account, tree)
            .iter()
            .any(|a| filter.iter().any(|f| f == a))
}

/// `AssocUtilization`: user rows, and account rows holding their sub-tree's usage.
pub fn assoc_report(
    c: &mut AnyConnection,
    cal: &Calendar,
    q: &UsageQuery,
    now: i64,
) -> Result<AssocReport, StoreError> {
    let period = Period::pick(cal, q.start, q.end, now);
    let window = Span::new(q.start, q.end);
    let clusters = covered(c, &q.clusters)?;
    let keys: HashMap<i64, (String, String, String)> = rows::assoc_keys(c, &clusters)?
        .into_iter()
        .map(|k| (k.id, (k.cluster, k.account, k.user_name)))
        .collect();
    let mut used: BTreeMap<(i64, i32), u64> = BTreeMap::new();
    for r in rows::assoc_rows(
        c,
        &clusters,
        period,
        window.start,
        window.end,
        &tres_ids(&q.tres),
    )? {
        let slot = used.entry((r.assoc_id, r.tres)).or_default();
        *slot = slot.saturating_add(narrow(r.alloc_secs));
    }
    // (cluster, tres) → ((account, user) → secs)
    let mut by_cluster: BTreeMap<(String, i32), BTreeMap<(String, String), u64>> = BTreeMap::new();
    for ((id, tres), secs) in used {
        let Some((cluster, account, user)) = keys.get(&id) else {
            continue;
        };
        if !q.users.is_empty() && !q.users.contains(user) {
            continue;
        }
        let slot = by_cluster
            .entry((cluster.clone(), tres))
            .or_default()
            .entry((account.clone(), user.clone()))
            .or_default();
        *slot = slot.saturating_add(secs);
    }
    let parents = parents(c, &clusters)?;
    let mut out = Vec::new();
    for ((cluster, id), users) in by_cluster {
        let Some(tres) = Tres::from_id(id) else {
            continue;
        };
        let tree = tree_with(parents.get(&cluster), users.keys().map(|(a, _)| a));
        let users: BTreeMap<(String, String), u64> = users
            .into_iter()
            .filter(|((account, _), _)| selected(account, &tree, &q.accounts))
            .collect();
        let mut own: BTreeMap<String, u64> = BTreeMap::new();
        for ((account, _), secs) in &users {
            *own.entry(account.clone()).or_default() += secs;
        }
        for (account, secs) in subtree_totals(&tree, &own) {
            if selected(&account, &tree, &q.accounts) {
                out.push(AssocUsage {
                    parent_account: tree.get(&account).cloned().unwrap_or_default(),
                    cluster: cluster.clone(),
                    account,
                    user: String::new(),
                    tres,
                    alloc_secs: secs,
                });
            }
        }
        for ((account, user), secs) in users {
            out.push(AssocUsage {
                cluster: cluster.clone(),
                parent_account: account.clone(),
                account,
                user,
                tres,
                alloc_secs: secs,
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.cluster, a.tres, &a.account, &a.user).cmp(&(&b.cluster, b.tres, &b.account, &b.user))
    });
    let clusters = cluster_usage(c, &clusters, period, window, &q.tres)?;
    Ok(AssocReport {
        period,
        rows: out,
        clusters,
    })
}

/// `JobSizes`: per account, TRES-seconds and jobs that ran in the window, by job size.
pub fn job_sizes(
    c: &mut AnyConnection,
    cal: &Calendar,
    q: &JobSizesQuery,
    now: i64,
) -> Result<JobSizesReport, StoreError> {
    let period = Period::pick(cal, q.start, q.end, now);
    let window = Span::new(q.start, q.end);
    let names: Vec<String> = if q.clusters.is_empty() {
        clusters::table
            .filter(clusters::deleted.eq(false))
            .order(clusters::name)
            .select(clusters::name)
            .load(c)?
    } else {
        q.clusters.clone()
    };
    let parents = parents(c, &names)?;
    // Every cluster's jobs first: with `individual` the buckets are the sizes they have.
    let mut jobs_of = Vec::with_capacity(names.len());
    for cluster in &names {
        let runs = load::runs_running_in(c, cluster, window.start, window.end)?;
        let runs = runs_of_users(c, cluster, runs, &q.uids)?;
        let mut uses = load::job_uses(c, cluster, &runs, |r| r.account.clone())?;
        uses.retain(|u| window.overlap(u.start, u.end) > 0);
        jobs_of.push(uses);
    }
    let buckets = if q.individual {
        Buckets::Sizes(
            jobs_of
                .iter()
                .flatten()
                .map(|u| u.alloc.get(q.tres))
                .collect::<BTreeSet<u64>>()
                .into_iter()
                .collect(),
        )
    } else {
        Buckets::Ranges(sizes::normalize(&q.grouping))
    };
    let count = buckets.count();
    let mut out = Vec::new();
    for (cluster, uses) in names.iter().zip(jobs_of) {
        let tree = tree_with(parents.get(cluster), uses.iter().map(|u| &u.key));
        let mut by_account: BTreeMap<String, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
        for u in &uses {
            if !selected(&u.key, &tree, &q.accounts) {
                continue;
            }
            let Some(bucket) = buckets.of(u.alloc.get(q.tres)) else {
                continue;
            };
            let (secs, jobs) = by_account
                .entry(u.key.clone())
                .or_insert_with(|| (vec![0; count], vec![0; count]));
            secs[bucket] = secs[bucket].saturating_add(u.alloc_in(window).get(q.tres));
            jobs[bucket] += 1;
        }
        // Every ancestor gets a row (empty if it ran nothing itself), so a client can fold
        // accounts into their parents.
        let mut ancestors: Vec<String> = Vec::new();
        for account in by_account.keys() {
            ancestors.extend(
                lineage(account, &tree)
                    .into_iter()
                    .skip(1)
                    .map(str::to_string),
            );
        }
        for a in ancestors {
            by_account
                .entry(a)
                .or_insert_with(|| (vec![0; count], vec![0; count]));
        }
        for (account, (bucket_secs, bucket_jobs)) in by_account {
            out.push(JobSizesRow {
                cluster: cluster.clone(),
                parent_account: tree.get(&account).cloned().unwrap_or_default(),
                account,
                bucket_secs,
                bucket_jobs,
            });
        }
    }
    let clusters = cluster_usage(c, &names, period, window, &[q.tres])?;
    Ok(JobSizesReport {
        period,
        bounds: buckets.into_bounds(),
        rows: out,
        clusters,
    })
}

/// The job-size buckets of a report.
enum Buckets {
    /// Ranges from 0 and from each of these lower bounds on.
    Ranges(Vec<u64>),
    /// One bucket per size, ascending (`Grouping=individual`).
    Sizes(Vec<u64>),
}

impl Buckets {
    fn count(&self) -> usize {
        match self {
            Self::Ranges(bounds) => sizes::bucket_count(bounds),
            Self::Sizes(s) => s.len(),
        }
    }

    /// The bucket of a job of `size` (`None`: a size the buckets do not have).
    fn of(&self, size: u64) -> Option<usize> {
        match self {
            Self::Ranges(bounds) => Some(sizes::bucket_of(size, bounds)),
            Self::Sizes(s) => s.binary_search(&size).ok(),
        }
    }

    fn into_bounds(self) -> Vec<u64> {
        match self {
            Self::Ranges(b) | Self::Sizes(b) => b,
        }
    }
}

/// The runs of `runs` (of `cluster`) by one of `uids`; all of them when `uids` is empty.
fn runs_of_users(
    c: &mut AnyConnection,
    cluster: &str,
    runs: Vec<load::RunRow>,
    uids: &[u32],
) -> Result<Vec<load::RunRow>, StoreError> {
    if uids.is_empty() {
        return Ok(runs);
    }
    let uids: Vec<i64> = uids.iter().map(|&u| i64::from(u)).collect();
    let mut ids: Vec<i64> = runs.iter().map(|r| r.job_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut theirs: HashSet<(i64, i32)> = HashSet::new();
    for chunk in ids.chunks(IN_CHUNK) {
        let keys: Vec<(i64, i32)> = job_runs::table
            .filter(job_runs::cluster.eq(cluster))
            .filter(job_runs::job_id.eq_any(chunk))
            .filter(job_runs::uid.eq_any(&uids))
            .select((job_runs::job_id, job_runs::run))
            .load(c)?;
        theirs.extend(keys);
    }
    Ok(runs
        .into_iter()
        .filter(|r| theirs.contains(&r.key()))
        .collect())
}
