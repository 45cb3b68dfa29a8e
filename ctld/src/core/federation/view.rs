//! A new federation view from the dbd: this cluster's fed id (composed into new job ids),
//! fedstate and siblings. When the view says this cluster left its federation, the controller
//! cleans up its own federated jobs itself, by Slurm's removal rules, since the dbd sends a
//! departed cluster no per-job events:
//! - a job running here keeps running, as a job that is not federated;
//! - the origin's pending jobs stay pending here, not federated;
//! - copies of other clusters' pending jobs are revoked;
//! - the origin's trackers of jobs running elsewhere are dropped.

use super::super::outbox::{Outbox, SaveHint};
use super::super::{Core, SimTime};
use super::FedView;
use super::copies::{drop_copy, remove_job};
use super::start::release_reservation;
use sluice_vocab::{FedJobId, JobState};

/// Takes `view` as the federation view; returns whether it changed (the runtime then saves it).
pub fn on_fed_view(core: &mut Core, out: &mut impl Outbox, now: SimTime, view: FedView) -> bool {
    if core.fed.view == view {
        return false;
    }
    let left = core.fed.view.in_federation() && !view.in_federation();
    core.ids.set_origin(view.fed_id());
    core.fed.view = view;
    if left {
        leave(core, out, now);
    }
    true
}

fn leave(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    let mut ids: Vec<FedJobId> = core
        .jobs
        .map
        .values()
        .filter(|j| j.fed.is_some())
        .map(|j| j.id)
        .collect();
    ids.sort_unstable();
    for id in ids {
        let was_locking = release_reservation(core, id).is_some();
        let Some(job) = core.jobs.map.get(&id) else {
            continue;
        };
        let origin_here = job.fed.as_deref().is_some_and(|f| f.origin_here);
        let runs_here = matches!(job.state, JobState::Running | JobState::Suspended)
            || (job.completing && job.state != JobState::Revoked);
        let pending = job.state == JobState::Pending;
        let tracker = job.state == JobState::Revoked;
        if tracker && !job.completing {
            remove_job(core, out, id);
        } else if runs_here || (pending && origin_here) || job.state.is_finished() {
            localize(core, out, id, was_locking);
        } else {
            drop_copy(core, out, now, id);
        }
    }
}

/// `id` stays here as a job that is not federated.
fn localize(core: &mut Core, out: &mut impl Outbox, id: FedJobId, requeue: bool) {
    let Some(job) = core.jobs.map.get_mut(&id) else {
        return;
    };
    job.fed = None;
    if requeue && job.is_queued() {
        core.jobs
            .queue
            .insert(super::super::jobs::JobTable::queue_key(job));
    }
    out.save(SaveHint::Job(id));
}
