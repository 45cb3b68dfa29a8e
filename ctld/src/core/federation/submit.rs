//! The origin's submission of a federated job, in two steps around the dbd's `SubmitFedJob`:
//!
//! 1. [`on_fed_submit`] validates the job here first (a job the origin rejects is rejected, as
//!    in Slurm) and creates it in phase `Registering`: saved, never scheduled, and without its
//!    accounting record yet; the dbd is asked only once this is committed;
//! 2. once the dbd recorded it, [`on_fed_recorded`] sets its siblings, writes the accounting
//!    record and lets it be scheduled (or makes it the REVOKED tracker when the origin is not
//!    viable), and offers it to its siblings: the offer is owed in the job's saved state
//!    until the dbd has it, and leaves after this step's commit, carried by the start lock if
//!    the scheduling pass of the same batch starts the job here, alone otherwise (see
//!    [`super::start`]); if the dbd refused it, [`on_fed_submit_failed`] removes it without a
//!    trace.
//!
//! What a submission costs, and what `sbatch` waits for: the commit of step 1 (the
//! controller's group commit, shared with every request of its batch, as for any job) and one
//! `SubmitFedJob` round trip, which the dbd group-commits with the concurrent submissions and
//! offers of every origin. The submitter is answered when the dbd's answer arrives; step 2 is
//! queued to the core before that answer leaves (so every later request of the submitter finds
//! the job recorded) and committed with the next batch, and the offer follows after that
//! commit. Neither is waited for, because a restart already covers them: a controller that
//! stops before step 2 is committed finds the job `Registering` and records it again
//! ([`resubmissions`]), and the dbd answers a repeated submission with the record the submitter
//! was told about; an offer not yet answered is sent again from the saved state.
//!
//! The record is written held and the offer is a second write (grouped with other jobs'
//! submissions at the dbd, not with its own record): recording and offering in one write would
//! let a sibling start a job whose answer the origin never got, while its submitter is told the
//! submission failed. So, whatever fails:
//!
//! - no sibling can start a job its origin did not learn was recorded: only step 2 offers it,
//!   and its offer leaves after step 2 is committed;
//! - a job `sbatch` was told failed never runs. A refusal is reported after the removal is
//!   committed (the dbd recorded nothing). With no answer in time (the answer lost, the dbd
//!   away), the origin tells the submitter the submission failed only after
//!   [`on_fed_submit_abandoned`] committed the job `Withdrawing` with a
//!   [`FedRequest::WithdrawSubmission`] owed: step 2 never ran for it (had the answer arrived
//!   meanwhile, the submitter is told it was accepted instead), so it was never offered, and
//!   the withdrawal, resent until the dbd answers (after a restart too: [`withdrawals`]), ends
//!   whatever the dbd recorded or keeps a late submission from recording anything; then
//!   [`on_submission_withdrawn`] drops the job.
//!
//! After a restart, jobs left `Registering` are submitted again ([`resubmissions`]: the dbd
//! answers a repeated submission with the job it recorded) and withdrawals still owed are sent
//! again ([`withdrawals`]).

use super::super::jobs::Job;
use super::super::outbox::{AcctRecord, NodeCommand, Outbox, SaveHint};
use super::super::power::PowerCommand;
use super::super::request::{SubmitReply, SubmitRequest};
use super::super::{Core, SimTime, deps, on_submit};
use super::copies::{FedInfo, InfoPhase, apply_info, remove_job};
use super::desc::Asked;
use super::{FedJob, FedPhase, FedRequest, sorted};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState};

/// The federation options of a submission.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FedSubmit {
    /// `-M/--clusters`, comma separated ("" = every member).
    pub clusters: String,
    /// `--cluster-constraint` as given.
    pub features: String,
}

/// What the dbd must record of a federated submission (always held: see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FedRecord {
    /// The ids given (the array's tasks too); the first is the one the dbd records.
    pub reply: SubmitReply,
    /// The description siblings recreate the job from.
    pub desc: Vec<u8>,
    /// `-M` as given.
    pub clusters: String,
    /// `--cluster-constraint` as given.
    pub features: String,
    /// A job array (runs on the origin only).
    pub array: bool,
}

/// The outcome of the first step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginSubmit {
    /// Not federated (no federation, or an srun allocation): queued as usual.
    Local(SubmitReply),
    /// Created `Registering`: record it at the dbd, then [`on_fed_recorded`].
    Federated(FedRecord),
}

/// Step 1: validates and creates the job (see the module doc). In a federation whose fedstate
/// takes no new jobs: "System submissions disabled".
pub fn on_fed_submit(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    req: SubmitRequest,
    fed: FedSubmit,
) -> Result<OriginSubmit, CtldError> {
    if !core.fed.view.in_federation() || req.launch.interactive {
        return on_submit(core, out, now, req).map(OriginSubmit::Local);
    }
    if core.fed.view.submissions_disabled() {
        return Err(CtldError::SubmissionsDisabled);
    }
    let asked = Asked::of(&req);
    let groups = req.groups.clone();
    let reply = on_submit(core, &mut Unrecorded(out), now, req)?;
    let me = core.me().to_string();
    for id in &reply.jobs {
        if let Some(job) = core.jobs.map.get_mut(id) {
            job.fed = Some(Box::new(FedJob {
                origin: me.clone(),
                origin_here: true,
                clusters: fed.clusters.clone(),
                features: fed.features.clone(),
                asked: asked.clone(),
                groups: groups.clone(),
                phase: FedPhase::Registering,
                // Recorded held: offered once the dbd answered (`offer_recorded`).
                offered: false,
                offer_synced: true,
                ..FedJob::default()
            }));
        }
    }
    let rec = core
        .jobs
        .map
        .get(&reply.job_id)
        .and_then(|j| record_of(core, j))
        .ok_or(CtldError::InvalidJobId)?;
    Ok(OriginSubmit::Federated(FedRecord { reply, ..rec }))
}

/// Step 2: the dbd recorded the submission of `jobs` (`info`: its record of the first). A job
/// that may go to its siblings is offered at the end of the batch's pass (owed in its saved
/// state until the dbd has it).
pub fn on_fed_recorded(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    jobs: &[FedJobId],
    info: &FedInfo,
) {
    for &id in jobs {
        let Some(job) = core.jobs.map.get_mut(&id) else {
            continue;
        };
        let Some(fed) = job.fed.as_deref_mut() else {
            continue;
        };
        if fed.phase != FedPhase::Registering {
            continue;
        }
        fed.phase = FedPhase::Recorded;
        fed.viable = sorted(info.viable.clone());
        fed.active = sorted(info.active.clone());
        let part = core
            .parts
            .get(job.partition.get())
            .map(|p| p.name.clone())
            .unwrap_or_default();
        out.accounting(AcctRecord::submitted(job, &part, job.submit_time));
        out.save(SaveHint::Job(id));
        apply_info(core, out, now, id, info);
        if info.phase == InfoPhase::Pending {
            offer_recorded(core, out, now, id);
            // May start now: the pass after a recorded submission considers it as new.
            core.fresh.submitted(id);
        }
    }
}

/// The origin, now that the dbd recorded `id` held, offers it to its siblings unless it is
/// held, dependent or an array task (the scheduling pass offers those once they may run): the
/// offer is due at the end of the pass ([`super::start::send_due_offers`]).
fn offer_recorded(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let offer = job
        .fed
        .as_deref()
        .is_some_and(|f| f.origin_here && !f.offered)
        && matches!(job.state, JobState::Pending | JobState::Revoked)
        && job.hold.is_none()
        && job.array.is_none()
        && deps::blocking_reason(&core.jobs, job, now).is_none();
    if !offer {
        return;
    }
    if let Some(fed) = core
        .jobs
        .map
        .get_mut(&id)
        .and_then(|j| j.fed.as_deref_mut())
    {
        fed.offered = true;
        fed.offer_synced = false;
        out.save(SaveHint::Job(id));
        core.fed.offers_due.insert(id);
    }
}

/// Step 2, refused: the dbd did not record `jobs`; they leave without a trace.
pub fn on_fed_submit_failed(core: &mut Core, out: &mut impl Outbox, jobs: &[FedJobId]) {
    drop_unrecorded(core, out, jobs, FedPhase::Registering);
}

/// Step 2, unanswered: the dbd did not answer in time, and the submitter is told the
/// submission failed. `jobs` wait `Withdrawing` (saved) with a withdrawal owed to the dbd.
/// Returns `false` when the dbd's answer arrived meanwhile (a resubmission after a restart got
/// it): the job is recorded and stays.
pub fn on_fed_submit_abandoned(core: &mut Core, out: &mut impl Outbox, jobs: &[FedJobId]) -> bool {
    let Some(&first) = jobs.first() else {
        return true;
    };
    match core.fed_job(first).map(|f| f.phase) {
        Some(FedPhase::Registering) => {}
        Some(FedPhase::Recorded) => return false,
        Some(FedPhase::Withdrawing) | None => return true,
    }
    let record = core.jobs.map.get(&first).and_then(|j| record_of(core, j));
    for &id in jobs {
        if let Some(fed) = core
            .jobs
            .map
            .get_mut(&id)
            .and_then(|j| j.fed.as_deref_mut())
            .filter(|f| f.phase == FedPhase::Registering)
        {
            fed.phase = FedPhase::Withdrawing;
            out.save(SaveHint::Job(id));
        }
    }
    if let Some(record) = record {
        out.fed(FedRequest::WithdrawSubmission { record });
    }
    true
}

/// The dbd ended whatever it recorded of the withdrawn submission of `jobs`: they leave
/// without a trace.
pub fn on_submission_withdrawn(core: &mut Core, out: &mut impl Outbox, jobs: &[FedJobId]) {
    drop_unrecorded(core, out, jobs, FedPhase::Withdrawing);
}

/// Removes the jobs of `jobs` still in `phase` (and the array they form).
fn drop_unrecorded(core: &mut Core, out: &mut impl Outbox, jobs: &[FedJobId], phase: FedPhase) {
    let mut dropped = false;
    for &id in jobs {
        if core.fed_job(id).is_some_and(|f| f.phase == phase) {
            remove_job(core, out, id);
            dropped = true;
        }
    }
    if let Some(first) = jobs.first().filter(|_| dropped) {
        core.jobs.arrays.remove(first);
    }
}

/// The submissions a restart left `Registering`, to record again.
pub fn resubmissions(core: &Core) -> Vec<FedRecord> {
    firsts_in(core, FedPhase::Registering)
        .into_iter()
        .filter_map(|j| record_of(core, j))
        .collect()
}

/// The withdrawals a restart left owed.
pub fn withdrawals(core: &Core) -> Vec<FedRequest> {
    firsts_in(core, FedPhase::Withdrawing)
        .into_iter()
        .filter_map(|j| record_of(core, j))
        .map(|record| FedRequest::WithdrawSubmission { record })
        .collect()
}

/// The origin's submissions in `phase` (an array once, by its first job), by id.
fn firsts_in(core: &Core, phase: FedPhase) -> Vec<&Job> {
    let mut firsts: Vec<&Job> = core
        .jobs
        .map
        .values()
        .filter(|j| {
            j.fed
                .as_deref()
                .is_some_and(|f| f.origin_here && f.phase == phase)
        })
        .filter(|j| j.array.is_none_or(|a| a.job == j.id))
        .collect();
    firsts.sort_by_key(|j| j.id);
    firsts
}

/// What the dbd records of the origin's submission `first` (an array's first job).
fn record_of(core: &Core, first: &Job) -> Option<FedRecord> {
    let fed = first.fed.as_deref()?;
    let jobs = match first.array {
        Some(_) => core.array_task_ids(first.id),
        None => vec![first.id],
    };
    Some(FedRecord {
        reply: SubmitReply {
            job_id: first.id,
            jobs,
        },
        desc: super::report::desc_of(core, first),
        clusters: fed.clusters.clone(),
        features: fed.features.clone(),
        array: first.array.is_some(),
    })
}

impl Core {
    /// The job ids of array `array`'s tasks still in the core, by task index.
    pub(crate) fn array_task_ids(&self, array: FedJobId) -> Vec<FedJobId> {
        self.jobs
            .arrays
            .get(&array)
            .map(|m| m.tasks.iter().map(|t| t.1).collect())
            .unwrap_or_default()
    }
}

/// An outbox that holds back accounting records: a job the dbd has not recorded yet gets its
/// record once it is ([`on_fed_recorded`]).
struct Unrecorded<'a, O: Outbox>(&'a mut O);

impl<O: Outbox> Outbox for Unrecorded<'_, O> {
    fn node(&mut self, cmd: NodeCommand) {
        self.0.node(cmd);
    }

    fn accounting(&mut self, _rec: AcctRecord) {}

    fn save(&mut self, hint: SaveHint) {
        self.0.save(hint);
    }

    fn power(&mut self, cmd: PowerCommand) {
        self.0.power(cmd);
    }

    fn fed(&mut self, req: FedRequest) {
        self.0.fed(req);
    }
}
