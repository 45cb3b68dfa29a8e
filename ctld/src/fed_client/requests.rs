//! What the core asks of the dbd, carried out: each request runs in a task of its own and its
//! outcome goes back into the core.
//!
//! The start lock: `AcquireStartLock` (lease [`LEASE_SECS`]), then `CommitStart` with the token;
//! only a commit the dbd answered `started` launches the job ([`on_start_committed`]). A commit
//! whose answer was lost is sent again with the same token (the dbd answers a repeat of its
//! own commit `started` again) until the dbd answers one way or the other, so a start is never
//! both launched here and given up. A refusal gives the reservation back. A refusal saying the
//! job is no longer pending, for a job the dbd says this cluster started, is a commit whose
//! answer a restart lost: the job is launched now (it never was: launches follow commits).
//!
//! Run ends, offers, withdrawals and the withdrawal of a submission the dbd never answered are
//! retried until the dbd answers; the core keeps them in the job's saved state until then, so
//! a restart sends them again ([`Sender::recover`]).

use super::route::NotRecorded;
use super::{Backoff, FedHandle, LEASE_SECS, convert};
use crate::core::federation::{
    self, CommitOutcome, EndReport, FedRecord, FedRequest, on_end_reported, on_offer_synced,
    on_start_committed, on_start_refused, on_submission_withdrawn,
};
use crate::runtime::CoreHandle;
use sluice_vocab::FedJobId;
use sluice_wire::proto::{
    CommitStartRequest, FedJobEndedRequest, FedJobRequest, FedOfferRequest, FedSubmitRequest,
    LockRefusal, StartLockRequest,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Sends requests to the executor from within the federation client.
#[derive(Clone)]
pub struct Sender {
    tx: UnboundedSender<FedRequest>,
    fed: FedHandle,
    core: CoreHandle,
}

impl Sender {
    /// Resends what a restart left owed: submissions to record (until the dbd answers:
    /// nobody waits on them), withdrawals, run ends, offers.
    pub async fn recover(&self) {
        let Ok((records, owed)) = self
            .core
            .query(|cx| {
                let mut owed = federation::withdrawals(cx.core);
                owed.extend(federation::unsynced(cx.core));
                (federation::resubmissions(cx.core), owed)
            })
            .await
        else {
            return;
        };
        for req in owed {
            let _ = self.tx.send(req);
        }
        for rec in records {
            let (fed, core) = (self.fed.clone(), self.core.clone());
            tokio::spawn(async move {
                let jobs = rec.reply.jobs.clone();
                match super::route::record(&fed, &rec, None).await {
                    Ok(info) => {
                        let _ = core
                            .call(move |cx| {
                                federation::on_fed_recorded(cx.core, cx.out, cx.now, &jobs, &info)
                            })
                            .await;
                    }
                    // Asked before the restart too: whatever the dbd recorded then is
                    // withdrawn, not left pending while the origin forgets the job.
                    Err(NotRecorded::Refused(status) | NotRecorded::Unanswered(status)) => {
                        tracing::warn!(
                            "federated job {} refused when recorded again, withdrawn: {}",
                            rec.reply.job_id,
                            status.message()
                        );
                        let _ = core
                            .call(move |cx| {
                                federation::on_fed_submit_abandoned(cx.core, cx.out, &jobs)
                            })
                            .await;
                    }
                }
            });
        }
    }
}

/// Runs the core's requests.
pub struct Executor {
    fed: FedHandle,
    core: CoreHandle,
    rx: UnboundedReceiver<FedRequest>,
}

impl Executor {
    /// An executor, and a sender feeding it.
    pub fn new(fed: FedHandle, core: CoreHandle) -> (Sender, Executor) {
        let (tx, rx) = unbounded_channel();
        let sender = Sender {
            tx,
            fed: fed.clone(),
            core: core.clone(),
        };
        (sender, Executor { fed, core, rx })
    }

    /// Runs requests from the core (`reqs`) and from the client itself until both close.
    pub async fn run(mut self, mut reqs: UnboundedReceiver<FedRequest>) {
        loop {
            let req = tokio::select! {
                r = reqs.recv() => r,
                r = self.rx.recv() => r,
            };
            let Some(req) = req else {
                return;
            };
            let (fed, core) = (self.fed.clone(), self.core.clone());
            tokio::spawn(async move { execute(fed, core, req).await });
        }
    }
}

async fn execute(fed: FedHandle, core: CoreHandle, req: FedRequest) {
    match req {
        FedRequest::StartLock { job } => start(&fed, &core, job).await,
        FedRequest::Ended { job, report } => ended(&fed, &core, job, report).await,
        FedRequest::Offer { job, desc } => offer(&fed, &core, job, Some(desc)).await,
        FedRequest::Withdraw { job } => offer(&fed, &core, job, None).await,
        FedRequest::WithdrawSubmission { record } => withdraw_submission(&fed, &core, record).await,
        FedRequest::Reject { job } => {
            let mut client = fed.client.clone();
            let req = FedJobRequest {
                cluster: fed.cluster.clone(),
                job_id: job.get(),
            };
            let mut backoff = Backoff::new();
            while let Err(status) = client.reject_sibling(req.clone()).await {
                if !convert::retryable(&status) {
                    break;
                }
                backoff.wait().await;
            }
        }
    }
}

/// Acquire, commit, then launch or release.
async fn start(fed: &FedHandle, core: &CoreHandle, job: FedJobId) {
    let mut client = fed.client.clone();
    let acquire = StartLockRequest {
        cluster: fed.cluster.clone(),
        job_id: job.get(),
        lease_secs: LEASE_SECS,
    };
    let reply = match client.acquire_start_lock(acquire).await {
        Ok(r) => r.into_inner(),
        Err(status) => {
            tracing::debug!(%job, "start lock not acquired: {}", status.message());
            return refused(core, job, 5).await;
        }
    };
    if !reply.granted {
        let refusal = LockRefusal::try_from(reply.refusal).unwrap_or(LockRefusal::None);
        if refusal == LockRefusal::NotPending && started_here(fed, job).await {
            return committed(fed, core, job).await;
        }
        return refused(core, job, crate::core::federation::start::RETRY_SECS).await;
    }
    let commit = CommitStartRequest {
        cluster: fed.cluster.clone(),
        job_id: job.get(),
        token: reply.token,
    };
    let mut backoff = Backoff::new();
    loop {
        match client.commit_start(commit.clone()).await {
            Ok(r) if r.get_ref().started => return committed(fed, core, job).await,
            Ok(_) => return refused(core, job, crate::core::federation::start::RETRY_SECS).await,
            Err(status) if convert::retryable(&status) => {
                tracing::debug!(%job, "commit answer lost, asking again: {}", status.message());
                backoff.wait().await;
            }
            Err(status) => {
                tracing::warn!(%job, "start commit refused: {}", status.message());
                return refused(core, job, crate::core::federation::start::RETRY_SECS).await;
            }
        }
    }
}

/// Whether the dbd records `job` as started on this cluster.
async fn started_here(fed: &FedHandle, job: FedJobId) -> bool {
    let mut client = fed.client.clone();
    let req = FedJobRequest {
        cluster: fed.cluster.clone(),
        job_id: job.get(),
    };
    match client.get_fed_job(req).await {
        Ok(info) => {
            let info = info.into_inner();
            info.phase == i32::from(sluice_wire::proto::FedPhase::Started)
                && info.winner == fed.cluster
        }
        Err(_) => false,
    }
}

async fn committed(fed: &FedHandle, core: &CoreHandle, job: FedJobId) {
    let outcome = core
        .call(move |cx| on_start_committed(cx.core, cx.out, cx.now, job))
        .await;
    if matches!(outcome, Ok(CommitOutcome::Unknown)) {
        // Started at the dbd for a job this controller no longer has: it ended at once.
        let report = EndReport {
            state: sluice_vocab::JobState::Cancelled.stored(),
            exit_code: 0,
            requeue: federation::FedRequeue::None,
        };
        ended(fed, core, job, report).await;
    }
}

async fn refused(core: &CoreHandle, job: FedJobId, retry_secs: u64) {
    let _ = core
        .call(move |cx| on_start_refused(cx.core, cx.out, cx.now, job, retry_secs))
        .await;
}

/// `FedJobEnded`, until the dbd has it. An array task's report is its array's, whose record
/// is under the array's id.
async fn ended(fed: &FedHandle, core: &CoreHandle, job: FedJobId, report: EndReport) {
    let mut client = fed.client.clone();
    let record = core
        .query(move |cx| cx.core.job(job).and_then(|j| j.array).map(|a| a.job))
        .await
        .ok()
        .flatten()
        .unwrap_or(job);
    let req = FedJobEndedRequest {
        cluster: fed.cluster.clone(),
        job_id: record.get(),
        state: report.state,
        exit_code: report.exit_code,
        requeue: convert::wire_requeue(report.requeue),
    };
    let mut backoff = Backoff::new();
    let info = loop {
        match client.fed_job_ended(req.clone()).await {
            Ok(info) => break convert::info(info.into_inner()),
            Err(status) if convert::retryable(&status) => backoff.wait().await,
            // Already applied (a repeat after a restart), or no longer ours to report.
            Err(status) => {
                tracing::debug!(%job, "run end report: {}", status.message());
                break None;
            }
        }
    };
    let _ = core
        .call(move |cx| on_end_reported(cx.core, cx.out, cx.now, job, info))
        .await;
}

/// `OfferFedJob` (with `desc`) or `WithdrawFedJob`, until the dbd answers.
async fn offer(fed: &FedHandle, core: &CoreHandle, job: FedJobId, desc: Option<Vec<u8>>) {
    let mut client = fed.client.clone();
    let offered = desc.is_some();
    let mut backoff = Backoff::new();
    let reply = loop {
        let result = match &desc {
            Some(d) => {
                let req = FedOfferRequest {
                    cluster: fed.cluster.clone(),
                    job_id: job.get(),
                    desc: Some(d.clone()),
                };
                client.offer_fed_job(req).await
            }
            None => {
                let req = FedJobRequest {
                    cluster: fed.cluster.clone(),
                    job_id: job.get(),
                };
                client.withdraw_fed_job(req).await
            }
        };
        match result {
            Ok(info) => break convert::info(info.into_inner()),
            Err(status) if convert::retryable(&status) => backoff.wait().await,
            Err(status) => {
                tracing::debug!(%job, "offer/withdraw: {}", status.message());
                break None;
            }
        }
    };
    let _ = core
        .call(move |cx| {
            on_offer_synced(cx.core, cx.out, job, offered);
            if let Some(info) = &reply {
                federation::on_fed_info(cx.core, cx.out, cx.now, info);
            }
        })
        .await;
}

/// `WithdrawFedSubmission` of a submission the dbd never answered, until the dbd answers; then
/// the origin drops the job ([`on_submission_withdrawn`]).
async fn withdraw_submission(fed: &FedHandle, core: &CoreHandle, record: FedRecord) {
    let mut client = fed.client.clone();
    let req = FedSubmitRequest {
        cluster: fed.cluster.clone(),
        job_id: record.reply.job_id.get(),
        desc: record.desc.clone(),
        clusters: record.clusters.clone(),
        cluster_features: record.features.clone(),
        held: true,
        array: record.array,
    };
    let mut backoff = Backoff::new();
    loop {
        match client.withdraw_fed_submission(req.clone()).await {
            Ok(_) => break,
            Err(status) if convert::retryable(&status) => backoff.wait().await,
            // Not ours to withdraw, or started: recorded before this origin held every
            // submission until answered (it never offered this one).
            Err(status) => {
                tracing::warn!(job = %record.reply.job_id, "submission withdrawal: {}", status.message());
                break;
            }
        }
    }
    let jobs = record.reply.jobs;
    let _ = core
        .call(move |cx| on_submission_withdrawn(cx.core, cx.out, &jobs))
        .await;
}
