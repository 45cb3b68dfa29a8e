//! Pending jobs that end without running: `--deadline` (state DEADLINE, reason `DeadLine`,
//! once the job can no longer end by its deadline: now plus its time limit is past it) and
//! `--kill-on-invalid-dep=yes` (state CANCELLED, reason `DependencyNeverSatisfied`, once a
//! dependency can never be met). Checked on every tick, before the scheduling pass, so a job
//! past its deadline is never started.

use super::completion::end_pending;
use super::jobs::{Job, JobReason};
use super::outbox::Outbox;
use super::{Core, SimTime, deps};
use crate::conf::TimeLimit;
use sluice_vocab::{FedJobId, JobState};

/// Ends the pending jobs whose deadline can no longer be met or whose dependencies can never
/// be (when they asked to be killed then).
pub(crate) fn on_tick(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    let ending: Vec<(FedJobId, JobState, JobReason)> = core
        .jobs
        .map
        .values()
        .filter(|job| job.is_queued())
        .filter_map(|job| why_end(core, job, now).map(|(s, r)| (job.id, s, r)))
        .collect();
    for (id, state, reason) in ending {
        if reason == JobReason::DependencyNeverSatisfied {
            super::mail::invalid_depend(core, out, id);
        }
        end_pending(core, out, now, id, state, reason);
    }
}

/// The state and reason `job` (pending) ends with at `now`, if it must.
fn why_end(core: &Core, job: &Job, now: SimTime) -> Option<(JobState, JobReason)> {
    let place = &job.req.place;
    if let Some(deadline) = place.deadline
        && past_deadline(job.req.time_limit, deadline, now)
    {
        return Some((JobState::Deadline, JobReason::DeadLine));
    }
    if place.kill_invalid_dep == Some(true)
        && deps::blocking_reason(&core.jobs, job, now) == Some(JobReason::DependencyNeverSatisfied)
    {
        return Some((JobState::Cancelled, JobReason::DependencyNeverSatisfied));
    }
    None
}

/// Whether a job with `limit`, started at `now`, would end after `deadline` (unix seconds).
/// An unlimited job only misses a deadline that has passed, as in Slurm.
pub fn past_deadline(limit: TimeLimit, deadline: u64, now: SimTime) -> bool {
    now.plus(limit.as_secs().unwrap_or(0)).secs() > deadline
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_missed_when_the_limit_no_longer_fits() {
        let now = SimTime::from_secs(1_000);
        assert!(!past_deadline(TimeLimit::Minutes(10), 1_600, now));
        assert!(past_deadline(TimeLimit::Minutes(10), 1_599, now));
        assert!(!past_deadline(TimeLimit::Unlimited, 1_000, now));
        assert!(past_deadline(TimeLimit::Unlimited, 999, now));
    }
}
