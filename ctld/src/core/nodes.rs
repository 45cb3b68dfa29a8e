//! The node manager's table: nodes with their `avail` and `idle` bitmaps. Node events are in
//! [`super::registration`], timeouts in [`super::timers`].
//!
//! The table is sorted by `Weight`, then file order, as Slurm sorts its node records, so bit
//! order is allocation preference order and selecting "lowest weight first" is a scan of set bits.

use super::SimTime;
use super::power::NodePower;
use crate::conf::{NodeConf, NodeConfState};
use crate::error::CtldError;
use fixedbitset::FixedBitSet;
use sluice_vocab::hostlist::compress;
use sluice_vocab::{FedJobId, NodeIdx};
use std::collections::HashMap;

/// A node's base state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeBase {
    /// Configured, never registered.
    Unknown,
    /// Registered and in service (IDLE or ALLOCATED depending on its job).
    Up,
    /// Out of service until it registers again or an admin resumes it.
    Down,
    /// Defined for the future; never used.
    Future,
}

/// A node's CPUs and how they are laid out, as configured (`Sockets`, `CoresPerSocket`,
/// `ThreadsPerCore`), for the socket, core and thread options of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Topo {
    /// CPUs.
    pub cpus: u32,
    /// Sockets.
    pub sockets: u32,
    /// Cores in each socket.
    pub cores_per_socket: u32,
    /// Threads (CPUs) in each core.
    pub threads_per_core: u32,
}

impl Topo {
    /// Cores on the node.
    pub fn cores(&self) -> u32 {
        self.sockets.saturating_mul(self.cores_per_socket)
    }
}

/// One node: configured resources, what it reported, and its state.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its name.
    pub name: String,
    /// Where its node daemon listens.
    pub addr: String,
    /// Its node daemon's port.
    pub port: u16,
    /// Configured CPUs (what allocation counts on).
    pub cpus: u32,
    /// Configured sockets, cores per socket and threads per core.
    pub topo: Topo,
    /// Configured memory in MB.
    pub real_memory_mb: u64,
    /// Configured temporary disk in MB.
    pub tmp_disk_mb: u64,
    /// Allocation weight (lower first).
    pub weight: u32,
    /// Features.
    pub features: Vec<String>,
    /// Base state.
    pub base: NodeBase,
    /// DRAIN flag: takes no new work.
    pub drain: bool,
    /// It registered with fewer resources than configured (Slurm's INVALID_REG).
    pub invalid: bool,
    /// It has not been heard from lately (`*` in sinfo).
    pub not_responding: bool,
    /// Why it is DOWN or drained.
    pub reason: Option<String>,
    /// When it was last heard from.
    pub last_heard: SimTime,
    /// When its node daemon last booted, as it reported.
    pub boot_time: Option<SimTime>,
    /// When its node daemon last registered (Slurm's `SlurmdStartTime`): `sluice up` waits for
    /// a registration newer than the daemon it started.
    pub registered_at: Option<SimTime>,
    /// The process id its node daemon last registered with (0: not told).
    pub daemon_pid: u32,
    /// The first of [`Node::jobs`] (the only one when nodes are not shared).
    pub job: Option<FedJobId>,
    /// Every job allocated on it (running, suspended or completing), in allocation order.
    pub jobs: Vec<FedJobId>,
    /// CPUs its jobs hold (a CPU shared by two jobs counts twice; manually suspended jobs
    /// hold nothing).
    pub alloc_cpus: u32,
    /// Memory in MB its jobs hold (when memory is consumable).
    pub alloc_mem_mb: u64,
    /// How many jobs hold its resources.
    pub(crate) holders: u16,
    /// A job holds it exclusively: nobody joins.
    pub(crate) exclusive: bool,
    /// How many of its holders may not share their resources: jobs that may share do not
    /// join it then (Slurm's `NODE_CR_ONE_ROW` node state).
    pub(crate) solo: u16,
    /// Per core, how many jobs hold it (`CR_Core`; sized on first use).
    pub(crate) core_use: Vec<u8>,
    /// Power save and cloud state (`~ # % !`, LastBusyTime, NodeHostName).
    pub power: NodePower,
}

impl Node {
    /// Whether new work may be placed on it (in service, not drained, responding).
    pub fn available(&self) -> bool {
        // A powered-down node is usable (allocating it resumes it), even a cloud node that
        // never registered.
        let in_service = match self.base {
            NodeBase::Up => true,
            NodeBase::Unknown => self.power.powered_down(),
            NodeBase::Down | NodeBase::Future => false,
        };
        in_service
            && !self.drain
            && !self.invalid
            && !self.not_responding
            && self.power.schedulable()
    }

    /// Slurm's long state name (`IDLE`, `ALLOCATED`, `DRAINED`, `DOWN*`, ...).
    pub fn state_name(&self) -> String {
        let base = match (self.base, self.drain || self.invalid, self.holders > 0) {
            (NodeBase::Unknown, _, _) => "UNKNOWN",
            (NodeBase::Future, _, _) => "FUTURE",
            (NodeBase::Down, _, _) => "DOWN",
            (NodeBase::Up, true, true) => "DRAINING",
            (NodeBase::Up, true, false) if self.invalid => "INVAL",
            (NodeBase::Up, true, false) => "DRAINED",
            (NodeBase::Up, false, true) if self.alloc_cpus < self.cpus => "MIXED",
            (NodeBase::Up, false, true) => "ALLOCATED",
            (NodeBase::Up, false, false) => "IDLE",
        };
        let star = if self.not_responding { "*" } else { "" };
        format!("{base}{star}")
    }
}

/// The node table and its bitmaps.
#[derive(Debug, Clone)]
pub(crate) struct NodeTable {
    pub nodes: Vec<Node>,
    pub by_name: HashMap<String, NodeIdx>,
    /// Nodes that may take new work.
    pub avail: FixedBitSet,
    /// Nodes whose resources no job holds.
    pub idle: FixedBitSet,
    /// How many times a node became available or idle: a pass after that may start jobs the
    /// last one could not (see `core::fresh`).
    pub gains: u64,
}

impl NodeTable {
    pub fn from_conf(conf: &[NodeConf], now: SimTime) -> Self {
        let mut order: Vec<&NodeConf> = conf.iter().collect();
        order.sort_by_key(|n| n.weight);
        let nodes: Vec<Node> = order.into_iter().map(|c| node_from_conf(c, now)).collect();
        let by_name = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), idx(i)))
            .collect();
        let mut table = Self {
            avail: FixedBitSet::with_capacity(nodes.len()),
            idle: FixedBitSet::with_capacity(nodes.len()),
            gains: 0,
            nodes,
            by_name,
        };
        for i in 0..table.nodes.len() {
            table.refresh(idx(i));
        }
        table
    }

    /// Recomputes a node's bits from its fields; call after every change.
    pub fn refresh(&mut self, i: NodeIdx) {
        let n = &self.nodes[i.get() as usize];
        let (avail, idle) = (n.available(), n.holders == 0);
        let bit = i.get() as usize;
        if (avail && !self.avail.contains(bit)) || (idle && !self.idle.contains(bit)) {
            self.gains += 1;
        }
        self.avail.set(bit, avail);
        self.idle.set(bit, idle);
    }

    pub fn get(&self, i: NodeIdx) -> &Node {
        &self.nodes[i.get() as usize]
    }

    pub fn get_mut(&mut self, i: NodeIdx) -> &mut Node {
        &mut self.nodes[i.get() as usize]
    }

    pub fn lookup(&self, name: &str) -> Result<NodeIdx, CtldError> {
        self.by_name
            .get(name)
            .copied()
            .ok_or_else(|| CtldError::InvalidNodeName {
                name: name.to_string(),
            })
    }

    pub fn hostlist(&self, nodes: &[NodeIdx]) -> String {
        let names: Vec<&str> = nodes.iter().map(|&i| self.get(i).name.as_str()).collect();
        compress(&names)
    }
}

pub(crate) fn idx(i: usize) -> NodeIdx {
    NodeIdx::new(u32::try_from(i).unwrap_or(u32::MAX))
}

fn node_from_conf(c: &NodeConf, now: SimTime) -> Node {
    let (base, drain) = match c.state {
        NodeConfState::Unknown | NodeConfState::Idle | NodeConfState::Cloud => {
            (NodeBase::Unknown, false)
        }
        NodeConfState::Down => (NodeBase::Down, false),
        NodeConfState::Drain => (NodeBase::Unknown, true),
        NodeConfState::Future => (NodeBase::Future, false),
    };
    Node {
        name: c.name.clone(),
        addr: c.addr.clone(),
        port: c.port,
        cpus: c.cpus,
        topo: Topo {
            cpus: c.cpus,
            sockets: c.sockets,
            cores_per_socket: c.cores_per_socket,
            threads_per_core: c.threads_per_core,
        },
        real_memory_mb: c.real_memory_mb,
        tmp_disk_mb: c.tmp_disk_mb,
        weight: c.weight,
        features: c.features.clone(),
        base,
        drain,
        invalid: false,
        not_responding: false,
        reason: c.reason.clone(),
        last_heard: now,
        boot_time: None,
        registered_at: None,
        daemon_pid: 0,
        job: None,
        jobs: Vec::new(),
        alloc_cpus: 0,
        alloc_mem_mb: 0,
        holders: 0,
        exclusive: false,
        solo: 0,
        core_use: Vec::new(),
        power: NodePower::configured(c.state == NodeConfState::Cloud),
    }
}
