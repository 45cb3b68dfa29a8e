//! The job and cluster-federation state tables, with Slurm's long and short names and the
//! values Slurm stores. Every command renders states through these tables.

use std::fmt;

/// A job state as Slurm names it. The base states (`Pending` .. `OutOfMemory`) are stored as
/// their own value; `Requeued` and `Revoked` are the flag values Slurm's accounting stores for
/// a requeued run or a revoked federation sibling; the rest are transient display states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JobState {
    Pending,
    Running,
    Suspended,
    Completed,
    Cancelled,
    Failed,
    Timeout,
    NodeFail,
    Preempted,
    BootFail,
    Deadline,
    OutOfMemory,
    Configuring,
    Completing,
    Requeued,
    RequeueHold,
    RequeueFed,
    Resizing,
    Revoked,
    Signaling,
    SpecialExit,
    StageOut,
    Stopped,
}

/// One row of the job-state table.
struct JobStateRow {
    state: JobState,
    long: &'static str,
    short: &'static str,
    stored: u32,
}

const JOB_STATES: &[JobStateRow] = &[
    row(JobState::Pending, "PENDING", "PD", 0),
    row(JobState::Running, "RUNNING", "R", 1),
    row(JobState::Suspended, "SUSPENDED", "S", 2),
    row(JobState::Completed, "COMPLETED", "CD", 3),
    row(JobState::Cancelled, "CANCELLED", "CA", 4),
    row(JobState::Failed, "FAILED", "F", 5),
    row(JobState::Timeout, "TIMEOUT", "TO", 6),
    row(JobState::NodeFail, "NODE_FAIL", "NF", 7),
    row(JobState::Preempted, "PREEMPTED", "PR", 8),
    row(JobState::BootFail, "BOOT_FAIL", "BF", 9),
    row(JobState::Deadline, "DEADLINE", "DL", 10),
    row(JobState::OutOfMemory, "OUT_OF_MEMORY", "OOM", 11),
    row(JobState::Requeued, "REQUEUED", "RQ", 1024),
    row(JobState::Revoked, "REVOKED", "RV", 524_288),
    // Display-only states: stored as flags on top of a base state by Slurm; we keep distinct
    // values above the stored range so they round-trip through our own tables.
    row(JobState::Configuring, "CONFIGURING", "CF", 0x8000),
    row(JobState::Completing, "COMPLETING", "CG", 0x8001),
    row(JobState::RequeueHold, "REQUEUE_HOLD", "RH", 0x8002),
    row(JobState::RequeueFed, "REQUEUE_FED", "RF", 0x8003),
    row(JobState::Resizing, "RESIZING", "RS", 0x8004),
    row(JobState::Signaling, "SIGNALING", "SI", 0x8005),
    row(JobState::SpecialExit, "SPECIAL_EXIT", "SE", 0x8006),
    row(JobState::StageOut, "STAGE_OUT", "SO", 0x8007),
    row(JobState::Stopped, "STOPPED", "ST", 0x8008),
];

const fn row(state: JobState, long: &'static str, short: &'static str, stored: u32) -> JobStateRow {
    JobStateRow {
        state,
        long,
        short,
        stored,
    }
}

impl JobState {
    fn row(self) -> &'static JobStateRow {
        // The table lists every variant exactly once (checked by a test).
        JOB_STATES
            .iter()
            .find(|r| r.state == self)
            .unwrap_or(&JOB_STATES[0])
    }

    /// Slurm's long name, e.g. `COMPLETED`.
    pub fn long_name(self) -> &'static str {
        self.row().long
    }

    /// Slurm's compact name, e.g. `CD`.
    pub fn short_name(self) -> &'static str {
        self.row().short
    }

    /// The value stored in the accounting database.
    pub fn stored(self) -> u32 {
        self.row().stored
    }

    /// The state a stored value denotes.
    pub fn from_stored(v: u32) -> Option<Self> {
        JOB_STATES.iter().find(|r| r.stored == v).map(|r| r.state)
    }

    /// Parses a long or short name, case-insensitively (`-s/--state` in sacct, `-t` in squeue).
    pub fn parse(name: &str) -> Option<Self> {
        JOB_STATES
            .iter()
            .find(|r| r.long.eq_ignore_ascii_case(name) || r.short.eq_ignore_ascii_case(name))
            .map(|r| r.state)
    }

    /// Whether the job has ended (Slurm's `IS_JOB_FINISHED`).
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            Self::Completed
                | Self::Cancelled
                | Self::Failed
                | Self::Timeout
                | Self::NodeFail
                | Self::Preempted
                | Self::BootFail
                | Self::Deadline
                | Self::OutOfMemory
                | Self::Revoked
        )
    }

    /// Every state, in table order.
    pub fn all() -> impl Iterator<Item = JobState> {
        JOB_STATES.iter().map(|r| r.state)
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.long_name())
    }
}

/// A cluster's state in its federation. Stored as Slurm stores it: a base state (NA, ACTIVE,
/// INACTIVE) with DRAIN (16) and REMOVE (32) flags, so DRAIN = 17, DRAIN+REMOVE = 49,
/// DRAINED = 18 and DRAINED+REMOVE = 50.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FedState {
    Na,
    Active,
    Inactive,
    Drain,
    DrainRemove,
    Drained,
    DrainedRemove,
}

const FED_DRAIN_FLAG: u32 = 16;
const FED_REMOVE_FLAG: u32 = 32;

impl FedState {
    /// The stored value.
    pub const fn stored(self) -> u32 {
        match self {
            Self::Na => 0,
            Self::Active => 1,
            Self::Inactive => 2,
            Self::Drain => 1 | FED_DRAIN_FLAG,
            Self::DrainRemove => 1 | FED_DRAIN_FLAG | FED_REMOVE_FLAG,
            Self::Drained => 2 | FED_DRAIN_FLAG,
            Self::DrainedRemove => 2 | FED_DRAIN_FLAG | FED_REMOVE_FLAG,
        }
    }

    /// The state a stored value denotes; `None` for a value Slurm never stores.
    pub fn from_stored(v: u32) -> Option<Self> {
        [
            Self::Na,
            Self::Active,
            Self::Inactive,
            Self::Drain,
            Self::DrainRemove,
            Self::Drained,
            Self::DrainedRemove,
        ]
        .into_iter()
        .find(|s| s.stored() == v)
    }

    /// Slurm's display name (`slurmdb_cluster_fed_states_str`); `?` is for unknown values.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Na => "NA",
            Self::Active => "ACTIVE",
            Self::Inactive => "INACTIVE",
            Self::Drain => "DRAIN",
            Self::DrainRemove => "DRAIN+REMOVE",
            Self::Drained => "DRAINED",
            Self::DrainedRemove => "DRAINED+REMOVE",
        }
    }

    /// The display name of a stored value, `?` when it is not one Slurm stores.
    pub fn name_of_stored(v: u32) -> &'static str {
        Self::from_stored(v).map_or("?", Self::name)
    }

    /// Parses what an admin may set (`fedstate=`): a case-insensitive prefix of `Active`,
    /// `Inactive`, `DRAIN` or `DRAIN+REMOVE`, tried in that order, as Slurm does.
    pub fn parse_settable(s: &str) -> Option<Self> {
        if s.is_empty() {
            return None;
        }
        let is_prefix = |full: &str| {
            full.len() >= s.len() && full.as_bytes()[..s.len()].eq_ignore_ascii_case(s.as_bytes())
        };
        [
            ("Active", Self::Active),
            ("Inactive", Self::Inactive),
            ("DRAIN", Self::Drain),
            ("DRAIN+REMOVE", Self::DrainRemove),
        ]
        .into_iter()
        .find(|(full, _)| is_prefix(full))
        .map(|(_, st)| st)
    }

    /// Whether the cluster may take new federated work (neither draining nor inactive).
    pub const fn accepts_new_jobs(self) -> bool {
        matches!(self, Self::Active)
    }
}

impl fmt::Display for FedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_state_has_one_row_and_round_trips() {
        for st in JobState::all() {
            assert_eq!(JOB_STATES.iter().filter(|r| r.state == st).count(), 1);
            assert_eq!(JobState::from_stored(st.stored()), Some(st));
            assert_eq!(JobState::parse(st.long_name()), Some(st));
            assert_eq!(JobState::parse(&st.short_name().to_lowercase()), Some(st));
        }
        assert_eq!(JobState::Revoked.stored(), 524_288);
        assert_eq!(JobState::Requeued.stored(), 1024);
        assert_eq!(JobState::parse("bogus"), None);
    }

    #[test]
    fn fed_state_values_match_slurm() {
        let expect = [
            (FedState::Na, 0, "NA"),
            (FedState::Active, 1, "ACTIVE"),
            (FedState::Inactive, 2, "INACTIVE"),
            (FedState::Drain, 17, "DRAIN"),
            (FedState::DrainRemove, 49, "DRAIN+REMOVE"),
            (FedState::Drained, 18, "DRAINED"),
            (FedState::DrainedRemove, 50, "DRAINED+REMOVE"),
        ];
        for (st, v, name) in expect {
            assert_eq!(st.stored(), v);
            assert_eq!(st.name(), name);
            assert_eq!(FedState::from_stored(v), Some(st));
        }
        assert_eq!(FedState::name_of_stored(3), "?");
    }

    #[test]
    fn fed_state_parsing_is_prefix_in_slurm_order() {
        assert_eq!(FedState::parse_settable("a"), Some(FedState::Active));
        assert_eq!(FedState::parse_settable("INACT"), Some(FedState::Inactive));
        assert_eq!(FedState::parse_settable("d"), Some(FedState::Drain));
        assert_eq!(FedState::parse_settable("drain"), Some(FedState::Drain));
        assert_eq!(
            FedState::parse_settable("drain+"),
            Some(FedState::DrainRemove)
        );
        assert_eq!(
            FedState::parse_settable("Drain+Remove"),
            Some(FedState::DrainRemove)
        );
        assert_eq!(FedState::parse_settable("drained"), None);
        assert_eq!(FedState::parse_settable(""), None);
        assert_eq!(FedState::parse_settable("bogus"), None);
    }
}
