//! The `Controller` service's federated paths. The service hands each request here first;
//! what concerns federated jobs is done through the dbd (which records it and tells the other
//! clusters) and applied to the local copy, the rest goes on to the usual handlers.
//!
//! - submission: validated here, recorded at the dbd (again while no answer comes, for a few
//!   seconds, then withdrawn), then schedulable ([`submit`]);
//! - cancel: `CancelFedJob` (pending: every copy; running: the cluster running it);
//!   `scancel --sibling=C`: `RemoveSibling`; a signal to a run elsewhere is forwarded;
//! - `scontrol requeue[hold]`: `RequeueFedJob` (the running cluster kills and reports);
//! - hold/release of another cluster's job, and updates of a pending one: forwarded to its
//!   origin; suspend/resume and updates of a running job: to the cluster running it
//!   (addresses from the federation view), signed as the caller;
//! - `scontrol update clusters=|clusterfeatures=`: `UpdateFedJob`.

use super::{FedHandle, convert};
use crate::core::federation::{
    self, FedDesc, FedInfo, FedRecord, FedSubmit, InfoPhase, OriginSubmit, Route,
};
use crate::core::{Caller, SubmitRequest};
use crate::error::CtldError;
use crate::runtime::{CoreHandle, Ctx, Kick, Msg, batch};
use sluice_vocab::FedJobId;
use sluice_wire::auth::Signer;
use sluice_wire::client::{CtldClient, connect};
use sluice_wire::proto::controller_client::ControllerClient;
use sluice_wire::proto::{
    FedCancelRequest, FedJobRequest, FedRequeueRequest, FedSubmitRequest, FedUpdateRequest,
    RemoveSiblingRequest,
};
use std::time::Duration;
use tonic::Status;

/// How long `sbatch` waits for the dbd to record a federated submission before it is told
/// the submission failed (and the origin withdraws it).
const RECORD_FOR: Duration = Duration::from_secs(5);
/// The longest wait for one answer (a dbd that took the request and went silent).
const ANSWER_FOR: Duration = Duration::from_secs(2);
/// Slurm's `ESLURM_DB_CONNECTION`: what the submitter reads when the dbd never answered.
const DB_CONNECTION: &str = "Unable to connect to database";

/// Why a submission was not recorded.
#[derive(Debug)]
pub enum NotRecorded {
    /// The dbd answered no to the first request that reached it (nothing of it recorded).
    Refused(Status),
    /// No answer in time, or a refusal after a request whose answer was lost: it may or may
    /// not have been recorded, so it must be withdrawn.
    Unanswered(Status),
}

/// Records `rec` at the dbd (always held: the origin offers it once it has the answer). The
/// same submission is sent again while no answer comes (the dbd answers a repeat with its
/// record), until `within` has passed (`None`: until the dbd answers). A refusal proves that
/// nothing was recorded only when no earlier request may have been: once an answer was lost
/// (the dbd may have recorded the job and then failed, restarted or changed), a refusal is
/// [`NotRecorded::Unanswered`], so the origin withdraws the submission rather than dropping
/// its copy alone and leaving the dbd's record pending (the soak's "refused federated
/// submissions ran").
pub async fn record(
    fed: &FedHandle,
    rec: &FedRecord,
    within: Option<Duration>,
) -> Result<FedInfo, NotRecorded> {
    let mut client = fed.client.clone();
    let req = FedSubmitRequest {
        cluster: fed.cluster.clone(),
        job_id: rec.reply.job_id.get(),
        desc: rec.desc.clone(),
        clusters: rec.clusters.clone(),
        cluster_features: rec.features.clone(),
        held: true,
        array: rec.array,
    };
    let deadline = within.map(|d| tokio::time::Instant::now() + d);
    let mut backoff = super::Backoff::new();
    let mut maybe_recorded = false;
    loop {
        let answer = tokio::time::timeout(ANSWER_FOR, client.submit_fed_job(req.clone())).await;
        let status = match answer {
            Ok(Ok(info)) => {
                // Recorded, whatever the answer says: withdrawn if it cannot be read.
                return convert::info(info.into_inner()).ok_or_else(|| {
                    NotRecorded::Unanswered(Status::internal("Invalid job id specified"))
                });
            }
            Ok(Err(status)) if !convert::retryable(&status) => {
                return Err(if maybe_recorded {
                    NotRecorded::Unanswered(status)
                } else {
                    NotRecorded::Refused(status)
                });
            }
            Ok(Err(status)) => status,
            Err(_) => Status::deadline_exceeded("no answer from the dbd"),
        };
        maybe_recorded = true;
        tracing::debug!(job = %rec.reply.job_id, "no answer recording it: {}", status.message());
        match deadline {
            Some(at) => {
                if tokio::time::timeout_at(at, backoff.wait()).await.is_err() {
                    return Err(NotRecorded::Unanswered(status));
                }
            }
            None => backoff.wait().await,
        }
    }
}

/// `sbatch` in a federation: validated here, recorded at the dbd, then queued. Returns the
/// job id (an array's id for an array). Without an answer from the dbd in time the submitter
/// gets "Unable to connect to database" and the job is withdrawn (see `core::federation::submit`).
///
/// Once the job is created (`Registering`, committed), the rest runs in a task of its own: a
/// submitter that hangs up does not leave the job half way (recorded at the dbd but never
/// learnt here, or withdrawn by nobody).
pub async fn submit(
    fed: Option<&FedHandle>,
    core: &CoreHandle,
    req: SubmitRequest,
    opts: FedSubmit,
) -> Result<FedJobId, Status> {
    let outcome = core
        .submit(move |cx| federation::on_fed_submit(cx.core, cx.out, cx.now, req, opts))
        .await??;
    let rec = match outcome {
        OriginSubmit::Local(reply) => return Ok(reply.job_id),
        OriginSubmit::Federated(rec) => rec,
    };
    let (fed, core) = (fed.cloned(), core.clone());
    // The submitter's deadline is this handler's (a task-local): the task gets it by hand.
    let deadline = sluice_wire::deadline::current();
    tokio::spawn(async move { record_and_queue(fed.as_ref(), &core, rec, deadline).await })
        .await
        .map_err(|_| Status::internal("submission task failed"))?
}

/// How soon a refused commit of a recorded submission is tried again.
const STORE_RETRY: Duration = Duration::from_millis(500);

/// The second step of [`submit`]: records `rec` at the dbd and tells the core the outcome.
///
/// On success the submitter is answered as soon as the dbd recorded the job: the core learns
/// it (`on_fed_recorded`) in a request queued before the answer leaves, so every later request
/// finds the job recorded, and the change is committed with the core's next batch. Waiting for
/// that commit is not needed: the job's `Registering` state was committed before the dbd was
/// asked, so a controller that stops before the commit finds it `Registering` again after its
/// restart and records it again (`Sender::recover`), and the dbd answers a repeated submission
/// with the record the submitter was told about. The offer to the siblings is made by that
/// request and released only after its commit, so no sibling is offered a job before its origin
/// durably learnt it was recorded. A refusal or no answer is reported only after the core
/// committed the job's removal or withdrawal, as a failure must never be followed by a run.
/// An answer that comes too late for the submitter (`deadline`, its client's, less
/// `ANSWER_MARGIN`) counts as none: the submitter is about to say the submission failed, so
/// the job is withdrawn (it was recorded held and never offered).
async fn record_and_queue(
    fed: Option<&FedHandle>,
    core: &CoreHandle,
    rec: FedRecord,
    deadline: Option<std::time::SystemTime>,
) -> Result<FedJobId, Status> {
    let jobs = rec.reply.jobs.clone();
    let recorded = match fed {
        Some(fed) => record(fed, &rec, Some(RECORD_FOR)).await,
        None => Err(NotRecorded::Refused(Status::unavailable(
            "Unable to contact slurm controller (connect failure)",
        ))),
    };
    let recorded = match recorded {
        Ok(_) if sluice_wire::deadline::too_late(deadline, std::time::SystemTime::now()) => {
            Err(NotRecorded::Unanswered(Status::deadline_exceeded(
                "recorded after the submitter's deadline",
            )))
        }
        other => other,
    };
    match recorded {
        Ok(info) => {
            // A pending record only lets the new jobs start: the pass after it considers
            // them alone (`core::fresh`); any other answer changes more.
            let kick = if info.phase == InfoPhase::Pending {
                Kick::Submitted
            } else {
                Kick::Full
            };
            let apply = move |cx: &mut Ctx<'_>| {
                federation::on_fed_recorded(cx.core, cx.out, cx.now, &jobs, &info);
            };
            let retry = core.clone();
            core.post(Msg::Call {
                job: Box::new(move |cx: &mut Ctx<'_>| -> batch::Reply {
                    apply(cx);
                    // Nobody waits for this commit (see above). If the store could not take it,
                    // the core went back to its saved state (the job `Registering`): record the
                    // answer again until it is saved.
                    Box::new(move |outcome| {
                        if outcome == batch::Outcome::Refused {
                            tokio::spawn(async move {
                                let _ = retry.call_until_saved(apply, STORE_RETRY).await;
                            });
                        }
                    })
                }),
                kick,
            });
            Ok(rec.reply.job_id)
        }
        Err(NotRecorded::Refused(status)) => {
            core.call(move |cx| federation::on_fed_submit_failed(cx.core, cx.out, &jobs))
                .await?;
            Err(Status::new(status.code(), status.message().to_string()))
        }
        Err(NotRecorded::Unanswered(status)) => {
            tracing::warn!(
                job = %rec.reply.job_id,
                "federated submission not recorded in time, withdrawn: {}",
                status.message()
            );
            let withdrawn = core
                .call(move |cx| federation::on_fed_submit_abandoned(cx.core, cx.out, &jobs))
                .await?;
            if withdrawn {
                // Not `Unavailable`: the commands read that as the controller being away.
                Err(Status::aborted(DB_CONNECTION))
            } else {
                Ok(rec.reply.job_id)
            }
        }
    }
}

/// The way requests about `id` go, with its owner (from the dbd for a job without a copy
/// here).
pub async fn route(
    fed: &FedHandle,
    core: &CoreHandle,
    id: FedJobId,
) -> Result<(Route, u32), Status> {
    let route = core.query(move |cx| cx.core.fed_route(id)).await?;
    let uid = match &route {
        Route::Copy { uid, .. } => *uid,
        Route::Local => 0,
        Route::Foreign => {
            let info = fed_job(fed, id).await?;
            FedDesc::decode(&info.desc).map_or(0, |d| d.uid)
        }
    };
    Ok((route, uid))
}

async fn fed_job(fed: &FedHandle, id: FedJobId) -> Result<sluice_wire::proto::FedJobInfo, Status> {
    let mut client = fed.client.clone();
    let req = FedJobRequest {
        cluster: fed.cluster.clone(),
        job_id: id.get(),
    };
    Ok(client.get_fed_job(req).await?.into_inner())
}

/// Checks that `caller` may act on a job of `uid`.
pub fn authorize(caller: Caller, uid: u32) -> Result<(), Status> {
    if caller.admin || caller.uid == uid {
        Ok(())
    } else {
        Err(CtldError::AccessDenied.into())
    }
}

/// Cancels federated job `id` everywhere (a pending job), or where it runs, on behalf of
/// `caller` (its records say `CANCELLED by <uid>`).
pub async fn cancel(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    id: FedJobId,
) -> Result<(), Status> {
    let mut client = fed.client.clone();
    let requester_uid = Some(caller.uid);
    let req = FedCancelRequest {
        cluster: fed.cluster.clone(),
        job_id: id.get(),
        requester_uid,
    };
    let reply = client.cancel_fed_job(req).await?.into_inner();
    let running_on = if reply.cancelled {
        String::new()
    } else {
        reply.running_on
    };
    core.call(move |cx| {
        federation::on_fed_cancelled(cx.core, cx.out, cx.now, id, &running_on, requester_uid);
    })
    .await?;
    Ok(())
}

/// `scancel --sibling=C id`.
pub async fn remove_sibling(
    fed: &FedHandle,
    core: &CoreHandle,
    id: FedJobId,
    sibling: &str,
) -> Result<(), Status> {
    let mut client = fed.client.clone();
    let req = RemoveSiblingRequest {
        cluster: fed.cluster.clone(),
        job_id: id.get(),
        sibling: sibling.to_string(),
    };
    let info = client.remove_sibling(req).await?.into_inner();
    apply(core, info).await
}

/// Before a hold or a new dependency takes effect on origin job `id`: a job offered to its
/// siblings is withdrawn at the dbd first (every other sibling revoked, a start lock in flight
/// dropped so its commit is refused), so no sibling starts a job its origin has just held.
/// `Ok(None)`: nothing to withdraw, or the dbd is out of reach (the scheduling pass withdraws
/// it once the dbd answers). An error is the dbd's refusal ("Job is no longer pending
/// execution": it started meanwhile). The caller applies the returned record to the core
/// together with the hold or the update.
pub async fn withdraw_first(
    fed: &FedHandle,
    core: &CoreHandle,
    id: FedJobId,
) -> Result<Option<FedInfo>, Status> {
    let offered = core
        .query(move |cx| {
            cx.core.job(id).is_some_and(|j| {
                j.is_queued()
                    && j.fed.as_deref().is_some_and(|f| {
                        f.origin_here && f.offered && f.phase == federation::FedPhase::Recorded
                    })
            })
        })
        .await?;
    if !offered {
        return Ok(None);
    }
    let mut client = fed.client.clone();
    let req = FedJobRequest {
        cluster: fed.cluster.clone(),
        job_id: id.get(),
    };
    match client.withdraw_fed_job(req).await {
        Ok(info) => Ok(convert::info(info.into_inner())),
        Err(status) if convert::retryable(&status) => Ok(None),
        Err(status) => Err(status),
    }
}

/// `scontrol requeue[hold] id` of a federated job: the cluster running it requeues it.
pub async fn requeue(
    fed: &FedHandle,
    core: &CoreHandle,
    id: FedJobId,
    hold: bool,
) -> Result<(), Status> {
    let mut client = fed.client.clone();
    let req = FedRequeueRequest {
        cluster: fed.cluster.clone(),
        job_id: id.get(),
        hold,
    };
    let running_on = client.requeue_fed_job(req).await?.into_inner().running_on;
    if running_on == fed.cluster {
        core.call(move |cx| federation::on_fed_requeue(cx.core, cx.out, cx.now, id, hold))
            .await?;
    }
    Ok(())
}

/// `scontrol update jobid=id clusters=... clusterfeatures=...` (`None`: unchanged), with a
/// new description when `desc` is given.
pub async fn update(
    fed: &FedHandle,
    core: &CoreHandle,
    id: FedJobId,
    clusters: Option<String>,
    features: Option<String>,
    desc: Option<Vec<u8>>,
) -> Result<(), Status> {
    let mut client = fed.client.clone();
    let req = FedUpdateRequest {
        cluster: fed.cluster.clone(),
        job_id: id.get(),
        clusters,
        cluster_features: features,
        desc,
    };
    let info = client.update_fed_job(req).await?.into_inner();
    apply(core, info).await
}

/// After a local update of origin job `id`, its siblings get the new description.
pub async fn push_description(fed: &FedHandle, core: &CoreHandle, id: FedJobId) {
    let desc = core
        .query(move |cx| {
            let job = cx.core.job(id)?;
            let origin = job
                .fed
                .as_deref()
                .is_some_and(|f| f.origin_here && f.offered);
            (origin && job.is_queued()).then(|| federation::report::desc_of(cx.core, job))
        })
        .await;
    if let Ok(Some(desc)) = desc
        && let Err(status) = update(fed, core, id, None, None, Some(desc)).await
    {
        tracing::debug!(%id, "new description not sent to siblings: {}", status.message());
    }
}

async fn apply(core: &CoreHandle, info: sluice_wire::proto::FedJobInfo) -> Result<(), Status> {
    if let Some(info) = convert::info(info) {
        core.call(move |cx| federation::on_fed_info(cx.core, cx.out, cx.now, &info))
            .await?;
    }
    Ok(())
}

/// A client of member `cluster`'s controller, signed as `caller` (for forwarded requests).
pub async fn member_client(
    fed: &FedHandle,
    core: &CoreHandle,
    cluster: &str,
    caller: Caller,
) -> Result<CtldClient, Status> {
    let name = cluster.to_string();
    let addr = core
        .query(move |cx| {
            cx.core
                .fed_view()
                .member(&name)
                .map(|m| (m.host.clone(), m.port))
        })
        .await?;
    let Some((host, port)) = addr.filter(|(h, p)| !h.is_empty() && *p > 0) else {
        return Err(Status::unavailable(format!(
            "Unable to contact slurm controller of cluster {cluster}"
        )));
    };
    let port = u16::try_from(port).map_err(|_| Status::unavailable("bad controller port"))?;
    let channel = connect(&host, port, Signer::new(fed.key.clone(), caller.uid))
        .await
        .map_err(|e| Status::unavailable(format!("cluster {cluster}: {e}")))?;
    Ok(ControllerClient::new(channel))
}

/// The cluster running federated job `id` ("" when it is not running).
pub async fn running_on(fed: &FedHandle, id: FedJobId) -> Result<String, Status> {
    let info = fed_job(fed, id).await?;
    let started = info.phase == i32::from(sluice_wire::proto::FedPhase::Started);
    Ok(if started { info.winner } else { String::new() })
}
