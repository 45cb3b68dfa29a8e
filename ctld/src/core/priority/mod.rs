//! Job priority (`PriorityType`): the number the queue is ordered by.
//!
//! - `priority/basic` (the default): every job has the same base priority, so the queue is
//!   first come, first served with `--nice` breaking ties (a lower nice first); an
//!   administrator's `--priority`/`scontrol update Priority=` sets a job's number outright.
//! - `priority/multifactor`: the weighted sum of the age, fair-share, job size, partition and
//!   QOS factors and each weighted TRES factor (each 0..1, see [`factors`], [`tres`]), minus
//!   the job's nice, at least 1. The
//!   fair-share factors come from the associations' shares and usage ([`on_assoc_usage`]) by
//!   Fair Tree, or the classic algorithm under `PriorityFlags=NO_FAIR_TREE`
//!   (`sluice_vocab::fairshare`).
//!
//! Partitions with a higher `PriorityTier` go first whatever the numbers, as in Slurm. The
//! numbers are computed when a job is queued and again every `PriorityCalcPeriod` (age grows,
//! fair share moves with usage) and whenever the fair-share table or the configuration
//! changes; each recomputation rebuilds the queue's order ([`refresh`]).

pub mod factors;
pub mod qos;
pub mod shares;
pub mod tres;

pub use factors::Factors;

use super::jobs::{Job, JobTable};
use super::{Core, SimTime};
use sluice_vocab::FedJobId;
use sluice_vocab::cluster_conf::{CtldConf, PriorityType};
use sluice_vocab::fairshare::{self, AssocInput};
use std::collections::HashMap;
use std::sync::Arc;

/// The priority every job has under `priority/basic` unless an administrator set one.
pub const BASIC_PRIORITY: u32 = 1;

/// What the priority computation keeps between passes.
#[derive(Debug, Default)]
pub struct PriorityState {
    /// The cluster's associations with their shares and decayed usage, as the accounting
    /// daemon last listed them (empty without one).
    pub(crate) assocs: Vec<AssocInput>,
    /// Their ids in the accounting database, by (account, user) (sshare's `ID`).
    pub(crate) assoc_ids: HashMap<(String, String), u64>,
    /// The fair-share factor of each (account, user) association, computed from `assocs`
    /// by the configured algorithm (empty: every fair-share factor is 0).
    pub(crate) fairshare: HashMap<(String, String), f64>,
    /// When the numbers were last computed.
    pub(crate) last_calc: Option<SimTime>,
    /// The configuration they were computed with (a reconfigure recomputes them).
    pub(crate) conf: Option<Arc<CtldConf>>,
}

/// The priority `job` has now: an administrator's number, else its computed one.
pub fn compute(core: &Core, job: &Job, now: SimTime) -> u32 {
    if let Some(p) = job.req.place.priority {
        return p;
    }
    match core.conf.priority.kind {
        PriorityType::Basic => BASIC_PRIORITY,
        PriorityType::Multifactor => factors::of(core, job, now).priority(&core.conf.priority),
    }
}

/// The partition tier of `job` (its partition's `PriorityTier`).
pub(crate) fn tier(core: &Core, job: &Job) -> u16 {
    core.conf
        .partitions
        .get(job.partition.get())
        .map_or(1, |p| p.priority_tier)
}

/// Gives `job` (not yet in the queue) its priority and tier.
pub(crate) fn assign(core: &Core, job: &mut Job, now: SimTime) {
    job.priority = compute(core, job, now);
    job.tier = tier(core, job);
}

/// Computes the priority of job `id`, taken out of the queue by the caller, and puts it
/// back in its place.
pub(crate) fn reinsert(core: &mut Core, id: FedJobId, now: SimTime) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let (priority, tier) = (compute(core, job, now), tier(core, job));
    if let Some(job) = core.jobs.map.get_mut(&id) {
        job.priority = priority;
        job.tier = tier;
        core.jobs.queue.insert(JobTable::queue_key(job));
    }
}

/// `scontrol update Priority=N` on `job` (a copy the caller puts back): administrators set
/// any priority; a job's owner may only lower it. `Priority=0` holds the job, as in Slurm
/// (an administrator's hold when an administrator asks).
pub(crate) fn set_priority(
    core: &Core,
    job: &mut Job,
    caller: super::Caller,
    now: SimTime,
    p: u32,
) -> Result<(), crate::error::CtldError> {
    use super::jobs::{HoldKind, JobReason};
    if !caller.admin && p > compute(core, job, now) {
        return Err(crate::error::CtldError::AccessDenied);
    }
    if p == 0 {
        if !job.is_queued() {
            return Err(crate::error::CtldError::JobNotPending);
        }
        let (hold, reason) = if caller.admin {
            (HoldKind::Admin, JobReason::JobHeldAdmin)
        } else {
            (HoldKind::User, JobReason::JobHeldUser)
        };
        job.hold = Some(hold);
        job.reason = reason;
        return Ok(());
    }
    job.req.place.priority = Some(p);
    Ok(())
}

/// Recomputes every queued job's priority and rebuilds the queue's order.
pub fn refresh(core: &mut Core, now: SimTime) {
    let queued: Vec<FedJobId> = core.jobs.queue.iter().map(|k| k.id).collect();
    let fresh: Vec<(FedJobId, u32, u16)> = queued
        .iter()
        .filter_map(|id| core.jobs.map.get(id))
        .map(|j| (j.id, compute(core, j, now), tier(core, j)))
        .collect();
    core.jobs.queue.clear();
    for (id, priority, tier) in fresh {
        if let Some(job) = core.jobs.map.get_mut(&id) {
            job.priority = priority;
            job.tier = tier;
            core.jobs.queue.insert(JobTable::queue_key(job));
        }
    }
    core.prio.last_calc = Some(now);
    core.prio.conf = Some(Arc::clone(&core.conf));
}

/// `Nice=` as written: within Slurm's bound of ±2147483645.
pub fn parse_nice(text: &str) -> Option<i32> {
    let n: i64 = text.trim().parse().ok()?;
    if n.abs() > 2_147_483_645 {
        return None;
    }
    i32::try_from(n).ok()
}

/// `--priority=`/`Priority=` as written: a number, or `TOP` for the highest there is.
pub fn parse_priority(text: &str) -> Option<u32> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("TOP") {
        return Some(u32::MAX - 1);
    }
    t.parse::<u32>().ok().filter(|p| *p < u32::MAX)
}

/// At each tick: recomputes when `PriorityCalcPeriod` has passed (multifactor numbers move
/// with time) or the configuration changed.
pub fn on_tick(core: &mut Core, now: SimTime) {
    let conf_changed = !core
        .prio
        .conf
        .as_ref()
        .is_some_and(|c| Arc::ptr_eq(c, &core.conf));
    let period = core.conf.priority.calc_period_secs;
    let due = core.conf.priority.kind == PriorityType::Multifactor
        && core.prio.last_calc.is_none_or(|t| now >= t.plus(period));
    if conf_changed {
        // PriorityFlags=NO_FAIR_TREE may have come or gone.
        core.prio.fairshare = fairshare_table(core);
    }
    if conf_changed || due {
        refresh(core, now);
    }
}

/// Takes the associations' new shares and usage (and their database ids), computes their
/// fair-share factors (Fair Tree, or the classic algorithm under `PriorityFlags=NO_FAIR_TREE`)
/// and recomputes the queue when they moved.
pub fn on_assoc_usage(
    core: &mut Core,
    now: SimTime,
    assocs: Vec<AssocInput>,
    ids: HashMap<(String, String), u64>,
) {
    core.prio.assoc_ids = ids;
    if core.prio.assocs == assocs {
        return;
    }
    core.prio.assocs = assocs;
    let table = fairshare_table(core);
    if core.prio.fairshare == table {
        return;
    }
    core.prio.fairshare = table;
    if core.conf.priority.kind == PriorityType::Multifactor {
        refresh(core, now);
    }
}

fn fairshare_table(core: &Core) -> HashMap<(String, String), f64> {
    let algorithm = core.conf.priority.fairshare_algorithm;
    fairshare::user_factors(fairshare::compute_with(algorithm, &core.prio.assocs))
}

impl Core {
    /// The priority factors of `job` at `now` (what `sprio` shows).
    pub fn priority_factors(&self, job: &Job, now: SimTime) -> Factors {
        factors::of(self, job, now)
    }
}
