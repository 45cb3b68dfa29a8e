//! `scancel`'s policy: which jobs a cancel reaches, in which order, and the cancel of each.
//!
//! - The filters (`-u`, `-n`, `-t`, `-p`, `--me`) select jobs by owner, name, state and
//!   partition ([`CancelFilter`]); with job ids too, only the ids that match are acted on.
//! - The own-uid rule: without ids and without `-u`, a user's filters reach only the user's
//!   own jobs; an administrator's reach every job ([`CancelFilter::for_caller`]). Acting on a
//!   job checks the owner again (users cancel their own jobs, administrators any).
//! - The order: a federation-wide cancel goes pending jobs first, each group by id, as Slurm's
//!   scancel does so that none starts on the resources the others free ([`cancel_order`]); on
//!   this cluster every match is cancelled in one batch, before any scheduling pass, by id.
//!
//! [`on_scancel`] runs one request against the core; the service only decodes and encodes.

use super::jobs::{Job, JobRef};
use super::lifecycle::{CancelRequest, on_cancel};
use super::outbox::Outbox;
use super::signal::{JobPart, on_signal_part};
use super::{Caller, Core, SimTime};
use crate::error::CtldError;
use sluice_vocab::JobState;

/// What a filtered `scancel` selects (every list empty: no condition).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CancelFilter {
    /// Owners.
    pub uids: Vec<u32>,
    /// Job names.
    pub names: Vec<String>,
    /// States, as stored values (a value naming no state matches no job).
    pub states: Vec<u32>,
    /// Partition names.
    pub partitions: Vec<String>,
}

impl CancelFilter {
    /// Whether the filter sets no condition.
    pub fn is_empty(&self) -> bool {
        self.uids.is_empty()
            && self.names.is_empty()
            && self.states.is_empty()
            && self.partitions.is_empty()
    }

    /// The filter as it applies to `caller` selecting by filters alone: without owners, a
    /// user's filters reach only the user's own jobs; an administrator's reach every job.
    pub fn for_caller(mut self, caller: Caller) -> Self {
        if self.uids.is_empty() && !caller.admin {
            self.uids = vec![caller.uid];
        }
        self
    }

    /// Whether a job of owner `uid`, named `name`, in stored state `state` and partition
    /// `partition` is selected.
    pub fn accepts(&self, uid: u32, name: &str, state: u32, partition: &str) -> bool {
        (self.uids.is_empty() || self.uids.contains(&uid))
            && (self.names.is_empty() || self.names.iter().any(|n| n == name))
            && (self.states.is_empty() || self.states.contains(&state))
            && (self.partitions.is_empty() || self.partitions.iter().any(|p| p == partition))
    }

    /// Whether `job`, a job of `core`, is selected.
    pub fn matches(&self, core: &Core, job: &Job) -> bool {
        self.accepts(
            job.uid,
            &job.name,
            job.state.stored(),
            partition_name(core, job),
        )
    }

    /// Whether this cluster's federated copy `job` is a live match for a federation-wide
    /// cancel (a REVOKED tracker is not: the copy that runs or waits elsewhere is listed by
    /// its own cluster; an array task is cancelled where its array runs).
    pub fn accepts_copy(&self, core: &Core, job: &Job) -> bool {
        job.fed.is_some()
            && !job.is_withdrawing()
            && job.array.is_none()
            && cancellable(job.state.stored())
            && !job.completing
            && self.matches(core, job)
    }
}

fn partition_name<'a>(core: &'a Core, job: &Job) -> &'a str {
    core.partitions()
        .get(job.partition.get())
        .map_or("", |p| p.name.as_str())
}

/// Whether a job in stored state `state` can be cancelled (Slurm's scancel acts on PENDING,
/// RUNNING and SUSPENDED jobs).
pub fn cancellable(state: u32) -> bool {
    [JobState::Pending, JobState::Running, JobState::Suspended]
        .iter()
        .any(|s| s.stored() == state)
}

/// The order of a federation-wide cancel of `found` (a job, by its id first, with whether some
/// copy of it has started): pending jobs first, so none starts on the resources the others
/// free, each group in order.
pub fn cancel_order<T: Ord>(found: impl IntoIterator<Item = (T, bool)>) -> Vec<T> {
    let mut jobs: Vec<(bool, T)> = found.into_iter().map(|(j, s)| (s, j)).collect();
    jobs.sort_unstable();
    jobs.into_iter().map(|(_, j)| j).collect()
}

/// The jobs of this cluster a cancel by filters alone reaches, by id: live (not finished,
/// not completing, not being withdrawn) and matching `filter`. With `skip_federated`,
/// federated jobs other than array tasks are left out (a federation-wide cancel resolved
/// them already). The caller's filter must have the own-uid rule applied.
pub fn filtered(core: &Core, filter: &CancelFilter, skip_federated: bool) -> Vec<(String, JobRef)> {
    let resolved = |j: &Job| skip_federated && j.fed.is_some() && j.array.is_none();
    let mut jobs: Vec<&Job> = core
        .jobs()
        .filter(|j| !j.state.is_finished() && !j.completing && filter.matches(core, j))
        .filter(|j| !j.is_withdrawing())
        .filter(|j| !resolved(j))
        // A heterogeneous job is cancelled through its leader, which takes every component.
        .filter(|j| !(j.het_follower() && j.het.is_some_and(|h| core.job(h.leader).is_some())))
        .collect();
    jobs.sort_by_key(|j| j.id);
    jobs.into_iter()
        .map(|j| (j.display_id(), j.own_ref()))
        .collect()
}

/// A step as the user wrote it (`12.3`), with the job and step it names.
pub type StepTarget = (String, Result<(JobRef, u32), CtldError>);

/// One `scancel` on this cluster.
#[derive(Debug, Default)]
pub struct Scancel {
    /// Jobs and array tasks as the user wrote them, each with what it names (`None`: not a
    /// job id).
    pub targets: Vec<(String, Option<JobRef>)>,
    /// Steps as the user wrote them, each with what it names.
    pub steps: Vec<StepTarget>,
    /// The filters.
    pub filter: CancelFilter,
    /// The user named no job, task or step: the filters select (`targets` then holds only
    /// jobs a federation-wide cancel found running here).
    pub by_filter: bool,
    /// Federated jobs were resolved through the federation: selecting by filters leaves them
    /// out.
    pub skip_federated: bool,
    /// A signal to send instead of cancelling (`SIGKILL` cancels).
    pub signal: Option<i32>,
    /// `scancel -b`: the batch shell alone.
    pub batch_only: bool,
}

/// What a `scancel` did: the jobs cancelled (or signalled), and each failure with the job as
/// written.
#[derive(Debug, Default)]
pub struct ScancelOutcome {
    /// Jobs acted on.
    pub cancelled: Vec<JobRef>,
    /// Failures: the job as written, what it names, why.
    pub errors: Vec<(String, Option<JobRef>, CtldError)>,
}

/// Runs `req` for `caller`: selects the jobs, then cancels or signals each (a job the caller
/// may not touch fails alone, as Slurm's does), then signals the steps named.
pub fn on_scancel(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    req: Scancel,
) -> ScancelOutcome {
    let mut targets = req.targets;
    if req.by_filter {
        let filter = req.filter.clone().for_caller(caller);
        let running_here = std::mem::take(&mut targets);
        targets = filtered(core, &filter, req.skip_federated)
            .into_iter()
            .map(|(text, r)| (text, Some(r)))
            .chain(running_here)
            .collect();
    } else if !req.filter.is_empty() {
        // Ids and filters together: only the ids that match the filters.
        targets.retain(|(_, t)| match t {
            Some(JobRef::Job(id)) => core.job(*id).is_none_or(|j| req.filter.matches(core, j)),
            _ => true,
        });
    }
    let mut done = ScancelOutcome::default();
    for (text, target) in targets {
        let result = target.ok_or(CtldError::InvalidJobId).and_then(|job| {
            if req.batch_only {
                // `scancel -b`: the batch shell alone (SIGKILL unless `-s`).
                return on_signal_part(core, out, caller, job, JobPart::Batch, req.signal)
                    .map(|()| job);
            }
            let cancel = CancelRequest {
                job,
                signal: req.signal,
            };
            on_cancel(core, out, now, caller, cancel).map(|()| job)
        });
        match result {
            Ok(job) => done.cancelled.push(job),
            Err(e) => done.errors.push((text, target, e)),
        }
    }
    // `scancel 12.3`: the step's processes get the signal (SIGKILL cancels it); a signalled
    // step is not a cancelled job.
    for (text, parsed) in req.steps {
        let target = parsed.as_ref().ok().map(|p| p.0);
        let result = parsed.and_then(|(job, step)| {
            on_signal_part(core, out, caller, job, JobPart::Step(step), req.signal)
        });
        if let Err(e) = result {
            done.errors.push((text, target, e));
        }
    }
    done
}
