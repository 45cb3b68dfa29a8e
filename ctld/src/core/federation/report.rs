//! What a federated job owes the dbd, kept in its saved state until the dbd acknowledges it so
//! a restart resends it: the end of a run here (`FedJobEnded`, with its requeue), and the
//! origin's offer or withdrawal following holds and dependencies.
//!
//! A job array runs on its origin only, without the start lock; its one federated record
//! (under the array's id) ends when its last task ends: that task carries the report, and the
//! runtime sends it under the array's id.

use super::super::jobs::Job;
use super::super::outbox::{Outbox, SaveHint};
use super::super::{Core, SimTime};
use super::copies::{self, FedInfo};
use super::desc::FedDesc;
use super::{EndReport, FedRequest, FedRequeue};
use sluice_vocab::{FedJobId, JobState};

/// The description siblings get of `job` (an origin job).
pub(crate) fn desc_of(core: &Core, job: &Job) -> Vec<u8> {
    let part = core
        .parts
        .get(job.partition.get())
        .map_or("", |p| p.name.as_str());
    let (asked, groups) = job
        .fed
        .as_deref()
        .map(|f| (f.asked.clone(), f.groups.clone()))
        .unwrap_or_default();
    FedDesc::of(job, part, &asked, &groups).encode()
}

/// Called where a run ends (`state`) or is requeued (`requeue`): a federated job that ran
/// here under the start lock reports its end to the dbd; an origin's array task may end its
/// array.
pub(crate) fn run_ended(
    core: &mut Core,
    out: &mut impl Outbox,
    id: FedJobId,
    state: JobState,
    requeue: bool,
) {
    let me = core.cfg.cluster_name.clone();
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if let Some(task) = job.array {
        if !requeue {
            array_check(core, out, id, task.job, state);
        }
        return;
    }
    let exit_code = job.exit_code;
    let Some(fed) = job.fed.as_deref_mut() else {
        return;
    };
    if fed.running_on.as_deref() != Some(me.as_str()) {
        return;
    }
    let mode = match (requeue, fed.requeue) {
        (false, _) => FedRequeue::None,
        (true, FedRequeue::None) => FedRequeue::Requeue,
        (true, asked) => asked,
    };
    let report = EndReport {
        state: state.stored(),
        exit_code,
        requeue: mode,
    };
    fed.running_on = None;
    fed.requeue = FedRequeue::None;
    fed.end_report = Some(report);
    fed.end_sent = false;
    out.save(SaveHint::Job(id));
    flush(core, out, id);
}

/// Task `id` of origin array `array` ended in `state`: if every task is over, processes
/// gone, the array's record at the dbd ends with the array's state (COMPLETED when every task
/// completed, else CANCELLED if any task was, else the first other end) and the highest exit
/// code; this task carries the report. Tasks already purged ended long ago. Checked again
/// where a killed task's processes are gone ([`flush`]).
fn array_check(
    core: &mut Core,
    out: &mut impl Outbox,
    id: FedJobId,
    array: FedJobId,
    state: JobState,
) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let recorded = job.fed.as_deref().is_some_and(|f| {
        f.origin_here && f.phase == super::FedPhase::Recorded && f.end_report.is_none()
    });
    let Some(meta) = core.jobs.arrays.get(&array).filter(|_| recorded) else {
        return;
    };
    if job.completing {
        return;
    }
    let mut states = vec![state];
    let mut exit_code = job.exit_code;
    for &(_, task) in &meta.tasks {
        let Some(j) = core.jobs.map.get(&task).filter(|_| task != id) else {
            continue;
        };
        if !j.state.is_finished() || j.completing {
            return;
        }
        states.push(j.state);
        exit_code = exit_code.max(j.exit_code);
    }
    let end = if states.iter().all(|s| *s == JobState::Completed) {
        JobState::Completed
    } else if states.contains(&JobState::Cancelled) {
        JobState::Cancelled
    } else {
        states
            .into_iter()
            .find(|s| *s != JobState::Completed)
            .unwrap_or(state)
    };
    let report = EndReport {
        state: end.stored(),
        exit_code,
        requeue: FedRequeue::None,
    };
    if let Some(fed) = core
        .jobs
        .map
        .get_mut(&id)
        .and_then(|j| j.fed.as_deref_mut())
    {
        fed.end_report = Some(report);
        fed.end_sent = true;
        out.save(SaveHint::Job(id));
        out.fed(FedRequest::Ended { job: id, report });
    }
}

/// Sends `id`'s run-end report once its processes are gone: a killed run (cancel, requeue)
/// is reported when its node confirms the end, so a requeued job never starts elsewhere while
/// its last run still has processes here. Called where a completing job finishes. An array
/// task checks instead whether its array is now over ([`array_check`]).
pub(crate) fn flush(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.completing {
        return;
    }
    if let Some(task) = job.array {
        let state = job.state;
        if state.is_finished() {
            array_check(core, out, id, task.job, state);
        }
        return;
    }
    let Some(fed) = job.fed.as_deref_mut() else {
        return;
    };
    if let Some(report) = fed.end_report.filter(|_| !fed.end_sent) {
        fed.end_sent = true;
        out.fed(FedRequest::Ended { job: id, report });
    }
}

/// The dbd has the end of `id`'s run (`info`: the job as it recorded it, for a requeue; `None`
/// when the report was already applied before). A requeued copy follows the dbd: kept pending
/// if this cluster is still active for it, else dropped (a sibling) or made a tracker.
pub fn on_end_reported(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    info: Option<FedInfo>,
) {
    let Some(fed) = core
        .jobs
        .map
        .get_mut(&id)
        .and_then(|j| j.fed.as_deref_mut())
    else {
        return;
    };
    let Some(report) = fed.end_report.take() else {
        return;
    };
    fed.end_sent = false;
    out.save(SaveHint::Job(id));
    if report.requeue != FedRequeue::None
        && let Some(info) = info
    {
        copies::apply_info(core, out, now, id, &info);
    }
}

/// The dbd knows the origin's offer state `offered` of `id`. A job the dbd now holds offered
/// may start here: it is new to the scheduler (its offer in flight gated it), so the pass
/// after a batch of such answers considers it alone (`core::fresh`), as after a submission.
pub fn on_offer_synced(core: &mut Core, out: &mut impl Outbox, id: FedJobId, offered: bool) {
    if let Some(fed) = core
        .jobs
        .map
        .get_mut(&id)
        .and_then(|j| j.fed.as_deref_mut())
        && fed.offered == offered
        && !fed.offer_synced
    {
        fed.offer_synced = true;
        out.save(SaveHint::Job(id));
        if offered {
            core.fresh.submitted(id);
        }
    }
}

/// Every request still owed to the dbd (after a restart): run ends, offers and withdrawals.
pub fn unsynced(core: &Core) -> Vec<FedRequest> {
    let mut reqs = Vec::new();
    let mut ids: Vec<&Job> = core.jobs.map.values().filter(|j| j.fed.is_some()).collect();
    ids.sort_by_key(|j| j.id);
    for job in ids {
        let Some(fed) = job.fed.as_deref() else {
            continue;
        };
        if let Some(report) = fed.end_report.filter(|_| !job.completing) {
            reqs.push(FedRequest::Ended {
                job: job.id,
                report,
            });
        }
        if fed.origin_here && !fed.offer_synced {
            reqs.push(if fed.offered {
                FedRequest::Offer {
                    job: job.id,
                    desc: desc_of(core, job),
                }
            } else {
                FedRequest::Withdraw { job: job.id }
            });
        }
    }
    reqs
}
