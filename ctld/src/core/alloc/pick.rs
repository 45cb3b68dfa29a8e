//! Choosing what a job gets. Whole empty nodes (an exclusive job, or one job per node) are a
//! word-wise AND of bitmaps with the idle map; otherwise each candidate node's room decides:
//! how many of the job's tasks it can take given what its jobs already hold.
//!
//! When sharing, resources held by fewer jobs are preferred: the job is placed on free
//! resources if it can be, else on resources held by one job, and so on up to its limit. A
//! job that may not share takes free resources only; a job that may never joins a node held
//! by one that may not.
//!
//! Nodes are taken in table order (lowest `Weight` first) until there are `min_nodes` of them
//! with room for `ntasks` tasks; tasks are then dealt to the chosen nodes one at a time in
//! turn (each node gets at least one task's CPUs), so `-N5 -n10` gets 2 tasks per node.

use super::{JobAlloc, MemAsk, Policy, Share, Unit};
use crate::core::Core;
use crate::core::jobs::Job;
use crate::core::nodes::{Node, idx};
use crate::core::select::{Run, for_each_candidate, has_required, node_fits, pick as pick_whole};
use fixedbitset::FixedBitSet;

/// Places `job` on nodes set in every map of `maps` (its partition's, its constraint's and
/// the available nodes) that pass `allow`, or `None` when it does not fit now.
pub(crate) fn pick(
    core: &Core,
    job: &Job,
    maps: &[&FixedBitSet],
    mut allow: impl FnMut(usize) -> bool,
) -> Option<JobAlloc> {
    let policy = core.policy;
    let share = Share::of(&core.parts[job.partition.get()], job.req.share);
    let req_mem = job.req.mem_ask();
    let whole = match share {
        Share::Exclusive => true,
        Share::Alone => policy.unit == Unit::Node,
        Share::Shared(_) => false,
    };
    if whole {
        let mut with_idle = maps.to_vec();
        with_idle.push(&core.nodes.idle);
        let list = pick_whole(&core.nodes, job, &with_idle, |i| {
            allow(i)
                && mem_fits(
                    &policy,
                    &core.nodes.nodes[i],
                    req_mem,
                    core.nodes.nodes[i].cpus,
                )
        })?;
        return Some(JobAlloc::whole(&core.nodes, list, share, |c, m| {
            policy.mem_on(req_mem, c, m)
        }));
    }
    let (max, shares) = match share {
        Share::Shared(n) => (u32::from(n), true),
        Share::Exclusive | Share::Alone => (1, false),
    };
    // Least shared first: resources nobody holds, then held by one job, ... (Slurm's linear
    // sharing levels and cons_tres rows), so a job overlaps others only when it must.
    (1..=max).find_map(|level| pick_at(core, job, maps, &mut allow, level, shares))
}

/// Places `job` on resources each held by fewer than `max` jobs; `shares`: the job may share
/// (so nodes held by a job that may not are out).
fn pick_at(
    core: &Core,
    job: &Job,
    maps: &[&FixedBitSet],
    allow: &mut impl FnMut(usize) -> bool,
    max: u32,
    shares: bool,
) -> Option<JobAlloc> {
    let policy = core.policy;
    let req_mem = job.req.mem_ask();
    let cpt = job.req.cpus_per_task.max(1);
    let mut run = Run::new(job);
    for_each_candidate(job, maps, |i| {
        if !node_fits(&core.nodes, i, job) || !allow(i) {
            return true;
        }
        let node = &core.nodes.nodes[i];
        if shares && node.solo > 0 {
            return true;
        }
        let cap = whole_cores(job, node, capacity(&policy, node, max, cpt, req_mem));
        let cap = cap.min(job.req.tasks_on(node.topo));
        if cap == 0 {
            return true;
        }
        run.take(i, cap)
    });
    let chosen = run.chosen;
    if !run.done || !has_required(job, chosen.iter().map(|c| c.0)) {
        return None;
    }
    let tasks = deal(&chosen, job.req.alloc_tasks());
    let mut alloc = JobAlloc {
        shared: shares,
        held: true,
        ..JobAlloc::default()
    };
    for (&(i, _), t) in chosen.iter().zip(tasks) {
        let node = &core.nodes.nodes[i];
        let cpus = match policy.unit {
            Unit::Node => node.cpus,
            Unit::Cpu | Unit::Core => job
                .req
                .place
                .topo
                .cpus_for(node.topo, t.max(1), cpt)
                .min(node.cpus),
        };
        if policy.unit == Unit::Core {
            alloc.cores.push(least_used_cores(node, cpus, max));
        }
        alloc.nodes.push(idx(i));
        alloc.cpus.push(cpus);
        alloc
            .mem_mb
            .push(policy.mem_on(req_mem, cpus, node.real_memory_mb));
    }
    Some(alloc)
}

/// Of `cap` tasks that fit `node` by free CPUs, those that still fit when the job holds whole
/// cores (see [`crate::core::request::TopoAsk::cpus_for`]).
fn whole_cores(job: &Job, node: &Node, cap: u32) -> u32 {
    let cpt = job.req.cpus_per_task.max(1);
    let free = cap.saturating_mul(cpt);
    let topo = &job.req.place.topo;
    let mut tasks = cap;
    while tasks > 0 && topo.cpus_for(node.topo, tasks, cpt) > free {
        tasks -= 1;
    }
    tasks
}

/// Whether a job asking `req_mem` per node fits the free memory of `node` with `cpus` CPUs.
fn mem_fits(policy: &Policy, node: &Node, req_mem: MemAsk, cpus: u32) -> bool {
    let free = node.real_memory_mb.saturating_sub(node.alloc_mem_mb);
    policy.mem_on(req_mem, cpus, node.real_memory_mb) <= free
}

/// How many tasks of `cpt` CPUs `node` can take for a job of a partition sharing resources
/// among at most `max` jobs.
fn capacity(policy: &Policy, node: &Node, max: u32, cpt: u32, req_mem: MemAsk) -> u32 {
    if node.exclusive {
        return 0;
    }
    let tasks = match policy.unit {
        Unit::Node if u32::from(node.holders) >= max => 0,
        Unit::Node => {
            return if mem_fits(policy, node, req_mem, node.cpus) {
                node.cpus / cpt
            } else {
                0
            };
        }
        Unit::Cpu => {
            let room = node
                .cpus
                .saturating_mul(max)
                .saturating_sub(node.alloc_cpus);
            room.min(node.cpus) / cpt
        }
        Unit::Core => {
            let free = (0..node.cpus as usize)
                .filter(|&c| u32::from(node.core_use.get(c).copied().unwrap_or(0)) < max)
                .count();
            u32::try_from(free).unwrap_or(u32::MAX) / cpt
        }
    };
    if tasks == 0 || !policy.memory {
        return tasks;
    }
    let free = node.real_memory_mb.saturating_sub(node.alloc_mem_mb);
    match policy.mem_per_cpu(req_mem) {
        Some(per_cpu) => {
            let per_task = per_cpu.saturating_mul(u64::from(cpt));
            tasks.min(u32::try_from(free / per_task).unwrap_or(u32::MAX))
        }
        None if mem_fits(policy, node, req_mem, tasks.saturating_mul(cpt)) => tasks,
        None => 0,
    }
}

/// Deals `ntasks` to nodes with room `cap` (in order): one each, then one at a time in turn.
fn deal(chosen: &[(usize, u32)], ntasks: u32) -> Vec<u32> {
    let mut tasks = vec![0u32; chosen.len()];
    let mut left = ntasks;
    while left > 0 {
        let mut progress = false;
        for (t, &(_, cap)) in tasks.iter_mut().zip(chosen) {
            if left > 0 && *t < cap {
                *t += 1;
                left -= 1;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    tasks
}

/// `count` cores of `node` held by fewer than `max` jobs, least used first, then lowest index
/// (so a job co-allocated on busy cores lands on the same cores as the earliest job there).
fn least_used_cores(node: &Node, count: u32, max: u32) -> Vec<u16> {
    let mut cores: Vec<(u8, u16)> = (0..node.cpus.min(u32::from(u16::MAX)))
        .map(|c| {
            let c = c as u16;
            (node.core_use.get(usize::from(c)).copied().unwrap_or(0), c)
        })
        .filter(|&(u, _)| u32::from(u) < max)
        .collect();
    cores.sort_unstable();
    let mut out: Vec<u16> = cores
        .into_iter()
        .take(count as usize)
        .map(|(_, c)| c)
        .collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::deal;

    #[test]
    fn tasks_are_dealt_in_turn_within_room() {
        assert_eq!(deal(&[(0, 8), (1, 8), (2, 8)], 7), [3, 2, 2]);
        assert_eq!(deal(&[(0, 1), (1, 8)], 5), [1, 4]);
        assert_eq!(deal(&[(0, 4), (1, 4)], 1), [1, 0]);
    }
}
