//! One hour of one cluster, rolled up with Slurm's rules (`as_mysql_hourly_rollup`, described in
//! the reference, section 5):
//!
//! * **reported** (total): the cluster's capacity over the hour, count × seconds of each
//!   capacity period (capacity changes as nodes come and go);
//! * **down** / **planned down**: node events, per node; a powered-down node (or one not yet
//!   in service) is planned down, any other event (down, drain, fail) down. A node that is
//!   both counts as planned down, and two events of one node never count twice;
//! * **allocated**: each job's allocation × its run seconds in the hour; suspended seconds are
//!   not allocated CPU time (memory and nodes stay allocated while suspended);
//! * **planned**: each eligible job's request × the seconds it waited in the hour (from its
//!   eligible time to its start, or to its end if it never started);
//! * allocated, down and planned down are clipped to the total, in that order of precedence
//!   (jobs really ran; a drained node running a job is allocated, not down);
//! * **idle** = total − allocated − down − planned down − planned; a negative idle is absorbed
//!   by planned, and what planned could not absorb is **overcommitted**.
//!
//! Per association (whatever key the caller groups jobs by), allocated TRES-seconds, unclipped.
//!
//! Memory of down nodes: node events carry CPUs only, so down memory is the down share of the
//! CPUs applied to the cluster's memory (exact for clusters of identical nodes).

use std::collections::BTreeMap;

use crate::tres::{Tres, TresCounts};
pub use crate::usage::UsageSecs;

/// A time interval `[start, end)` in unix seconds. In inputs an `end` of 0 means still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: i64,
    pub end: i64,
}

impl Span {
    /// The interval `[start, end)`.
    pub fn new(start: i64, end: i64) -> Self {
        Self { start, end }
    }

    /// Its length in seconds (0 when empty).
    pub fn secs(&self) -> u64 {
        u64::try_from(self.end.saturating_sub(self.start)).unwrap_or(0)
    }

    /// Seconds of `[from, to)` inside this span; `to` of 0 is open.
    pub fn overlap(&self, from: i64, to: i64) -> u64 {
        let to = open(to);
        let lo = from.max(self.start);
        let hi = to.min(self.end);
        u64::try_from(hi.saturating_sub(lo)).unwrap_or(0)
    }
}

/// An `end` of 0 (still open) as the end of time.
fn open(end: i64) -> i64 {
    if end == 0 { i64::MAX } else { end }
}

/// The cluster's size during `[start, end)` (`end` 0: still in force).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    pub start: i64,
    pub end: i64,
    pub counts: TresCounts,
}

/// A node out of service during `[start, end)` (`end` 0: still out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDown {
    pub node: String,
    pub start: i64,
    pub end: i64,
    /// The node's CPUs.
    pub cpus: u64,
    /// Powered down (or not yet in service): planned down rather than down.
    pub planned: bool,
}

/// One run of a job as the rollup sees it, grouped under `key` (an association).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobUse<K> {
    pub key: K,
    /// When it became eligible to run; 0 = never (no planned time).
    pub eligible: i64,
    /// When it started; 0 = never started.
    pub start: i64,
    /// When it ended; 0 = not ended.
    pub end: i64,
    /// What it was allocated while running.
    pub alloc: TresCounts,
    /// What it asked for while waiting (planned time).
    pub req: TresCounts,
    /// Suspensions `(from, to)`, `to` 0 while still suspended.
    pub suspended: Vec<(i64, i64)>,
}

impl<K> JobUse<K> {
    /// The seconds it ran inside `window` (suspended or not).
    fn run_secs(&self, window: Span) -> u64 {
        if self.start == 0 {
            return 0;
        }
        window.overlap(self.start, self.end)
    }

    /// The seconds it was suspended while running inside `window` (at most its run seconds).
    fn suspended_secs(&self, window: Span) -> u64 {
        if self.start == 0 {
            return 0;
        }
        let run = Span::new(self.start.max(window.start), open(self.end).min(window.end));
        // The union of the suspensions inside the run, so overlapping reports count once.
        let mut parts: Vec<(i64, i64)> = self
            .suspended
            .iter()
            .map(|&(from, to)| (from.max(run.start), open(to).min(run.end)))
            .filter(|(lo, hi)| lo < hi)
            .collect();
        parts.sort_unstable();
        let (mut secs, mut reach) = (0u64, i64::MIN);
        for (lo, hi) in parts {
            let lo = lo.max(reach);
            if hi > lo {
                secs += u64::try_from(hi - lo).unwrap_or(0);
                reach = hi;
            }
        }
        secs.min(self.run_secs(window))
    }

    /// Its allocated TRES-seconds inside `window`: CPUs leave out suspended seconds.
    pub fn alloc_in(&self, window: Span) -> TresCounts {
        let run = self.run_secs(window);
        let busy = run - self.suspended_secs(window);
        TresCounts {
            cpu: self.alloc.cpu.saturating_mul(busy),
            mem: self.alloc.mem.saturating_mul(run),
            node: self.alloc.node.saturating_mul(run),
        }
    }

    /// Its planned TRES-seconds inside `window`: eligible but not yet started.
    pub fn planned_in(&self, window: Span) -> TresCounts {
        if self.eligible == 0 {
            return TresCounts::default();
        }
        let waited_until = if self.start != 0 {
            self.start
        } else {
            self.end
        };
        if waited_until != 0 && waited_until <= self.eligible {
            return TresCounts::default();
        }
        let secs = window.overlap(self.eligible, waited_until);
        TresCounts {
            cpu: self.req.cpu.saturating_mul(secs),
            mem: self.req.mem.saturating_mul(secs),
            node: self.req.node.saturating_mul(secs),
        }
    }
}

/// One hour of one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HourRollup<K> {
    /// Per TRES, indexed by [`Tres::index`].
    pub cluster: [UsageSecs; 3],
    /// Allocated TRES-seconds per (association key, TRES); only non-zero entries.
    pub assoc: BTreeMap<(K, Tres), u64>,
    /// TRES whose allocated + down + planned-down time exceeded the capacity (and was clipped),
    /// for the "more allocated time than is possible" log line.
    pub clipped: Vec<Tres>,
}

impl<K> HourRollup<K> {
    /// The cluster usage of `tres`.
    pub fn tres(&self, tres: Tres) -> &UsageSecs {
        &self.cluster[tres.index()]
    }
}

/// Capacity TRES-seconds over `hour`, and the count in force at its end.
fn capacity_in(hour: Span, capacity: &[Capacity]) -> (TresCounts, TresCounts) {
    let mut total = TresCounts::default();
    let mut last: Option<&Capacity> = None;
    for c in capacity {
        let secs = hour.overlap(c.start, c.end);
        if secs == 0 {
            continue;
        }
        total.cpu = total.cpu.saturating_add(c.counts.cpu.saturating_mul(secs));
        total.mem = total.mem.saturating_add(c.counts.mem.saturating_mul(secs));
        total.node = total
            .node
            .saturating_add(c.counts.node.saturating_mul(secs));
        if last.is_none_or(|l| c.start >= l.start) {
            last = Some(c);
        }
    }
    (total, last.map(|c| c.counts).unwrap_or_default())
}

/// (down, planned down) as (cpu-seconds, node-seconds) over `hour`, each node counted once at
/// any instant: planned down wins over down, and the largest CPU count of the events covering
/// an instant is the node's.
fn down_in(hour: Span, down: &[NodeDown]) -> ((u64, u64), (u64, u64)) {
    let mut by_node: BTreeMap<&str, Vec<&NodeDown>> = BTreeMap::new();
    for d in down.iter().filter(|d| hour.overlap(d.start, d.end) > 0) {
        by_node.entry(&d.node).or_default().push(d);
    }
    let (mut dn, mut pd) = ((0u64, 0u64), (0u64, 0u64));
    for events in by_node.values() {
        let mut cuts = vec![hour.start, hour.end];
        for e in events {
            cuts.push(e.start.clamp(hour.start, hour.end));
            cuts.push(open(e.end).clamp(hour.start, hour.end));
        }
        cuts.sort_unstable();
        cuts.dedup();
        for w in cuts.windows(2) {
            let seg = Span::new(w[0], w[1]);
            let covering = |planned: bool| {
                events
                    .iter()
                    .filter(|e| e.planned == planned && seg.overlap(e.start, e.end) > 0)
                    .map(|e| e.cpus)
                    .max()
            };
            let secs = seg.secs();
            let (slot, cpus) = match (covering(true), covering(false)) {
                (Some(cpus), _) => (&mut pd, cpus),
                (None, Some(cpus)) => (&mut dn, cpus),
                (None, None) => continue,
            };
            slot.0 = slot.0.saturating_add(cpus.saturating_mul(secs));
            slot.1 = slot.1.saturating_add(secs);
        }
    }
    (dn, pd)
}

/// `part` of `whole` applied to `of`: `of × part / whole` (0 when `whole` is 0).
fn share(of: u64, part: u64, whole: u64) -> u64 {
    if whole == 0 {
        return 0;
    }
    let v = u128::from(of) * u128::from(part) / u128::from(whole);
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// Rolls up `hour` of one cluster from its capacity periods, node events and job runs (each
/// list may hold entries that do not touch the hour; they count for nothing).
pub fn roll_hour<K: Ord + Clone>(
    hour: Span,
    capacity: &[Capacity],
    down: &[NodeDown],
    jobs: &[JobUse<K>],
) -> HourRollup<K> {
    let (total, count) = capacity_in(hour, capacity);
    let ((down_cpu, down_node), (pdown_cpu, pdown_node)) = down_in(hour, down);
    let down = TresCounts::new(down_cpu, share(total.mem, down_cpu, total.cpu), down_node);
    let pdown = TresCounts::new(
        pdown_cpu,
        share(total.mem, pdown_cpu, total.cpu),
        pdown_node,
    );
    let mut alloc = [0u64; 3];
    let mut plan = [0u64; 3];
    let mut assoc = BTreeMap::new();
    for job in jobs {
        let used = job.alloc_in(hour);
        let waited = job.planned_in(hour);
        for t in Tres::ALL {
            let u = used.get(t);
            alloc[t.index()] = alloc[t.index()].saturating_add(u);
            plan[t.index()] = plan[t.index()].saturating_add(waited.get(t));
            if u > 0 {
                let slot: &mut u64 = assoc.entry((job.key.clone(), t)).or_default();
                *slot = slot.saturating_add(u);
            }
        }
    }
    let mut clipped = Vec::new();
    let cluster = Tres::ALL.map(|t| {
        let i = t.index();
        let (usage, over) = UsageSecs::settle(
            count.get(t),
            total.get(t),
            alloc[i],
            down.get(t),
            pdown.get(t),
            plan[i],
        );
        if over {
            clipped.push(t);
        }
        usage
    });
    HourRollup {
        cluster,
        assoc,
        clipped,
    }
}

#[cfg(test)]
mod tests;
