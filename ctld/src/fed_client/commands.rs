//! The federated part of `scancel`, `scontrol hold|uhold|release|requeue|requeuehold|suspend|
//! resume` and `scontrol update job`: each request is split; the jobs that are federated are
//! handled here (through the dbd, or forwarded to the cluster that must act, signed as the
//! caller) and taken out of the request, which then goes on to the usual handlers. A hold or
//! a new dependency of an origin job stays for the usual handler, but the job is withdrawn at
//! the dbd first ([`route::withdraw_first`]), so no sibling starts it meanwhile.

use super::FedHandle;
use super::route::{self, authorize};
use crate::core::Caller;
use crate::core::federation::{FedInfo, Route};
use crate::error::CtldError;
use crate::runtime::CoreHandle;
use sluice_vocab::FedJobId;
use sluice_wire::proto::{
    CancelReply, CancelRequest, ControlJobRequest, EnvVar, JobAction, JobError, UpdateJobRequest,
};
use tonic::Status;

/// SIGKILL: a cancel, not a signal.
const SIGKILL: i32 = 9;

fn error(id: u32, text: &str, message: &str) -> JobError {
    JobError {
        job_id: id,
        job: text.to_string(),
        message: message.to_string(),
    }
}

/// A plain job id as written (`12`; array tasks are never federated across clusters).
fn plain(text: &str) -> Option<FedJobId> {
    text.trim()
        .parse::<u32>()
        .ok()
        .and_then(|n| FedJobId::from_raw(n).ok())
}

/// The cluster a federated job runs on ("" when pending).
async fn running_on(fed: &FedHandle, route: &Route, id: FedJobId) -> Result<String, Status> {
    match route {
        Route::Copy {
            running_on: Some(c),
            ..
        } => Ok(c.clone()),
        _ => route::running_on(fed, id).await,
    }
}

/// `scancel` of federated jobs named by id, and `scancel --sibling`. Returns what was done;
/// the ids handled leave `r.job_ids`. `Ok(None)`: nothing was federated.
pub async fn cancel(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    r: &mut CancelRequest,
) -> Result<CancelReply, Status> {
    let mut reply = CancelReply::default();
    let sibling = std::mem::take(&mut r.sibling);
    let signal = r.signal.filter(|s| *s != SIGKILL);
    // A signal, or `-b` (the batch shell alone), goes to the cluster running the job.
    let signalled = signal.is_some() || r.batch_only;
    let mut keep = Vec::new();
    for raw in std::mem::take(&mut r.job_ids) {
        let text = raw.to_string();
        let Some(id) = plain(&text) else {
            keep.push(raw);
            continue;
        };
        let (route, uid) = match route::route(fed, core, id).await {
            Ok(x) => x,
            Err(s) => {
                reply.errors.push(error(raw, &text, s.message()));
                continue;
            }
        };
        if route == Route::Local && sibling.is_empty() {
            keep.push(raw);
            continue;
        }
        let done = match (&route, signalled) {
            (Route::Local, _) => Err(CtldError::JobNotFederated.into()),
            _ if authorize(caller, uid).is_err() => Err(CtldError::AccessDenied.into()),
            _ if !sibling.is_empty() => route::remove_sibling(fed, core, id, &sibling).await,
            // Signalled where it runs (here: the usual path).
            (_, true) => match running_on(fed, &route, id).await {
                Ok(c) if c == fed.cluster => {
                    keep.push(raw);
                    continue;
                }
                Ok(c) if c.is_empty() => Err(CtldError::JobPending.into()),
                Ok(c) => forward_signal(fed, core, caller, &c, raw, r).await,
                Err(s) => Err(s),
            },
            (
                Route::Copy {
                    running_on: Some(c),
                    ..
                },
                false,
            ) if *c == fed.cluster => {
                // Runs here: killed here, its end reaches the dbd.
                keep.push(raw);
                continue;
            }
            (_, false) => route::cancel(fed, core, caller, id).await,
        };
        match done {
            Ok(()) => reply.cancelled.push(raw),
            Err(s) => reply.errors.push(error(raw, &text, s.message())),
        }
    }
    r.job_ids = keep;
    Ok(reply)
}

/// Forwards `r`'s signal (or `-b`) for job `id` to `cluster`, which runs it.
async fn forward_signal(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    cluster: &str,
    id: u32,
    r: &CancelRequest,
) -> Result<(), Status> {
    let mut client = route::member_client(fed, core, cluster, caller).await?;
    let req = CancelRequest {
        job_ids: vec![id],
        signal: r.signal,
        batch_only: r.batch_only,
        ..CancelRequest::default()
    };
    let reply = client.cancel(req).await?.into_inner();
    match reply.errors.first() {
        Some(e) => Err(Status::invalid_argument(e.message.clone())),
        None => Ok(()),
    }
}

/// What [`control`] leaves for the usual path.
#[derive(Debug, Default)]
pub struct ControlSplit {
    /// Errors of the jobs handled here.
    pub errors: Vec<JobError>,
    /// Origin jobs withdrawn at the dbd before their hold: apply each record to the core in
    /// the same call as the hold ([`crate::core::federation::on_fed_info`]).
    pub withdrawn: Vec<FedInfo>,
}

/// `scontrol hold|uhold|release|requeue|requeuehold|suspend|resume` of federated jobs. The
/// jobs handled leave `r.jobs`; an origin job to hold stays, withdrawn from its siblings first.
pub async fn control(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    action: JobAction,
    r: &mut ControlJobRequest,
) -> ControlSplit {
    let mut split = ControlSplit::default();
    let errors = &mut split.errors;
    let mut keep = Vec::new();
    for text in std::mem::take(&mut r.jobs) {
        let Some(id) = plain(&text) else {
            keep.push(text);
            continue;
        };
        let (route, uid) = match route::route(fed, core, id).await {
            Ok((Route::Local, _)) => {
                keep.push(text);
                continue;
            }
            Ok(x) => x,
            Err(s) => {
                errors.push(error(id.get(), &text, s.message()));
                continue;
            }
        };
        if let Err(s) = authorize(caller, uid) {
            errors.push(error(id.get(), &text, s.message()));
            continue;
        }
        let target = match action {
            JobAction::Requeue | JobAction::RequeueHold => {
                let hold = action == JobAction::RequeueHold;
                if let Err(s) = route::requeue(fed, core, id, hold).await {
                    errors.push(error(id.get(), &text, s.message()));
                }
                continue;
            }
            // Holds and releases are the origin's.
            JobAction::Hold | JobAction::Uhold | JobAction::Release => match &route {
                Route::Copy {
                    origin_here: true, ..
                } if action == JobAction::Release => None,
                Route::Copy {
                    origin_here: true, ..
                } => match route::withdraw_first(fed, core, id).await {
                    Ok(info) => {
                        split.withdrawn.extend(info);
                        None
                    }
                    Err(s) => Some(Err(s)),
                },
                Route::Copy { origin, .. } => Some(Ok(origin.clone())),
                _ => Some(origin_of(fed, id).await),
            },
            // Suspend and resume are the running cluster's.
            _ => match running_on(fed, &route, id).await {
                Ok(c) if c == fed.cluster => None,
                Ok(c) if c.is_empty() => Some(Err(CtldError::JobPending.into())),
                other => Some(other),
            },
        };
        let cluster = match target {
            None => {
                keep.push(text);
                continue;
            }
            Some(Ok(c)) => c,
            Some(Err(s)) => {
                errors.push(error(id.get(), &text, s.message()));
                continue;
            }
        };
        let req = ControlJobRequest {
            action: action.into(),
            jobs: vec![text.clone()],
        };
        match route::member_client(fed, core, &cluster, caller).await {
            Ok(mut c) => match c.control_job(req).await {
                Ok(reply) => errors.extend(reply.into_inner().errors),
                Err(s) => errors.push(error(id.get(), &text, s.message())),
            },
            Err(s) => errors.push(error(id.get(), &text, s.message())),
        }
    }
    r.jobs = keep;
    split
}

async fn origin_of(fed: &FedHandle, id: FedJobId) -> Result<String, Status> {
    let mut client = fed.client.clone();
    let req = sluice_wire::proto::FedJobRequest {
        cluster: fed.cluster.clone(),
        job_id: id.get(),
    };
    Ok(client.get_fed_job(req).await?.into_inner().origin)
}

/// What [`update`] leaves for the usual path.
#[derive(Debug, Default)]
pub struct UpdateSplit {
    /// Errors of the jobs handled here.
    pub errors: Vec<JobError>,
    /// Origin jobs updated here whose siblings get the new description afterwards.
    pub push: Vec<FedJobId>,
    /// Origin jobs withdrawn at the dbd before a new dependency: apply each record to the
    /// core in the same call as the update ([`crate::core::federation::on_fed_info`]).
    pub withdrawn: Vec<FedInfo>,
}

/// Whether `settings` give a job a dependency (not clear it).
fn adds_dependency(settings: &[EnvVar]) -> bool {
    settings
        .iter()
        .any(|s| s.name.eq_ignore_ascii_case("dependency") && !s.value.trim().is_empty())
}

/// `scontrol update job` of federated jobs: `Clusters=` / `ClusterFeatures=` through the dbd;
/// other settings forwarded to the cluster running the job, or to the origin of a pending
/// one. Handled jobs (and the federation settings) leave `r`.
pub async fn update(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    r: &mut UpdateJobRequest,
) -> UpdateSplit {
    let mut split = UpdateSplit::default();
    let original: Vec<EnvVar> = r.settings.clone();
    let (mut clusters, mut features) = (None, None);
    r.settings
        .retain(|s| match s.name.to_ascii_lowercase().as_str() {
            "clusters" => {
                clusters = Some(s.value.clone());
                false
            }
            "clusterfeatures" => {
                features = Some(s.value.clone());
                false
            }
            _ => true,
        });
    let fed_settings = clusters.is_some() || features.is_some();
    let others = !r.settings.is_empty();
    let mut keep = Vec::new();
    for text in std::mem::take(&mut r.jobs) {
        let route = match plain(&text) {
            Some(id) => route::route(fed, core, id).await.map(|x| (id, x)),
            None => Err(CtldError::InvalidJobId.into()),
        };
        let (id, (route, uid)) = match route {
            Ok(x) => x,
            Err(_) if !fed_settings => {
                keep.push(text);
                continue;
            }
            Err(s) => {
                split.errors.push(error(0, &text, s.message()));
                continue;
            }
        };
        let origin = match &route {
            Route::Local => {
                if fed_settings {
                    let e = CtldError::JobNotFederated.to_string();
                    split.errors.push(error(id.get(), &text, &e));
                }
                if others {
                    keep.push(text);
                }
                continue;
            }
            Route::Copy {
                origin_here: true, ..
            } => None,
            Route::Copy { origin, .. } => Some(origin.clone()),
            Route::Foreign => match origin_of(fed, id).await {
                Ok(o) => Some(o),
                Err(s) => {
                    split.errors.push(error(id.get(), &text, s.message()));
                    continue;
                }
            },
        };
        if let Err(s) = authorize(caller, uid) {
            split.errors.push(error(id.get(), &text, s.message()));
            continue;
        }
        // A running job's settings are the running cluster's (Slurm's origin passes them
        // there); a pending job's are its origin's, which sends them on to the siblings.
        let running = match others {
            true => match running_on(fed, &route, id).await {
                Ok(c) => c,
                Err(s) => {
                    split.errors.push(error(id.get(), &text, s.message()));
                    continue;
                }
            },
            false => String::new(),
        };
        let target = match running.as_str() {
            "" => origin,
            c if c == fed.cluster => None,
            c => Some(c.to_string()),
        };
        if let Some(target) = target {
            let req = UpdateJobRequest {
                jobs: vec![text.clone()],
                settings: original.clone(),
            };
            match route::member_client(fed, core, &target, caller).await {
                Ok(mut c) => match c.update_job(req).await {
                    Ok(reply) => split.errors.extend(reply.into_inner().errors),
                    Err(s) => split.errors.push(error(id.get(), &text, s.message())),
                },
                Err(s) => split.errors.push(error(id.get(), &text, s.message())),
            }
            continue;
        }
        if fed_settings
            && let Err(s) =
                route::update(fed, core, id, clusters.clone(), features.clone(), None).await
        {
            split.errors.push(error(id.get(), &text, s.message()));
            continue;
        }
        if others && adds_dependency(&r.settings) {
            match route::withdraw_first(fed, core, id).await {
                Ok(info) => split.withdrawn.extend(info),
                Err(s) => {
                    split.errors.push(error(id.get(), &text, s.message()));
                    continue;
                }
            }
        }
        if others {
            keep.push(text);
            split.push.push(id);
        }
    }
    r.jobs = keep;
    split
}
