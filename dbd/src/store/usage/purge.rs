//! Purging old records (`PurgeJobAfter`, `PurgeStepAfter`, `PurgeSuspendAfter`,
//! `PurgeEventAfter`, `PurgeUsageAfter`). Only finished records go (a run, step, suspension or
//! event still open stays), and never before they are rolled up: a cluster's cut-off is at
//! most its rolled mark. Hourly usage stays until its day is summed, daily until its month is.
//! Steps and suspensions go with their jobs at the latest, a run's earlier allocations with it. Purging moves the cluster's purge
//! mark, before which hours are never rolled again (their records are gone).

use crate::db::schema::{
    job_runs, job_steps, job_suspends, node_events, usage_assoc, usage_cluster,
};
use diesel::prelude::*;
use sluice_reports::Calendar;

use super::rows;
use super::{PurgeCounts, PurgePolicy};
use crate::store::conn::AnyConnection;
use crate::store::error::StoreError;
use crate::store::models::{job_het, job_resizes, job_wckeys};

/// The later of two optional cut-offs (the one that purges more).
fn later(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Purges every cluster's records older than `policy` allows at `now`.
pub fn purge(
    c: &mut AnyConnection,
    cal: &Calendar,
    now: i64,
    policy: &PurgePolicy,
) -> Result<PurgeCounts, StoreError> {
    let cut = |p: &Option<sluice_reports::purge::PurgeAfter>| p.map(|p| p.cutoff(cal, now));
    let jobs = cut(&policy.jobs);
    let steps = later(cut(&policy.steps), jobs);
    let suspends = later(cut(&policy.suspends), jobs);
    let events = cut(&policy.events);
    let usage = cut(&policy.usage);
    let mut counts = PurgeCounts::default();
    for (cluster, state) in rows::states(c)? {
        let limit = state.rolled_until;
        let mut purged = state.purged_until;
        if let Some(t) = jobs.map(|t| t.min(limit)) {
            counts.runs += diesel::delete(
                job_runs::table
                    .filter(job_runs::cluster.eq(&cluster))
                    .filter(job_runs::time_end.ne(0))
                    .filter(job_runs::time_end.lt(t)),
            )
            .execute(c)?;
            counts.resizes += job_resizes::purge_orphans(c, &cluster, t)?;
            job_wckeys::purge_orphans(c, &cluster, t)?;
            job_het::purge_orphans(c, &cluster, t)?;
            purged = purged.max(t);
        }
        if let Some(t) = steps {
            counts.steps += diesel::delete(
                job_steps::table
                    .filter(job_steps::cluster.eq(&cluster))
                    .filter(job_steps::time_end.ne(0))
                    .filter(job_steps::time_end.lt(t)),
            )
            .execute(c)?;
        }
        if let Some(t) = suspends.map(|t| t.min(limit)) {
            counts.suspends += diesel::delete(
                job_suspends::table
                    .filter(job_suspends::cluster.eq(&cluster))
                    .filter(job_suspends::time_end.ne(0))
                    .filter(job_suspends::time_end.lt(t)),
            )
            .execute(c)?;
            purged = purged.max(t);
        }
        if let Some(t) = events.map(|t| t.min(limit)) {
            counts.events += diesel::delete(
                node_events::table
                    .filter(node_events::cluster.eq(&cluster))
                    .filter(node_events::time_end.ne(0))
                    .filter(node_events::time_end.lt(t)),
            )
            .execute(c)?;
            purged = purged.max(t);
        }
        if let Some(t) = usage {
            let limits = [
                (sluice_reports::Period::Hour, t.min(cal.day_start(limit))),
                (sluice_reports::Period::Day, t.min(cal.month_start(limit))),
                (sluice_reports::Period::Month, t),
            ];
            for (period, t) in limits {
                counts.usage_rows += diesel::delete(
                    usage_cluster::table
                        .filter(usage_cluster::cluster.eq(&cluster))
                        .filter(usage_cluster::period.eq(period.id()))
                        .filter(usage_cluster::time_start.lt(t)),
                )
                .execute(c)?;
                counts.usage_rows += diesel::delete(
                    usage_assoc::table
                        .filter(usage_assoc::cluster.eq(&cluster))
                        .filter(usage_assoc::period.eq(period.id()))
                        .filter(usage_assoc::time_start.lt(t)),
                )
                .execute(c)?;
            }
        }
        if purged > state.purged_until {
            rows::set_purged(c, &cluster, purged)?;
        }
    }
    Ok(counts)
}
