//! The query sacct sends, with Slurm's defaults (`slurmdb_job_cond_def_start_end` and
//! `parse_command_line`): whose jobs, which clusters, and the time window.
//!
//! Window defaults: the start is 0 with `-j`, now with `-s`, else today's midnight; the end is
//! the start with `-s` (when the start is not 0), else now. The window is `[S, E)`, E moved one
//! second on when it equals S or now; the dbd's end is inclusive, so E - 1 is sent. A start
//! after the end is Slurm's error.

use sluice_wire::proto::{HetComponent, JobQuery};

use super::args::SacctOpts;
use crate::timefmt::{self, Zone};

/// The time window `[start, end)` sacct asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Unix seconds; 0 = since the epoch.
    pub start: i64,
    /// Unix seconds, exclusive.
    pub end: i64,
}

/// Slurm's default window for `o` at `now`, or its error for a start after the end.
pub fn window(o: &SacctOpts, now: i64, zone: Zone) -> Result<Window, String> {
    let start = o.start.unwrap_or_else(|| {
        if o.jobs.is_some() {
            0
        } else if !o.states.is_empty() {
            now
        } else {
            timefmt::midnight(now, zone)
        }
    });
    let mut end = o.end.unwrap_or(if !o.states.is_empty() && start != 0 {
        start
    } else {
        now
    });
    if end == start || end == now {
        end += 1;
    }
    if start > end {
        return Err(format!(
            "sacct: error: Start time ({}) requested is after end time ({}).",
            timefmt::timestamp(start, zone),
            timefmt::timestamp(end, zone)
        ));
    }
    Ok(Window { start, end })
}

/// The uids to search: the given users; everyone for root, `-a`, or `-j`/`--nodelist`
/// without `-u`; else only the caller.
pub fn users(o: &SacctOpts, uid: u32) -> Vec<u32> {
    match &o.users {
        Some(u) if !o.all_users => u.clone(),
        _ if o.all_users || uid == 0 || o.jobs.is_some() || o.nodelist.is_some() => Vec::new(),
        _ => vec![uid],
    }
}

/// The query for `o`, searching `clusters` (empty = all), by caller `uid`.
pub fn query(o: &SacctOpts, clusters: Vec<String>, uid: u32, w: Window) -> JobQuery {
    let sels = o.jobs.iter().flatten();
    let mut job_ids: Vec<u32> = sels
        .clone()
        .filter(|s| s.het.is_none())
        .map(|s| s.id)
        .collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    // `N+K` asks the dbd for that component alone (N itself would name every one).
    let het_components = sels
        .filter_map(|s| {
            s.het.map(|het_offset| HetComponent {
                het_job_id: s.id,
                het_offset,
            })
        })
        .collect();
    JobQuery {
        clusters,
        job_ids,
        het_components,
        uids: users(o, uid),
        accounts: o.accounts.clone(),
        states: o.states.iter().map(|s| s.stored()).collect(),
        start: w.start,
        end: w.end - 1,
        duplicates: o.duplicates,
        names: o.names.clone(),
        partitions: o.partitions.clone(),
        nodelist: o.nodelist.clone().unwrap_or_default(),
        // Set by the caller once it knows the view is a federation's.
        federation: false,
        // Set by the caller from the fields shown.
        no_steps: false,
        own_by_default: o.users.is_none() && users(o, uid) == [uid],
        wckeys: o.wckeys.clone(),
        // Set by the caller from the fields shown.
        fields: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sacct::args::{Context, Invocation, parse};

    const NOW: i64 = 1_795_255_200;
    const MIDNIGHT: i64 = 1_795_219_200;

    fn opts(args: &[&str]) -> SacctOpts {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let cx = Context {
            env: &|_| None,
            now: NOW,
            zone: Zone::Utc,
        };
        match parse(&a, &cx).unwrap() {
            Invocation::Run(o) => *o,
            other => panic!("{other:?}"),
        }
    }

    fn w(args: &[&str]) -> Result<(i64, i64), String> {
        window(&opts(args), NOW, Zone::Utc).map(|w| (w.start, w.end))
    }

    #[test]
    fn default_windows_follow_slurm() {
        assert_eq!(w(&[]), Ok((MIDNIGHT, NOW + 1)));
        assert_eq!(w(&["-j", "5"]), Ok((0, NOW + 1)));
        assert_eq!(w(&["-s", "R"]), Ok((NOW, NOW + 1)));
        assert_eq!(w(&["-j", "5", "-s", "CD"]), Ok((0, NOW + 1)));
        assert_eq!(w(&["-s", "R", "-S", "09:00"]), Ok((NOW - 3600, NOW - 3599)));
        assert_eq!(
            w(&["-S", "09:00", "-E", "09:30"]),
            Ok((NOW - 3600, NOW - 1800))
        );
        assert_eq!(w(&["-S", "now-2days"]), Ok((NOW - 2 * 86_400, NOW + 1)));
    }

    #[test]
    fn a_start_after_the_end_is_refused() {
        assert_eq!(
            w(&["-S", "2026-11-21T10:00", "-E", "2026-11-20"]),
            Err(
                "sacct: error: Start time (2026-11-21T10:00:00) requested is after end time \
                 (2026-11-20T00:00:00)."
                    .into()
            )
        );
    }

    #[test]
    fn users_default_to_the_caller() {
        assert_eq!(users(&opts(&[]), 1000), vec![1000]);
        assert!(users(&opts(&[]), 0).is_empty(), "root sees everyone");
        assert!(users(&opts(&["-a"]), 1000).is_empty());
        assert!(users(&opts(&["-j", "4"]), 1000).is_empty());
        assert!(users(&opts(&["-N", "n1"]), 1000).is_empty());
        assert_eq!(users(&opts(&["-u", "7,8"]), 1000), vec![7, 8]);
        assert_eq!(users(&opts(&["-a", "-u", "7"]), 1000), vec![7]);
        assert!(users(&opts(&["-u", "7", "-u", "-1"]), 1000).is_empty());
    }

    #[test]
    fn every_option_reaches_the_query() {
        let o = opts(&[
            "-j",
            "9,8_2.batch",
            "-A",
            "phys,chem",
            "--name",
            "sim",
            "-r",
            "debug",
            "-s",
            "CD,f",
            "-D",
            "-N",
            "n[1-2]",
            "-S",
            "09:00",
            "-E",
            "10:00",
        ]);
        let q = query(
            &o,
            vec!["c1".into()],
            1000,
            window(&o, NOW, Zone::Utc).unwrap(),
        );
        assert_eq!(q.job_ids, vec![8, 9]);
        assert!(q.het_components.is_empty());
        assert_eq!(q.accounts, vec!["phys".to_string(), "chem".to_string()]);
        assert_eq!((q.names.len(), q.partitions.len()), (1, 1));
        assert_eq!(q.states, vec![3, 5]);
        assert!(q.duplicates);
        assert_eq!(q.nodelist, "n[1-2]");
        assert_eq!(
            (q.start, q.end),
            (NOW - 3600, NOW),
            "E is now: one more second, inclusive"
        );
        assert!(q.uids.is_empty(), "-j searches every user");
        assert_eq!(q.clusters, vec!["c1".to_string()]);
    }

    #[test]
    fn a_component_is_asked_for_by_its_job_and_offset() {
        let o = opts(&["-j", "5+1,7,5+0.batch"]);
        let q = query(&o, Vec::new(), 1000, window(&o, NOW, Zone::Utc).unwrap());
        assert_eq!(q.job_ids, vec![7], "5 itself would name every component");
        assert_eq!(
            q.het_components,
            vec![
                HetComponent {
                    het_job_id: 5,
                    het_offset: 1
                },
                HetComponent {
                    het_job_id: 5,
                    het_offset: 0
                },
            ]
        );
        assert!(q.uids.is_empty(), "-j searches every user");
    }
}
