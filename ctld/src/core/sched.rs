//! One scheduling pass: pending jobs in priority order (partition tier, then priority, see
//! [`super::priority`]; then earlier submission, then lower id), FIFO per partition. The first job of a partition that does not fit gets reason
//! `Resources` and blocks the rest of its partition (reason `Priority`); those are then offered
//! to [`super::backfill`] when it is enabled.
//!
//! Cost: the pass visits every pending job once (a reason update), but only tries node
//! selection for jobs of partitions not yet blocked, plus at most `bf_max_job_test` backfill
//! candidates; a selection is a word-wise AND of bitmaps, so a full partition fails fast.
//! `SchedulerParameters` may thin passes out as in Slurm: `bf_interval` runs backfill at most
//! that often, `default_queue_depth` makes a pass consider only the first jobs of the queue
//! (the whole queue is still tested every [`FULL_PASS_SECS`]).
//!
//! After a batch that only submitted jobs, the runtime runs [`super::fresh::schedule_fresh`]
//! instead: it considers only the new jobs, which is what a whole pass would do then.

use super::jobs::{HoldKind, Job, JobReason};
use super::outbox::Outbox;
use super::partitions::PartIdx;
use super::select::job_maps;
use super::{Core, SimTime, alloc, backfill, completion, deps, federation, gang};
use crate::conf::PartState;
use fixedbitset::FixedBitSet;
use sluice_vocab::FedJobId;
use sluice_vocab::cluster_conf::BackfillEvery;

/// What a pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Pending jobs looked at.
    pub considered: u32,
    /// Jobs started in priority order.
    pub started: u32,
    /// Jobs started early by backfill.
    pub backfilled: u32,
}

/// Why `job` cannot be considered now, apart from resources.
pub(crate) fn ineligible(core: &Core, job: &Job, now: SimTime) -> Option<JobReason> {
    if let Some(h) = job.hold {
        if job.reason == JobReason::LaunchFailedRequeuedHeld {
            return Some(job.reason);
        }
        return Some(match h {
            HoldKind::User => JobReason::JobHeldUser,
            HoldKind::Admin => JobReason::JobHeldAdmin,
        });
    }
    if let Some(r) = job.part_limit {
        return Some(r);
    }
    if job.req.place.begin.is_some_and(|b| now.secs() < b) {
        return Some(JobReason::BeginTime);
    }
    if let Some(r) = deps::blocking_reason(&core.jobs, job, now) {
        return Some(r);
    }
    match core.parts[job.partition.get()].state {
        PartState::Down => return Some(JobReason::PartitionDown),
        PartState::Inactive => return Some(JobReason::PartitionInactive),
        PartState::Up | PartState::Drain => {}
    }
    let throttled = job
        .array
        .and_then(|a| core.jobs.arrays.get(&a.job))
        .is_some_and(|m| !m.may_start_one());
    if throttled {
        return Some(JobReason::JobArrayTaskLimit);
    }
    let own = super::assoc::blocking_reason(core, job, now)
        .or_else(|| super::qos::blocking_reason(core, job));
    if own.is_none() && job.het.is_some_and(|h| h.offset == 0) {
        // A heterogeneous job waits while any of its components may not start.
        return super::het::followers_ineligible(core, job.id, now);
    }
    own
}

/// What [`try_start`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// The job started.
    Started,
    /// No room for it now.
    NoRoom,
    /// There was room, but what it would hold there breaks its association's limits.
    Limited(JobReason),
}

/// The node sets a job may start on now: its partition's (with its features and `-w/-x`),
/// the available nodes, and outside the hot spares (failure management).
pub(super) fn start_maps<'a>(core: &'a Core, job: &'a Job) -> Vec<&'a FixedBitSet> {
    let part = &core.parts[job.partition.get()];
    let mut maps = job_maps(part, job);
    maps.push(&core.nodes.avail);
    if let Some(state) = &core.nonstop {
        maps.push(&state.ordinary);
    }
    maps
}

/// Tries to start `id` now on free resources of nodes that pass `allow`. With gang
/// scheduling, a job started on busy resources is suspended at once.
pub(crate) fn try_start(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    allow: impl FnMut(usize) -> bool,
) -> Start {
    if super::het::is_leader(core, id) {
        return super::het::try_start(core, out, now, id, allow);
    }
    let Some(job) = core.jobs.map.get(&id) else {
        return Start::NoRoom;
    };
    let maps = start_maps(core, job);
    let Some(alloc) = alloc::pick::pick(core, job, &maps, allow) else {
        return Start::NoRoom;
    };
    if let Some(r) = super::assoc::allocation_reason(core, job, &alloc, now) {
        return Start::Limited(r);
    }
    // A federated job starts only once the dbd's start lock is committed: its allocation
    // is reserved meanwhile (see `federation::start`).
    if federation::start::needs_lock(core, id) {
        federation::start::reserve(core, out, now, id, alloc);
    } else {
        completion::start_job(core, out, now, id, alloc);
        gang::job_started(core, out, now, id);
    }
    count_started(core, id, now);
    Start::Started
}

/// Adds a job just started to the pass's association usage, so the next job of the pass
/// sees it.
pub(crate) fn count_started(core: &mut Core, id: FedJobId, now: SimTime) {
    if let Some(mut usage) = core.assoc_usage.take() {
        usage.add_job(core, id, now);
        core.assoc_usage = Some(usage);
    }
}

/// How often a pass tests the whole queue when `default_queue_depth` limits the others
/// (Slurm's `sched_interval` default).
pub const FULL_PASS_SECS: u64 = 60;

/// When backfill and a whole-queue pass last ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassTimes {
    backfill: Option<SimTime>,
    full: Option<SimTime>,
}

/// Whether a pass at `now` backfills (`bf_interval`); records it when it does.
pub(crate) fn plan_backfill(core: &mut Core, now: SimTime) -> bool {
    let backfill = core.cfg.backfill
        && match core.cfg.bf_interval {
            BackfillEvery::Pass => true,
            BackfillEvery::Never => false,
            BackfillEvery::Secs(s) => due(core.passes.backfill, now, u64::from(s)),
        };
    if backfill {
        core.passes.backfill = Some(now);
    }
    backfill
}

/// Whether something last done at `last` is due again at `now`, `every` seconds on.
fn due(last: Option<SimTime>, now: SimTime, every: u64) -> bool {
    last.is_none_or(|t| now >= t.plus(every))
}

/// How many queued jobs a pass at `now` considers for starting (`default_queue_depth`, the
/// whole queue every [`FULL_PASS_SECS`]); records a whole-queue pass.
fn plan_depth(core: &mut Core, now: SimTime) -> usize {
    match core.cfg.queue_depth {
        Some(d) if !due(core.passes.full, now, FULL_PASS_SECS) => d,
        _ => {
            core.passes.full = Some(now);
            usize::MAX
        }
    }
}

/// The state of a pass in progress: each partition's first job that did not fit, the
/// lower-priority jobs offered to backfill, and the counts.
pub(crate) struct Pass {
    pub blocked: Vec<Option<FedJobId>>,
    pub candidates: Vec<FedJobId>,
    pub bf_limit: usize,
    pub stats: PassStats,
}

impl Pass {
    /// Considers pending job `id` in its priority turn: starts it, or sets why it waits.
    pub(crate) fn consider(
        &mut self,
        core: &mut Core,
        out: &mut impl Outbox,
        now: SimTime,
        id: FedJobId,
    ) {
        self.stats.considered += 1;
        // Federated jobs: offers to siblings follow holds and dependencies, and some may not
        // start yet (not recorded by the dbd, fedstate INACTIVE, lock refused a moment ago).
        let gated = federation::start::gate(core, out, now, id);
        let Some(job) = core.jobs.map.get(&id) else {
            return;
        };
        // A heterogeneous job is considered through its leader alone.
        if job.het_follower() {
            return;
        }
        let part: PartIdx = job.partition;
        let reason = match ineligible(core, job, now).or(gated) {
            Some(r) => r,
            None if self.blocked[part.get()].is_some() => {
                if self.candidates.len() < self.bf_limit {
                    self.candidates.push(id);
                }
                JobReason::Priority
            }
            None => match try_start(core, out, now, id, |_| true) {
                Start::Started => {
                    self.stats.started += 1;
                    if super::het::is_leader(core, id) {
                        super::het::mirror_reason(core, id, now);
                    }
                    return;
                }
                Start::NoRoom => {
                    self.blocked[part.get()] = Some(id);
                    JobReason::Resources
                }
                Start::Limited(r) => r,
            },
        };
        if let Some(job) = core.jobs.map.get_mut(&id) {
            job.reason = reason;
        }
        if super::het::is_leader(core, id) {
            super::het::mirror_reason(core, id, now);
        }
    }

    /// Offers the candidates to backfill, then sends the federation offers no start carried;
    /// returns the pass's counts.
    pub(crate) fn finish(&mut self, core: &mut Core, out: &mut impl Outbox, now: SimTime) {
        if !self.candidates.is_empty() {
            self.stats.backfilled = backfill::run(core, out, now, &self.blocked, &self.candidates);
        }
        federation::start::send_due_offers(core, out);
    }
}

/// Runs one scheduling pass at `now` over the whole queue (or its first
/// `default_queue_depth` jobs).
pub fn schedule(core: &mut Core, out: &mut impl Outbox, now: SimTime) -> PassStats {
    let backfill = plan_backfill(core, now);
    let depth = plan_depth(core, now);
    super::nonstop::spares::refresh(core);
    let mut pass = Pass {
        blocked: vec![None; core.parts.len()],
        candidates: Vec::new(),
        bf_limit: if backfill {
            core.cfg.bf_max_job_test
        } else {
            0
        },
        stats: PassStats::default(),
    };
    // Jobs submitted since the last pass are all in this one.
    core.fresh.clear();
    let whole = depth >= core.jobs.queue.len();
    let order: Vec<FedJobId> = core.jobs.queue.iter().map(|k| k.id).take(depth).collect();
    open_assoc_usage(core, now);
    for id in order {
        pass.consider(core, out, now, id);
    }
    pass.finish(core, out, now);
    core.assoc_usage = None;
    // A pass that saw the whole queue is what a pass over later submissions builds on.
    if whole {
        core.fresh.settle(pass.blocked, core.nodes.gains);
    }
    pass.stats
}

/// Association usage once per pass (only when limits are enforced), kept up to date as jobs
/// start; the pass drops it when done: between passes jobs end and it would be stale.
pub(crate) fn open_assoc_usage(core: &mut Core, now: SimTime) {
    if core.conf.acct_enforce.limits {
        core.assoc_usage = Some(super::assoc::Usage::of(core, now));
    }
}
