//! Pure transitions of a federated job around its run: submission, the start lock (acquire,
//! commit, release), cancel, requeue and the end report. Each takes the job, the caller and
//! `now` (the dbd's clock) and returns the events to append, as `(cluster, event)`.
//!
//! Rule for events: a cluster is not told about a change it made itself (the caller applies
//! it locally); every other cluster holding a copy, and the origin, is told.

use std::collections::BTreeSet;

use sluice_vocab::JobState;

use super::error::FedError;
use super::types::{
    CancelOutcome, FedEventKind, FedJob, FedPhase, LockOutcome, LockRefusal, RequeueMode,
    StartLock, SubmitFedJob,
};

/// Events to append: the target cluster and the event.
pub type Emitted = Vec<(String, FedEventKind)>;

/// The job the origin records, with `viable` already computed, and the offers to send.
pub fn submit(
    req: &SubmitFedJob,
    federation: &str,
    viable: BTreeSet<String>,
    now: i64,
) -> (FedJob, Emitted) {
    let origin_viable = viable.contains(&req.origin);
    let mut job = FedJob {
        federation: federation.to_string(),
        job_id: req.job_id,
        origin: req.origin.clone(),
        phase: FedPhase::Pending,
        held: req.held,
        is_array: req.is_array,
        req_clusters: req.req_clusters.clone(),
        cluster_features: req.cluster_features.clone(),
        viable,
        active: BTreeSet::new(),
        lock: None,
        winner: None,
        requeue: RequeueMode::None,
        final_state: 0,
        exit_code: 0,
        version: 1,
        submit_time: now,
        start_time: 0,
        end_time: 0,
        desc: req.desc.clone(),
    };
    if origin_viable {
        job.active.insert(job.origin.clone());
    }
    let events = if job.held {
        Vec::new()
    } else {
        offer_to_siblings(&mut job)
    };
    (job, events)
}

/// Offers the job to every viable cluster other than the origin that holds no copy yet.
pub(super) fn offer_to_siblings(job: &mut FedJob) -> Emitted {
    let targets: Vec<String> = job
        .viable
        .iter()
        .filter(|c| **c != job.origin && !job.active.contains(*c))
        .cloned()
        .collect();
    let mut out = Vec::with_capacity(targets.len());
    for cluster in targets {
        job.active.insert(cluster.clone());
        out.push((cluster, offered(job)));
    }
    out
}

/// The offer event of `job`.
pub(super) fn offered(job: &FedJob) -> FedEventKind {
    FedEventKind::SiblingOffered {
        job_id: job.job_id,
        origin: job.origin.clone(),
        viable: job.viable.clone(),
        desc: job.desc.clone(),
    }
}

/// Grants `cluster` the start lock for `lease_secs` unless another cluster holds a live one
/// or the job cannot start there. Every grant has a new token, taken from the job's version,
/// so a stale token never matches: a holder asking again renews its lease under a new token
/// and its old token is void (two processes of one cluster never share a lock).
pub fn acquire(job: &mut FedJob, cluster: &str, lease_secs: u32, now: i64) -> LockOutcome {
    let refused = |reason| LockOutcome::Refused { reason };
    if job.phase != FedPhase::Pending {
        return refused(LockRefusal::NotPending);
    }
    if !job.active.contains(cluster) {
        return refused(LockRefusal::NotActiveHere);
    }
    if job.held {
        return refused(LockRefusal::Held);
    }
    if let Some(l) = job.live_lock(now).filter(|l| l.cluster != cluster) {
        return refused(LockRefusal::HeldBy {
            cluster: l.cluster.clone(),
            expires: l.expires,
        });
    }
    let (token, expires) = (job.version, now + i64::from(lease_secs));
    job.lock = Some(StartLock {
        cluster: cluster.to_string(),
        token,
        expires,
    });
    LockOutcome::Granted { token, expires }
}

/// Commits "started on `cluster`" if it holds the live lock `token`: records the winner, revokes
/// every other sibling and tells the origin. A repeated commit of the same start is accepted
/// again with no new events.
pub fn commit(
    job: &mut FedJob,
    cluster: &str,
    token: u64,
    now: i64,
) -> Result<Emitted, LockRefusal> {
    let holds = |job: &FedJob| {
        job.lock
            .as_ref()
            .is_some_and(|l| l.cluster == cluster && l.token == token)
    };
    if job.phase == FedPhase::Started && job.winner.as_deref() == Some(cluster) && holds(job) {
        return Ok(Vec::new());
    }
    if job.phase != FedPhase::Pending {
        return Err(LockRefusal::NotPending);
    }
    if !holds(job) || job.live_lock(now).is_none() {
        return Err(LockRefusal::LostLock);
    }
    job.phase = FedPhase::Started;
    job.winner = Some(cluster.to_string());
    job.start_time = now;
    let mut out = Vec::new();
    for other in job
        .active
        .iter()
        .filter(|c| **c != cluster && **c != job.origin)
    {
        let revoke = FedEventKind::SiblingRevoked {
            job_id: job.job_id,
            winner: Some(cluster.to_string()),
        };
        out.push((other.clone(), revoke));
    }
    if job.origin != cluster {
        let started = FedEventKind::JobStartedElsewhere {
            job_id: job.job_id,
            cluster: cluster.to_string(),
        };
        out.push((job.origin.clone(), started));
    }
    job.active = BTreeSet::from([cluster.to_string()]);
    Ok(out)
}

/// Starts the job on `cluster` in one step: [`acquire`] and [`commit`] at once, for a caller
/// that reserved its allocation before asking (it has nothing to do between the two). Refused
/// for the reasons `acquire` refuses. A job already started on `cluster` is answered as
/// started again with no new events: the caller's earlier request went through and its answer
/// was lost (or a restart lost it), and the start is the caller's to launch.
pub fn start_now(job: &mut FedJob, cluster: &str, now: i64) -> Result<Emitted, LockRefusal> {
    if job.phase == FedPhase::Started && job.winner.as_deref() == Some(cluster) {
        return Ok(Vec::new());
    }
    match acquire(job, cluster, 1, now) {
        LockOutcome::Granted { token, .. } => commit(job, cluster, token, now),
        LockOutcome::Refused { reason } => Err(reason),
    }
}

/// Gives up `cluster`'s lock `token` on a pending job; whether it held it.
pub fn release(job: &mut FedJob, cluster: &str, token: u64) -> bool {
    let holds = job
        .lock
        .as_ref()
        .is_some_and(|l| l.cluster == cluster && l.token == token);
    if job.phase == FedPhase::Pending && holds {
        job.lock = None;
        return true;
    }
    false
}

/// Cancels the job from `caller`: a pending job is cancelled everywhere (a lock holder's
/// commit will then be refused); a running one is killed by the cluster that runs it. The
/// events name `requester_uid`, the user who cancelled it, for the `CANCELLED by` records.
pub fn cancel(
    job: &mut FedJob,
    caller: &str,
    requester_uid: Option<u32>,
    now: i64,
) -> Result<(CancelOutcome, Emitted), FedError> {
    match job.phase {
        FedPhase::Pending => {
            job.phase = FedPhase::Cancelled;
            job.final_state = JobState::Cancelled.stored();
            job.end_time = now;
            job.lock = None;
            let mut targets = job.active.clone();
            targets.insert(job.origin.clone());
            targets.remove(caller);
            let events = targets
                .into_iter()
                .map(|c| {
                    let ev = FedEventKind::SiblingCancelled {
                        job_id: job.job_id,
                        requeue: RequeueMode::None,
                        requester_uid,
                    };
                    (c, ev)
                })
                .collect();
            Ok((CancelOutcome::Cancelled, events))
        }
        FedPhase::Started => {
            let winner = job.winner.clone().unwrap_or_default();
            let mut events = Vec::new();
            if winner != caller {
                let ev = FedEventKind::SiblingCancelled {
                    job_id: job.job_id,
                    requeue: RequeueMode::None,
                    requester_uid,
                };
                events.push((winner.clone(), ev));
            }
            Ok((CancelOutcome::Running { cluster: winner }, events))
        }
        _ => Err(FedError::AlreadyDone { job_id: job.job_id }),
    }
}

/// Asks the running cluster to requeue the job (it kills the run and reports the end with
/// `mode`); returns the running cluster.
pub fn request_requeue(
    job: &mut FedJob,
    caller: &str,
    mode: RequeueMode,
) -> Result<(String, Emitted), FedError> {
    match job.phase {
        FedPhase::Pending => Err(FedError::StillPending { job_id: job.job_id }),
        FedPhase::Started => {
            let winner = job.winner.clone().unwrap_or_default();
            job.requeue = mode;
            let mut events = Vec::new();
            if winner != caller {
                let ev = FedEventKind::SiblingCancelled {
                    job_id: job.job_id,
                    requeue: mode,
                    requester_uid: None,
                };
                events.push((winner.clone(), ev));
            }
            Ok((winner, events))
        }
        _ => Err(FedError::AlreadyDone { job_id: job.job_id }),
    }
}

/// The run on `cluster` ended in `state`. Without a requeue the job ends and the origin is
/// told; with one (asked now or earlier) it is pending again: held on the origin, or offered to
/// every cluster of `viable_now` (the reporter included: it dropped its copy). A repeated report
/// of the same end changes nothing. An array's origin reports the end of the whole array
/// ([`array_ended`]).
pub fn ended(
    job: &mut FedJob,
    cluster: &str,
    state: u32,
    exit_code: i32,
    requeue: RequeueMode,
    viable_now: BTreeSet<String>,
    now: i64,
) -> Result<Emitted, FedError> {
    if job.is_array {
        return array_ended(job, cluster, state, exit_code, requeue, now);
    }
    let mine = job.winner.as_deref() == Some(cluster);
    if job.phase == FedPhase::Ended && mine && job.final_state == state {
        return Ok(Vec::new());
    }
    if job.phase != FedPhase::Started || !mine {
        return Err(FedError::NotRunningHere {
            job_id: job.job_id,
            cluster: cluster.to_string(),
        });
    }
    let mode = if requeue == RequeueMode::None {
        job.requeue
    } else {
        requeue
    };
    if mode == RequeueMode::None {
        if !JobState::from_stored(state).is_some_and(JobState::is_finished) {
            return Err(FedError::NotFinalState { state });
        }
        job.phase = FedPhase::Ended;
        job.final_state = state;
        job.exit_code = exit_code;
        job.end_time = now;
        let mut out = Vec::new();
        if job.origin != cluster {
            let ev = FedEventKind::JobEnded {
                job_id: job.job_id,
                cluster: cluster.to_string(),
                state,
                exit_code,
            };
            out.push((job.origin.clone(), ev));
        }
        return Ok(out);
    }
    job.phase = FedPhase::Pending;
    job.winner = None;
    job.lock = None;
    job.requeue = RequeueMode::None;
    job.start_time = 0;
    job.held = mode == RequeueMode::RequeueHold;
    job.viable = viable_now;
    job.active.clear();
    let origin_viable = job.viable.contains(&job.origin);
    if origin_viable {
        job.active.insert(job.origin.clone());
    }
    let mut out = Vec::new();
    if job.origin != cluster {
        let ev = FedEventKind::JobRequeued {
            job_id: job.job_id,
            held: job.held,
            origin_viable,
        };
        out.push((job.origin.clone(), ev));
    }
    if !job.held {
        out.extend(offer_to_siblings(job));
    }
    Ok(out)
}

/// A job array runs on its origin only, without the start lock: its record ends when the
/// origin reports its last task's end (`state`: the array's). Nobody else holds a copy, so no
/// cluster is told. A report for an array already over (cancelled here meanwhile, or the same
/// report again) changes nothing.
fn array_ended(
    job: &mut FedJob,
    cluster: &str,
    state: u32,
    exit_code: i32,
    requeue: RequeueMode,
    now: i64,
) -> Result<Emitted, FedError> {
    if cluster != job.origin || requeue != RequeueMode::None {
        return Err(FedError::NotRunningHere {
            job_id: job.job_id,
            cluster: cluster.to_string(),
        });
    }
    if job.phase.is_terminal() {
        return Ok(Vec::new());
    }
    if !JobState::from_stored(state).is_some_and(JobState::is_finished) {
        return Err(FedError::NotFinalState { state });
    }
    job.phase = FedPhase::Ended;
    job.winner = Some(cluster.to_string());
    job.lock = None;
    job.final_state = state;
    job.exit_code = exit_code;
    job.end_time = now;
    Ok(Vec::new())
}
