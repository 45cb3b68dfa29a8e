//! Running jobs end once their QOS has used up its `GrpTRESMins`, as Slurm's controller ends
//! them in its time-limit check under `AccountingStorageEnforce=limits`: state TIMEOUT, reason
//! `TimeLimit`, and a log line naming the QOS, the resource, the limit and the minutes used.
//! The usage is the dbd's (past and running jobs of the QOS on this cluster, decayed), handed
//! to the core with each fair-share refresh, so jobs end at the first tick after a refresh
//! shows the limit reached. A job is held to its own QOS's limit here (the dbd records usage
//! by the job's own QOS, so a partition QOS has none of its own to compare).

use sluice_vocab::{FedJobId, JobState};

use super::check::{Res, mins_reached, used_by};
use crate::core::jobs::JobReason;
use crate::core::outbox::Outbox;
use crate::core::{Core, SimTime, kill};

/// Why a running job must end: its QOS at its limit and what the QOS used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsedUp {
    /// The QOS.
    pub qos: String,
    /// The resource (`cpu`, `mem`, `node`).
    pub tres: &'static str,
    /// The limit, in minutes.
    pub limit: u64,
    /// The minutes the QOS used.
    pub used: u64,
}

/// The running jobs of `core` whose QOS has used up its `GrpTRESMins`.
pub(crate) fn jobs_over(core: &Core) -> Vec<(FedJobId, UsedUp)> {
    let Some(table) = core.qos.as_ref() else {
        return Vec::new();
    };
    if !core.conf.acct_enforce.limits || table.iter().all(|q| q.limits.grp_tres_mins.is_empty()) {
        return Vec::new();
    }
    let mut over = Vec::new();
    for id in &core.jobs.active {
        let Some(job) = core.jobs.map.get(id) else {
            continue;
        };
        if job.state != JobState::Running || job.completing {
            continue;
        }
        let Some(q) = table.get(&job.launch.qos) else {
            continue;
        };
        if let Some((res, limit, used)) =
            mins_reached(&q.limits.grp_tres_mins, &used_by(core, &q.name))
        {
            let tres = match res {
                Res::Cpu => "cpu",
                Res::Mem => "mem",
                Res::Node => "node",
            };
            let qos = q.name.clone();
            over.push((
                *id,
                UsedUp {
                    qos,
                    tres,
                    limit,
                    used,
                },
            ));
        }
    }
    over
}

/// Ends the running jobs of QOS at their `GrpTRESMins` (see [`jobs_over`]).
pub(crate) fn on_tick(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    for (id, why) in jobs_over(core) {
        tracing::info!(
            "Job JobId={} timed out, the job is at or exceeds QOS {}'s group max tres({}) \
             minutes of {} with {}",
            id.local(),
            why.qos,
            why.tres,
            why.limit,
            why.used
        );
        kill::kill_job(core, out, now, id, JobState::Timeout, JobReason::TimeLimit);
    }
}
