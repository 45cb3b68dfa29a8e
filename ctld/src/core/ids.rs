//! Where job ids come from. The accounting daemon leases blocks of local ids to each
//! controller (`LeaseJobIds`); the runtime adds each leased block to the core's source and asks
//! for more when [`JobIdSource::remaining`] runs low. When it is empty, submissions fail with
//! `EAGAIN` ("Resource temporarily unavailable"), on which sbatch retries.

use sluice_vocab::{ClusterId, FedJobId, LocalJobId};
use std::collections::VecDeque;

/// A supply of job ids.
pub trait JobIdSource: Send {
    /// The next id, or `None` when the supply is used up.
    fn next_id(&mut self) -> Option<FedJobId>;
    /// The id [`next_id`](Self::next_id) would give now, without using it up (what
    /// `--test-only` names: the id the job would get).
    fn peek_id(&self) -> Option<FedJobId>;
    /// How many ids are left.
    fn remaining(&self) -> u64;
    /// Adds the block `[first, first+count)` of local ids (a lease from the dbd).
    fn add_range(&mut self, first: LocalJobId, count: u32);
    /// The ids left, as `(first, count)` blocks in use order: what the controller store saves
    /// (with the jobs using the ids) so no id is handed out twice across restarts.
    fn ranges(&self) -> Vec<(u32, u32)>;
    /// Composes later ids with federation id `origin` (`None`: plain ids), as the cluster
    /// joins or leaves a federation. Sources without an origin ignore it.
    fn set_origin(&mut self, origin: Option<ClusterId>) {
        let _ = origin;
    }
}

/// Leased blocks of local ids, used in lease order; ids are composed with the cluster's
/// federation id when it has one.
#[derive(Debug, Clone, Default)]
pub struct IdLease {
    origin: Option<ClusterId>,
    ranges: VecDeque<(u32, u32)>,
}

impl IdLease {
    /// An empty lease for a cluster with federation id `origin` (`None` outside a federation).
    pub fn new(origin: Option<ClusterId>) -> Self {
        Self {
            origin,
            ranges: VecDeque::new(),
        }
    }

    /// Every local id from `first` up to the end of the id space: the plain counter of a
    /// controller without an accounting daemon (`FirstJobId` upward).
    pub fn counter(origin: Option<ClusterId>, first: LocalJobId) -> Self {
        let count = sluice_vocab::ids::MAX_LOCAL_ID
            .saturating_sub(first.get())
            .saturating_add(1);
        Self::with_range(origin, first, count)
    }

    /// A lease with the blocks `ranges` (as [`JobIdSource::ranges`] gave them), e.g. restored
    /// from the controller store.
    pub fn from_ranges(origin: Option<ClusterId>, ranges: &[(u32, u32)]) -> Self {
        Self {
            origin,
            ranges: ranges.iter().copied().filter(|r| r.1 > 0).collect(),
        }
    }

    /// The federation id composed into its job ids.
    pub fn origin(&self) -> Option<ClusterId> {
        self.origin
    }

    /// A lease holding one block, for tests and single-cluster setups.
    pub fn with_range(origin: Option<ClusterId>, first: LocalJobId, count: u32) -> Self {
        let mut lease = Self::new(origin);
        lease.add_range(first, count);
        lease
    }
}

impl JobIdSource for IdLease {
    fn next_id(&mut self) -> Option<FedJobId> {
        loop {
            let (first, count) = self.ranges.front_mut()?;
            if *count == 0 {
                self.ranges.pop_front();
                continue;
            }
            let id = *first;
            *first = first.wrapping_add(1);
            *count -= 1;
            match LocalJobId::new(id) {
                Ok(local) => return Some(FedJobId::compose(self.origin, local)),
                // A block running past the local id space ends there.
                Err(_) => {
                    self.ranges.pop_front();
                }
            }
        }
    }

    fn peek_id(&self) -> Option<FedJobId> {
        // As next_id: empty blocks and blocks past the local id space give nothing.
        let local = self
            .ranges
            .iter()
            .filter(|r| r.1 > 0)
            .find_map(|&(first, _)| LocalJobId::new(first).ok())?;
        Some(FedJobId::compose(self.origin, local))
    }

    fn remaining(&self) -> u64 {
        self.ranges.iter().map(|&(_, n)| u64::from(n)).sum()
    }

    fn add_range(&mut self, first: LocalJobId, count: u32) {
        if count > 0 {
            self.ranges.push_back((first.get(), count));
        }
    }

    fn ranges(&self) -> Vec<(u32, u32)> {
        self.ranges.iter().copied().filter(|r| r.1 > 0).collect()
    }

    fn set_origin(&mut self, origin: Option<ClusterId>) {
        self.origin = origin;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_blocks_in_order_then_runs_dry() {
        let mut lease = IdLease::with_range(None, LocalJobId::new(10).unwrap(), 2);
        lease.add_range(LocalJobId::new(100).unwrap(), 1);
        assert_eq!(lease.remaining(), 3);
        assert_eq!(lease.peek_id().map(FedJobId::get), Some(10));
        assert_eq!(lease.remaining(), 3, "a peek uses nothing up");
        let ids: Vec<u32> = std::iter::from_fn(|| lease.next_id())
            .map(FedJobId::get)
            .collect();
        assert_eq!(ids, [10, 11, 100]);
        assert_eq!(lease.remaining(), 0);
        assert_eq!(lease.peek_id(), None);
        assert_eq!(lease.next_id(), None);
    }

    #[test]
    fn federated_ids_carry_the_origin() {
        let origin = ClusterId::new(1).unwrap();
        let mut lease = IdLease::with_range(Some(origin), LocalJobId::new(1).unwrap(), 1);
        assert_eq!(lease.next_id().map(FedJobId::get), Some(67_108_865));
    }

    #[test]
    fn a_block_stops_at_the_end_of_the_id_space() {
        let last = LocalJobId::new(sluice_vocab::ids::MAX_LOCAL_ID).unwrap();
        let mut lease = IdLease::with_range(None, last, 5);
        assert_eq!(lease.next_id().map(|id| id.local()), Some(last));
        assert_eq!(lease.next_id(), None);
    }
}
