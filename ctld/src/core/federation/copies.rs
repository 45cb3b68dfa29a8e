//! The local copies of federated jobs: a sibling's copy created from the origin's description,
//! revoked (REVOKED, recorded for accounting and dropped, as Slurm purges revoked siblings), the
//! origin's REVOKED tracker while the job is not viable here or runs elsewhere, and
//! [`apply_info`], which brings a copy in line with the dbd's record after a change this
//! cluster made itself (the dbd sends no event about those).

use super::super::jobs::{JobReason, JobTable};
use super::super::outbox::{AcctRecord, Outbox, SaveHint};
use super::super::{Core, SimTime, completion, deps, kill, submit};
use super::desc::FedDesc;
use super::start::release_reservation;
use super::{FedJob, FedPhase, FedRequest, sorted};
use sluice_vocab::{FedJobId, JobState};

/// Where a federated job stands at the dbd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoPhase {
    /// Waiting to start.
    Pending,
    /// Started on its winner.
    Started,
    /// Its run ended.
    Ended,
    /// Cancelled before it started.
    Cancelled,
    /// No longer federated.
    Detached,
}

/// A federated job as the dbd records it (its `FedJobInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FedInfo {
    /// The job.
    pub job: FedJobId,
    /// The origin cluster.
    pub origin: String,
    /// Its phase.
    pub phase: InfoPhase,
    /// Held on the origin (offered to nobody).
    pub held: bool,
    /// Viable clusters.
    pub viable: Vec<String>,
    /// Clusters holding a copy.
    pub active: Vec<String>,
    /// The cluster that started it.
    pub winner: Option<String>,
    /// Final state (stored value) once ended or cancelled.
    pub final_state: u32,
    /// Exit code once ended.
    pub exit_code: i32,
}

/// Creates this cluster's copy of `id`, offered by `origin` with description `desc`; refuses
/// it ([`FedRequest::Reject`]) when the description does not pass this cluster's checks.
pub(crate) fn create_copy(
    core: &mut Core,
    out: &mut impl Outbox,
    id: FedJobId,
    origin: &str,
    viable: &[String],
    desc: &[u8],
) -> bool {
    let Some(desc) = FedDesc::decode(desc) else {
        out.fed(FedRequest::Reject { job: id });
        return false;
    };
    let submitted = SimTime::from_secs(desc.submit_time);
    if submit::submit_as(core, out, submitted, desc.to_request(), Some(id)).is_err() {
        out.fed(FedRequest::Reject { job: id });
        return false;
    }
    if let Some(job) = core.jobs.map.get_mut(&id) {
        job.fed = Some(Box::new(FedJob {
            origin: origin.to_string(),
            viable: sorted(viable.to_vec()),
            phase: FedPhase::Recorded,
            offer_synced: true,
            ..FedJob::default()
        }));
    }
    true
}

/// Revokes this cluster's (non-origin) copy: recorded as REVOKED and dropped. A copy still
/// completing a requeued run is dropped once its processes are gone.
pub(crate) fn drop_copy(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    release_reservation(core, id);
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let running = matches!(job.state, JobState::Running | JobState::Suspended);
    if running {
        return;
    }
    if job.state == JobState::Pending {
        out.accounting(AcctRecord::JobEnded {
            job: id,
            run: job.restarts,
            end: now,
            state: JobState::Revoked,
            exit_code: 0,
            signal: 0,
            reason: JobReason::None,
            requester_uid: None,
        });
    }
    if job.completing {
        job.state = JobState::Revoked;
        job.end_time = Some(now);
        out.save(SaveHint::Job(id));
        return;
    }
    remove_job(core, out, id);
}

/// Removes `id` from the core entirely (and from the store).
pub(crate) fn remove_job(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.remove(&id) else {
        return;
    };
    core.jobs.queue.remove(&JobTable::queue_key(&job));
    if let Some(end) = job.end_time {
        core.jobs.finished.remove(&(end, id));
    }
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
    core.jobs.dependents.remove(&id);
    out.save(SaveHint::JobPurged(id));
}

/// Makes the origin's pending copy of `id` its REVOKED tracker; `running_on`: where the job
/// started (`None`: not viable here, or withdrawn).
pub(crate) fn make_tracker(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    running_on: Option<String>,
) {
    release_reservation(core, id);
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if !matches!(job.state, JobState::Pending | JobState::Revoked) || job.completing {
        return;
    }
    core.jobs.queue.remove(&JobTable::queue_key(job));
    job.state = JobState::Revoked;
    job.reason = JobReason::None;
    let started = running_on.is_some();
    if let Some(fed) = job.fed.as_deref_mut() {
        if let Some(c) = running_on {
            fed.active = vec![c.clone()];
            fed.running_on = Some(c);
        }
        fed.retry_at = None;
    }
    out.save(SaveHint::Job(id));
    if started {
        // `after` dependants: the job started (elsewhere).
        deps::target_changed(&mut core.jobs, out, id, now);
    }
}

/// The origin's tracker of `id` is an active copy again (viable here once more, or requeued).
pub(crate) fn untrack(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.state != JobState::Revoked || job.completing {
        return;
    }
    job.state = JobState::Pending;
    job.reason = JobReason::None;
    if let Some(fed) = job.fed.as_deref_mut() {
        fed.running_on = None;
    }
    core.jobs.queue.insert(JobTable::queue_key(job));
    out.save(SaveHint::Job(id));
}

/// Cancels this cluster's copy of `id` (the job was cancelled at the dbd by user
/// `requester_uid`, when known): a pending copy or tracker ends CANCELLED (by that user); a run
/// here is killed (its end then goes to the dbd). For an array (its origin holds it whole),
/// every task.
pub(crate) fn cancel_local(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    requester_uid: Option<u32>,
) {
    match core.jobs.arrays.get(&id) {
        Some(meta) => {
            let tasks: Vec<FedJobId> = meta.tasks.iter().map(|t| t.1).collect();
            for task in tasks {
                cancel_one(core, out, now, task, requester_uid);
            }
        }
        None => cancel_one(core, out, now, id, requester_uid),
    }
}

fn cancel_one(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    requester_uid: Option<u32>,
) {
    release_reservation(core, id);
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let cancels = !job.completing
        && matches!(
            job.state,
            JobState::Pending | JobState::Revoked | JobState::Running | JobState::Suspended
        );
    if cancels && requester_uid.is_some() {
        job.requester_uid = requester_uid;
    }
    match (job.state, job.completing) {
        (_, true) => {}
        (JobState::Pending, _) => completion::cancel_pending(core, out, now, id),
        (JobState::Revoked, _) => {
            completion::end_run(core, out, now, id, JobState::Cancelled, JobReason::None);
            core.jobs.finished.insert((now, id));
        }
        (JobState::Running | JobState::Suspended, _) => {
            kill::kill_job(core, out, now, id, JobState::Cancelled, JobReason::None);
        }
        _ => {}
    }
}

/// The origin's tracker of `id` ends: the run elsewhere ended in `state` with `exit_code`. Its
/// own accounting record stays REVOKED (the running cluster records the run).
pub(crate) fn end_tracker(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    state: u32,
    exit_code: i32,
) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.state != JobState::Revoked {
        return;
    }
    out.accounting(AcctRecord::JobEnded {
        job: id,
        run: job.restarts,
        end: now,
        state: JobState::Revoked,
        exit_code,
        signal: 0,
        reason: JobReason::None,
        requester_uid: None,
    });
    job.state = JobState::from_stored(state)
        .filter(|s| s.is_finished())
        .unwrap_or(JobState::Completed);
    job.exit_code = exit_code;
    job.end_time = Some(now);
    out.save(SaveHint::Job(id));
    core.jobs.finished.insert((now, id));
    deps::target_changed(&mut core.jobs, out, id, now);
}

/// Brings the copy of `id` in line with the dbd's record `info`, after a change this cluster
/// made itself (submission, update, withdrawal, requeue report...).
pub(crate) fn apply_info(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    info: &FedInfo,
) {
    let me = core.me().to_string();
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    let Some(fed) = job.fed.as_deref_mut() else {
        return;
    };
    let origin_here = fed.origin_here;
    fed.viable = sorted(info.viable.clone());
    if origin_here {
        fed.active = sorted(info.active.clone());
        if info.phase == InfoPhase::Pending {
            fed.offered = !info.held;
            fed.offer_synced = true;
        }
    }
    out.save(SaveHint::Job(id));
    let tracker = job.state == JobState::Revoked;
    let runs_elsewhere = fed.running_on.as_ref().is_some_and(|c| *c != me);
    match info.phase {
        InfoPhase::Pending if info.active.contains(&me) => {
            if origin_here && tracker && !runs_elsewhere {
                untrack(core, out, id);
            }
        }
        InfoPhase::Pending if origin_here => make_tracker(core, out, now, id, None),
        InfoPhase::Pending => drop_copy(core, out, now, id),
        InfoPhase::Started => match &info.winner {
            Some(w) if *w == me => {}
            winner if origin_here => make_tracker(core, out, now, id, winner.clone()),
            _ => drop_copy(core, out, now, id),
        },
        InfoPhase::Cancelled => cancel_local(core, out, now, id, None),
        InfoPhase::Ended if tracker => {
            end_tracker(core, out, now, id, info.final_state, info.exit_code);
        }
        InfoPhase::Ended => {}
        InfoPhase::Detached => {
            if let Some(job) = core.jobs.map.get_mut(&id) {
                job.fed = None;
            }
        }
    }
}

/// The dbd's record `info` after a change this cluster asked for (an update of clusters or
/// features, `scancel --sibling`, an offer or a withdrawal): the local copy follows it.
pub fn on_fed_info(core: &mut Core, out: &mut impl Outbox, now: SimTime, info: &FedInfo) {
    apply_info(core, out, now, info.job, info);
}

/// The dbd cancelled `id` at this cluster's request, made by user `requester_uid`;
/// `running_on` is the cluster running it ("" when it was pending). The local copy is
/// cancelled (by that user) unless the run is elsewhere (whose end reaches the origin as an
/// event).
pub fn on_fed_cancelled(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    running_on: &str,
    requester_uid: Option<u32>,
) {
    if running_on.is_empty() || running_on == core.me() {
        cancel_local(core, out, now, id, requester_uid);
    }
}

/// The dbd asked this cluster, which runs `id`, to requeue it (`hold`: held on its origin).
pub fn on_fed_requeue(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    hold: bool,
) {
    let mode = if hold {
        super::FedRequeue::Hold
    } else {
        super::FedRequeue::Requeue
    };
    super::events::requeue_here(core, out, now, id, mode);
}
