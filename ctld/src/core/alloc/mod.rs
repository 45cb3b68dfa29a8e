//! What each job holds on each of its nodes (CPUs, memory, cores) and the per-node sums, so
//! jobs can share nodes where the partition's `OverSubscribe` and the selection type allow.
//!
//! - `select/linear` (and `CR_Socket`, a node being one socket here) gives a job whole nodes;
//!   a node takes up to `max_share` jobs (`OverSubscribe=FORCE[:n]`, else one).
//! - `CR_CPU` counts CPUs: a node takes jobs while the CPUs handed out stay within
//!   `cpus * max_share`, a job never getting more CPUs than the node has.
//! - `CR_Core` hands out specific cores, each to at most `max_share` jobs, least-used first.
//! - With memory consumable (`_Memory`, `CR_Memory`), jobs share a node only when their
//!   memory fits together (memory is never oversubscribed).
//! - `OverSubscribe=EXCLUSIVE` gives whole, empty nodes that nobody joins.
//!
//! `max_share` counts every job on the node (Slurm counts per partition with cons_tres).
//! `OverSubscribe=YES` lets jobs share only when they ask to; no request asks, so it acts as
//! `NO`. A manually suspended job gives its resources back while keeping its nodes
//! ([`release`]); resuming it takes them again even if that oversubscribes ([`retake`]).

pub(crate) mod pick;

use super::nodes::NodeTable;
use super::partitions::Partition;
use super::{Core, SimTime};
use crate::conf::{CrUnit, OverSubscribe, SelectConf, SelectType};
use sluice_schema::{FedJobId, NodeIdx};

/// The unit jobs are given, and gang scheduling compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Whole nodes.
    Node,
    /// Counted CPUs.
    Cpu,
    /// Individual cores (one per CPU).
    Core,
}

/// The selection rules of the cluster, from its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// What a job is given.
    pub unit: Unit,
    /// Whether memory is consumable.
    pub memory: bool,
    /// `DefMemPerCPU`.
    pub def_mem_per_cpu_mb: Option<u64>,
    /// `DefMemPerNode`.
    pub def_mem_per_node_mb: Option<u64>,
}

impl Policy {
    /// The rules of `conf`.
    pub fn from_conf(conf: &SelectConf) -> Self {
        let unit = match (conf.select_type, conf.cr_unit) {
            (SelectType::Linear, _) | (SelectType::ConsTres, CrUnit::Socket) => Unit::Node,
            (SelectType::ConsTres, CrUnit::Cpu) => Unit::Cpu,
            (SelectType::ConsTres, CrUnit::Core) => Unit::Core,
        };
        Self {
            unit,
            memory: conf.cr_memory,
            def_mem_per_cpu_mb: conf.def_mem_per_cpu_mb,
            def_mem_per_node_mb: conf.def_mem_per_node_mb,
        }
    }

    /// Memory a job asking `req_mb` per node (0: not asked) takes on a node of `node_mb`
    /// when given `cpus` CPUs there; 0 when memory is not consumable.
    pub fn mem_on(&self, req_mb: u64, cpus: u32, node_mb: u64) -> u64 {
        if !self.memory {
            return 0;
        }
        match (req_mb, self.def_mem_per_node_mb, self.def_mem_per_cpu_mb) {
            (r, _, _) if r > 0 => r,
            (_, Some(n), _) => n,
            (_, None, Some(c)) => c.saturating_mul(u64::from(cpus)),
            (_, None, None) => node_mb,
        }
    }
}

/// How many jobs a partition lets share a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// Whole, empty nodes that nobody joins.
    Exclusive,
    /// Up to this many jobs per resource.
    Max(u16),
}

impl Share {
    /// The rule of `part`.
    pub fn of(part: &Partition) -> Self {
        match part.oversubscribe {
            OverSubscribe::Exclusive => Share::Exclusive,
            OverSubscribe::No | OverSubscribe::Yes(_) => Share::Max(1),
            OverSubscribe::Force(n) => Share::Max(n.max(1)),
        }
    }
}

/// What one job holds: per node (in [`JobAlloc::nodes`] order) its CPUs, memory and, with
/// `CR_Core`, its cores.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobAlloc {
    /// Its nodes.
    pub nodes: Vec<NodeIdx>,
    /// CPUs on each node.
    pub cpus: Vec<u32>,
    /// Consumable memory in MB on each node (0 when memory is not consumable).
    pub mem_mb: Vec<u64>,
    /// Core indexes on each node (`CR_Core` only; else empty).
    pub cores: Vec<Vec<u16>>,
    /// Nobody else may join its nodes.
    pub exclusive: bool,
    /// Whether its resources are counted on its nodes (not while manually suspended).
    pub held: bool,
}

impl JobAlloc {
    /// Whole nodes: each node's CPUs, `mem_mb(node)` memory.
    pub(crate) fn whole(
        nodes: &NodeTable,
        list: Vec<NodeIdx>,
        exclusive: bool,
        mem_mb: impl Fn(u32, u64) -> u64,
    ) -> Self {
        let cpus: Vec<u32> = list.iter().map(|&n| nodes.get(n).cpus).collect();
        let mem = list
            .iter()
            .zip(&cpus)
            .map(|(&n, &c)| mem_mb(c, nodes.get(n).real_memory_mb))
            .collect();
        Self {
            nodes: list,
            cpus,
            mem_mb: mem,
            cores: Vec::new(),
            exclusive,
            held: true,
        }
    }

    /// CPUs over all nodes.
    pub fn total_cpus(&self) -> u32 {
        self.cpus.iter().sum()
    }
}

/// Puts `alloc` on its nodes for job `id` and keeps it.
pub(crate) fn attach(core: &mut Core, id: FedJobId, mut alloc: JobAlloc) {
    for &n in &alloc.nodes {
        let node = core.nodes.get_mut(n);
        if !node.jobs.contains(&id) {
            node.jobs.push(id);
        }
        node.job = node.jobs.first().copied();
    }
    alloc.held = false;
    core.allocs.insert(id, alloc);
    retake(core, id);
}

/// Takes `id`'s nodes off it and forgets its allocation.
pub(crate) fn detach(core: &mut Core, id: FedJobId) {
    release(core, id);
    let nodes = match core.allocs.remove(&id) {
        Some(a) => a.nodes,
        None => core
            .jobs
            .map
            .get(&id)
            .map(|j| j.nodes.clone())
            .unwrap_or_default(),
    };
    for n in nodes {
        let node = core.nodes.get_mut(n);
        node.jobs.retain(|j| *j != id);
        node.job = node.jobs.first().copied();
        core.nodes.refresh(n);
    }
}

/// Gives `id`'s resources back while it keeps its nodes (a manual suspend).
pub(crate) fn release(core: &mut Core, id: FedJobId) {
    count(core, id, false);
}

/// Takes `id`'s resources again (a manual resume), whatever else holds them now.
pub(crate) fn retake(core: &mut Core, id: FedJobId) {
    count(core, id, true);
}

fn count(core: &mut Core, id: FedJobId, hold: bool) {
    let Some(a) = core.allocs.get_mut(&id) else {
        return;
    };
    if a.held == hold {
        return;
    }
    a.held = hold;
    for (k, &n) in a.nodes.iter().enumerate() {
        let node = core.nodes.get_mut(n);
        let (cpus, mem) = (a.cpus[k], a.mem_mb[k]);
        if hold {
            node.holders = node.holders.saturating_add(1);
            node.alloc_cpus = node.alloc_cpus.saturating_add(cpus);
            node.alloc_mem_mb = node.alloc_mem_mb.saturating_add(mem);
            node.exclusive |= a.exclusive;
        } else {
            node.holders = node.holders.saturating_sub(1);
            node.alloc_cpus = node.alloc_cpus.saturating_sub(cpus);
            node.alloc_mem_mb = node.alloc_mem_mb.saturating_sub(mem);
            if a.exclusive {
                node.exclusive = false;
            }
        }
        if let Some(cores) = a.cores.get(k) {
            if node.core_use.len() < node.cpus as usize {
                node.core_use.resize(node.cpus as usize, 0);
            }
            for &c in cores {
                if let Some(u) = node.core_use.get_mut(usize::from(c)) {
                    *u = if hold {
                        u.saturating_add(1)
                    } else {
                        u.saturating_sub(1)
                    };
                }
            }
        }
        core.nodes.refresh(n);
    }
}

/// Builds the allocation of a restored job on `nodes` from what was saved (`cpus`, `mem_mb`,
/// `cores` per node; whole nodes when the saved lists do not match the nodes).
pub(crate) fn restored(
    core: &Core,
    nodes: &[NodeIdx],
    cpus: &[u32],
    mem_mb: &[u64],
    cores: &[Vec<u16>],
    exclusive: bool,
) -> JobAlloc {
    let n = nodes.len();
    if cpus.len() != n || mem_mb.len() != n || !(cores.is_empty() || cores.len() == n) {
        return JobAlloc::whole(&core.nodes, nodes.to_vec(), exclusive, |_, _| 0);
    }
    JobAlloc {
        nodes: nodes.to_vec(),
        cpus: cpus.to_vec(),
        mem_mb: mem_mb.to_vec(),
        cores: cores.to_vec(),
        exclusive,
        held: true,
    }
}

impl Core {
    /// The selection rules in force.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// What job `id` holds, while it holds nodes.
    pub fn job_alloc(&self, id: FedJobId) -> Option<&JobAlloc> {
        self.allocs.get(&id)
    }

    /// The CPUs job `id` holds on each of its nodes, in node order (empty when it holds none).
    pub fn job_cpus(&self, id: FedJobId) -> Vec<u32> {
        self.allocs
            .get(&id)
            .map(|a| a.cpus.clone())
            .unwrap_or_default()
    }

    /// Seconds job `id` has spent suspended in its current run up to `now`.
    pub fn suspended_secs(&self, id: FedJobId, now: SimTime) -> u64 {
        self.jobs.map.get(&id).map_or(0, |j| {
            j.suspended_secs + j.suspended_at.map_or(0, |at| now.since(at))
        })
    }
}
