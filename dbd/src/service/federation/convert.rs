//! Wire ↔ domain conversions of the federation service.

use sluice_vocab::FedState;
use sluice_wire::proto;

use crate::store::fed::types::{
    CancelOutcome, FedEvent, FedEventKind, FedJob, FedMember, FedPhase, FedView, LockOutcome,
    LockRefusal, Registration, RequeueMode, SubmitFedJob, UpdateFedJob,
};

/// The registration a request carries.
pub fn registration(m: proto::FedRegisterRequest) -> Registration {
    Registration {
        cluster: m.cluster,
        control_host: m.control_host,
        control_port: m.control_port,
        rpc_version: m.rpc_version,
        start_time: m.start_time,
    }
}

/// The submission a request carries.
pub fn submit(m: proto::FedSubmitRequest) -> SubmitFedJob {
    SubmitFedJob {
        origin: m.cluster,
        job_id: m.job_id,
        desc: m.desc,
        req_clusters: m.clusters,
        cluster_features: m.cluster_features,
        held: m.held,
        is_array: m.array,
    }
}

/// The update a request carries.
pub fn update(m: proto::FedUpdateRequest) -> UpdateFedJob {
    UpdateFedJob {
        job_id: m.job_id,
        caller: m.cluster,
        req_clusters: m.clusters,
        cluster_features: m.cluster_features,
        desc: m.desc,
    }
}

/// A wire requeue mode (unknown values read as none).
pub fn requeue_mode(v: i32) -> RequeueMode {
    match proto::FedRequeue::try_from(v) {
        Ok(proto::FedRequeue::Requeue) => RequeueMode::Requeue,
        Ok(proto::FedRequeue::Hold) => RequeueMode::RequeueHold,
        _ => RequeueMode::None,
    }
}

fn wire_requeue(m: RequeueMode) -> proto::FedRequeue {
    match m {
        RequeueMode::None => proto::FedRequeue::None,
        RequeueMode::Requeue => proto::FedRequeue::Requeue,
        RequeueMode::RequeueHold => proto::FedRequeue::Hold,
    }
}

fn member(m: FedMember, connected: bool) -> proto::FedMember {
    proto::FedMember {
        fed_state_name: FedState::name_of_stored(m.fed_state).to_string(),
        name: m.name,
        fed_id: m.fed_id,
        fed_state: m.fed_state,
        features: m.features,
        control_host: m.control_host,
        control_port: m.control_port,
        rpc_version: m.rpc_version,
        connected,
    }
}

/// A view on the wire; `connected` says whether a cluster has an open event stream.
pub fn view(v: FedView, connected: impl Fn(&str) -> bool) -> proto::FederationView {
    let this_connected = connected(&v.this.name);
    proto::FederationView {
        cluster: v.cluster,
        federation: v.federation,
        siblings: v
            .siblings
            .into_iter()
            .map(|s| {
                let c = connected(&s.name);
                member(s, c)
            })
            .collect(),
        self_: Some(member(v.this, this_connected)),
    }
}

fn phase(p: FedPhase) -> proto::FedPhase {
    match p {
        FedPhase::Pending => proto::FedPhase::Pending,
        FedPhase::Started => proto::FedPhase::Started,
        FedPhase::Ended => proto::FedPhase::Ended,
        FedPhase::Cancelled => proto::FedPhase::Cancelled,
        FedPhase::Detached => proto::FedPhase::Detached,
    }
}

/// A recorded job on the wire.
pub fn job(j: FedJob) -> proto::FedJobInfo {
    let (lock_cluster, lock_expires) = j.lock.map(|l| (l.cluster, l.expires)).unwrap_or_default();
    proto::FedJobInfo {
        job_id: j.job_id,
        federation: j.federation,
        origin: j.origin,
        phase: phase(j.phase).into(),
        held: j.held,
        array: j.is_array,
        clusters: j.req_clusters,
        cluster_features: j.cluster_features,
        viable: j.viable.into_iter().collect(),
        active: j.active.into_iter().collect(),
        lock_cluster,
        lock_expires,
        winner: j.winner.unwrap_or_default(),
        final_state: j.final_state,
        exit_code: j.exit_code,
        submit_time: j.submit_time,
        start_time: j.start_time,
        end_time: j.end_time,
        desc: j.desc,
    }
}

fn refusal(r: &LockRefusal) -> (proto::LockRefusal, String, String) {
    match r {
        LockRefusal::HeldBy { cluster, expires } => (
            proto::LockRefusal::HeldByOther,
            cluster.clone(),
            format!("Job locked by another sibling ({cluster} until {expires})"),
        ),
        LockRefusal::NotPending => (
            proto::LockRefusal::NotPending,
            String::new(),
            "Job is no longer pending execution".into(),
        ),
        LockRefusal::NotActiveHere => (
            proto::LockRefusal::NotActiveHere,
            String::new(),
            "Job is not active on this cluster (revoked or withdrawn)".into(),
        ),
        LockRefusal::Held => (
            proto::LockRefusal::JobHeld,
            String::new(),
            "Job is held on its origin".into(),
        ),
        LockRefusal::LostLock => (
            proto::LockRefusal::Lost,
            String::new(),
            "Start lock lost (lease expired or taken)".into(),
        ),
    }
}

/// A lock request's outcome on the wire.
pub fn lock_reply(o: LockOutcome) -> proto::StartLockReply {
    match o {
        LockOutcome::Granted { token, expires } => proto::StartLockReply {
            granted: true,
            token,
            expires,
            ..Default::default()
        },
        LockOutcome::Refused { reason } => {
            let (code, holder, message) = refusal(&reason);
            proto::StartLockReply {
                refusal: code.into(),
                holder,
                message,
                ..Default::default()
            }
        }
    }
}

/// A commit's outcome on the wire.
pub fn commit_reply(o: Result<FedJob, LockRefusal>) -> proto::CommitStartReply {
    match o {
        Ok(j) => proto::CommitStartReply {
            started: true,
            job: Some(job(j)),
            ..Default::default()
        },
        Err(reason) => {
            let (code, _, message) = refusal(&reason);
            proto::CommitStartReply {
                refusal: code.into(),
                message,
                ..Default::default()
            }
        }
    }
}

/// A cancel's outcome on the wire.
pub fn cancel_reply(o: CancelOutcome) -> proto::FedCancelReply {
    match o {
        CancelOutcome::Cancelled => proto::FedCancelReply {
            cancelled: true,
            running_on: String::new(),
        },
        CancelOutcome::Running { cluster } => proto::FedCancelReply {
            cancelled: false,
            running_on: cluster,
        },
    }
}

/// An event on the wire.
pub fn event(e: FedEvent) -> proto::FedEvent {
    use proto::fed_event::Kind;
    let kind = match e.kind {
        FedEventKind::SiblingOffered {
            job_id,
            origin,
            viable,
            desc,
        } => Kind::SiblingOffered(proto::SiblingOffered {
            job_id,
            origin,
            viable: viable.into_iter().collect(),
            desc,
        }),
        FedEventKind::SiblingRevoked { job_id, winner } => {
            Kind::SiblingRevoked(proto::SiblingRevoked {
                job_id,
                winner: winner.unwrap_or_default(),
            })
        }
        FedEventKind::SiblingCancelled {
            job_id,
            requeue,
            requester_uid,
        } => Kind::SiblingCancelled(proto::SiblingCancelled {
            job_id,
            requeue: wire_requeue(requeue).into(),
            requester_uid,
        }),
        FedEventKind::SiblingUpdated { job_id, desc } => {
            Kind::SiblingUpdated(proto::SiblingUpdated { job_id, desc })
        }
        FedEventKind::JobStartedElsewhere { job_id, cluster } => {
            Kind::JobStartedElsewhere(proto::JobStartedElsewhere { job_id, cluster })
        }
        FedEventKind::JobEnded {
            job_id,
            cluster,
            state,
            exit_code,
        } => Kind::JobEnded(proto::JobEndedEvent {
            job_id,
            cluster,
            state,
            exit_code,
        }),
        FedEventKind::JobRequeued {
            job_id,
            held,
            origin_viable,
        } => Kind::JobRequeued(proto::JobRequeuedEvent {
            job_id,
            held,
            origin_viable,
        }),
        FedEventKind::JobLeftFederation { job_id } => {
            Kind::JobLeftFederation(proto::JobLeftFederation { job_id })
        }
        FedEventKind::FederationChanged => Kind::FederationChanged(proto::FederationChanged {}),
    };
    proto::FedEvent {
        seq: e.seq,
        federation: e.federation,
        created: e.created,
        kind: Some(kind),
        caught_up: false,
    }
}
