//! Typed identifiers. Raw integers appear only at the DB and wire boundaries.
//!
//! A federated job id packs the origin cluster's federation id above a 26-bit local id, as
//! Slurm does: `origin << 26 | local`. A cluster outside any federation issues plain local ids.

use std::fmt;

/// Number of bits of a job id that hold the local (per-cluster) part.
pub const LOCAL_ID_BITS: u32 = 26;
/// The largest local job id (`MAX_JOB_ID` in Slurm, bits 0-25).
pub const MAX_LOCAL_ID: u32 = (1 << LOCAL_ID_BITS) - 1;
/// The most clusters a federation may hold (`MAX_FED_CLUSTERS`).
pub const MAX_FED_CLUSTERS: u32 = 63;
/// Slurm's default `MaxJobId`: the accounting daemon leases local ids below it only, then
/// wraps to 1, so no job's local part ever reaches it.
pub const MAX_JOB_ID: u32 = 0x03ff_0000;
/// The job ids of `srun -Z` (`--no-allocate`) steps, which belong to no job (Slurm's srun
/// shows ids of this range too). They cannot be a real job's: their local part is at least
/// [`MAX_JOB_ID`], which leased ids never reach whatever the origin bits, and a controller
/// without an accounting daemon issues plain ids (below 2^26). `0xffff_fffe` and above stay
/// out, as Slurm keeps them for its own markers.
pub const NO_ALLOC_JOB_IDS: std::ops::RangeInclusive<u32> = 0xffff_0000..=0xffff_fffd;

/// Whether `raw` is the job id of an `srun -Z` step (see [`NO_ALLOC_JOB_IDS`]).
pub fn is_no_alloc(raw: u32) -> bool {
    NO_ALLOC_JOB_IDS.contains(&raw)
}

/// Why a raw number is not a valid id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// A local job id outside 1..=2^26-1.
    #[error("local job id {0} is out of range 1..={MAX_LOCAL_ID}")]
    LocalOutOfRange(u32),
    /// A federation cluster id outside 1..=63.
    #[error("cluster id {0} is out of range 1..={MAX_FED_CLUSTERS}")]
    ClusterOutOfRange(u32),
}

macro_rules! define_id_type {
    ($(#[$meta:meta])* $name:ident($inner:ty)) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name($inner);

        impl $name {
            /// The raw value, for the DB and wire boundaries.
            pub const fn get(self) -> $inner {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

define_id_type!(
    /// A cluster's id inside its federation (1..=63); bit `id-1` of a sibling bitmap.
    ClusterId(u32)
);
define_id_type!(
    /// A job id local to one cluster (1..=2^26-1).
    LocalJobId(u32)
);
define_id_type!(
    /// A job id as users see it: `origin << 26 | local`, or a plain local id outside a federation.
    FedJobId(u32)
);
define_id_type!(
    /// The index of a node in a controller's node table.
    NodeIdx(u32)
);

impl ClusterId {
    /// Checks that `raw` is a valid federation cluster id.
    pub fn new(raw: u32) -> Result<Self, IdError> {
        if (1..=MAX_FED_CLUSTERS).contains(&raw) {
            Ok(Self(raw))
        } else {
            Err(IdError::ClusterOutOfRange(raw))
        }
    }

    /// This cluster's bit in a 64-bit sibling bitmap.
    pub const fn sibling_bit(self) -> u64 {
        1 << (self.0 - 1)
    }
}

impl LocalJobId {
    /// Checks that `raw` is a valid local job id.
    pub fn new(raw: u32) -> Result<Self, IdError> {
        if (1..=MAX_LOCAL_ID).contains(&raw) {
            Ok(Self(raw))
        } else {
            Err(IdError::LocalOutOfRange(raw))
        }
    }
}

impl NodeIdx {
    /// Wraps a table index.
    pub const fn new(raw: u32) -> Self {
        Self(raw)
    }
}

impl FedJobId {
    /// A job id issued by `origin` (or a plain id when `origin` is `None`).
    pub const fn compose(origin: Option<ClusterId>, local: LocalJobId) -> Self {
        match origin {
            Some(c) => Self(c.0 << LOCAL_ID_BITS | local.0),
            None => Self(local.0),
        }
    }

    /// Interprets a raw job id; fails only when its local part is zero.
    pub fn from_raw(raw: u32) -> Result<Self, IdError> {
        LocalJobId::new(raw & MAX_LOCAL_ID)?;
        Ok(Self(raw))
    }

    /// The origin cluster's federation id, `None` for a non-federated job.
    pub fn origin(self) -> Option<ClusterId> {
        ClusterId::new(self.0 >> LOCAL_ID_BITS).ok()
    }

    /// The local part of the id.
    pub const fn local(self) -> LocalJobId {
        LocalJobId(self.0 & MAX_LOCAL_ID)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn checked_constructors_reject_out_of_range() {
        assert!(ClusterId::new(0).is_err());
        assert!(ClusterId::new(64).is_err());
        assert!(ClusterId::new(63).is_ok());
        assert!(LocalJobId::new(0).is_err());
        assert!(LocalJobId::new(1 << 26).is_err());
        assert!(LocalJobId::new(MAX_LOCAL_ID).is_ok());
        assert!(FedJobId::from_raw(1 << 26).is_err());
    }

    #[test]
    fn first_federated_job_of_cluster_one_is_67108865() {
        let id = FedJobId::compose(
            Some(ClusterId::new(1).unwrap()),
            LocalJobId::new(1).unwrap(),
        );
        assert_eq!(id.get(), 67_108_865);
        assert_eq!(ClusterId::new(1).unwrap().sibling_bit(), 1);
        assert_eq!(ClusterId::new(63).unwrap().sibling_bit(), 1 << 62);
    }

    #[test]
    fn no_alloc_ids_are_above_every_leased_local_id() {
        assert_eq!(NO_ALLOC_JOB_IDS.start() & MAX_LOCAL_ID, MAX_JOB_ID);
        assert!(is_no_alloc(0xffff_2094));
        assert!(!is_no_alloc(0xffff_fffe));
        assert!(!is_no_alloc(MAX_LOCAL_ID));
    }

    proptest! {
        #[test]
        fn leased_ids_are_never_no_alloc_ids(c in 0u32..=63, l in 1u32..MAX_JOB_ID) {
            let lid = LocalJobId::new(l).unwrap();
            let id = FedJobId::compose(ClusterId::new(c).ok(), lid);
            prop_assert!(!is_no_alloc(id.get()));
        }

        #[test]
        fn compose_then_split_round_trips(c in 1u32..=63, l in 1u32..=MAX_LOCAL_ID) {
            let cid = ClusterId::new(c).unwrap();
            let lid = LocalJobId::new(l).unwrap();
            let id = FedJobId::compose(Some(cid), lid);
            prop_assert_eq!(id.origin(), Some(cid));
            prop_assert_eq!(id.local(), lid);
            prop_assert_eq!(FedJobId::from_raw(id.get()).unwrap(), id);
        }

        #[test]
        fn plain_ids_have_no_origin(l in 1u32..=MAX_LOCAL_ID) {
            let id = FedJobId::compose(None, LocalJobId::new(l).unwrap());
            prop_assert_eq!(id.origin(), None);
            prop_assert_eq!(id.get(), l);
        }
    }
}
