//! Node selection on bitmaps (Slurm's paper: partition AND up AND idle AND feature), taking
//! nodes in table order, which is lowest `Weight` first, then file order.
//!
//! Whole nodes are allocated (`select/linear`): a node qualifies when it has at least
//! `cpus_per_task` CPUs and `--mem` memory; nodes are taken until there are `min_nodes` of
//! them and room for `ntasks` tasks, without exceeding `max_nodes`, then further free nodes
//! up to the count the job wants ([`crate::core::jobs::JobRequest::want_nodes`]: the top of
//! a `-N min-max` range, as Slurm gives as many nodes as it can without delaying the job).

use super::jobs::Job;
use super::nodes::NodeTable;
use super::partitions::Partition;
use fixedbitset::FixedBitSet;
use sluice_vocab::NodeIdx;

const BITS: usize = usize::BITS as usize;

/// Calls `f` with each bit set in all of `maps`, in order, until `f` returns `false`. No
/// bitmap is allocated: words are ANDed on the fly.
pub(crate) fn for_each_common(maps: &[&FixedBitSet], mut f: impl FnMut(usize) -> bool) {
    let Some(first) = maps.first() else {
        return;
    };
    let words = maps.iter().map(|m| m.as_slice().len()).min().unwrap_or(0);
    for w in 0..words {
        let mut word = first.as_slice()[w];
        for m in &maps[1..] {
            word &= m.as_slice()[w];
        }
        while word != 0 {
            let bit = word.trailing_zeros() as usize;
            word &= word - 1;
            if !f(w * BITS + bit) {
                return;
            }
        }
    }
}

/// Whether node `i` can host the job at all (CPUs per task, `--mincpus` and memory per node).
pub(crate) fn node_fits(nodes: &NodeTable, i: usize, job: &Job) -> bool {
    let n = &nodes.nodes[i];
    n.cpus >= job.req.min_node_cpus()
        && n.real_memory_mb >= job.req.min_node_mem_mb()
        && job.req.tmp_fits(n.tmp_disk_mb)
        && job.req.place.topo.fits(n.topo)
        && job.req.tasks_on(n.topo) > 0
}

/// Calls `f` with each node set in all of `maps` as [`for_each_common`] does, but the job's
/// `-w` nodes first, so they are taken before any other (except with `--contiguous`).
pub(crate) fn for_each_candidate(
    job: &Job,
    maps: &[&FixedBitSet],
    mut f: impl FnMut(usize) -> bool,
) {
    // A contiguous run is looked for in table order alone.
    let required = job
        .masks
        .as_ref()
        .and_then(|m| m.required.as_ref())
        .filter(|_| !job.req.place.contiguous);
    let Some(required) = required else {
        for_each_common(maps, f);
        return;
    };
    let mut with_required = maps.to_vec();
    with_required.push(required);
    let mut more = true;
    for_each_common(&with_required, |i| {
        more = f(i);
        more
    });
    if more {
        for_each_common(maps, |i| required.contains(i) || f(i));
    }
}

/// Whether `chosen` holds every `-w` node of `job`.
pub(crate) fn has_required(job: &Job, chosen: impl Iterator<Item = usize>) -> bool {
    let Some(m) = job.masks.as_deref() else {
        return true;
    };
    let Some(required) = &m.required else {
        return true;
    };
    chosen.filter(|&i| required.contains(i)).count() == m.required_count as usize
}

/// Picks nodes for `job` among the nodes set in every map of `free` (which must include the
/// partition's and, when the job has a constraint, the feature bitmap) that also pass `allow`.
pub(crate) fn pick(
    nodes: &NodeTable,
    job: &Job,
    free: &[&FixedBitSet],
    mut allow: impl FnMut(usize) -> bool,
) -> Option<Vec<NodeIdx>> {
    let mut run = Run::new(job);
    for_each_candidate(job, free, |i| {
        if !node_fits(nodes, i, job) || !allow(i) {
            return true;
        }
        run.take(i, job.req.tasks_on(nodes.nodes[i].topo))
    });
    let complete = run.done && has_required(job, run.chosen.iter().map(|c| c.0));
    complete.then(|| run.chosen.iter().map(|c| super::nodes::idx(c.0)).collect())
}

/// The nodes taken so far for a job (each with the tasks it can take), in table order, until
/// there are `min_nodes` of them with room for `ntasks` tasks. Once there are `max_nodes`
/// without room enough, a later node with more room replaces the one with the least. With
/// `--contiguous` only an unbroken run of consecutive nodes counts: a gap starts the run
/// again, and a run as long as `max_nodes` without room enough slides on by one node. Once
/// enough, later nodes (with room for a task: the caller offers only those) join up to
/// `want` nodes, the contiguous run only while it stays unbroken.
pub(crate) struct Run {
    /// The nodes taken and the tasks each can take.
    pub chosen: Vec<(usize, u32)>,
    /// Whether they are enough.
    pub done: bool,
    slots: u64,
    min_nodes: u64,
    max_nodes: usize,
    want: usize,
    ntasks: u64,
    contiguous: bool,
}

impl Run {
    /// An empty run for `job`.
    pub fn new(job: &Job) -> Self {
        let mut run = Self::with(
            job.req.min_nodes,
            job.req.max_nodes,
            job.req.alloc_tasks(),
            job.req.place.contiguous,
        );
        run.want = (job.req.want_nodes() as usize).clamp(1, run.max_nodes);
        run
    }

    /// An empty run for `min_nodes..=max_nodes` nodes with room for `ntasks` tasks, which
    /// stops as soon as it has them.
    fn with(min_nodes: u32, max_nodes: u32, ntasks: u32, contiguous: bool) -> Self {
        Self {
            chosen: Vec::new(),
            done: false,
            slots: 0,
            min_nodes: u64::from(min_nodes),
            max_nodes: max_nodes.max(1) as usize,
            want: 1,
            ntasks: u64::from(ntasks),
            contiguous,
        }
    }

    /// Takes node `i`, which can take `cap` tasks; returns whether to look at more nodes.
    pub fn take(&mut self, i: usize, cap: u32) -> bool {
        let gap = self.chosen.last().is_some_and(|&(last, _)| last + 1 != i);
        if self.done {
            // Enough already: a further node only widens the allocation towards `want`.
            if (self.contiguous && gap) || self.chosen.len() >= self.want {
                return false;
            }
            self.chosen.push((i, cap));
            self.slots += u64::from(cap);
            return self.chosen.len() < self.want;
        }
        if self.contiguous && gap {
            self.chosen.clear();
            self.slots = 0;
        }
        if !self.contiguous && self.chosen.len() >= self.max_nodes {
            // As many nodes as allowed without room enough: a node with more room replaces
            // the one with the least (so `-N1 -n8` finds the 8-CPU node behind a 2-CPU one).
            let Some((k, &(_, least))) = self.chosen.iter().enumerate().min_by_key(|c| c.1.1)
            else {
                return false;
            };
            if cap <= least {
                return true;
            }
            self.chosen.remove(k);
            self.slots -= u64::from(least);
        }
        self.chosen.push((i, cap));
        self.slots += u64::from(cap);
        if self.chosen.len() as u64 >= self.min_nodes && self.slots >= self.ntasks {
            self.done = true;
            return self.chosen.len() < self.want;
        }
        if self.contiguous && self.chosen.len() >= self.max_nodes {
            let (_, first) = self.chosen.remove(0);
            self.slots -= u64::from(first);
        }
        true
    }
}

/// The maps a job's nodes must be in: its partition's, its constraint's when it has one,
/// and all but its `-x` nodes.
pub(crate) fn job_maps<'a>(part: &'a Partition, job: &'a Job) -> Vec<&'a FixedBitSet> {
    let mut maps = vec![&part.nodes];
    if let Some(f) = &job.feature_nodes {
        maps.push(f.as_ref());
    }
    if let Some(allowed) = job.masks.as_ref().and_then(|m| m.allowed.as_ref()) {
        maps.push(allowed);
    }
    maps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(run: &mut Run, nodes: &[(usize, u32)]) -> Vec<usize> {
        for &(i, cap) in nodes {
            if !run.take(i, cap) {
                break;
            }
        }
        run.chosen.iter().map(|c| c.0).collect()
    }

    #[test]
    fn a_contiguous_run_restarts_at_a_gap_and_slides_when_full() {
        // Any nodes: the first two.
        let mut any = Run::with(2, 2, 2, false);
        assert_eq!(feed(&mut any, &[(0, 1), (2, 1), (3, 1)]), [0, 2]);
        assert!(any.done);
        // Consecutive: 0 then a gap; 2 and 3.
        let mut run = Run::with(2, 2, 2, true);
        assert_eq!(feed(&mut run, &[(0, 1), (2, 1), (3, 1)]), [2, 3]);
        assert!(run.done);
        // Two nodes at most with room for 3 tasks: 0-1 lack room, so the run slides to 1-2.
        let mut slide = Run::with(1, 2, 3, true);
        assert_eq!(feed(&mut slide, &[(0, 1), (1, 1), (2, 2)]), [1, 2]);
        assert!(slide.done);
        // Without --contiguous a node with more room replaces the one with the least.
        let mut swap = Run::with(1, 2, 3, false);
        assert_eq!(feed(&mut swap, &[(0, 1), (1, 1), (2, 2)]), [1, 2]);
        assert!(swap.done);
        let mut short = Run::with(1, 1, 4, false);
        assert_eq!(feed(&mut short, &[(0, 2), (1, 1), (2, 3)]), [2]);
        assert!(!short.done);
    }

    #[test]
    fn a_node_range_takes_free_nodes_up_to_the_count_wanted() {
        // -N 1-3 -n 1: one node is enough, three are wanted.
        let mut range = Run::with(1, 3, 1, false);
        range.want = 3;
        assert_eq!(
            feed(&mut range, &[(0, 4), (1, 4), (2, 4), (3, 4)]),
            [0, 1, 2]
        );
        assert!(range.done);
        // Only two free: the job starts on two rather than waiting for a third.
        let mut two = Run::with(1, 3, 1, false);
        two.want = 3;
        assert_eq!(feed(&mut two, &[(0, 4), (5, 4)]), [0, 5]);
        assert!(two.done);
        // Contiguous: the run is widened only while it stays unbroken.
        let mut cont = Run::with(1, 3, 1, true);
        cont.want = 3;
        assert_eq!(feed(&mut cont, &[(0, 4), (1, 4), (3, 4)]), [0, 1]);
        assert!(cont.done);
        // The minimum (the default without a range, and --use-min-nodes).
        let mut min = Run::with(1, 3, 1, false);
        assert_eq!(feed(&mut min, &[(0, 4), (1, 4)]), [0]);
    }

    #[test]
    fn common_bits_come_in_order_and_stop_early() {
        let mut a = FixedBitSet::with_capacity(200);
        let mut b = FixedBitSet::with_capacity(200);
        for i in [1, 3, 64, 65, 130, 199] {
            a.insert(i);
        }
        for i in [3, 65, 130, 199] {
            b.insert(i);
        }
        let mut seen = Vec::new();
        for_each_common(&[&a, &b], |i| {
            seen.push(i);
            true
        });
        assert_eq!(seen, [3, 65, 130, 199]);
        let mut first_two = Vec::new();
        for_each_common(&[&a, &b], |i| {
            first_two.push(i);
            first_two.len() < 2
        });
        assert_eq!(first_two, [3, 65]);
    }
}
