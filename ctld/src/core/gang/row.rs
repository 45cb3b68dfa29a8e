//! A partition's active row: the resources of the jobs running now, and the test whether
//! one more job fits among them (Slurm's `_job_fits_in_active_row`):
//!
//! - whole nodes: no node in common;
//! - counted CPUs: on common nodes, the CPUs add up to at most the node's CPUs;
//! - cores: no core in common (a job holding whole nodes without a core list holds all cores).
//!
//! Clearing touches only the nodes added since the last clear, so a rebuild costs the size
//! of the jobs it places, not the size of the cluster.

use crate::core::alloc::{JobAlloc, Unit};
use crate::core::nodes::NodeTable;
use fixedbitset::FixedBitSet;
use std::sync::Arc;

/// The resources in use by a partition's running jobs.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    unit: Unit,
    /// Nodes with a running job.
    nodes: FixedBitSet,
    /// CPUs in use per node (counted CPUs only; else empty).
    cpus: Vec<u32>,
    /// Cores in use, at `core_base[node] + core` (cores only; else empty).
    cores: FixedBitSet,
    core_base: Arc<Vec<usize>>,
    /// Nodes set since the last clear.
    touched: Vec<usize>,
}

impl Row {
    /// An empty row over `nodes`, comparing `unit`s; `core_base` is where each node's cores
    /// start in the core bitmap (with one extra entry: the total).
    pub fn new(unit: Unit, nodes: &NodeTable, core_base: Arc<Vec<usize>>) -> Self {
        let n = nodes.nodes.len();
        let total = core_base.last().copied().unwrap_or(0);
        Self {
            unit,
            nodes: FixedBitSet::with_capacity(n),
            cpus: if unit == Unit::Cpu {
                vec![0; n]
            } else {
                Vec::new()
            },
            cores: FixedBitSet::with_capacity(if unit == Unit::Core { total } else { 0 }),
            core_base,
            touched: Vec::new(),
        }
    }

    /// Whether a running job of the row uses node `i`.
    #[cfg(test)]
    pub fn uses(&self, i: usize) -> bool {
        self.nodes.contains(i)
    }

    /// Empties the row.
    pub fn clear(&mut self) {
        for &i in &self.touched {
            self.nodes.set(i, false);
            if let Some(c) = self.cpus.get_mut(i) {
                *c = 0;
            }
            if self.unit == Unit::Core {
                let (lo, hi) = self.core_range(i);
                self.cores.remove_range(lo..hi);
            }
        }
        self.touched.clear();
    }

    fn core_range(&self, i: usize) -> (usize, usize) {
        let lo = self.core_base.get(i).copied().unwrap_or(0);
        let hi = self.core_base.get(i + 1).copied().unwrap_or(lo);
        (lo, hi)
    }

    /// Whether `a` can run alongside the jobs in the row.
    pub fn fits(&self, a: &JobAlloc, nodes: &NodeTable) -> bool {
        a.nodes.iter().enumerate().all(|(k, n)| {
            let i = n.get() as usize;
            if !self.nodes.contains(i) {
                return true;
            }
            match self.unit {
                Unit::Node => false,
                Unit::Cpu => {
                    let used = self.cpus.get(i).copied().unwrap_or(0);
                    let want = a.cpus.get(k).copied().unwrap_or(0);
                    used.saturating_add(want) <= nodes.nodes[i].cpus
                }
                Unit::Core => {
                    let (lo, hi) = self.core_range(i);
                    match a.cores.get(k) {
                        Some(cores) => cores.iter().all(|&c| {
                            lo + usize::from(c) >= hi || !self.cores.contains(lo + usize::from(c))
                        }),
                        None => self.cores.count_ones(lo..hi) == 0,
                    }
                }
            }
        })
    }

    /// Puts `a`'s resources in the row.
    pub fn add(&mut self, a: &JobAlloc) {
        for (k, n) in a.nodes.iter().enumerate() {
            let i = n.get() as usize;
            if !self.nodes.put(i) {
                self.touched.push(i);
            }
            match self.unit {
                Unit::Node => {}
                Unit::Cpu => {
                    if let Some(c) = self.cpus.get_mut(i) {
                        *c = c.saturating_add(a.cpus.get(k).copied().unwrap_or(0));
                    }
                }
                Unit::Core => {
                    let (lo, hi) = self.core_range(i);
                    match a.cores.get(k) {
                        Some(cores) => cores
                            .iter()
                            .map(|&c| lo + usize::from(c))
                            .filter(|&b| b < hi)
                            .for_each(|b| self.cores.insert(b)),
                        None => self.cores.insert_range(lo..hi),
                    }
                }
            }
        }
    }
}

/// Where each node's cores start in a cluster-wide core bitmap, plus the total at the end.
pub(crate) fn core_base(nodes: &NodeTable) -> Vec<usize> {
    let mut base = Vec::with_capacity(nodes.nodes.len() + 1);
    let mut at = 0usize;
    for n in &nodes.nodes {
        base.push(at);
        at += n.cpus as usize;
    }
    base.push(at);
    base
}
