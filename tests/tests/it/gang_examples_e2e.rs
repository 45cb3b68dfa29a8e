//! The gang scheduling seed's "More examples" on a real five-node cluster (`select/linear`,
//! `OverSubscribe=FORCE`, `PreemptMode=GANG`, the shortest `SchedulerTimeSlice` the
//! configuration allows), submitted with sbatch and watched with squeue over several
//! timeslices, as the seed watches them:
//!
//! * jobs of 3, 2 and 3 nodes (the seed's 9, 10 and 11): the 2-node job runs continually on the
//!   two nodes the others leave free, while the two 3-node jobs share their nodes and take
//!   turns;
//! * jobs of 3, 5 and 2 nodes (12, 13 and 14), "local backfilling": the 2-node job starts at
//!   once beside the 3-node one, ahead of the 5-node job that waits its turn, and the two then
//!   alternate with it.
//!
//! The assertions are on the sequence of states squeue shows, never on when they change: a
//! timeslice may fall between two of the seed's submissions, so the first picture squeue
//! shows may already be the rotated one.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::cluster::Cluster;

/// `SchedulerTimeSlice` of the test cluster: the smallest the configuration accepts.
const SLICE_SECS: u64 = 5;
/// Distinct squeue pictures to watch: the first one and three timeslices after it.
const PICTURES: usize = 4;

/// Each job's short state (`%t`) and node list (`%N`), as squeue shows them at one moment.
type Picture = BTreeMap<u32, (String, String)>;

/// The seed's cluster: five nodes in partition `active`.
fn seed_cluster() -> Cluster {
    let slice = format!("SchedulerTimeSlice={SLICE_SECS}");
    Cluster::start_with(
        5,
        &[
            "SelectType=select/linear",
            "PreemptMode=GANG",
            &slice,
            "PartitionName=active Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=FORCE",
        ],
    )
}

/// `sbatch -p active -N<nodes> --wrap 'sleep 1000'` (the seed's `./myload 300`).
fn myload(c: &Cluster, nodes: u32) -> u32 {
    let n = format!("-N{nodes}");
    c.sbatch(&["-p", "active", &n, "-J", "myload", "--wrap", "sleep 1000"])
}

/// What squeue shows of `jobs` now.
fn picture(c: &Cluster, jobs: &[u32]) -> Picture {
    let list: Vec<String> = jobs.iter().map(u32::to_string).collect();
    let out = c.ok(
        "squeue",
        &["-h", "-t", "all", "-j", &list.join(","), "-o", "%i %t %N"],
    );
    out.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let id = f.next()?.parse().ok()?;
            let st = f.next()?.to_string();
            let nodes = f.next().unwrap_or_default().to_string();
            Some((id, (st, nodes)))
        })
        .collect()
}

/// Polls squeue until it has shown [`PICTURES`] different pictures of `jobs` (consecutive
/// repeats count once); returns them in the order seen, the first one taken at once.
fn watch(c: &Cluster, jobs: &[u32]) -> Vec<Picture> {
    let mut seen: Vec<Picture> = Vec::new();
    // Each change waits for a timeslice; the margin covers a loaded host.
    let bound = Duration::from_secs(SLICE_SECS * PICTURES as u64) + Duration::from_secs(60);
    c.wait_within(bound, "squeue to show the jobs rotate", || {
        let now = picture(c, jobs);
        if seen.last() != Some(&now) {
            eprintln!("squeue: {now:?}");
            seen.push(now);
        }
        seen.len() >= PICTURES
    });
    seen
}

/// The jobs of `p` in state `st`.
fn in_state(p: &Picture, st: &str) -> BTreeSet<u32> {
    p.iter()
        .filter(|(_, (s, _))| s == st)
        .map(|(&id, _)| id)
        .collect()
}

/// The nodes of a node list, expanded.
fn nodes_of(c: &Cluster, list: &str) -> BTreeSet<String> {
    c.ok("scontrol", &["show", "hostnames", list])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Checks that every picture is one of the two `(running, suspended)` rows, that consecutive
/// pictures alternate between them, and that both were seen.
fn assert_alternate(pictures: &[Picture], a: (&[u32], &[u32]), b: (&[u32], &[u32])) {
    let set = |ids: &[u32]| ids.iter().copied().collect::<BTreeSet<u32>>();
    let rows = [(set(a.0), set(a.1)), (set(b.0), set(b.1))];
    let mut which = Vec::new();
    for p in pictures {
        let now = (in_state(p, "R"), in_state(p, "S"));
        let Some(i) = rows.iter().position(|r| *r == now) else {
            panic!(
                "squeue showed {p:?}; expected running {:?} with {:?} suspended, or running {:?} with {:?} suspended\nall pictures: {pictures:?}",
                rows[0].0, rows[0].1, rows[1].0, rows[1].1
            );
        };
        which.push(i);
    }
    assert!(
        which.windows(2).all(|w| w[0] != w[1]),
        "the pictures do not alternate: {pictures:?}"
    );
    assert!(
        which.contains(&0) && which.contains(&1),
        "only one arrangement was seen: {pictures:?}"
    );
}

#[test]
fn job_10_runs_continually_while_9_and_11_are_timesliced() {
    let c = seed_cluster();
    let j9 = myload(&c, 3);
    let j10 = myload(&c, 2);
    let j11 = myload(&c, 3);
    let jobs = [j9, j10, j11];
    let pictures = watch(&c, &jobs);

    // 9 and 11 were given the same three nodes, 10 the other two.
    let first = &pictures[0];
    let nodes = |id: u32| nodes_of(&c, &first[&id].1);
    assert_eq!(nodes(j9).len(), 3, "{first:?}");
    assert_eq!(nodes(j9), nodes(j11), "{first:?}");
    assert_eq!(nodes(j10).len(), 2, "{first:?}");
    assert!(nodes(j9).is_disjoint(&nodes(j10)), "{first:?}");

    // 10 is running in every picture; 9 and 11 take turns.
    assert_alternate(&pictures, (&[j9, j10], &[j11]), (&[j10, j11], &[j9]));

    c.ok(
        "scancel",
        &[&j9.to_string(), &j10.to_string(), &j11.to_string()],
    );
    for job in jobs {
        assert_eq!(c.wait_done(job), "CANCELLED");
    }
}

#[test]
fn local_backfilling_starts_job_14_beside_12_while_13_waits_its_turn() {
    let c = seed_cluster();
    let j12 = myload(&c, 3);
    let j13 = myload(&c, 5);
    let j14 = myload(&c, 2);
    let jobs = [j12, j13, j14];
    // sbatch answers after the scheduling pass its submission triggers: job 14 has started at
    // once (running, or suspended if a timeslice already gave job 13 its turn), although job
    // 13, ahead of it, is far from finished.
    let at_once = picture(&c, &jobs);
    for job in jobs {
        let st = at_once.get(&job).map(|(st, _)| st.as_str());
        assert!(
            matches!(st, Some("R" | "S")),
            "job {job} did not start at once: {at_once:?}"
        );
    }
    let pictures = watch(&c, &jobs);

    // 13 holds every node; 12 and 14 split them.
    let first = &pictures[0];
    let nodes = |id: u32| nodes_of(&c, &first[&id].1);
    assert_eq!(nodes(j13).len(), 5, "{first:?}");
    assert_eq!(nodes(j12).len(), 3, "{first:?}");
    assert_eq!(nodes(j14).len(), 2, "{first:?}");
    assert!(nodes(j12).is_disjoint(&nodes(j14)), "{first:?}");

    // 12 and 14 run together while 13 is suspended, then 13 alone, and so on.
    assert_alternate(&pictures, (&[j12, j14], &[j13]), (&[j13], &[j12, j14]));

    c.ok(
        "scancel",
        &[&j12.to_string(), &j13.to_string(), &j14.to_string()],
    );
    for job in jobs {
        assert_eq!(c.wait_done(job), "CANCELLED");
    }
}
