//! The partition manager: each partition's node bitmap, limits and access rules, and the node
//! "shapes" (distinct CPU/memory/feature combinations) used to decide at submission whether a
//! request could ever run, without scanning every node.

use super::features::Constraint;
use super::jobs::JobRequest;
use super::nodes::NodeTable;
use crate::conf::{CtldConf, OverSubscribe, PartAccess, PartState, PartitionConf, TimeLimit};
use crate::error::CtldError;
use fixedbitset::FixedBitSet;
use sluice_vocab::conf::ConfError;
use std::fmt;

/// A partition's index in the core's partition table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartIdx(u16);

impl PartIdx {
    /// The table index.
    pub const fn get(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for PartIdx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A distinct kind of node in a partition and how many of them there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShape {
    /// CPUs of each.
    pub cpus: u32,
    /// Their layout.
    pub topo: super::nodes::Topo,
    /// Memory in MB of each.
    pub real_memory_mb: u64,
    /// `TmpDisk` in MB of each.
    pub tmp_disk_mb: u64,
    /// Features of each.
    pub features: Vec<String>,
    /// How many nodes have this shape.
    pub count: u32,
}

/// One partition.
#[derive(Debug, Clone)]
pub struct Partition {
    /// Its name.
    pub name: String,
    /// Its nodes.
    pub nodes: FixedBitSet,
    /// How many nodes it has.
    pub node_count: u32,
    /// Whether jobs without `-p` go here.
    pub default: bool,
    /// Longest time limit a job may ask for.
    pub max_time: TimeLimit,
    /// Most nodes a job may ask for.
    pub max_nodes: Option<u32>,
    /// UP, DOWN, DRAIN or INACTIVE.
    pub state: PartState,
    /// Sharing rule (used by gang scheduling).
    pub oversubscribe: OverSubscribe,
    /// Groups allowed to submit; `None` is everyone.
    pub allow_gids: Option<Vec<u32>>,
    /// `AllowAccounts`, `DenyAccounts`, `AllowQos`, `DenyQos`.
    pub access: PartAccess,
    /// The distinct node shapes.
    pub shapes: Vec<NodeShape>,
}

impl Partition {
    /// Whether a user with these groups may use it.
    pub fn allows(&self, groups: &[u32]) -> bool {
        self.allow_gids
            .as_ref()
            .is_none_or(|allowed| groups.iter().any(|g| allowed.contains(g)))
    }

    /// Whether some set of at most `r.max_nodes` (and at least `r.min_nodes`) of its nodes,
    /// each with the CPUs (`-c`, `--mincpus`) and memory asked and matching `constraint`, has
    /// room for `r.ntasks` tasks (at most `--ntasks-per-node` on each). Decides "Requested
    /// node configuration is not available".
    pub fn could_ever_run(&self, r: &JobRequest, constraint: Option<&Constraint>) -> bool {
        let min_cpus = r.min_node_cpus();
        let mut fits: Vec<(u32, u32)> = self
            .shapes
            .iter()
            .filter(|s| {
                s.cpus >= min_cpus
                    && s.real_memory_mb >= r.min_node_mem_mb()
                    && r.tmp_fits(s.tmp_disk_mb)
                    && r.place.topo.fits(s.topo)
            })
            .filter(|s| constraint.is_none_or(|c| c.matches(&s.features)))
            .map(|s| (r.tasks_on(s.topo), s.count))
            .collect();
        fits.sort_by_key(|f| std::cmp::Reverse(f.0));
        let (mut nodes, mut slots) = (0u64, 0u64);
        for (per_node, count) in fits {
            let take = u64::from(count).min(u64::from(r.max_nodes).saturating_sub(nodes));
            nodes += take;
            slots += take * u64::from(per_node);
        }
        nodes >= u64::from(r.min_nodes) && slots >= u64::from(r.alloc_tasks())
    }
}

/// Builds the partition table from the configuration.
pub(crate) fn build(
    conf: &CtldConf,
    nodes: &NodeTable,
    group_id: &dyn Fn(&str) -> Option<u32>,
) -> Result<Vec<Partition>, CtldError> {
    let default_name = conf.default_partition().map(|p| p.name.clone());
    let mut parts = Vec::new();
    for pc in &conf.partitions {
        let mut bits = FixedBitSet::with_capacity(nodes.nodes.len());
        for name in &pc.nodes {
            let i = nodes.lookup(name)?;
            bits.insert(i.get() as usize);
        }
        let allow_gids = allow_gids(conf, pc, group_id)?;
        let shapes = shapes(&bits, nodes);
        parts.push(Partition {
            name: pc.name.clone(),
            node_count: u32::try_from(bits.count_ones(..)).unwrap_or(u32::MAX),
            nodes: bits,
            default: default_name.as_deref() == Some(pc.name.as_str()),
            max_time: pc.max_time,
            max_nodes: pc.max_nodes,
            state: pc.state,
            oversubscribe: pc.oversubscribe,
            allow_gids,
            access: pc.access.clone(),
            shapes,
        });
    }
    if parts.len() > usize::from(u16::MAX) {
        return Err(CtldError::InvalidPartitionName {
            name: "too many partitions".into(),
        });
    }
    Ok(parts)
}

/// The group ids of partition `pc`'s `AllowGroups` (`None`: everyone); an unknown group is
/// an error naming the key.
pub(crate) fn allow_gids(
    conf: &CtldConf,
    pc: &PartitionConf,
    group_id: &dyn Fn(&str) -> Option<u32>,
) -> Result<Option<Vec<u32>>, ConfError> {
    let Some(names) = &pc.allow_groups else {
        return Ok(None);
    };
    names
        .iter()
        .map(|g| {
            group_id(g).ok_or_else(|| ConfError::BadValue {
                path: conf.path.clone(),
                line: 0,
                key: "AllowGroups".into(),
                value: g.clone(),
                reason: format!("unknown group in partition {}", pc.name),
            })
        })
        .collect::<Result<Vec<u32>, ConfError>>()
        .map(Some)
}

/// The distinct node shapes of the nodes in `bits`.
pub(crate) fn shapes(bits: &FixedBitSet, nodes: &NodeTable) -> Vec<NodeShape> {
    let mut shapes: Vec<NodeShape> = Vec::new();
    for i in bits.ones() {
        let n = &nodes.nodes[i];
        let mut feats = n.features.clone();
        feats.sort();
        match shapes.iter_mut().find(|s| {
            s.cpus == n.cpus
                && s.topo == n.topo
                && s.real_memory_mb == n.real_memory_mb
                && s.tmp_disk_mb == n.tmp_disk_mb
                && s.features == feats
        }) {
            Some(s) => s.count += 1,
            None => shapes.push(NodeShape {
                cpus: n.cpus,
                topo: n.topo,
                real_memory_mb: n.real_memory_mb,
                tmp_disk_mb: n.tmp_disk_mb,
                features: feats,
                count: 1,
            }),
        }
    }
    shapes
}

/// `scontrol update PartitionName=... State=...`: an administrator sets a partition's state.
/// DOWN keeps its jobs queued (`PartitionDown`), DRAIN and INACTIVE refuse new submissions,
/// INACTIVE also holds its queued jobs. The state is saved, so it survives a restart.
pub fn on_partition_state(
    core: &mut super::Core,
    out: &mut impl super::outbox::Outbox,
    caller: super::Caller,
    name: &str,
    state: PartState,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let idx = resolve(&core.parts, Some(name))?;
    core.parts[idx.get()].state = state;
    out.save(super::outbox::SaveHint::Partitions);
    Ok(())
}

/// The partition a job goes to: `name`, or the default one.
pub(crate) fn resolve(parts: &[Partition], name: Option<&str>) -> Result<PartIdx, CtldError> {
    let found = match name {
        Some(n) => parts.iter().position(|p| p.name == n).ok_or_else(|| {
            // A list names its first unknown partition, as Slurm's note does.
            let unknown = n
                .split(',')
                .find(|w| !parts.iter().any(|p| p.name == *w))
                .unwrap_or(n);
            CtldError::InvalidPartitionName {
                name: unknown.to_string(),
            }
        })?,
        None => parts
            .iter()
            .position(|p| p.default)
            .ok_or(CtldError::DefaultPartitionNotSet)?,
    };
    Ok(PartIdx(u16::try_from(found).unwrap_or(u16::MAX)))
}
