//! Wire ↔ core conversions of the federation arbiter's messages.

use crate::core::federation::{
    FedEvent, FedEventKind, FedInfo, FedMember, FedRequeue, FedView, InfoPhase,
};
use sluice_vocab::{FedJobId, FedState};
use sluice_wire::proto;

fn member(m: proto::FedMember) -> FedMember {
    FedMember {
        name: m.name,
        fed_id: m.fed_id,
        fed_state: m.fed_state,
        features: m.features,
        host: m.control_host,
        port: m.control_port,
        connected: m.connected,
    }
}

/// The core's view of a wire view.
pub fn view(v: proto::FederationView) -> FedView {
    FedView {
        federation: v.federation,
        me: v.self_.map(member).unwrap_or_else(|| FedMember {
            name: v.cluster,
            ..FedMember::default()
        }),
        siblings: v.siblings.into_iter().map(member).collect(),
    }
}

fn wire_member(m: &FedMember) -> proto::FedMember {
    proto::FedMember {
        name: m.name.clone(),
        fed_id: m.fed_id,
        fed_state: m.fed_state,
        fed_state_name: FedState::name_of_stored(m.fed_state).to_string(),
        features: m.features.clone(),
        control_host: m.host.clone(),
        control_port: m.port,
        rpc_version: 0,
        connected: m.connected,
    }
}

/// The wire form of the core's view (`scontrol show federation`).
pub fn wire_view(v: &FedView) -> proto::FederationView {
    proto::FederationView {
        cluster: v.me.name.clone(),
        federation: v.federation.clone(),
        self_: Some(wire_member(&v.me)),
        siblings: v.siblings.iter().map(wire_member).collect(),
    }
}

/// A wire requeue mode.
pub fn requeue(v: i32) -> FedRequeue {
    match proto::FedRequeue::try_from(v) {
        Ok(proto::FedRequeue::Requeue) => FedRequeue::Requeue,
        Ok(proto::FedRequeue::Hold) => FedRequeue::Hold,
        _ => FedRequeue::None,
    }
}

/// The wire form of a requeue mode.
pub fn wire_requeue(m: FedRequeue) -> i32 {
    match m {
        FedRequeue::None => proto::FedRequeue::None,
        FedRequeue::Requeue => proto::FedRequeue::Requeue,
        FedRequeue::Hold => proto::FedRequeue::Hold,
    }
    .into()
}

/// The core's form of the dbd's record of a job (`None` for an invalid id).
pub fn info(i: proto::FedJobInfo) -> Option<FedInfo> {
    let phase = match proto::FedPhase::try_from(i.phase) {
        Ok(proto::FedPhase::Started) => InfoPhase::Started,
        Ok(proto::FedPhase::Ended) => InfoPhase::Ended,
        Ok(proto::FedPhase::Cancelled) => InfoPhase::Cancelled,
        Ok(proto::FedPhase::Detached) => InfoPhase::Detached,
        _ => InfoPhase::Pending,
    };
    Some(FedInfo {
        job: FedJobId::from_raw(i.job_id).ok()?,
        origin: i.origin,
        phase,
        held: i.held,
        viable: i.viable,
        active: i.active,
        winner: Some(i.winner).filter(|w| !w.is_empty()),
        final_state: i.final_state,
        exit_code: i.exit_code,
    })
}

/// The core's form of an event (`None` for the caught-up marker). An event this controller
/// cannot read (unknown kind, invalid job id) becomes a no-op, so the cursor still passes it.
pub fn event(e: proto::FedEvent) -> Option<FedEvent> {
    if e.caught_up && e.kind.is_none() {
        return None;
    }
    let seq = e.seq;
    let kind = e
        .kind
        .and_then(kind)
        .unwrap_or(FedEventKind::FederationChanged);
    Some(FedEvent { seq, kind })
}

fn kind(k: proto::fed_event::Kind) -> Option<FedEventKind> {
    use proto::fed_event::Kind;
    let id = |raw: u32| FedJobId::from_raw(raw).ok();
    Some(match k {
        Kind::SiblingOffered(m) => FedEventKind::SiblingOffered {
            job: id(m.job_id)?,
            origin: m.origin,
            viable: m.viable,
            desc: m.desc,
        },
        Kind::SiblingRevoked(m) => FedEventKind::SiblingRevoked {
            job: id(m.job_id)?,
            winner: Some(m.winner).filter(|w| !w.is_empty()),
        },
        Kind::SiblingCancelled(m) => FedEventKind::SiblingCancelled {
            job: id(m.job_id)?,
            requeue: requeue(m.requeue),
            requester_uid: m.requester_uid,
        },
        Kind::SiblingUpdated(m) => FedEventKind::SiblingUpdated {
            job: id(m.job_id)?,
            desc: m.desc,
        },
        Kind::JobStartedElsewhere(m) => FedEventKind::JobStartedElsewhere {
            job: id(m.job_id)?,
            cluster: m.cluster,
        },
        Kind::JobEnded(m) => FedEventKind::JobEnded {
            job: id(m.job_id)?,
            cluster: m.cluster,
            state: m.state,
            exit_code: m.exit_code,
        },
        Kind::JobRequeued(m) => FedEventKind::JobRequeued {
            job: id(m.job_id)?,
            held: m.held,
            origin_viable: m.origin_viable,
        },
        Kind::JobLeftFederation(m) => FedEventKind::JobLeftFederation { job: id(m.job_id)? },
        Kind::FederationChanged(_) => FedEventKind::FederationChanged,
    })
}

/// Whether a failed call may have failed for want of a connection (retry it) rather than
/// with the dbd's answer.
pub fn retryable(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(
        status.code(),
        Code::Unavailable
            | Code::Unknown
            | Code::DeadlineExceeded
            | Code::Cancelled
            | Code::Aborted
            | Code::ResourceExhausted
            | Code::Internal
    )
}
