//! The QOS factor's seam. Sluice has no QOS yet: every job's QOS priority is 0, so the factor
//! is 0 whatever `PriorityWeightQOS` says. When QOS arrive, this is the one place that reads
//! the job's QOS priority and the largest QOS priority to normalize by.

use super::super::Core;
use super::super::jobs::Job;

/// The job's QOS priority (0 until Sluice has QOS).
pub fn qos_priority(_core: &Core, _job: &Job) -> u32 {
    0
}

/// The largest QOS priority of the cluster (0 until Sluice has QOS).
pub fn max_qos_priority(_core: &Core) -> u32 {
    0
}

/// The QOS factor: the job's QOS priority over the largest, 0 when no QOS has a priority.
pub fn factor(core: &Core, job: &Job) -> f64 {
    match max_qos_priority(core) {
        0 => 0.0,
        max => f64::from(qos_priority(core, job)) / f64::from(max),
    }
}
