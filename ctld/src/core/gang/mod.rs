//! Gang scheduling (`PreemptMode=GANG`): jobs co-allocated on the same resources of a
//! partition take turns, one `SchedulerTimeSlice` at a time (Slurm's `gang.c`).
//!
//! Each partition keeps its jobs in a queue (start order) and an active [`row::Row`]: the
//! resources of its running jobs. A job that starts on resources the row already holds is
//! suspended at once. Every timeslice, in each partition with a suspended job, the running
//! jobs move to the back of the queue (keeping their order) and the row is rebuilt from the
//! front, the longest-suspended job first, taking every job that fits ("local backfilling");
//! running jobs left out are suspended, then suspended jobs let in are resumed. When a job
//! ends, the row is rebuilt keeping the running jobs and letting in suspended jobs that now
//! fit. Partitions are independent, as in Slurm. Every partition takes part: jobs share
//! resources under `OverSubscribe=FORCE`, or `YES` when they asked to (see [`super::alloc`]),
//! and are timesliced alike.
//!
//! The timeslicer runs from the core's tick ([`on_tick`]), on simulated time. Jobs an
//! administrator suspended are not the timeslicer's (see [`switch`]).

pub(crate) mod row;
pub(crate) mod switch;

use super::alloc::Unit;
use super::outbox::Outbox;
use super::partitions::PartIdx;
use super::{Core, SimTime};
use row::Row;
use sluice_vocab::{FedJobId, JobState};
use std::collections::HashSet;
use std::sync::Arc;

/// One job in a partition's gang queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    id: FedJobId,
    /// In the active row (running).
    active: bool,
}

/// A partition's gang state.
#[derive(Debug, Clone)]
struct GangPart {
    queue: Vec<Entry>,
    row: Row,
}

/// The gang scheduler's state.
#[derive(Debug, Clone)]
pub(crate) struct Gang {
    /// `PreemptMode` includes `GANG`.
    on: bool,
    /// `SchedulerTimeSlice` in seconds.
    slice_secs: u64,
    /// When the next timeslice is due (set at the first tick).
    next_slice: Option<SimTime>,
    parts: Vec<GangPart>,
    /// Jobs suspended by an administrator: not the timeslicer's, their resources given back.
    pub manual: HashSet<FedJobId>,
}

impl Gang {
    /// The gang state for `core`'s partitions and nodes.
    pub fn new(
        core_nodes: &super::nodes::NodeTable,
        parts: usize,
        unit: Unit,
        on: bool,
        slice_secs: u64,
    ) -> Self {
        let base = Arc::new(if unit == Unit::Core {
            row::core_base(core_nodes)
        } else {
            Vec::new()
        });
        let parts = if on { parts } else { 0 };
        Self {
            on,
            slice_secs: slice_secs.max(1),
            next_slice: None,
            parts: (0..parts)
                .map(|_| GangPart {
                    queue: Vec::new(),
                    row: Row::new(unit, core_nodes, base.clone()),
                })
                .collect(),
            manual: HashSet::new(),
        }
    }

    /// Whether gang scheduling is on in `core`.
    pub fn enabled(core: &Core) -> bool {
        core.gang.on
    }

    /// A new `SchedulerTimeSlice` (`scontrol reconfigure`): the slice under way ends as
    /// planned, the next ones take the new length.
    pub fn set_slice_secs(&mut self, secs: u64) {
        self.slice_secs = secs.max(1);
    }

    /// The `SchedulerTimeSlice` in force, in seconds.
    pub fn slice_secs(&self) -> u64 {
        self.slice_secs
    }
}

/// A job just started: it joins its partition's queue, running if it fits the active row,
/// else suspended at once.
pub(crate) fn job_started(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    if core.gang.on {
        add_job(core, out, now, id);
    }
}

/// A job stopped running (ended, killed, requeued, failed): it leaves the gang, and
/// suspended jobs that now fit are resumed.
pub(crate) fn job_stopped(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    core.gang.manual.remove(&id);
    remove_job(core, out, now, id);
}

/// Adds `id` (running, or suspended and resumed by an administrator) to its partition.
pub(crate) fn add_job(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some((p, state)) = core.jobs.map.get(&id).map(|j| (j.partition.get(), j.state)) else {
        return;
    };
    let Some(a) = core.allocs.get(&id) else {
        return;
    };
    let Some(part) = core.gang.parts.get_mut(p) else {
        return;
    };
    let fits = part.row.fits(a, &core.nodes);
    if fits {
        part.row.add(a);
    }
    part.queue.retain(|e| e.id != id);
    part.queue.push(Entry { id, active: fits });
    match (fits, state) {
        (true, JobState::Suspended) => switch::resume(core, out, now, id),
        (false, JobState::Running) => switch::suspend(core, out, now, id),
        _ => {}
    }
}

/// Takes `id` out of its partition's queue (if there) and rebuilds the row: running jobs
/// stay, suspended jobs that fit now are resumed.
pub(crate) fn remove_job(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(p) = partition_of(core, id) else {
        return;
    };
    core.gang.parts[p].queue.retain(|e| e.id != id);
    let order = queue_order(core, p);
    rebuild(core, out, now, p, &order);
}

/// Running job `id`'s allocation changed (the failure management replaced or dropped one of
/// its nodes): its partition's row is rebuilt from the allocations as they are now, the running
/// jobs first, so it keeps running and suspended jobs that fit now are resumed.
pub(crate) fn allocation_changed(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
) {
    let Some(p) = partition_of(core, id) else {
        return;
    };
    let order = queue_order(core, p);
    rebuild(core, out, now, p, &order);
}

/// Whether partition `p`'s row has node `node` in use (for tests).
#[cfg(test)]
pub(crate) fn row_uses(core: &Core, p: usize, node: usize) -> bool {
    core.gang.parts[p].row.uses(node)
}

/// The gang partition whose queue holds `id`.
fn partition_of(core: &Core, id: FedJobId) -> Option<usize> {
    core.gang
        .parts
        .iter()
        .position(|g| g.queue.iter().any(|e| e.id == id))
}

/// Partition `p`'s queue, running jobs first (in queue order), then the suspended ones.
fn queue_order(core: &Core, p: usize) -> Vec<FedJobId> {
    let queue = &core.gang.parts[p].queue;
    queue
        .iter()
        .filter(|e| e.active)
        .chain(queue.iter().filter(|e| !e.active))
        .map(|e| e.id)
        .collect()
}

/// Rebuilds partition `p`'s row taking jobs in `order` that fit, then suspends the running
/// jobs left out and resumes the suspended jobs let in. The queue keeps `order`.
fn rebuild(core: &mut Core, out: &mut impl Outbox, now: SimTime, p: usize, order: &[FedJobId]) {
    let mut to_suspend = Vec::new();
    let mut to_resume = Vec::new();
    {
        let Core {
            gang,
            allocs,
            nodes,
            ..
        } = core;
        let part = &mut gang.parts[p];
        part.row.clear();
        let was: std::collections::HashMap<FedJobId, bool> =
            part.queue.iter().map(|e| (e.id, e.active)).collect();
        part.queue.clear();
        for &id in order {
            let Some(a) = allocs.get(&id) else {
                continue;
            };
            let active = part.row.fits(a, nodes);
            if active {
                part.row.add(a);
            }
            match (was.get(&id).copied().unwrap_or(false), active) {
                (true, false) => to_suspend.push(id),
                (false, true) => to_resume.push(id),
                _ => {}
            }
            part.queue.push(Entry { id, active });
        }
    }
    for id in to_suspend {
        switch::suspend(core, out, now, id);
    }
    for id in to_resume {
        switch::resume(core, out, now, id);
    }
}

/// One timeslice in every partition with a suspended job: running jobs to the back of the
/// queue, the row rebuilt from the front (Slurm's `_cycle_job_list`). Returns how many
/// partitions rotated.
pub fn timeslice(core: &mut Core, out: &mut impl Outbox, now: SimTime) -> usize {
    let mut rotated = 0;
    for p in 0..core.gang.parts.len() {
        let queue = &core.gang.parts[p].queue;
        if queue.iter().all(|e| e.active) {
            continue;
        }
        let order: Vec<FedJobId> = queue
            .iter()
            .filter(|e| !e.active)
            .chain(queue.iter().filter(|e| e.active))
            .map(|e| e.id)
            .collect();
        rebuild(core, out, now, p, &order);
        rotated += 1;
    }
    rotated
}

/// Runs the timeslicer when a timeslice is due at `now` (the first tick starts the clock).
pub fn on_tick(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    if !core.gang.on {
        return;
    }
    match core.gang.next_slice {
        None => core.gang.next_slice = Some(now.plus(core.gang.slice_secs)),
        Some(due) if due <= now => {
            timeslice(core, out, now);
            core.gang.next_slice = Some(now.plus(core.gang.slice_secs));
        }
        Some(_) => {}
    }
}

/// After a restore: each partition's queue holds its running and suspended jobs (start
/// order), the running ones forming the row as they were. No command is sent.
pub(crate) fn restore(core: &mut Core) {
    if !core.gang.on {
        return;
    }
    let mut jobs: Vec<(SimTime, FedJobId, PartIdx, bool)> = core
        .jobs
        .active
        .iter()
        .filter_map(|id| core.jobs.map.get(id))
        .filter(|j| !j.completing && !core.gang.manual.contains(&j.id))
        .filter(|j| matches!(j.state, JobState::Running | JobState::Suspended))
        .map(|j| {
            let start = j.start_time.unwrap_or_default();
            (start, j.id, j.partition, j.state == JobState::Running)
        })
        .collect();
    jobs.sort_unstable();
    let Core { gang, allocs, .. } = core;
    for (_, id, p, active) in jobs {
        let (Some(part), Some(a)) = (gang.parts.get_mut(p.get()), allocs.get(&id)) else {
            continue;
        };
        if active {
            part.row.add(a);
        }
        part.queue.push(Entry { id, active });
    }
}

impl Core {
    /// The gang queue of partition `part`: its jobs in queue order and whether each is in
    /// the active row (empty when gang scheduling is off).
    pub fn gang_queue(&self, part: PartIdx) -> Vec<(FedJobId, bool)> {
        self.gang
            .parts
            .get(part.get())
            .map(|g| g.queue.iter().map(|e| (e.id, e.active)).collect())
            .unwrap_or_default()
    }

    /// Whether job `id` was suspended by an administrator (so the timeslicer leaves it be).
    pub fn is_manually_suspended(&self, id: FedJobId) -> bool {
        self.gang.manual.contains(&id)
    }
}
