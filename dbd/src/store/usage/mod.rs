//! Usage rollups (sreport's data): hourly, daily and monthly usage per cluster and TRES, and
//! allocated TRES per association, computed by the dbd as hours close, with Slurm's rules
//! (the arithmetic lives in the pure `sluice-reports` crate; this module reads and writes).
//!
//! * [`ingest`](self::ingest): at each record batch, capacity records become capacity events
//!   (node events with an empty node name, as in Slurm), suspensions are kept, and late records
//!   move the cluster's rolled mark back so the hours they touch roll again;
//! * [`roll`]: [`Store::roll_up`] rolls every cluster's closed hours, then the days and months
//!   they close, and purges old records; the daemon calls it from a background task with the
//!   clock, tests with simulated time;
//! * [`query`]: the `Reports` service's reads, from the table Slurm's rule picks.
//!
//! Times are unix seconds; days and months are local to the [`Calendar`] passed in.

mod events;
mod ingest;
mod load;
mod purge;
mod query;
mod roll;
mod rows;
pub mod task;

use std::collections::HashSet;

use sluice_reports::purge::PurgeAfter;
use sluice_reports::{Calendar, Period, Tres, UsageSecs};

pub use events::{CAPACITY_KIND, CAPACITY_REASON};
pub(super) use ingest::ingested;

use super::models::clusters;
use super::{Apply, Store, StoreError};

/// A usage report's selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageQuery {
    /// Empty = every cluster.
    pub clusters: Vec<String>,
    /// The window `[start, end)`, unix seconds (the command rounds it).
    pub start: i64,
    pub end: i64,
    /// Empty = cpu.
    pub tres: Vec<Tres>,
    /// Association reports: only these accounts and the accounts below them (empty = all).
    pub accounts: Vec<String>,
    /// Association reports: only these users' usage (empty = all).
    pub users: Vec<String>,
}

/// A cluster's usage of one TRES over a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterUsage {
    pub cluster: String,
    pub tres: Tres,
    pub usage: UsageSecs,
}

/// `ClusterUtilization`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterReport {
    /// The table read.
    pub period: Period,
    /// By cluster, then TRES.
    pub rows: Vec<ClusterUsage>,
}

/// An association's allocated TRES-seconds over a window: a user row, or (with an empty
/// `user`) an account row holding its whole sub-tree's usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssocUsage {
    pub cluster: String,
    pub account: String,
    /// `""` for an account row.
    pub user: String,
    /// An account row's parent account (`""` for root); a user row's account.
    pub parent_account: String,
    pub tres: Tres,
    pub alloc_secs: u64,
}

/// `AssocUtilization`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssocReport {
    pub period: Period,
    /// By cluster, TRES, account, user (an account's row before its users').
    pub rows: Vec<AssocUsage>,
    /// The clusters' usage over the same window (for percentages).
    pub clusters: Vec<ClusterUsage>,
}

/// `JobSizes`' selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSizesQuery {
    pub clusters: Vec<String>,
    pub start: i64,
    pub end: i64,
    /// Bucket lower bounds after 0 (empty = Slurm's 50,250,500,1000).
    pub grouping: Vec<u64>,
    pub tres: Tres,
    /// Only these accounts and those below them (empty = all).
    pub accounts: Vec<String>,
    /// `Users=`: only the jobs of these uids (empty = everyone's).
    pub uids: Vec<u32>,
    /// `Grouping=individual`: one bucket per TRES count found among the jobs (`grouping`
    /// unused).
    pub individual: bool,
}

/// One account's jobs that ran in the window, by size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSizesRow {
    pub cluster: String,
    pub account: String,
    pub parent_account: String,
    /// TRES-seconds in the window of the jobs of each bucket.
    pub bucket_secs: Vec<u64>,
    /// Jobs of each bucket.
    pub bucket_jobs: Vec<u64>,
}

/// `JobSizes`' answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSizesReport {
    /// The table the cluster totals come from.
    pub period: Period,
    /// The bucket bounds used: lower bounds after 0, or with `individual` each bucket's size.
    pub bounds: Vec<u64>,
    /// By cluster, then account; ancestors of accounts with jobs have (empty) rows too.
    pub rows: Vec<JobSizesRow>,
    pub clusters: Vec<ClusterUsage>,
}

/// How long records are kept (`None`: forever), from slurmdbd.conf's `Purge*After`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgePolicy {
    pub jobs: Option<PurgeAfter>,
    pub steps: Option<PurgeAfter>,
    pub suspends: Option<PurgeAfter>,
    pub events: Option<PurgeAfter>,
    pub usage: Option<PurgeAfter>,
}

/// Rows one purge removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeCounts {
    pub runs: usize,
    /// Earlier allocations of the purged runs (failure management's resizes).
    pub resizes: usize,
    pub steps: usize,
    pub suspends: usize,
    pub events: usize,
    pub usage_rows: usize,
}

/// What one [`Store::roll_up`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RollupSummary {
    /// Cluster-hours rolled (again, for hours late records touched).
    pub hours: u64,
    pub purged: PurgeCounts,
}

/// A cluster's rollup marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageMarks {
    /// Hours before this are rolled up.
    pub rolled_until: i64,
    /// Records before this were purged.
    pub purged_until: i64,
}

impl Store {
    /// Rolls up every cluster's hours closed by `now` that are not rolled yet (including the
    /// hours late records made stale), the days and months they close, then purges records
    /// by `policy`. Idempotent: a second call at the same `now` does nothing.
    pub fn roll_up(
        &self,
        cal: &Calendar,
        now: i64,
        policy: &PurgePolicy,
    ) -> Result<RollupSummary, StoreError> {
        // A deleted cluster's usage stops where it was deleted (its capacity would otherwise
        // count as idle forever).
        let clusters = self.read(|c| {
            let live: HashSet<String> = clusters::all(c, false)?
                .into_iter()
                .map(|r| r.name)
                .collect();
            Ok(rows::states(c)?
                .into_iter()
                .map(|(name, _)| name)
                .filter(|name| live.contains(name))
                .collect::<Vec<_>>())
        })?;
        let mut summary = RollupSummary::default();
        for cluster in clusters {
            summary.hours += roll::roll_cluster(self, cal, &cluster, now)?;
        }
        if *policy != PurgePolicy::default() {
            summary.purged = self.change(Apply::Commit, |c| purge::purge(c, cal, now, policy))?;
        }
        Ok(summary)
    }

    /// `cluster`'s rollup marks, if it ever sent a timed record.
    pub fn usage_marks(&self, cluster: &str) -> Result<Option<UsageMarks>, StoreError> {
        self.read(|c| {
            Ok(rows::state(c, cluster)?.map(|s| UsageMarks {
                rolled_until: s.rolled_until,
                purged_until: s.purged_until,
            }))
        })
    }

    /// `sreport cluster Utilization`'s data at `now`.
    pub fn cluster_utilization(
        &self,
        cal: &Calendar,
        q: &UsageQuery,
        now: i64,
    ) -> Result<ClusterReport, StoreError> {
        self.read(|c| query::cluster_report(c, cal, q, now))
    }

    /// `sreport cluster AccountUtilizationByUser`, `UserUtilizationByAccount` and
    /// `user TopUsage`'s data at `now`.
    pub fn assoc_utilization(
        &self,
        cal: &Calendar,
        q: &UsageQuery,
        now: i64,
    ) -> Result<AssocReport, StoreError> {
        self.read(|c| query::assoc_report(c, cal, q, now))
    }

    /// `sreport job SizesByAccount`'s data at `now`.
    pub fn job_sizes(
        &self,
        cal: &Calendar,
        q: &JobSizesQuery,
        now: i64,
    ) -> Result<JobSizesReport, StoreError> {
        self.read(|c| query::job_sizes(c, cal, q, now))
    }
}
