//! Rolling a cluster's closed hours up, then the days and months they close.
//!
//! A roll goes forward from the cluster's rolled mark to the last closed hour, a day of hours
//! per transaction (so ingest and reports wait at most that long for the store). It carries
//! the runs still going from one step to the next: each step reads the runs submitted in its
//! hours plus the carried ones (by key, fresh), so rolling a long backlog reads every run about
//! once, however long the history. Each step re-checks the mark in its transaction: if a late
//! record moved it back meanwhile, the roll starts over from there.

use std::collections::{BTreeMap, HashMap};

use sluice_reports::calendar::HOUR;
use sluice_reports::period::{closed_days, closed_months, sum};
use sluice_reports::{Calendar, Period, Span, Tres, roll_hour};

use super::load::{self, RunRow};
use super::rows::{self, AssocRow, ClusterRow, wide};
use crate::store::conn::AnyConnection;
use crate::store::error::StoreError;
use crate::store::{Apply, Store};

/// Hours rolled per transaction.
const STEP_HOURS: i64 = 24;
/// Times a roll starts over because late records keep arriving, before it leaves the rest to
/// the next round.
const MAX_RESTARTS: u32 = 8;

/// What one step of a roll did.
enum Step {
    /// Rolled `hours`; `carry` are the runs still going at its end.
    Done { hours: u64, carry: Vec<(i64, i32)> },
    /// The rolled mark moved meanwhile: start over.
    Restart,
}

/// Rolls `cluster`'s hours that closed by `now` and are not rolled yet; returns how many.
pub fn roll_cluster(
    store: &Store,
    cal: &Calendar,
    cluster: &str,
    now: i64,
) -> Result<u64, StoreError> {
    let to = cal.hour_start(now);
    let mut hours = 0;
    for _ in 0..=MAX_RESTARTS {
        let begin = store.read(|c| {
            let Some(state) = rows::state(c, cluster)? else {
                return Ok(None);
            };
            let from = cal.hour_start(state.rolled_until);
            if from >= to {
                return Ok(None);
            }
            let carried = load::runs_active_at(c, cluster, from)?;
            Ok(Some((state.rolled_until, keys(&carried))))
        })?;
        let Some((mut mark, mut carry)) = begin else {
            return Ok(hours);
        };
        loop {
            let from = cal.hour_start(mark);
            if from >= to {
                return Ok(hours);
            }
            let span = (from, (from + STEP_HOURS * HOUR).min(to));
            match store.change(Apply::Commit, |c| step(c, cal, cluster, mark, span, &carry))? {
                Step::Done {
                    hours: n,
                    carry: next,
                } => {
                    hours += n;
                    carry = next;
                    mark = span.1;
                }
                Step::Restart => break,
            }
        }
    }
    Ok(hours)
}

fn keys(runs: &[RunRow]) -> Vec<(i64, i32)> {
    let mut keys: Vec<_> = runs.iter().map(RunRow::key).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Rolls the hours of `[from, to)` (the mark being at `mark`), and the days and months whose
/// last hour is among them.
fn step(
    c: &mut AnyConnection,
    cal: &Calendar,
    cluster: &str,
    mark: i64,
    (from, to): (i64, i64),
    carry: &[(i64, i32)],
) -> Result<Step, StoreError> {
    if rows::state(c, cluster)?.map(|s| s.rolled_until) != Some(mark) {
        return Ok(Step::Restart);
    }
    let mut runs: BTreeMap<(i64, i32), RunRow> = load::runs_by_key(c, cluster, carry)?
        .into_iter()
        .map(|r| (r.key(), r))
        .collect();
    for r in load::runs_submitted_in(c, cluster, from, to)? {
        runs.insert(r.key(), r);
    }
    let runs: Vec<RunRow> = runs.into_values().collect();
    let ids = assoc_ids(c, cluster, &runs)?;
    let uses = load::job_uses(c, cluster, &runs, |r| {
        ids.get(&(r.account.clone(), r.user_name.clone()))
            .copied()
            .unwrap_or(0)
    })?;
    let (capacity, down) = load::events_in(c, cluster, from, to)?;
    let (mut cluster_rows, mut assoc_rows) = (Vec::new(), Vec::new());
    let mut hour = from;
    while hour < to {
        let r = roll_hour(Span::new(hour, hour + HOUR), &capacity, &down, &uses);
        if r.clipped.contains(&Tres::Cpu) {
            tracing::warn!(
                cluster,
                hour,
                "We have more allocated time than is possible (this may happen if oversubscription of resources is allowed in some partition)"
            );
        }
        for t in Tres::ALL {
            cluster_rows.push(ClusterRow::new(cluster, Period::Hour, hour, t, r.tres(t)));
        }
        for ((assoc_id, t), secs) in r.assoc {
            assoc_rows.push(AssocRow {
                cluster: cluster.to_string(),
                period: Period::Hour.id(),
                time_start: hour,
                assoc_id,
                tres: t.id(),
                alloc_secs: wide(secs),
            });
        }
        hour += HOUR;
    }
    rows::replace(
        c,
        cluster,
        Period::Hour,
        (from, to),
        &cluster_rows,
        &assoc_rows,
    )?;
    for day in closed_days(cal, from, to) {
        sum_up(c, cluster, Period::Hour, day, Period::Day)?;
    }
    for month in closed_months(cal, from, to) {
        sum_up(c, cluster, Period::Day, month, Period::Month)?;
    }
    if !rows::move_rolled(c, cluster, mark, to)? {
        return Ok(Step::Restart);
    }
    let still: Vec<RunRow> = runs.into_iter().filter(|r| r.active_after(to)).collect();
    Ok(Step::Done {
        hours: u64::try_from((to - from) / HOUR).unwrap_or(0),
        carry: keys(&still),
    })
}

/// The usage ids of the (account, user) pairs of `runs`, numbering the new ones.
fn assoc_ids(
    c: &mut AnyConnection,
    cluster: &str,
    runs: &[RunRow],
) -> Result<HashMap<(String, String), i64>, StoreError> {
    let clusters = [cluster.to_string()];
    let load = |c: &mut AnyConnection| -> Result<HashMap<(String, String), i64>, StoreError> {
        Ok(rows::assoc_keys(c, &clusters)?
            .into_iter()
            .map(|k| ((k.account, k.user_name), k.id))
            .collect())
    };
    let ids = load(c)?;
    let mut missing: Vec<(String, String)> = runs
        .iter()
        .filter(|r| r.time_start != 0)
        .map(|r| (r.account.clone(), r.user_name.clone()))
        .filter(|k| !ids.contains_key(k))
        .collect();
    if missing.is_empty() {
        return Ok(ids);
    }
    missing.sort_unstable();
    missing.dedup();
    rows::insert_assoc_keys(c, cluster, &missing)?;
    load(c)
}

/// Replaces `cluster`'s `upper` row of `span` by the sum of its `lower` rows.
fn sum_up(
    c: &mut AnyConnection,
    cluster: &str,
    lower: Period,
    span: Span,
    upper: Period,
) -> Result<(), StoreError> {
    let clusters = [cluster.to_string()];
    let mut by_tres: BTreeMap<i32, Vec<(i64, sluice_reports::UsageSecs)>> = BTreeMap::new();
    for r in rows::cluster_rows(c, &clusters, lower, span.start, span.end, &[])? {
        by_tres
            .entry(r.tres)
            .or_default()
            .push((r.time_start, r.usage()));
    }
    let cluster_rows: Vec<ClusterRow> = by_tres
        .into_iter()
        .filter_map(|(id, parts)| {
            Tres::from_id(id).map(|t| ClusterRow::new(cluster, upper, span.start, t, &sum(parts)))
        })
        .collect();
    let mut by_assoc: BTreeMap<(i64, i32), i64> = BTreeMap::new();
    for r in rows::assoc_rows(c, &clusters, lower, span.start, span.end, &[])? {
        let slot = by_assoc.entry((r.assoc_id, r.tres)).or_default();
        *slot = slot.saturating_add(r.alloc_secs);
    }
    let assoc_rows: Vec<AssocRow> = by_assoc
        .into_iter()
        .map(|((assoc_id, tres), alloc_secs)| AssocRow {
            cluster: cluster.to_string(),
            period: upper.id(),
            time_start: span.start,
            assoc_id,
            tres,
            alloc_secs,
        })
        .collect();
    rows::replace(
        c,
        cluster,
        upper,
        (span.start, span.start + 1),
        &cluster_rows,
        &assoc_rows,
    )?;
    Ok(())
}
