//! `sbatch --test-only`: validates a submission exactly as [`on_submit`] does and reports when
//! and where it would start and the id it would get, without queueing it or using up that id.
//!
//! The estimate is the job's own: it starts now when free nodes fit it, else when running jobs
//! are expected to give back enough nodes (their time limits), as backfill plans. Pending jobs
//! of higher priority are not counted, so the estimate is the earliest possible start.
//!
//! A heterogeneous job ([`on_will_run_het`]) is tested as Slurm's `slurm_het_job_will_run`
//! tests it: each component on its own, the answers then combined.

use super::ids::IdLease;
use super::jobs::{JobReason, JobTable};
use super::outbox::RecordingOutbox;
use super::request::SubmitRequest;
use super::{Core, SimTime, backfill, on_submit};
use crate::error::CtldError;
use sluice_vocab::ids::MAX_LOCAL_ID;
use sluice_vocab::{FedJobId, LocalJobId, NodeIdx};

/// Where and when a submission would start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WillRun {
    /// The id the job would get (the next of the cluster's ids, not used up; `None` when
    /// there is none left).
    pub job_id: Option<FedJobId>,
    /// Expected start (`None` when it cannot be foreseen, e.g. behind unlimited jobs).
    pub start: Option<SimTime>,
    /// The nodes it would get at that time.
    pub nodes: Vec<NodeIdx>,
    /// Their CPUs.
    pub cpus: u32,
    /// The partition it would run in.
    pub partition: String,
}

/// Validates `req` and estimates its start, leaving the core as it was.
pub fn on_will_run(
    core: &mut Core,
    now: SimTime,
    req: SubmitRequest,
) -> Result<WillRun, CtldError> {
    // Scratch ids at the top of the id space, so the real source loses none.
    let would_get = core.ids.peek_id();
    let span = core.cfg.max_array_size.saturating_add(1);
    let first = LocalJobId::new(MAX_LOCAL_ID.saturating_sub(span) + 1)
        .map_err(|_| CtldError::JobIdsExhausted)?;
    let real = std::mem::replace(
        &mut core.ids,
        Box::new(IdLease::with_range(None, first, span)),
    );
    let submitted = on_submit(core, &mut RecordingOutbox::default(), now, req);
    core.ids = real;
    // Slurm's will-run answers these without the note its submission sends.
    let reply = submitted.map_err(|e| match e {
        CtldError::MemoryUnsatisfiable | CtldError::TmpDiskUnsatisfiable => {
            CtldError::NodeConfigUnavailable
        }
        e => e,
    })?;
    // What its partition can never give it is the answer, whatever EnforcePartLimits says.
    let never = core
        .jobs
        .map
        .get(&reply.job_id)
        .and_then(|j| j.part_limit.map(|r| (r, j)))
        .map(|(r, j)| match r {
            JobReason::InvalidAccount => CtldError::InvalidAccount {
                partition: core.parts[j.partition.get()].name.clone(),
            },
            JobReason::PartitionTimeLimit => CtldError::InvalidTimeLimit,
            JobReason::PartitionNodeLimit => CtldError::InvalidNodeCount,
            _ => CtldError::NodeConfigUnavailable,
        });
    let estimate = estimate(core, now, reply.job_id);
    for id in &reply.jobs {
        forget(core, *id);
    }
    core.jobs.arrays.remove(&reply.job_id);
    match never {
        Some(e) => Err(e),
        None => Ok(WillRun {
            job_id: would_get,
            ..estimate
        }),
    }
}

/// `--test-only` of a heterogeneous job (`sbatch --test-only A : B`): every component is
/// validated and estimated on its own, as Slurm 22.05 does, and the answer is the latest of
/// their starts (unknown when any is), all their nodes and the sum of their CPUs; the
/// partition is the first component's (Slurm's line names none). An array is refused as
/// [`on_submit_het`](super::on_submit_het) refuses it. The core is left as it was.
pub fn on_will_run_het(
    core: &mut Core,
    now: SimTime,
    reqs: Vec<SubmitRequest>,
) -> Result<WillRun, CtldError> {
    if let Some(spec) = reqs.iter().find_map(|r| r.array.clone()) {
        return Err(CtldError::InvalidArray { spec });
    }
    let mut combined: Option<WillRun> = None;
    for req in reqs {
        let w = on_will_run(core, now, req)?;
        combined = Some(match combined {
            None => w,
            Some(mut all) => {
                all.start = all.start.zip(w.start).map(|(a, b)| a.max(b));
                all.nodes.extend(w.nodes);
                all.cpus = all.cpus.saturating_add(w.cpus);
                all
            }
        });
    }
    let mut all = combined.ok_or(CtldError::InvalidJobId)?;
    all.nodes.sort_unstable();
    all.nodes.dedup();
    Ok(all)
}

fn estimate(core: &Core, now: SimTime, id: FedJobId) -> WillRun {
    let Some(job) = core.jobs.map.get(&id) else {
        return WillRun {
            job_id: None,
            start: None,
            nodes: Vec::new(),
            cpus: 0,
            partition: String::new(),
        };
    };
    let part = &core.parts[job.partition.get()];
    let none = WillRun {
        job_id: None,
        start: None,
        nodes: Vec::new(),
        cpus: 0,
        partition: part.name.clone(),
    };
    // The nodes it may start on now, hot spares left out, as starting it would.
    let maps = super::sched::start_maps(core, job);
    let (start, nodes, cpus) = match super::alloc::pick::pick(core, job, &maps, |_| true) {
        Some(a) => (now, a.nodes.clone(), a.total_cpus()),
        None => match backfill::plan(core, now, id) {
            Some(r) => {
                let nodes: Vec<_> = r.nodes.ones().map(super::nodes::idx).collect();
                let cpus = nodes.iter().map(|&n| core.nodes.get(n).cpus).sum();
                (r.start, nodes, cpus)
            }
            None => return none,
        },
    };
    // Not before its --begin time.
    let begin = job.req.place.begin.map_or(start, SimTime::from_secs);
    WillRun {
        job_id: None,
        start: Some(start.max(begin)),
        nodes,
        cpus,
        partition: none.partition,
    }
}

/// Removes a job that was never announced (no record, no save) from the core.
fn forget(core: &mut Core, id: FedJobId) {
    let Some(job) = core.jobs.map.remove(&id) else {
        return;
    };
    core.jobs.queue.remove(&JobTable::queue_key(&job));
    for target in job
        .deps
        .iter()
        .flat_map(|d| d.items.iter())
        .filter_map(|d| d.target)
    {
        if let Some(list) = core.jobs.dependents.get_mut(&target) {
            list.retain(|j| *j != id);
        }
    }
}
