//! Job reasons as saved: by name, parsed back through a list of every [`JobReason`] that fails
//! to compile when a variant is left out.

use crate::core::jobs::JobReason;

/// Every [`JobReason`], for parsing saved reasons. [`reason_position`] fails to compile when a
/// variant is added without being listed here.
const REASONS: [JobReason; 23] = [
    JobReason::None,
    JobReason::Priority,
    JobReason::Resources,
    JobReason::Dependency,
    JobReason::DependencyNeverSatisfied,
    JobReason::JobHeldUser,
    JobReason::JobHeldAdmin,
    JobReason::PartitionDown,
    JobReason::PartitionInactive,
    JobReason::JobArrayTaskLimit,
    JobReason::NonZeroExitCode,
    JobReason::TimeLimit,
    JobReason::NodeDown,
    JobReason::FedJobLock,
    JobReason::BeginTime,
    JobReason::PartitionConfig,
    JobReason::PartitionNodeLimit,
    JobReason::PartitionTimeLimit,
    JobReason::InvalidAccount,
    JobReason::LaunchFailedRequeuedHeld,
    // One stands for all association reasons; `reason_from_str` parses the others.
    JobReason::Assoc(crate::core::assoc::AssocReason::MaxJobs),
    JobReason::DeadLine,
    // One stands for all QOS reasons; `reason_from_str` parses the others.
    JobReason::Qos(crate::core::qos::QosReason::MaxWall),
];

/// Where `r` is in [`REASONS`] (an exhaustive match, so a new variant must be listed).
#[cfg_attr(not(test), allow(dead_code))]
const fn reason_position(r: JobReason) -> usize {
    match r {
        JobReason::None => 0,
        JobReason::Priority => 1,
        JobReason::Resources => 2,
        JobReason::Dependency => 3,
        JobReason::DependencyNeverSatisfied => 4,
        JobReason::JobHeldUser => 5,
        JobReason::JobHeldAdmin => 6,
        JobReason::PartitionDown => 7,
        JobReason::PartitionInactive => 8,
        JobReason::JobArrayTaskLimit => 9,
        JobReason::NonZeroExitCode => 10,
        JobReason::TimeLimit => 11,
        JobReason::NodeDown => 12,
        JobReason::FedJobLock => 13,
        JobReason::BeginTime => 14,
        JobReason::PartitionConfig => 15,
        JobReason::PartitionNodeLimit => 16,
        JobReason::PartitionTimeLimit => 17,
        JobReason::InvalidAccount => 18,
        JobReason::LaunchFailedRequeuedHeld => 19,
        JobReason::Assoc(_) => 20,
        JobReason::DeadLine => 21,
        JobReason::Qos(_) => 22,
    }
}

const _: () = assert!(
    reason_position(JobReason::Qos(crate::core::qos::QosReason::MaxWall)) == REASONS.len() - 1
);

/// A saved reason back in the core's form (`None` for an unknown name).
pub(crate) fn reason_from_str(s: &str) -> Option<JobReason> {
    REASONS
        .into_iter()
        .find(|r| r.as_str() == s)
        .or_else(|| crate::core::assoc::AssocReason::parse(s).map(JobReason::Assoc))
        .or_else(|| crate::core::qos::QosReason::parse(s).map(JobReason::Qos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_parses_back() {
        for (i, r) in REASONS.into_iter().enumerate() {
            assert_eq!(reason_position(r), i);
            assert_eq!(reason_from_str(r.as_str()), Some(r));
        }
        assert_eq!(reason_from_str("Bogus"), None);
    }
}
