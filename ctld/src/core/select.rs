//! Node selection on bitmaps (Slurm's paper: partition AND up AND idle AND feature), taking
//! nodes in table order, which is lowest `Weight` first, then file order.
//!
//! Whole nodes are allocated (`select/linear`): a node qualifies when it has at least
//! `cpus_per_task` CPUs and `--mem` memory; nodes are taken until there are `min_nodes` of
//! them and room for `ntasks` tasks, without exceeding `max_nodes`.

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
    n.cpus >= job.req.min_node_cpus() && n.real_memory_mb >= job.req.mem_per_node_mb
}

/// Calls `f` with each node set in all of `maps` as [`for_each_common`] does, but the job's
/// `-w` nodes first, so they are taken before any other.
pub(crate) fn for_each_candidate(
    job: &Job,
    maps: &[&FixedBitSet],
    mut f: impl FnMut(usize) -> bool,
) {
    let Some(required) = job.masks.as_ref().and_then(|m| m.required.as_ref()) else {
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
    let mut chosen = Vec::new();
    let mut slots: u64 = 0;
    let mut done = false;
    for_each_candidate(job, free, |i| {
        if !node_fits(nodes, i, job) || !allow(i) {
            return true;
        }
        chosen.push(super::nodes::idx(i));
        slots += u64::from(job.req.tasks_on(nodes.nodes[i].cpus));
        if chosen.len() as u64 >= u64::from(job.req.min_nodes) && slots >= u64::from(job.req.ntasks)
        {
            done = true;
            return false;
        }
        chosen.len() < job.req.max_nodes as usize
    });
    let complete = done && has_required(job, chosen.iter().map(|i| i.get() as usize));
    complete.then_some(chosen)
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
