//! Each cluster's federation event log: appending events in the transaction of the change
//! that makes them, reading a cluster's events after a cursor, and acknowledging a cursor.
//!
//! Seqs are per cluster and taken from the cluster's head row, whose lock is held until the
//! appending transaction commits: a cluster's events become visible in seq order, so a reader
//! that has seen seq N never later finds an unseen event below N.

use std::collections::BTreeSet;

use crate::store::conn::AnyConnection;
use crate::store::models::fed_events::{self as rows, FedEventRow};
use crate::store::models::fed_jobs::{join_set, split_set};

use super::start::Emitted;
use super::types::{EventPage, FedEvent, FedEventKind, RequeueMode};

/// Stored kinds.
const OFFERED: i32 = 1;
const REVOKED: i32 = 2;
const CANCELLED: i32 = 3;
const UPDATED: i32 = 4;
const STARTED_ELSEWHERE: i32 = 5;
const ENDED: i32 = 6;
const REQUEUED: i32 = 7;
const LEFT: i32 = 8;
const FEDERATION_CHANGED: i32 = 9;

/// `flags` bits of a requeued event.
const FLAG_HELD: i32 = 1;
const FLAG_ORIGIN_VIABLE: i32 = 2;

// A cancelled event keeps its requeue mode in `flags` and its requester's uid plus one in
// `state` (0: not known, as in rows written before requesters were recorded).

fn row(cluster: &str, federation: &str, kind: &FedEventKind, now: i64) -> FedEventRow {
    let mut r = FedEventRow {
        cluster: cluster.to_string(),
        seq: 0,
        kind: 0,
        federation: federation.to_string(),
        job_id: i64::from(kind.job_id()),
        other_cluster: String::new(),
        state: 0,
        exit_code: 0,
        flags: 0,
        viable: String::new(),
        job_desc: Vec::new(),
        time_created: now,
    };
    match kind {
        FedEventKind::SiblingOffered {
            origin,
            viable,
            desc,
            ..
        } => {
            r.kind = OFFERED;
            r.other_cluster.clone_from(origin);
            r.viable = join_set(viable);
            r.job_desc.clone_from(desc);
        }
        FedEventKind::SiblingRevoked { winner, .. } => {
            r.kind = REVOKED;
            r.other_cluster = winner.clone().unwrap_or_default();
        }
        FedEventKind::SiblingCancelled {
            requeue,
            requester_uid,
            ..
        } => {
            r.kind = CANCELLED;
            r.flags = requeue.stored();
            r.state = requester_uid.map_or(0, |uid| i64::from(uid) + 1);
        }
        FedEventKind::SiblingUpdated { desc, .. } => {
            r.kind = UPDATED;
            r.job_desc.clone_from(desc);
        }
        FedEventKind::JobStartedElsewhere { cluster, .. } => {
            r.kind = STARTED_ELSEWHERE;
            r.other_cluster.clone_from(cluster);
        }
        FedEventKind::JobEnded {
            cluster,
            state,
            exit_code,
            ..
        } => {
            r.kind = ENDED;
            r.other_cluster.clone_from(cluster);
            r.state = i64::from(*state);
            r.exit_code = *exit_code;
        }
        FedEventKind::JobRequeued {
            held,
            origin_viable,
            ..
        } => {
            r.kind = REQUEUED;
            r.flags = if *held { FLAG_HELD } else { 0 }
                | if *origin_viable {
                    FLAG_ORIGIN_VIABLE
                } else {
                    0
                };
        }
        FedEventKind::JobLeftFederation { .. } => r.kind = LEFT,
        FedEventKind::FederationChanged => r.kind = FEDERATION_CHANGED,
    }
    r
}

/// The event a row stores; `None` for a kind this dbd does not know (written by a newer one).
fn event(r: FedEventRow) -> Option<FedEvent> {
    let job_id = u32::try_from(r.job_id).unwrap_or(0);
    let other = r.other_cluster;
    let kind = match r.kind {
        OFFERED => FedEventKind::SiblingOffered {
            job_id,
            origin: other,
            viable: split_set(&r.viable),
            desc: r.job_desc,
        },
        REVOKED => FedEventKind::SiblingRevoked {
            job_id,
            winner: (!other.is_empty()).then_some(other),
        },
        CANCELLED => FedEventKind::SiblingCancelled {
            job_id,
            requeue: RequeueMode::from_stored(r.flags),
            requester_uid: r
                .state
                .checked_sub(1)
                .and_then(|uid| u32::try_from(uid).ok()),
        },
        UPDATED => FedEventKind::SiblingUpdated {
            job_id,
            desc: r.job_desc,
        },
        STARTED_ELSEWHERE => FedEventKind::JobStartedElsewhere {
            job_id,
            cluster: other,
        },
        ENDED => FedEventKind::JobEnded {
            job_id,
            cluster: other,
            state: u32::try_from(r.state).unwrap_or(0),
            exit_code: r.exit_code,
        },
        REQUEUED => FedEventKind::JobRequeued {
            job_id,
            held: r.flags & FLAG_HELD != 0,
            origin_viable: r.flags & FLAG_ORIGIN_VIABLE != 0,
        },
        LEFT => FedEventKind::JobLeftFederation { job_id },
        FEDERATION_CHANGED => FedEventKind::FederationChanged,
        _ => return None,
    };
    Some(FedEvent {
        seq: u64::try_from(r.seq).unwrap_or(0),
        federation: r.federation,
        kind,
        created: r.time_created,
    })
}

/// Appends `events` of `federation` to their clusters' logs, skipping clusters not in
/// `members`. Heads are taken in cluster-name order (a stable sort keeps each cluster's events
/// in emission order), so two transactions never wait on each other's heads in a cycle.
/// Returns the clusters whose logs grew.
pub fn append(
    conn: &mut AnyConnection,
    federation: &str,
    members: &BTreeSet<String>,
    mut events: Emitted,
    now: i64,
) -> diesel::QueryResult<BTreeSet<String>> {
    events.retain(|(c, _)| members.contains(c));
    events.sort_by(|a, b| a.0.cmp(&b.0));
    for (cluster, kind) in &events {
        let mut r = row(cluster, federation, kind, now);
        r.seq = rows::next_seq(conn, cluster)?;
        rows::insert(conn, &r)?;
    }
    Ok(events.into_iter().map(|(c, _)| c).collect())
}

/// `cluster`'s events after `max(after, acked)`, at most `limit`.
pub fn read(
    conn: &mut AnyConnection,
    cluster: &str,
    after: u64,
    limit: usize,
) -> diesel::QueryResult<EventPage> {
    let (_, acked) = rows::head(conn, cluster)?;
    let from = i64::try_from(after).unwrap_or(i64::MAX).max(acked);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let events = rows::after(conn, cluster, from, limit)?
        .into_iter()
        .filter_map(event)
        .collect();
    Ok(EventPage {
        events,
        acked: u64::try_from(acked).unwrap_or(0),
    })
}

/// Moves `cluster`'s acknowledged cursor to `seq` (never backwards, never past its newest
/// event) and drops the events it covers; returns the cursor.
pub fn ack(conn: &mut AnyConnection, cluster: &str, seq: u64) -> diesel::QueryResult<u64> {
    let (last, acked) = rows::head(conn, cluster)?;
    let seq = i64::try_from(seq).unwrap_or(i64::MAX).min(last);
    if seq > acked {
        rows::ack(conn, cluster, seq)?;
    }
    Ok(u64::try_from(seq.max(acked)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_kind_round_trips_through_its_row() {
        let viable: BTreeSet<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let kinds = [
            FedEventKind::SiblingOffered {
                job_id: 7,
                origin: "a".into(),
                viable,
                desc: vec![1, 2, 3],
            },
            FedEventKind::SiblingRevoked {
                job_id: 7,
                winner: Some("b".into()),
            },
            FedEventKind::SiblingRevoked {
                job_id: 7,
                winner: None,
            },
            FedEventKind::SiblingCancelled {
                job_id: 7,
                requeue: RequeueMode::RequeueHold,
                requester_uid: None,
            },
            FedEventKind::SiblingCancelled {
                job_id: 7,
                requeue: RequeueMode::None,
                requester_uid: Some(0),
            },
            FedEventKind::SiblingCancelled {
                job_id: 7,
                requeue: RequeueMode::None,
                requester_uid: Some(u32::MAX),
            },
            FedEventKind::SiblingUpdated {
                job_id: 7,
                desc: vec![9],
            },
            FedEventKind::JobStartedElsewhere {
                job_id: 7,
                cluster: "c".into(),
            },
            FedEventKind::JobEnded {
                job_id: 7,
                cluster: "c".into(),
                state: 3,
                exit_code: -2,
            },
            FedEventKind::JobRequeued {
                job_id: 7,
                held: true,
                origin_viable: false,
            },
            FedEventKind::JobRequeued {
                job_id: 7,
                held: false,
                origin_viable: true,
            },
            FedEventKind::JobLeftFederation { job_id: 7 },
            FedEventKind::FederationChanged,
        ];
        for (i, kind) in kinds.into_iter().enumerate() {
            let mut r = row("x", "fed", &kind, 50);
            r.seq = i64::try_from(i).unwrap() + 1;
            let back = event(r).unwrap();
            assert_eq!(back.kind, kind);
            assert_eq!(back.federation, "fed");
            assert_eq!(back.created, 50);
        }
        let mut unknown = row("x", "fed", &FedEventKind::FederationChanged, 0);
        unknown.kind = 99;
        assert_eq!(event(unknown), None);
    }
}
