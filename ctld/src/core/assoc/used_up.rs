//! Running jobs end once an association they run under has used up its `GrpTRESMins`, as
//! Slurm's controller ends them in its time-limit check under `AccountingStorageEnforce=
//! limits`: state TIMEOUT, reason `TimeLimit`, and a log line naming the association, the
//! resource, the limit and the minutes used. The usage is the dbd's (past and running jobs,
//! decayed), handed to the core with each fair-share refresh, so jobs end at the first tick
//! after a refresh shows the limit reached.

use sluice_vocab::{FedJobId, JobState};

use super::check::mins_reached;
use super::usage::Usage;
use crate::core::jobs::JobReason;
use crate::core::outbox::Outbox;
use crate::core::{Core, SimTime, kill};

/// Why a running job must end: the association at its limit and what it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsedUp {
    /// The association at the limit: `(account, user)`, user `""` for an account's own.
    pub assoc: (String, String),
    /// The resource (`cpu`, `mem`, `node`).
    pub tres: &'static str,
    /// The limit, in minutes.
    pub limit: u64,
    /// The minutes used under the association.
    pub used: u64,
}

/// The running jobs of `core` whose association, or one above it, has used up a
/// `GrpTRESMins` limit at `now`.
pub(crate) fn jobs_over(core: &Core, now: SimTime) -> Vec<(FedJobId, UsedUp)> {
    let Some(table) = core.assocs.as_ref() else {
        return Vec::new();
    };
    let limited = table.records().any(|r| !r.limits.grp_tres_mins.is_empty());
    // No usage listed yet still ends jobs under a limit of 0, as such a limit keeps jobs pending.
    if !core.conf.acct_enforce.limits || !limited {
        return Vec::new();
    }
    let usage = Usage::of(core, now);
    let mut over = Vec::new();
    for id in &core.jobs.active {
        let Some(job) = core.jobs.map.get(id) else {
            continue;
        };
        if job.state != JobState::Running || job.completing {
            continue;
        }
        for key in table.chain(&job.launch.account, &job.launch.user) {
            let Some(level) = table.get(&key.0, &key.1) else {
                continue;
            };
            if let Some((tres, limit, used)) = mins_reached(level, &usage.get(&key)) {
                over.push((
                    *id,
                    UsedUp {
                        assoc: key,
                        tres,
                        limit,
                        used,
                    },
                ));
                break;
            }
        }
    }
    over
}

/// Ends the running jobs of associations at their `GrpTRESMins` (see [`jobs_over`]).
pub(crate) fn on_tick(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    for (id, why) in jobs_over(core, now) {
        let (account, user) = &why.assoc;
        tracing::info!(
            "Job JobId={} timed out, the job is at or exceeds assoc ({account}/{user}) group \
             max tres({}) minutes of {} with {}",
            id.local(),
            why.tres,
            why.limit,
            why.used
        );
        kill::kill_job(core, out, now, id, JobState::Timeout, JobReason::TimeLimit);
    }
}
