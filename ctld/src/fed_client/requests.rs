//! What the core asks of the dbd, carried out: each request runs in a task of its own and its
//! outcome goes back into the core.
//!
//! The start: `StartFedJob` takes the dbd's start lock and commits the start in one
//! transaction; only a start the dbd answered `started` launches the job
//! ([`on_start_committed`]). A refusal, or no answer, gives the reservation back and the job
//! asks again later. The dbd answers a job it already records as started here `started` again,
//! so a start whose answer was lost (or that a restart forgot) is launched at the next attempt:
//! launches follow commits, and a start is never launched twice.
//!
//! Run ends, offers, withdrawals and the withdrawal of a submission the dbd never answered are
//! retried until the dbd answers; the core keeps them in the job's saved state until then, so
//! a restart sends them again ([`Sender::recover`]).

use super::route::NotRecorded;
use super::{Backoff, FedHandle, convert};
use crate::core::federation::{
    self, CommitOutcome, EndReport, FedRecord, FedRequest, on_end_reported, on_offer_synced,
    on_start_committed, on_start_refused, on_submission_withdrawn,
};
use crate::runtime::{CoreHandle, Kick};
use sluice_vocab::FedJobId;
use sluice_wire::proto::{
    FedJobEndedRequest, FedJobRequest, FedOfferRequest, FedStartRequest, FedSubmitRequest,
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
        FedRequest::StartLock { job, offer } => start(&fed, &core, job, offer).await,
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

/// Starts the job at the dbd (`StartFedJob`: lock and commit in one, the origin's offer with
/// them when `offer` carries it), then launches it or gives the reservation back. A request
/// without an answer is given up like a refusal: if it went through, the job's next attempt
/// here is answered `started` and launches it then (the dbd records this cluster as the
/// winner, so no other cluster starts it meanwhile). A dbd that predates carried offers
/// ignores `offer` and refuses the start of the held job; the offer then goes alone.
async fn start(fed: &FedHandle, core: &CoreHandle, job: FedJobId, offer: Option<Vec<u8>>) {
    let mut client = fed.client.clone();
    let req = FedStartRequest {
        cluster: fed.cluster.clone(),
        job_id: job.get(),
        offer,
    };
    match client.start_fed_job(req).await {
        Ok(r) if r.get_ref().started => committed(fed, core, job).await,
        Ok(r) => {
            tracing::debug!(%job, "start refused: {}", r.get_ref().message);
            refused(core, job, crate::core::federation::start::RETRY_SECS).await;
        }
        Err(status) => {
            tracing::debug!(%job, "start not answered: {}", status.message());
            refused(core, job, UNANSWERED_RETRY_SECS).await;
        }
    }
}

/// Seconds a job waits before asking to start again after a request the dbd did not answer.
const UNANSWERED_RETRY_SECS: u64 = 5;

async fn committed(fed: &FedHandle, core: &CoreHandle, job: FedJobId) {
    // A launch on the job's reservation frees nothing and queues nothing: no pass needs to
    // follow (the narrow pass finds no new job); any other outcome may free resources.
    let outcome = core
        .submit(move |cx| {
            let outcome = on_start_committed(cx.core, cx.out, cx.now, job);
            if outcome != CommitOutcome::Launched {
                cx.pass_after(Kick::Full);
            }
            outcome
        })
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
    // The dbd's answer to an offer only confirms it, as a rule: the job may start here now
    // and the pass after considers it alone (`on_offer_synced`); a withdrawal, or a record
    // that changed meanwhile (started elsewhere, cancelled, not active here), asks for more.
    let _ = core
        .submit(move |cx| {
            on_offer_synced(cx.core, cx.out, job, offered);
            let confirmed = reply.as_ref().is_none_or(|i| {
                i.phase == federation::InfoPhase::Pending
                    && i.active.iter().any(|c| c == cx.core.me())
            });
            if !offered || !confirmed {
                cx.pass_after(Kick::Full);
            }
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
