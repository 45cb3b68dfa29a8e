//! Backfill (EASY style, one reservation per partition): after the FIFO pass, the first blocked
//! job of each partition gets a planned start, computed from the running jobs' expected ends
//! (start + time limit, suspended time excluded); a lower-priority job may then start now only
//! if it does not delay that plan: it must end before the planned start, or use only nodes the
//! planned job will not need. Reservations hold across partitions, since partitions may share
//! nodes.
//!
//! Bounds, from `SchedulerParameters` (Slurm's defaults without it): reservations are planned
//! only within `bf_window` (one day) and at most `bf_max_job_test` (500) candidates are tried
//! per pass. A
//! job whose plan falls outside the window, or that waits on jobs without a time limit, has no
//! reservation, so backfill does not hold nodes for it.

use super::jobs::Job;
use super::outbox::Outbox;
use super::sched::{Start, ineligible, try_start};
use super::select::{for_each_common, node_fits, pick};
use super::{Core, SimTime};
use crate::conf::TimeLimit;
use fixedbitset::FixedBitSet;
use sluice_vocab::{FedJobId, JobState};

/// Nodes held for a blocked job from its planned start on.
#[derive(Debug, Clone)]
pub(crate) struct Reservation {
    pub start: SimTime,
    pub nodes: FixedBitSet,
}

/// Backfills `candidates` (lower-priority jobs of blocked partitions, in priority order)
/// around reservations for the `blocked` jobs; returns how many started.
pub(crate) fn run(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    blocked: &[Option<FedJobId>],
    candidates: &[FedJobId],
) -> u32 {
    let horizon = now.plus(core.cfg.bf_window_secs);
    let reservations: Vec<Reservation> = blocked
        .iter()
        .flatten()
        .filter_map(|&top| plan(core, now, top))
        .filter(|r| r.start <= horizon)
        .collect();
    let mut started = 0;
    for &id in candidates {
        let Some(job) = core.jobs.map.get(&id) else {
            continue;
        };
        if !job.is_queued() || ineligible(core, job, now).is_some() {
            continue;
        }
        // A heterogeneous job fits the plan only if its longest component does.
        let limit = super::het::longest_limit(core, id).unwrap_or(job.req.time_limit);
        let time_min = job.req.place.time_min;
        match try_start(core, out, now, id, fits_plan(&reservations, now, limit)) {
            Start::Started => {
                started += 1;
                continue;
            }
            Start::Limited(r) => {
                set_reason(core, id, r);
                continue;
            }
            Start::NoRoom => {}
        }
        let Some(shorter) = time_min.and_then(|m| shortened(&reservations, now, limit, m)) else {
            continue;
        };
        // `--time-min`: the limit as long as the earliest reservation allows, down to the
        // minimum, as Slurm's backfill lowers it (kept once started, else put back).
        set_limit(core, id, shorter);
        match try_start(core, out, now, id, fits_plan(&reservations, now, shorter)) {
            Start::Started => started += 1,
            Start::NoRoom => set_limit(core, id, limit),
            Start::Limited(r) => {
                set_limit(core, id, limit);
                set_reason(core, id, r);
            }
        }
    }
    started
}

/// Keeps a job that had room but is held by its limits pending with the limit's reason.
fn set_reason(core: &mut Core, id: FedJobId, reason: super::jobs::JobReason) {
    if let Some(job) = core.jobs.map.get_mut(&id) {
        job.reason = reason;
    }
}

/// Whether a job with time limit `limit` starting at `now` may use node `i` without delaying
/// any of `reservations`: it ends before the reservation starts or does not need the node.
fn fits_plan(
    reservations: &[Reservation],
    now: SimTime,
    limit: TimeLimit,
) -> impl Fn(usize) -> bool + '_ {
    let end = limit.as_secs().map_or(SimTime::NEVER, |s| now.plus(s));
    move |i: usize| {
        reservations
            .iter()
            .all(|r| end <= r.start || !r.nodes.contains(i))
    }
}

/// The longest limit below `limit`, and at least `min_minutes`, with which a job starting at
/// `now` ends before the earliest of `reservations` (in whole minutes, Slurm's unit).
fn shortened(
    reservations: &[Reservation],
    now: SimTime,
    limit: TimeLimit,
    min_minutes: u32,
) -> Option<TimeLimit> {
    let first = reservations.iter().map(|r| r.start).min()?;
    let room = first.secs().checked_sub(now.secs())? / 60;
    let minutes = u32::try_from(room).unwrap_or(u32::MAX);
    let shorter = TimeLimit::Minutes(minutes);
    (minutes >= min_minutes && minutes > 0 && shorter < limit).then_some(shorter)
}

fn set_limit(core: &mut Core, id: FedJobId, limit: TimeLimit) {
    if let Some(job) = core.jobs.map.get_mut(&id) {
        job.req.time_limit = limit;
    }
}

/// When a running job is expected to give its nodes back.
fn expected_end(job: &Job, now: SimTime) -> SimTime {
    if job.completing {
        return job.kill_at.unwrap_or(now);
    }
    match job.state {
        JobState::Running => job.deadline(),
        _ => SimTime::NEVER,
    }
}

/// Plans the earliest start of blocked job `top` and the nodes it would take then; for a
/// heterogeneous job, the latest of its components' starts and all their nodes (each
/// component planned on its own).
pub(crate) fn plan(core: &Core, now: SimTime, top: FedJobId) -> Option<Reservation> {
    let parts = super::het::components(core, top);
    if parts.is_empty() {
        return plan_one(core, now, top);
    }
    let mut all: Option<Reservation> = None;
    for c in parts {
        let r = plan_one(core, now, c)?;
        all = Some(match all {
            None => r,
            Some(mut a) => {
                a.start = a.start.max(r.start);
                a.nodes.union_with(&r.nodes);
                a
            }
        });
    }
    all
}

/// [`plan`] for one job.
fn plan_one(core: &Core, now: SimTime, top: FedJobId) -> Option<Reservation> {
    let job = core.jobs.map.get(&top)?;
    // The nodes it may ever start on: its partition's, available, not hot spares (the pool is
    // recomputed from idle nodes before each pass, so today's spares stand for tomorrow's).
    let usable = super::sched::start_maps(core, job);
    let nodes = &core.nodes;
    let n = nodes.nodes.len();
    let eligible = |i: usize| usable.iter().all(|m| m.contains(i)) && node_fits(nodes, i, job);

    let mut free = FixedBitSet::with_capacity(n);
    let (mut count, mut slots) = (0u64, 0u64);
    let mut add = |free: &mut FixedBitSet, i: usize| {
        if !free.put(i) {
            count += 1;
            slots += u64::from(job.req.tasks_on(nodes.nodes[i].topo));
        }
        count >= u64::from(job.req.min_nodes) && slots >= u64::from(job.req.alloc_tasks())
    };
    let mut now_maps = usable.clone();
    now_maps.push(&nodes.idle);
    for_each_common(&now_maps, |i| {
        if node_fits(nodes, i, job) {
            add(&mut free, i);
        }
        true
    });
    let mut ends: Vec<(SimTime, FedJobId)> = core
        .jobs
        .active
        .iter()
        .filter_map(|aid| core.jobs.map.get(aid))
        .filter(|j| j.nodes.iter().any(|&x| eligible(x.get() as usize)))
        .map(|j| (expected_end(j, now), j.id))
        .collect();
    ends.sort_unstable();
    for (end, aid) in ends {
        if end == SimTime::NEVER {
            break;
        }
        let mut enough = false;
        for &x in core
            .jobs
            .map
            .get(&aid)
            .map(|j| j.nodes.as_slice())
            .unwrap_or(&[])
        {
            let i = x.get() as usize;
            if eligible(i) {
                enough = add(&mut free, i);
            }
        }
        if !enough {
            continue;
        }
        if let Some(chosen) = pick(nodes, job, &[&free], |_| true) {
            let mut bits = FixedBitSet::with_capacity(n);
            chosen.iter().for_each(|c| bits.insert(c.get() as usize));
            return Some(Reservation {
                start: end.max(now),
                nodes: bits,
            });
        }
    }
    None
}
