//! The origin's submission of a federated job, in two steps around the dbd's `SubmitFedJob`:
//!
//! 1. [`on_fed_submit`] validates the job here first (a job the origin rejects is rejected, as
//!    in Slurm) and creates it in phase `Registering`: saved, never scheduled, and without its
//!    accounting record yet;
//! 2. once the dbd recorded it, [`on_fed_recorded`] sets its siblings, writes the accounting
//!    record and lets it be scheduled (or makes it the REVOKED tracker when the origin is not
//!    viable); if the dbd refused it, [`on_fed_submit_failed`] removes it without a trace.
//!
//! Jobs left `Registering` by a restart are submitted again ([`resubmissions`]): the dbd
//! answers a repeated submission with the job it recorded.

use super::super::jobs::Job;
use super::super::outbox::{AcctRecord, NodeCommand, Outbox, SaveHint};
use super::super::power::PowerCommand;
use super::super::request::{SubmitReply, SubmitRequest};
use super::super::{Core, SimTime, on_submit};
use super::copies::{FedInfo, apply_info, remove_job};
use super::desc::Asked;
use super::{FedJob, FedPhase, FedRequest, sorted};
use crate::error::CtldError;
use sluice_schema::FedJobId;

/// The federation options of a submission.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FedSubmit {
    /// `-M/--clusters`, comma separated ("" = every member).
    pub clusters: String,
    /// `--cluster-constraint` as given.
    pub features: String,
}

/// What the dbd must record of a federated submission.
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
    /// Held or dependent: stays on the origin for now.
    pub held: bool,
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
    let held = req.hold || req.dependency.is_some();
    let array = req.array.is_some();
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
                offered: !held && !array,
                offer_synced: true,
                ..FedJob::default()
            }));
        }
    }
    let desc = core
        .jobs
        .map
        .get(&reply.job_id)
        .map(|j| super::report::desc_of(core, j))
        .unwrap_or_default();
    Ok(OriginSubmit::Federated(FedRecord {
        reply,
        desc,
        clusters: fed.clusters,
        features: fed.features,
        held,
        array,
    }))
}

/// Step 2: the dbd recorded the submission of `jobs` (`info`: its record of the first).
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
    }
}

/// Step 2, refused: the dbd did not record `jobs`; they leave without a trace.
pub fn on_fed_submit_failed(core: &mut Core, out: &mut impl Outbox, jobs: &[FedJobId]) {
    for &id in jobs {
        let registering = core
            .fed_job(id)
            .is_some_and(|f| f.phase == FedPhase::Registering);
        if registering {
            remove_job(core, out, id);
        }
    }
    for &id in jobs.iter().take(1) {
        core.jobs.arrays.remove(&id);
    }
}

/// The submissions a restart left `Registering`, to record again.
pub fn resubmissions(core: &Core) -> Vec<FedRecord> {
    let mut firsts: Vec<&Job> = core
        .jobs
        .map
        .values()
        .filter(|j| {
            j.fed
                .as_deref()
                .is_some_and(|f| f.origin_here && f.phase == FedPhase::Registering)
        })
        .filter(|j| j.array.is_none_or(|a| a.job == j.id))
        .collect();
    firsts.sort_by_key(|j| j.id);
    firsts
        .into_iter()
        .filter_map(|j| {
            let fed = j.fed.as_deref()?;
            let jobs = match j.array {
                Some(_) => core.array_task_ids(j.id),
                None => vec![j.id],
            };
            Some(FedRecord {
                reply: SubmitReply { job_id: j.id, jobs },
                desc: super::report::desc_of(core, j),
                clusters: fed.clusters.clone(),
                features: fed.features.clone(),
                held: !fed.offered,
                array: j.array.is_some(),
            })
        })
        .collect()
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
