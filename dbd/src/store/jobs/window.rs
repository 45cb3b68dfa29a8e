//! What a run must satisfy to match a [`JobQuery`], twice: as SQL conditions (to read only
//! matching rows where an index range allows) and as a Rust predicate (for the reads that
//! select rows by id or by an index and leave the rest to the dbd). Both say the same thing;
//! a test checks them against each other on every backend.
//!
//! The window (`start`/`end`, 0 = open): without states, runs that could have run in it
//! (eligible by its end, or submitted with job ids; not ended before its start; never-eligible
//! runs skipped without job ids); with states, Slurm's per-state windows (PENDING / RUNNING /
//! SUSPENDED during it, other states ended in it); with states and no window at all, the runs
//! now in those states. Nothing is eligible, started or ended before it was submitted, so a
//! window end also bounds the submit time.

use std::collections::HashSet;

use crate::db::schema::job_runs;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use sluice_vocab::hostlist::Hostlist;
use sluice_vocab::states::JobState;

use super::types::JobQuery;
use crate::store::conn::MultiBackend;
use crate::store::models::jobs::JobRunRow;

/// A boxed SQL condition on `job_runs`.
pub(super) type Cond = Box<dyn BoxableExpression<job_runs::table, MultiBackend, SqlType = Bool>>;

fn all_true() -> Cond {
    Box::new(sql::<Bool>("1 = 1"))
}

fn and(a: Cond, b: Cond) -> Cond {
    Box::new(a.and(b))
}

fn pending(state: u32) -> bool {
    state == JobState::Pending.stored()
}

fn running(state: u32) -> bool {
    state == JobState::Running.stored() || state == JobState::Suspended.stored()
}

/// A RESIZING record ends at a change of a run's allocation (see `resized`); no run row holds
/// that state, so a run matches RESIZING when it ran in the window (it may hold such records),
/// and each record is then matched on its own.
fn resizing(state: u32) -> bool {
    state == JobState::Resizing.stored()
}

/// Which rows a predicate judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// Run rows, as stored: a superset of the runs whose records match.
    Run,
    /// sacct's records, resized runs split.
    Record,
}

/// The window of `query` as SQL.
pub(super) fn sql_window(query: &JobQuery) -> Cond {
    use job_runs::dsl as t;
    let (s, e) = (query.start, query.end);
    if !query.states.is_empty() && s == 0 && e == 0 {
        let states: Vec<i64> = query.states.iter().map(|&x| i64::from(x)).collect();
        if query.states.iter().any(|&x| resizing(x)) {
            return Box::new(t::state.eq_any(states).or(t::time_start.ne(0)));
        }
        return Box::new(t::state.eq_any(states));
    }
    let mut cond = all_true();
    if e != 0 {
        cond = and(cond, Box::new(t::time_submit.le(e)));
    }
    let ended_since = |s: i64| -> Cond {
        if s == 0 {
            all_true()
        } else {
            Box::new(t::time_end.eq(0).or(t::time_end.ge(s)))
        }
    };
    if !query.states.is_empty() {
        let mut any: Option<Cond> = None;
        for &state in &query.states {
            let c: Cond = if pending(state) {
                let mut c: Cond = Box::new(t::time_eligible.ne(0));
                if e != 0 {
                    c = and(c, Box::new(t::time_eligible.le(e)));
                }
                if s != 0 {
                    c = and(c, Box::new(t::time_start.eq(0).or(t::time_start.ge(s))));
                }
                and(c, ended_since(s))
            } else if running(state) || resizing(state) {
                let mut c: Cond = Box::new(t::time_start.ne(0));
                if e != 0 {
                    c = and(c, Box::new(t::time_start.le(e)));
                }
                and(c, ended_since(s))
            } else {
                let mut c: Cond = Box::new(t::state.eq(i64::from(state)));
                if s != 0 || e != 0 {
                    c = and(c, Box::new(t::time_end.ne(0)));
                }
                if s != 0 {
                    c = and(c, Box::new(t::time_end.ge(s)));
                }
                if e != 0 {
                    c = and(c, Box::new(t::time_end.le(e)));
                }
                c
            };
            any = Some(match any {
                Some(prev) => Box::new(prev.or(c)),
                None => c,
            });
        }
        return and(cond, any.unwrap_or_else(all_true));
    }
    cond = and(cond, ended_since(s));
    if query.job_ids.is_empty() {
        if s != 0 || e != 0 {
            cond = and(cond, Box::new(t::time_eligible.ne(0)));
        }
        if e != 0 {
            cond = and(cond, Box::new(t::time_eligible.le(e)));
        }
    }
    cond
}

/// The window of `query`, in Rust: for run rows the same rules as [`sql_window`].
fn in_window(r: &JobRunRow, query: &JobQuery, level: Level) -> bool {
    let (s, e) = (query.start, query.end);
    let state = u32::try_from(r.state).unwrap_or(u32::MAX);
    let may_hold_resizing = |x: u32| level == Level::Run && resizing(x);
    if !query.states.is_empty() && s == 0 && e == 0 {
        return query.states.contains(&state)
            || (r.time_start != 0 && query.states.iter().any(|&x| may_hold_resizing(x)));
    }
    let upto = |t: i64| e == 0 || t <= e;
    let ended_since = s == 0 || r.time_end == 0 || r.time_end >= s;
    if !upto(r.time_submit) {
        return false;
    }
    if !query.states.is_empty() {
        return query.states.iter().any(|&x| {
            if pending(x) {
                r.time_eligible != 0
                    && upto(r.time_eligible)
                    && (s == 0 || r.time_start == 0 || r.time_start >= s)
                    && ended_since
            } else if running(x) || may_hold_resizing(x) {
                r.time_start != 0 && upto(r.time_start) && ended_since
            } else {
                i64::from(x) == r.state
                    && (s == 0 && e == 0 || r.time_end != 0)
                    && (s == 0 || r.time_end >= s)
                    && upto(r.time_end)
            }
        });
    }
    let eligible = !query.job_ids.is_empty()
        || ((s == 0 && e == 0 || r.time_eligible != 0) && upto(r.time_eligible));
    ended_since && eligible
}

/// Whether `r` matches everything in `query` but the window: clusters and job ids are
/// matched by the reads themselves.
pub(super) fn matches_filters(r: &JobRunRow, query: &JobQuery) -> bool {
    let has = |list: &[String], v: &str| list.is_empty() || list.iter().any(|x| x == v);
    let uid_ok = query.uids.is_empty()
        || query.uids.iter().any(|&u| i64::from(u) == r.uid)
        || query.uid_or_accounts.contains(&r.account);
    let dup_ok = query.duplicates || (r.latest && r.state != i64::from(JobState::Revoked.stored()));
    uid_ok
        && dup_ok
        && has(&query.accounts, &r.account)
        && has(&query.names, &r.name)
        && has(&query.partitions, &r.partition_name)
}

/// Whether a run's node list names one of `nodes` (sacct `--nodelist`); an unreadable list
/// matches nothing.
pub(super) fn uses_nodes(node_list: &str, nodes: &HashSet<String>) -> bool {
    Hostlist::parse(node_list).is_ok_and(|h| h.iter().any(|n| nodes.contains(&n)))
}

/// Whether run `r` may hold records in the result of `query` (`nodes`: its expanded
/// `nodes`): the records of a run whose allocation never changed are the run itself.
pub(super) fn keep(r: &JobRunRow, query: &JobQuery, nodes: &HashSet<String>) -> bool {
    matches_filters(r, query)
        && in_window(r, query, Level::Run)
        && (nodes.is_empty() || uses_nodes(&r.node_list, nodes) || r.time_start != 0)
}

/// Whether record `r` (a run, or a part of a resized run) belongs in the result of `query`.
pub(super) fn keep_record(r: &JobRunRow, query: &JobQuery, nodes: &HashSet<String>) -> bool {
    matches_filters(r, query)
        && in_window(r, query, Level::Record)
        && (nodes.is_empty() || uses_nodes(&r.node_list, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_filter_expands_ranges() {
        let want: HashSet<String> = ["n3".to_string()].into_iter().collect();
        assert!(uses_nodes("n[1-4]", &want));
        assert!(!uses_nodes("n[4-5],m3", &want));
        assert!(!uses_nodes("n[", &want));
    }

    #[test]
    fn windows_in_rust() {
        fn in_window(r: &JobRunRow, level: Level, q: &JobQuery) -> bool {
            super::in_window(r, q, level)
        }
        let mut r = JobRunRow::empty("c1", 1, 0);
        (r.time_submit, r.time_eligible, r.time_start, r.time_end) = (100, 100, 300, 400);
        r.state = i64::from(JobState::Failed.stored());
        let q = |start, end, states: &[JobState]| JobQuery {
            start,
            end,
            states: states.iter().map(|s| s.stored()).collect(),
            ..Default::default()
        };
        assert!(in_window(
            &r,
            Level::Record,
            &q(200, 260, &[JobState::Pending])
        ));
        assert!(!in_window(
            &r,
            Level::Record,
            &q(310, 320, &[JobState::Pending])
        ));
        assert!(in_window(
            &r,
            Level::Record,
            &q(310, 320, &[JobState::Running])
        ));
        assert!(in_window(
            &r,
            Level::Record,
            &q(0, 400, &[JobState::Failed])
        ));
        assert!(!in_window(
            &r,
            Level::Record,
            &q(0, 399, &[JobState::Failed])
        ));
        assert!(!in_window(&r, Level::Record, &q(401, 0, &[])));
        assert!(!in_window(&r, Level::Record, &q(0, 99, &[])));
        assert!(in_window(&r, Level::Record, &q(0, 0, &[JobState::Failed])));
        // A run that ran may hold RESIZING records; only such a record matches RESIZING.
        assert!(in_window(&r, Level::Run, &q(0, 0, &[JobState::Resizing])));
        assert!(in_window(
            &r,
            Level::Run,
            &q(350, 360, &[JobState::Resizing])
        ));
        assert!(!in_window(
            &r,
            Level::Record,
            &q(350, 360, &[JobState::Resizing])
        ));
        r.state = i64::from(JobState::Resizing.stored());
        assert!(in_window(
            &r,
            Level::Record,
            &q(350, 400, &[JobState::Resizing])
        ));
    }
}
