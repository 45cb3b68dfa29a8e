//! The hot-spare pool of each partition (`HotSpareCount=part:N`).
//!
//! A partition's pool is the last `N` of its nodes, in allocation order, that are in service
//! (registered, not drained, responding) and idle, and not already a spare of an earlier
//! partition. Taking the last ones leaves the preferred nodes to ordinary jobs; recomputing
//! the pool from the nodes' states means a spare handed to a job leaves the pool, and a node
//! put back in service (resumed, registered again) joins it again, with no bookkeeping.
//!
//! The scheduler keeps spares out of ordinary jobs through [`NonstopState::ordinary`],
//! rebuilt by [`refresh`] before each pass.
//!
//! [`NonstopState::ordinary`]: super::NonstopState

use super::super::nodes::{NodeBase, idx};
use super::super::partitions::PartIdx;
use super::super::{Core, jobs::Job};
use sluice_vocab::NodeIdx;

/// Whether node `i` may serve as a spare now: registered, in service, idle.
fn usable(core: &Core, i: usize) -> bool {
    let n = &core.nodes.nodes[i];
    n.base == NodeBase::Up && core.nodes.avail.contains(i) && core.nodes.idle.contains(i)
}

/// The spare pools of all partitions, by partition index (each in allocation order).
fn pools(core: &Core) -> Vec<Vec<NodeIdx>> {
    let Some(state) = core.nonstop.as_ref() else {
        return vec![Vec::new(); core.parts.len()];
    };
    let mut taken = fixedbitset::FixedBitSet::with_capacity(core.nodes.nodes.len());
    let mut out = Vec::with_capacity(core.parts.len());
    for (p, part) in core.parts.iter().enumerate() {
        let want = state.part_spares.get(p).copied().unwrap_or(0) as usize;
        let mut pool: Vec<NodeIdx> = Vec::new();
        if want > 0 {
            for i in part.nodes.ones().collect::<Vec<_>>().into_iter().rev() {
                if pool.len() >= want {
                    break;
                }
                if !taken.contains(i) && usable(core, i) {
                    taken.insert(i);
                    pool.push(idx(i));
                }
            }
        }
        pool.reverse();
        out.push(pool);
    }
    out
}

/// Rebuilds the map of nodes ordinary jobs may take (every node but the spares); a change of
/// the pools is noted (`Debug=3`).
pub(crate) fn refresh(core: &mut Core) {
    if core.nonstop.is_none() {
        return;
    }
    let pools = pools(core);
    let Some(state) = core.nonstop.as_mut() else {
        return;
    };
    let before = state.ordinary.clone();
    state.ordinary.grow(core.nodes.nodes.len());
    state.ordinary.insert_range(..);
    for n in pools.iter().flatten() {
        state.ordinary.set(n.get() as usize, false);
    }
    if state.ordinary != before {
        let spares: Vec<NodeIdx> = pools.into_iter().flatten().collect();
        let list = core.nodes.hostlist(&spares);
        super::note(
            core,
            super::Detail::Pool,
            format_args!("hot spares now: {list}"),
        );
    }
}

/// The spares of partition `part` free now, in allocation order.
pub(crate) fn free_in(core: &Core, part: PartIdx) -> Vec<NodeIdx> {
    pools(core).into_iter().nth(part.get()).unwrap_or_default()
}

/// The node that would replace a node of `job` now: the first spare of its partition that can
/// host it; in a partition keeping no spares, the first idle node of the partition in service
/// that can. `None` when there is none.
pub(crate) fn replacement_for(core: &Core, job: &Job) -> Option<NodeIdx> {
    let keeps_spares = core
        .nonstop
        .as_ref()
        .and_then(|s| s.part_spares.get(job.partition.get()))
        .is_some_and(|&n| n > 0);
    let fits = |i: usize| {
        super::super::select::node_fits(&core.nodes, i, job)
            && job
                .masks
                .as_ref()
                .and_then(|m| m.allowed.as_ref())
                .is_none_or(|a| a.contains(i))
            && job.feature_nodes.as_ref().is_none_or(|f| f.contains(i))
    };
    if keeps_spares {
        return free_in(core, job.partition)
            .into_iter()
            .find(|n| fits(n.get() as usize));
    }
    let part = core.parts.get(job.partition.get())?;
    part.nodes
        .ones()
        .find(|&i| usable(core, i) && fits(i))
        .map(idx)
}

/// Whether node `i` is a spare now (ordinary jobs may not take it).
pub fn is_spare(core: &Core, i: NodeIdx) -> bool {
    core.nonstop
        .as_ref()
        .is_some_and(|s| !s.ordinary.contains(i.get() as usize))
}
