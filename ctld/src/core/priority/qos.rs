//! The QOS factor: the job's QOS priority over the largest QOS priority of the cluster, as
//! Slurm's multifactor plugin normalizes it (0 when no QOS has a priority, or before the
//! dbd's QOS are known).

use super::super::Core;
use super::super::jobs::Job;

/// The job's QOS priority (0 for a QOS the controller does not know).
pub fn qos_priority(core: &Core, job: &Job) -> u32 {
    core.qos
        .as_ref()
        .and_then(|t| t.get(&job.launch.qos))
        .map_or(0, |q| q.priority)
}

/// The largest QOS priority of the cluster.
pub fn max_qos_priority(core: &Core) -> u32 {
    core.qos.as_ref().map_or(0, |t| t.max_priority())
}

/// The QOS factor: the job's QOS priority over the largest, 0 when no QOS has a priority.
pub fn factor(core: &Core, job: &Job) -> f64 {
    match max_qos_priority(core) {
        0 => 0.0,
        max => f64::from(qos_priority(core, job)) / f64::from(max),
    }
}
