//! Acting on jobs: `scancel` (Cancel, by ids or by filters), `scontrol hold|uhold|release|
//! requeue|requeuehold|suspend|resume` (ControlJob) and `scontrol update job` (UpdateJob).
//! Each job gets its own answer: a job the caller may not touch reports "Access/permission
//! denied" while the others go ahead, as Slurm does.

use super::ControllerService;
use super::convert::{job_ref, step_ref, time_limit};
use crate::core::{
    self, CancelFilter, HoldKind, JobChange, JobRef, Scancel, on_hold, on_release, on_requeue,
    on_requeue_hold, on_resume, on_suspend, on_update_job,
};
use crate::error::CtldError;
use crate::runtime::Ctx;
use sluice_wire::proto::{
    CancelReply, CancelRequest, ControlJobReply, ControlJobRequest, JobAction, JobError,
    UpdateJobRequest,
};
use tonic::{Request, Status};

/// The job id a reference names (an array task's own id; 0 when unknown).
fn ref_id(cx: &Ctx<'_>, r: Option<JobRef>) -> u32 {
    match r {
        Some(JobRef::Job(id)) => id.get(),
        Some(JobRef::Task(array, task)) => cx
            .core
            .jobs()
            .find(|j| j.array.is_some_and(|a| a.job == array && a.task == task))
            .map_or(array.get(), |j| j.id.get()),
        Some(JobRef::Het(leader, offset)) => cx
            .core
            .jobs()
            .find(|j| {
                j.het
                    .is_some_and(|h| h.leader == leader && h.offset == offset)
            })
            .map_or(leader.get(), |j| j.id.get()),
        None => 0,
    }
}

fn job_error(text: &str, e: &CtldError, cx: &Ctx<'_>, r: Option<JobRef>) -> JobError {
    JobError {
        job_id: ref_id(cx, r),
        job: text.to_string(),
        message: e.to_string(),
    }
}

/// The filters of a `scancel` request.
fn cancel_filter(r: &CancelRequest) -> CancelFilter {
    CancelFilter {
        uids: r.uids.clone(),
        names: r.names.clone(),
        states: r.states.clone(),
        partitions: r.partitions.clone(),
    }
}

/// `scancel`: the federation's paths first (federated jobs, `--sibling`, filters resolved
/// across the members), then the core's policy ([`core::on_scancel`]) for the rest.
pub async fn cancel(
    svc: &ControllerService,
    req: Request<CancelRequest>,
) -> Result<CancelReply, Status> {
    let caller = svc.caller(&req)?;
    let mut r = req.into_inner();
    let named = |r: &CancelRequest| {
        !(r.job_ids.is_empty() && r.job_tasks.is_empty() && r.job_steps.is_empty())
    };
    let had_targets = named(&r);
    // Filters alone in a federation: the federated jobs that match on any member are
    // cancelled by id (the federation's way, as Slurm's scancel does); the rest stays local.
    let fed_filtered = !had_targets && r.sibling.is_empty() && svc.fed.is_some();
    let mut remote_tasks = Vec::new();
    if fed_filtered && let Some(fed) = &svc.fed {
        let filter = cancel_filter(&r).for_caller(caller);
        let found = crate::fed_client::filter::matching(fed, &svc.core, caller, &filter).await;
        (r.job_ids, remote_tasks) = (found.ids, found.tasks);
    }
    // Federated jobs (and `--sibling`) take the federation's way first.
    let mut fed_reply = match &svc.fed {
        Some(fed) => crate::fed_client::commands::cancel(fed, &svc.core, caller, &mut r).await?,
        None if !r.sibling.is_empty() => CancelReply {
            errors: r
                .job_ids
                .drain(..)
                .map(|id| JobError {
                    job_id: id,
                    job: id.to_string(),
                    message: CtldError::JobNotFederated.to_string(),
                })
                .collect(),
            ..CancelReply::default()
        },
        None => CancelReply::default(),
    };
    if let Some(fed) = svc.fed.as_ref().filter(|_| !remote_tasks.is_empty()) {
        let done =
            crate::fed_client::filter::forward_tasks(fed, &svc.core, caller, &r, remote_tasks)
                .await;
        fed_reply.cancelled.extend(done.cancelled);
        fed_reply.errors.extend(done.errors);
    }
    if had_targets && !named(&r) {
        return Ok(fed_reply);
    }
    let filter = cancel_filter(&r);
    let req = Scancel {
        targets: r
            .job_ids
            .iter()
            .map(|id| (id.to_string(), job_ref(&id.to_string()).ok()))
            .chain(r.job_tasks.iter().map(|t| (t.clone(), job_ref(t).ok())))
            .collect(),
        steps: r
            .job_steps
            .iter()
            .map(|t| (t.clone(), step_ref(t)))
            .collect(),
        filter,
        by_filter: !had_targets,
        skip_federated: fed_filtered,
        signal: r.signal,
        batch_only: r.batch_only,
    };
    let mut reply = svc
        .core
        .call(move |cx| {
            let done = core::on_scancel(cx.core, cx.out, cx.now, caller, req);
            CancelReply {
                cancelled: done
                    .cancelled
                    .into_iter()
                    .map(|job| ref_id(cx, Some(job)))
                    .collect(),
                errors: done
                    .errors
                    .iter()
                    .map(|(text, target, e)| job_error(text, e, cx, *target))
                    .collect(),
            }
        })
        .await?;
    reply.cancelled.extend(fed_reply.cancelled);
    reply.errors.extend(fed_reply.errors);
    Ok(reply)
}

/// `scontrol hold|uhold|release|requeue|requeuehold|suspend|resume`.
pub async fn control_job(
    svc: &ControllerService,
    req: Request<ControlJobRequest>,
) -> Result<ControlJobReply, Status> {
    let caller = svc.caller(&req)?;
    let mut r = req.into_inner();
    let action = JobAction::try_from(r.action).unwrap_or(JobAction::Unspecified);
    if action == JobAction::Unspecified {
        return Err(Status::invalid_argument("Invalid job action"));
    }
    let split = match &svc.fed {
        Some(fed) => {
            crate::fed_client::commands::control(fed, &svc.core, caller, action, &mut r).await
        }
        None => crate::fed_client::commands::ControlSplit::default(),
    };
    let (fed_errors, withdrawn) = (split.errors, split.withdrawn);
    if r.jobs.is_empty() {
        return Ok(ControlJobReply { errors: fed_errors });
    }
    let mut errors = svc
        .core
        .call(move |cx| {
            // Withdrawn from their siblings just now: the copies follow in the same batch.
            apply_withdrawn(cx, &withdrawn);
            each_job(cx, &r.jobs, |cx, job| {
                let (core, out, now) = (&mut *cx.core, &mut *cx.out, cx.now);
                match action {
                    JobAction::Hold => on_hold(core, out, caller, job, HoldKind::Admin),
                    JobAction::Uhold => on_hold(core, out, caller, job, HoldKind::User),
                    JobAction::Release => on_release(core, out, caller, job),
                    JobAction::Requeue => on_requeue(core, out, now, caller, job),
                    JobAction::RequeueHold => on_requeue_hold(core, out, now, caller, job),
                    JobAction::Suspend => on_suspend(core, out, now, caller, job),
                    JobAction::Resume => on_resume(core, out, now, caller, job),
                    JobAction::Unspecified => Err(CtldError::Disabled),
                }
            })
        })
        .await?;
    errors.extend(fed_errors);
    Ok(ControlJobReply { errors })
}

/// `scontrol update job`: TimeLimit, Partition, Name/JobName, Dependency.
pub async fn update_job(
    svc: &ControllerService,
    req: Request<UpdateJobRequest>,
) -> Result<ControlJobReply, Status> {
    let caller = svc.caller(&req)?;
    let groups = svc.users.get(caller.uid).groups;
    let mut r = req.into_inner();
    let split = match &svc.fed {
        Some(fed) => crate::fed_client::commands::update(fed, &svc.core, caller, &mut r).await,
        None => crate::fed_client::commands::UpdateSplit::default(),
    };
    if r.jobs.is_empty() {
        return Ok(ControlJobReply {
            errors: split.errors,
        });
    }
    let changes = match job_changes(&r) {
        Ok(c) => c,
        Err(status) => {
            let withdrawn = split.withdrawn;
            svc.core
                .call(move |cx| apply_withdrawn(cx, &withdrawn))
                .await?;
            return Err(status);
        }
    };
    let withdrawn = split.withdrawn;
    let mut errors = svc
        .core
        .call(move |cx| {
            apply_withdrawn(cx, &withdrawn);
            each_job(cx, &r.jobs, |cx, job| {
                on_update_job(cx.core, cx.out, cx.now, caller, job, &changes, &groups)
            })
        })
        .await?;
    if let Some(fed) = &svc.fed {
        for id in split.push {
            crate::fed_client::route::push_description(fed, &svc.core, id).await;
        }
    }
    errors.extend(split.errors);
    Ok(ControlJobReply { errors })
}

/// Applies the dbd's records of jobs withdrawn before a hold or an update.
fn apply_withdrawn(cx: &mut Ctx<'_>, withdrawn: &[crate::core::federation::FedInfo]) {
    for info in withdrawn {
        crate::core::federation::on_fed_info(cx.core, cx.out, cx.now, info);
    }
}

/// The settings of `scontrol update job` the usual path applies.
fn job_changes(r: &UpdateJobRequest) -> Result<Vec<JobChange>, Status> {
    let mut changes = Vec::new();
    for s in &r.settings {
        let change = match s.name.to_ascii_lowercase().as_str() {
            "timelimit" => JobChange::TimeLimit(
                time_limit(Some(&s.value))?.ok_or(CtldError::InvalidTimeLimit)?,
            ),
            "partition" => JobChange::Partition(s.value.clone()),
            "name" | "jobname" => JobChange::Name(s.value.clone()),
            "dependency" => JobChange::Dependency(s.value.clone()),
            "nice" => JobChange::Nice(nice(&s.value)?),
            "priority" => JobChange::Priority(priority(&s.value)?),
            _ => {
                return Err(Status::invalid_argument(format!(
                    "Update of this parameter is not supported: {}",
                    s.name
                )));
            }
        };
        changes.push(change);
    }
    Ok(changes)
}

/// `Nice=` of `scontrol update job`.
fn nice(value: &str) -> Result<i32, Status> {
    crate::core::priority::parse_nice(value)
        .ok_or_else(|| Status::invalid_argument(format!("Invalid nice value: {value}")))
}

/// `Priority=` of `scontrol update job`.
fn priority(value: &str) -> Result<u32, Status> {
    crate::core::priority::parse_priority(value)
        .ok_or_else(|| Status::invalid_argument(format!("Invalid priority value: {value}")))
}

/// Runs `f` on each job as written; returns the errors.
fn each_job(
    cx: &mut Ctx<'_>,
    jobs: &[String],
    mut f: impl FnMut(&mut Ctx<'_>, JobRef) -> Result<(), CtldError>,
) -> Vec<JobError> {
    let mut errors = Vec::new();
    for text in jobs {
        let target = job_ref(text).ok();
        if let Err(e) = target
            .ok_or(CtldError::InvalidJobId)
            .and_then(|job| f(cx, job))
        {
            errors.push(job_error(text, &e, cx, target));
        }
    }
    errors
}
