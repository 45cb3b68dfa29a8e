//! What each job holds on each of its nodes (CPUs, memory, cores) and the per-node sums, so
//! jobs can share nodes where the partition's `OverSubscribe`, the job's own
//! `--oversubscribe`/`--exclusive` and the selection type allow.
//!
//! How a job may share ([`Share::of`], Slurm's `_resolve_shared_status`):
//! - `OverSubscribe=EXCLUSIVE`, or `--exclusive` in a `NO` or `YES` partition: whole, empty
//!   nodes that nobody joins.
//! - `OverSubscribe=FORCE[:n]` (n > 1): every job shares each resource with up to `n` jobs;
//!   `--exclusive` is ignored, as the partition's setting takes precedence in Slurm.
//! - `OverSubscribe=YES[:n]`: a job that asked (`-s/--oversubscribe`) shares each resource
//!   with up to `n` jobs that may share too; a job that did not ask uses its resources alone.
//! - `OverSubscribe=NO`: nobody shares a resource (`--oversubscribe` is ignored).
//!
//! A job that may not share takes only resources nobody holds, and a node holding such a job
//! takes no job that shares (Slurm's `NODE_CR_ONE_ROW`), so it really is alone on them.
//!
//! What sharing a resource means depends on the selection type:
//! - `select/linear` (and `CR_Socket`, a node being one socket here) gives a job whole nodes;
//!   a node takes up to `n` sharing jobs, else one job.
//! - `CR_CPU` counts CPUs: a node takes jobs while the CPUs handed out stay within
//!   `cpus * n`, a job never getting more CPUs than the node has.
//! - `CR_Core` hands out specific cores, each to at most `n` jobs, least-used first.
//! - With memory consumable (`_Memory`, `CR_Memory`), jobs share a node only when their
//!   memory fits together (memory is never oversubscribed).
//!
//! `n` counts every job on the node (Slurm counts per partition with cons_tres). Gang
//! scheduling timeslices whatever ended up co-allocated, in `YES` and `FORCE` partitions
//! alike. A manually suspended job gives its resources back while keeping its nodes
//! ([`release`]); resuming it takes them again even if that oversubscribes ([`retake`]).

pub(crate) mod pick;

use super::jobs::Job;
use super::nodes::NodeTable;
use super::partitions::Partition;
use super::request::JobShare;
use super::{Core, SimTime};
use crate::conf::{CrUnit, OverSubscribe, SelectConf, SelectType};
use sluice_vocab::{FedJobId, NodeIdx};

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

    /// Memory a job asking `ask` takes on a node of `node_mb` when given `cpus` CPUs there;
    /// 0 when memory is not consumable.
    pub fn mem_on(&self, ask: MemAsk, cpus: u32, node_mb: u64) -> u64 {
        if !self.memory {
            return 0;
        }
        match (ask, self.def_mem_per_node_mb, self.def_mem_per_cpu_mb) {
            (MemAsk::PerNode(r), _, _) => r,
            (MemAsk::PerCpu(c), _, _) => c.saturating_mul(u64::from(cpus)),
            (MemAsk::Default, Some(n), _) => n,
            (MemAsk::Default, None, Some(c)) => c.saturating_mul(u64::from(cpus)),
            (MemAsk::Default, None, None) => node_mb,
        }
    }

    /// The memory each CPU of a job asking `ask` takes, when it is counted per CPU
    /// (`--mem-per-cpu`, or `DefMemPerCPU` for a job without a size).
    pub fn mem_per_cpu(&self, ask: MemAsk) -> Option<u64> {
        match (ask, self.def_mem_per_node_mb, self.def_mem_per_cpu_mb) {
            (MemAsk::PerCpu(c), _, _) => Some(c),
            (MemAsk::Default, None, Some(c)) => Some(c),
            _ => None,
        }
        .filter(|c| *c > 0)
    }
}

/// What a job asks of each node's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemAsk {
    /// Nothing: `DefMemPerNode`, `DefMemPerCPU` or the whole node, as configured.
    Default,
    /// `--mem`: this many MB on each node.
    PerNode(u64),
    /// `--mem-per-cpu`: this many MB per allocated CPU.
    PerCpu(u64),
}

/// How a job may share what it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// Whole, empty nodes that nobody joins.
    Exclusive,
    /// Only resources nobody holds; jobs that share do not join its nodes.
    Alone,
    /// Each resource with up to this many jobs (itself included) that may share too.
    Shared(u16),
}

impl Share {
    /// The rule for a job asking `asked` in `part`.
    pub fn of(part: &Partition, asked: JobShare) -> Self {
        match (part.oversubscribe, asked) {
            (OverSubscribe::Exclusive, _) => Share::Exclusive,
            (OverSubscribe::Force(n), _) if n > 1 => Share::Shared(n),
            (_, JobShare::Exclusive) => Share::Exclusive,
            (OverSubscribe::Force(_), _) => Share::Shared(1),
            (OverSubscribe::Yes(n), JobShare::OverSubscribe) => Share::Shared(n.max(1)),
            (OverSubscribe::No | OverSubscribe::Yes(_), _) => Share::Alone,
        }
    }

    /// Whether jobs holding resources this way may share them.
    pub fn shares(self) -> bool {
        matches!(self, Share::Shared(_))
    }
}

/// What `scontrol show job` (`OverSubscribe=`), squeue's `%h` and the `SLURM_RESUME_FILE`
/// show for a job asking `asked` in a partition with `part`: Slurm's `job_share_string` of the
/// value its controller reports once the partition's rule is applied. `YES` when the job may
/// share (`FORCE` with more than one job per resource, or it asked), `NO` when it may not (an
/// `EXCLUSIVE` partition, or `--exclusive`), else `OK`: the partition decides.
pub fn shown(part: OverSubscribe, asked: JobShare) -> &'static str {
    match (part, asked) {
        (OverSubscribe::Exclusive, _) => "NO",
        (OverSubscribe::Force(n), _) if n > 1 => "YES",
        (_, JobShare::OverSubscribe) => "YES",
        (_, JobShare::Exclusive) => "NO",
        (_, JobShare::Unset) => "OK",
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
    /// It may share its resources with jobs that may too (else no sharing job joins its nodes).
    pub shared: bool,
    /// Whether its resources are counted on its nodes (not while manually suspended).
    pub held: bool,
}

impl JobAlloc {
    /// Makes its `k`th node its first (each per-node list moved alike).
    pub(crate) fn move_to_front(&mut self, k: usize) {
        fn front<T>(list: &mut [T], k: usize) {
            if k < list.len() {
                list[..=k].rotate_right(1);
            }
        }
        front(&mut self.nodes, k);
        front(&mut self.cpus, k);
        front(&mut self.mem_mb, k);
        front(&mut self.cores, k);
    }

    /// Whole nodes: each node's CPUs, `mem_mb(node)` memory, held as `share` allows.
    pub(crate) fn whole(
        nodes: &NodeTable,
        list: Vec<NodeIdx>,
        share: Share,
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
            exclusive: share == Share::Exclusive,
            shared: share.shares(),
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
    core.steps.remove(&id);
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
            if !a.shared {
                node.solo = node.solo.saturating_add(1);
            }
        } else {
            node.holders = node.holders.saturating_sub(1);
            node.alloc_cpus = node.alloc_cpus.saturating_sub(cpus);
            node.alloc_mem_mb = node.alloc_mem_mb.saturating_sub(mem);
            if a.exclusive {
                node.exclusive = false;
            }
            if !a.shared {
                node.solo = node.solo.saturating_sub(1);
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

/// Builds the allocation of restored job `job` from what was saved (`cpus`, `mem_mb`, `cores`
/// per node; whole nodes when the saved lists do not match its nodes). Whether it holds them
/// exclusively was saved; whether it shares follows from its request and partition.
pub(crate) fn restored(
    core: &Core,
    job: &Job,
    cpus: &[u32],
    mem_mb: &[u64],
    cores: &[Vec<u16>],
    exclusive: bool,
) -> JobAlloc {
    let nodes = &job.nodes;
    let share = match core.parts.get(job.partition.get()) {
        _ if exclusive => Share::Exclusive,
        Some(part) => Share::of(part, job.req.share),
        None => Share::Alone,
    };
    let n = nodes.len();
    if cpus.len() != n || mem_mb.len() != n || !(cores.is_empty() || cores.len() == n) {
        return JobAlloc::whole(&core.nodes, nodes.clone(), share, |_, _| 0);
    }
    JobAlloc {
        nodes: nodes.clone(),
        cpus: cpus.to_vec(),
        mem_mb: mem_mb.to_vec(),
        cores: cores.to_vec(),
        exclusive,
        shared: share.shares(),
        held: true,
    }
}

impl Core {
    /// The selection rules in force.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// What job `job` shows as `OverSubscribe` ([`shown`]).
    pub fn oversubscribe_shown(&self, job: &Job) -> &'static str {
        self.parts
            .get(job.partition.get())
            .map_or("OK", |p| shown(p.oversubscribe, job.req.share))
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
