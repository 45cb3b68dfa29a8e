//! The scheduling pass after a batch that only submitted jobs: it considers the new jobs
//! alone, so a burst of submissions costs a pass per batch proportional to the batch, not to
//! the queue (held and blocked jobs are not walked again).
//!
//! Why that is the whole pass's answer: after a pass over the whole queue, every pending job
//! either waits for a reason submissions do not change (held, dependency, begin time,
//! partition state or limits, array throttle, federation gate) or is behind its partition's
//! first job that did not fit (kept here, `blocked`). New jobs take resources but free none,
//! so nothing of that changes, and a new job of a lower priority than its partition's blocked
//! job waits (`Priority`) as the whole pass would leave it. The pass falls back to the whole
//! queue when that reasoning does not hold: no whole pass yet (or the last one was cut by
//! `default_queue_depth`), the partitions changed, a node became available or idle since (a
//! heartbeat asks for no pass), a blocked job left the queue, or a new job comes before its
//! partition's blocked job (a lower `--nice`). The runtime asks for this pass
//! only after batches whose requests were all submissions or, from the federation client,
//! answers that only make jobs startable (an offer confirmed, which marks its job new; a start
//! launched on its reservation; new sibling copies); every other change, and the tick every
//! second (begin times reached, lock retries), runs the whole pass.

use super::jobs::JobTable;
use super::outbox::Outbox;
use super::sched::{self, Pass, PassStats, plan_backfill};
use super::{Core, SimTime};
use sluice_vocab::FedJobId;

/// Jobs submitted since the last pass, and what the last whole pass left blocked.
#[derive(Debug, Default)]
pub(crate) struct Fresh {
    /// Submitted since the last pass, in submission order.
    jobs: Vec<FedJobId>,
    /// Per partition, its first job that did not fit at the last whole pass (and since);
    /// `None` when there was no whole pass since the last change the runtime did not report.
    blocked: Option<Vec<Option<FedJobId>>>,
    /// The node table's `gains` when `blocked` was kept: a node that became available or
    /// idle since (a heartbeat, which asks for no pass) may let older jobs start first.
    gains: u64,
}

impl Fresh {
    /// Notes a job just queued by a submission.
    pub(crate) fn submitted(&mut self, id: FedJobId) {
        self.jobs.push(id);
    }

    /// Forgets the new jobs and the last pass's result (a pass over the queue is running).
    pub(crate) fn clear(&mut self) {
        self.jobs.clear();
        self.blocked = None;
    }

    /// Keeps what a pass over the whole queue left blocked, with the nodes' `gains` then.
    pub(crate) fn settle(&mut self, blocked: Vec<Option<FedJobId>>, gains: u64) {
        self.blocked = Some(blocked);
        self.gains = gains;
    }
}

/// Runs the pass after a batch of submissions only: the new jobs in priority order, as the
/// whole pass would treat them, or the whole pass when that cannot be known (see above).
pub fn schedule_fresh(core: &mut Core, out: &mut impl Outbox, now: SimTime) -> PassStats {
    let Some(mut order) = new_jobs_in_turn(core) else {
        return sched::schedule(core, out, now);
    };
    let blocked = core.fresh.blocked.take().unwrap_or_default();
    core.fresh.jobs.clear();
    let backfill = plan_backfill(core, now);
    super::nonstop::spares::refresh(core);
    let mut pass = Pass {
        blocked,
        candidates: Vec::new(),
        bf_limit: if backfill {
            core.cfg.bf_max_job_test
        } else {
            0
        },
        stats: PassStats::default(),
    };
    order.sort_unstable();
    sched::open_assoc_usage(core, now);
    for (_, id) in order {
        pass.consider(core, out, now, id);
    }
    pass.finish(core, out, now);
    core.assoc_usage = None;
    core.fresh.settle(pass.blocked, core.nodes.gains);
    pass.stats
}

/// The queued new jobs with their queue keys, or `None` when the whole queue must be passed.
fn new_jobs_in_turn(core: &Core) -> Option<Vec<(super::jobs::QueueKey, FedJobId)>> {
    let blocked = core.fresh.blocked.as_ref()?;
    if blocked.len() != core.parts.len() || core.fresh.gains != core.nodes.gains {
        return None;
    }
    let mut firsts = Vec::with_capacity(blocked.len());
    for b in blocked {
        let key = match b {
            Some(id) => {
                let key = JobTable::queue_key(core.jobs.map.get(id)?);
                core.jobs.queue.contains(&key).then_some(key)?;
                Some(key)
            }
            None => None,
        };
        firsts.push(key);
    }
    let mut order = Vec::with_capacity(core.fresh.jobs.len());
    for id in &core.fresh.jobs {
        let Some(job) = core.jobs.map.get(id) else {
            continue;
        };
        let key = JobTable::queue_key(job);
        if !core.jobs.queue.contains(&key) {
            continue;
        }
        if firsts[job.partition.get()].is_some_and(|first| key < first) {
            return None;
        }
        order.push((key, *id));
    }
    Some(order)
}

#[cfg(test)]
mod tests;
