//! Job dependencies (`--dependency`): `after`, `afterany`, `afterok`, `afternotok`, `aftercorr`
//! (each with one or more `:jobid`, `after` also with `+minutes`) and `singleton`, joined by `,` (all
//! must hold) or `?` (any may hold). A job id may be an array job id (every task) or `id_task`.
//!
//! Each dependency's status is updated when its target starts or ends (through the
//! `dependents` reverse index), so a target purged later does not matter. `singleton` is
//! checked live against the running jobs of the same user and name.

use super::jobs::{Job, JobReason, JobRef, JobTable};
use super::outbox::{Outbox, SaveHint};
use super::snapshot::dep_kind_name;
use super::{Core, SimTime};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState};

/// A dependency type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    /// Target started (or was cancelled), plus a delay.
    After,
    /// Target ended in any state.
    AfterAny,
    /// Target ended COMPLETED.
    AfterOk,
    /// Target ended in another state.
    AfterNotOk,
    /// Each array task waits for the task of the same index of the target array to end
    /// COMPLETED (a job outside an array waits for every task, as `afterok`).
    AfterCorr,
    /// No other job of the same user and name is running.
    Singleton,
}

/// Where one dependency stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepStatus {
    /// Not decided yet.
    Waiting,
    /// Met, from this time on.
    Satisfied(SimTime),
    /// Can never be met.
    Failed,
}

/// One dependency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dep {
    /// Its type.
    pub kind: DepKind,
    /// The job it waits for (`None` for singleton).
    pub target: Option<FedJobId>,
    /// `after:id+minutes`.
    pub delay_secs: u64,
    /// Where it stands.
    pub status: DepStatus,
}

/// A job's dependencies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependencies {
    /// `?`-joined: any one suffices.
    pub any: bool,
    /// The dependencies.
    pub items: Vec<Dep>,
}

/// Parses `spec` and resolves its job ids against the core's jobs.
pub(crate) fn parse(core: &Core, spec: &str, now: SimTime) -> Result<Dependencies, CtldError> {
    let bad = || CtldError::Dependency {
        spec: spec.to_string(),
    };
    if spec.contains(',') && spec.contains('?') {
        return Err(bad());
    }
    let any = spec.contains('?');
    let mut items = Vec::new();
    for part in spec.split([',', '?']) {
        if part.eq_ignore_ascii_case("singleton") {
            items.push(Dep {
                kind: DepKind::Singleton,
                target: None,
                delay_secs: 0,
                status: DepStatus::Waiting,
            });
            continue;
        }
        let mut fields = part.split(':');
        let kind = match fields.next().map(str::to_ascii_lowercase).as_deref() {
            Some("after") => DepKind::After,
            Some("afterany") => DepKind::AfterAny,
            Some("afterok") => DepKind::AfterOk,
            Some("afternotok") => DepKind::AfterNotOk,
            Some("aftercorr") => DepKind::AfterCorr,
            _ => return Err(bad()),
        };
        let mut any_target = false;
        for target in fields {
            let (id_text, delay) = match target.split_once('+') {
                Some((id, mins)) if kind == DepKind::After => {
                    (id, mins.parse::<u64>().map_err(|_| bad())?)
                }
                Some(_) => return Err(bad()),
                None => (target, 0),
            };
            let ids = core
                .jobs
                .resolve(job_ref(id_text).ok_or_else(bad)?)
                .map_err(|_| bad())?;
            for id in ids {
                let job = core.jobs.map.get(&id).ok_or_else(bad)?;
                items.push(Dep {
                    kind,
                    target: Some(id),
                    delay_secs: delay * 60,
                    status: status_for(kind, job, delay * 60, now),
                });
            }
            any_target = true;
        }
        if !any_target {
            return Err(bad());
        }
    }
    if items.is_empty() {
        return Err(bad());
    }
    Ok(Dependencies { any, items })
}

fn job_ref(text: &str) -> Option<JobRef> {
    let num = |s: &str| {
        s.parse::<u32>()
            .ok()
            .and_then(|n| FedJobId::from_raw(n).ok())
    };
    match text.split_once('_') {
        Some((id, task)) => Some(JobRef::Task(num(id)?, task.parse().ok()?)),
        None => Some(JobRef::Job(num(text)?)),
    }
}

/// Where a dependency of `kind` on `target` stands given the target's state.
///
/// The origin's tracker of a federated job (REVOKED while the job waits for, or runs on, a
/// sibling) has not ended: it is as pending as Slurm's (base state PENDING with the REVOKED
/// flag) until the run elsewhere ends, when the federation's `end_tracker` gives it the
/// run's final state and re-evaluates its dependants; it has started once the job runs
/// elsewhere.
fn status_for(kind: DepKind, target: &Job, delay_secs: u64, now: SimTime) -> DepStatus {
    let tracker = target.state == JobState::Revoked && target.fed.is_some();
    let ended = target.state.is_finished() && !tracker;
    let started = match target.fed.as_deref() {
        Some(fed) if tracker => fed.running_on.is_some(),
        _ => target.state != JobState::Pending || ended,
    };
    let at = target.end_time.or(target.start_time).unwrap_or(now);
    match kind {
        DepKind::After if started => DepStatus::Satisfied(
            target
                .start_time
                .or(target.end_time)
                .unwrap_or(now)
                .plus(delay_secs),
        ),
        DepKind::AfterAny if ended => DepStatus::Satisfied(at),
        DepKind::AfterOk if ended && target.state == JobState::Completed => {
            DepStatus::Satisfied(at)
        }
        DepKind::AfterOk if ended => DepStatus::Failed,
        DepKind::AfterCorr if ended && target.state == JobState::Completed => {
            DepStatus::Satisfied(at)
        }
        DepKind::AfterCorr if ended => DepStatus::Failed,
        DepKind::AfterNotOk if ended && target.state == JobState::Completed => DepStatus::Failed,
        DepKind::AfterNotOk if ended => DepStatus::Satisfied(at),
        _ => DepStatus::Waiting,
    }
}

/// The dependencies array task `task` of a new job keeps: an `aftercorr` dependency only on
/// the target task of the same index (none when the target array has no such task: then
/// nothing holds it back, as in Slurm). `None` when nothing is left.
pub(crate) fn for_task(jobs: &JobTable, deps: &Dependencies, task: u32) -> Option<Dependencies> {
    let items: Vec<Dep> = deps
        .items
        .iter()
        .filter(|d| {
            d.kind != DepKind::AfterCorr
                || d.target
                    .and_then(|t| jobs.map.get(&t))
                    .and_then(|t| t.array)
                    .is_some_and(|a| a.task == task)
        })
        .cloned()
        .collect();
    (!items.is_empty()).then_some(Dependencies {
        any: deps.any,
        items,
    })
}

/// Registers `job`'s dependencies in the reverse index.
pub(crate) fn index(jobs: &mut JobTable, job: FedJobId, deps: &Dependencies) {
    for target in deps.items.iter().filter_map(|d| d.target) {
        let list = jobs.dependents.entry(target).or_default();
        if !list.contains(&job) {
            list.push(job);
        }
    }
}

/// Re-evaluates the dependencies on `target` after it started or ended. A dependant whose
/// dependency is decided is saved: a restarted controller must not find it waiting still
/// for a target whose end it will never be told again.
pub(crate) fn target_changed(
    jobs: &mut JobTable,
    out: &mut (impl Outbox + ?Sized),
    target: FedJobId,
    now: SimTime,
) {
    let Some(dependents) = jobs.dependents.get(&target).cloned() else {
        return;
    };
    let Some(t) = jobs.map.get(&target).cloned() else {
        return;
    };
    for id in dependents {
        let Some(deps) = jobs.map.get_mut(&id).and_then(|j| j.deps.as_mut()) else {
            continue;
        };
        let mut decided = false;
        for d in deps.items.iter_mut().filter(|d| d.target == Some(target)) {
            if d.status == DepStatus::Waiting {
                d.status = status_for(d.kind, &t, d.delay_secs, now);
                decided |= d.status != DepStatus::Waiting;
            }
        }
        if decided {
            out.save(SaveHint::Job(id));
        }
    }
}

/// Why `job`'s dependencies keep it waiting, or `None` when they are met.
pub(crate) fn blocking_reason(jobs: &JobTable, job: &Job, now: SimTime) -> Option<JobReason> {
    let deps = job.deps.as_ref()?;
    let met = |d: &Dep| match (d.kind, d.status) {
        (DepKind::Singleton, _) => {
            jobs.running_names
                .get(&(job.uid, job.name.clone()))
                .copied()
                .unwrap_or(0)
                == 0
        }
        (_, DepStatus::Satisfied(at)) => at <= now,
        _ => false,
    };
    let failed = |d: &Dep| d.status == DepStatus::Failed;
    let (ok, never) = if deps.any {
        (deps.items.iter().any(met), deps.items.iter().all(failed))
    } else {
        (deps.items.iter().all(met), deps.items.iter().any(failed))
    };
    match (ok, never) {
        (true, _) => None,
        (false, true) => Some(JobReason::DependencyNeverSatisfied),
        (false, false) => Some(JobReason::Dependency),
    }
}

/// `job`'s dependencies as Slurm shows them (`scontrol show job`'s `Dependency=`, squeue's
/// `%E`): `afterok:12(unfulfilled)`, `after:12+5(fulfilled)`, `afterany:100_3(failed)`,
/// `singleton(unfulfilled)`, joined by `,` (all) or `?` (any). Empty once nothing holds the job
/// back (Slurm clears the list when the dependencies are met), and for jobs no longer pending.
pub fn describe(core: &Core, job: &Job, now: SimTime) -> String {
    let Some(deps) = job.deps.as_ref() else {
        return String::new();
    };
    if !job.is_queued() || blocking_reason(&core.jobs, job, now).is_none() {
        return String::new();
    }
    let running_same = |job: &Job| {
        core.jobs
            .running_names
            .get(&(job.uid, job.name.clone()))
            .is_some_and(|n| *n > 0)
    };
    let items: Vec<String> = deps
        .items
        .iter()
        .map(|d| {
            let state = match (d.kind, d.status) {
                (DepKind::Singleton, _) if running_same(job) => "unfulfilled",
                (DepKind::Singleton, _) => "fulfilled",
                (_, DepStatus::Satisfied(at)) if at <= now => "fulfilled",
                (_, DepStatus::Failed) => "failed",
                _ => "unfulfilled",
            };
            let Some(target) = d.target else {
                return format!("singleton({state})");
            };
            let shown = match core.jobs.map.get(&target).and_then(|t| t.array) {
                Some(a) => format!("{}_{}", a.job, a.task),
                None => target.to_string(),
            };
            let delay = match d.delay_secs / 60 {
                0 => String::new(),
                mins => format!("+{mins}"),
            };
            format!("{}:{shown}{delay}({state})", dep_kind_name(d.kind))
        })
        .collect();
    items.join(if deps.any { "?" } else { "," })
}
