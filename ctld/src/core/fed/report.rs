//! What a federated job owes the dbd, kept in its saved state until the dbd acknowledges it so
//! a restart resends it: the end of a run here (`FedJobEnded`, with its requeue), and the
//! origin's offer or withdrawal following holds and dependencies.

use super::super::jobs::Job;
use super::super::outbox::{Outbox, SaveHint};
use super::super::{Core, SimTime};
use super::copies::{self, FedInfo};
use super::desc::FedDesc;
use super::{EndReport, FedRequest, FedRequeue};
use sluice_schema::{FedJobId, JobState};

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
/// here under the start lock reports its end to the dbd.
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

/// Sends `id`'s run-end report once its processes are gone: a killed run (cancel, requeue)
/// is reported when its node confirms the end, so a requeued job never starts elsewhere while
/// its last run still has processes here. Called where a completing job finishes.
pub(crate) fn flush(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    if job.completing {
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

/// The dbd knows the origin's offer state `offered` of `id`.
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
