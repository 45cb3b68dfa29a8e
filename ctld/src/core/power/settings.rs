//! The power save settings in force, derived once from the configuration: per-node timeouts
//! (a node in several partitions takes the highest value any of them sets, else the global
//! one) and the node exclusions of `SuspendExcNodes` and `SuspendExcParts`.

use super::super::nodes::{Node, NodeBase, NodeTable};
use super::super::partitions::Partition;
use crate::conf::{CtldConf, ExcState};
use fixedbitset::FixedBitSet;
use sluice_vocab::NodeIdx;

/// Power save settings with per-node values resolved.
#[derive(Debug, Clone)]
pub struct PowerSettings {
    /// Whether idle nodes are powered down at all (a `SuspendTime` and both programs).
    pub enabled: bool,
    /// Per node: seconds idle before power down (`u64::MAX`: never).
    pub suspend_time: Vec<u64>,
    /// Per node: `SuspendTimeout`.
    pub suspend_timeout: Vec<u32>,
    /// Per node: `ResumeTimeout`.
    pub resume_timeout: Vec<u32>,
    /// `ResumeRate` (nodes per minute, 0: unlimited).
    pub resume_rate: u32,
    /// `SuspendRate` (nodes per minute, 0: unlimited).
    pub suspend_rate: u32,
    /// `SuspendExcStates`.
    pub exc_states: Vec<ExcState>,
    /// `idle_on_node_suspend`.
    pub idle_on_node_suspend: bool,
    /// Nodes never powered down automatically (`SuspendExcNodes` without a count, or with a
    /// count covering the whole set, and `SuspendExcParts`).
    pub(crate) avoid: FixedBitSet,
    /// `SuspendExcNodes` sets with a count: keep that many of their usable nodes up.
    pub(crate) counted: Vec<(Vec<NodeIdx>, u32)>,
    /// Per partition index: `PowerDownOnIdle=YES`.
    pub(crate) down_on_idle: Vec<bool>,
}

impl PowerSettings {
    /// The settings of `conf` for the node table and partitions built from it.
    pub(crate) fn build(conf: &CtldConf, nodes: &NodeTable, parts: &[Partition]) -> Self {
        let pc = &conf.power;
        let n = nodes.nodes.len();
        let global_time = pc.suspend_time.map_or(u64::MAX, |t| t.as_secs());
        let mut suspend_time: Vec<Option<u64>> = vec![None; n];
        let mut suspend_timeout: Vec<Option<u32>> = vec![None; n];
        let mut resume_timeout: Vec<Option<u32>> = vec![None; n];
        let mut down_on_idle = vec![false; parts.len()];
        let mut avoid = FixedBitSet::with_capacity(n);
        for (pi, part) in parts.iter().enumerate() {
            let Some(c) = conf.partitions.iter().find(|c| c.name == part.name) else {
                continue;
            };
            down_on_idle[pi] = c.power.power_down_on_idle;
            let excluded = pc.suspend_exc_parts.iter().any(|e| e == &part.name);
            for i in part.nodes.ones() {
                raise(
                    &mut suspend_time[i],
                    c.power.suspend_time.map(|t| t.as_secs()),
                );
                raise(&mut suspend_timeout[i], c.power.suspend_timeout);
                raise(&mut resume_timeout[i], c.power.resume_timeout);
                if excluded {
                    avoid.insert(i);
                }
            }
        }
        let mut counted = Vec::new();
        for set in &pc.suspend_exc_nodes {
            let members: Vec<NodeIdx> = set
                .nodes
                .iter()
                .filter_map(|name| nodes.by_name.get(name).copied())
                .collect();
            match set.count {
                Some(c) if c > 0 && (c as usize) < members.len() => counted.push((members, c)),
                _ => members.iter().for_each(|m| avoid.insert(m.get() as usize)),
            }
        }
        Self {
            enabled: pc.enabled(&conf.partitions),
            suspend_time: suspend_time
                .into_iter()
                .map(|t| t.unwrap_or(global_time))
                .collect(),
            suspend_timeout: suspend_timeout
                .into_iter()
                .map(|t| t.unwrap_or(pc.suspend_timeout))
                .collect(),
            resume_timeout: resume_timeout
                .into_iter()
                .map(|t| t.unwrap_or(pc.resume_timeout))
                .collect(),
            resume_rate: pc.resume_rate,
            suspend_rate: pc.suspend_rate,
            exc_states: pc.suspend_exc_states.clone(),
            idle_on_node_suspend: pc.idle_on_node_suspend,
            avoid,
            counted,
            down_on_idle,
        }
    }

    /// Whether `node`'s state is one `SuspendExcStates` keeps up.
    pub(crate) fn state_excluded(&self, node: &Node) -> bool {
        self.exc_states.iter().any(|s| match s {
            ExcState::Down => node.base == NodeBase::Down,
            ExcState::Drain => node.drain,
            ExcState::InvalidReg => node.invalid,
            ExcState::NotResponding => node.not_responding,
            ExcState::Cloud => node.power.cloud,
            // States Sluice does not have: nothing is in them.
            _ => false,
        })
    }

    /// The nodes kept up this pass: [`PowerSettings::avoid`] plus, for each counted set, its
    /// first `count` nodes that could be powered down (idle, up, not drained).
    pub(crate) fn kept_up(&self, nodes: &NodeTable) -> FixedBitSet {
        let mut keep = self.avoid.clone();
        for (members, count) in &self.counted {
            let mut left = *count;
            for &m in members {
                if left == 0 {
                    break;
                }
                let node = nodes.get(m);
                if suspendable(node) && node.base != NodeBase::Down && !node.drain {
                    keep.insert(m.get() as usize);
                    left -= 1;
                }
            }
        }
        keep
    }
}

/// Whether `node` could be powered down now: powered up, no job, IDLE or DOWN.
pub(crate) fn suspendable(node: &Node) -> bool {
    node.power.status == super::PowerStatus::On
        && node.job.is_none()
        && matches!(node.base, NodeBase::Up | NodeBase::Down)
}

/// Keeps the higher of `slot` and `v` (a partition's value over another's).
fn raise<T: Ord + Copy>(slot: &mut Option<T>, v: Option<T>) {
    if let Some(v) = v {
        *slot = Some(slot.map_or(v, |s| s.max(v)));
    }
}
