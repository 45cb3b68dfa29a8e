//! The federation service called directly with an identity in the request: permissions, the
//! watch stream pushing an admin change, and the event stream (backlog, live, resume).

use std::sync::Arc;
use std::time::Duration;

use sluice_wire::auth::Identity;
use sluice_wire::proto::{self, fed_arbiter_server::FedArbiter, fed_event::Kind};
use tokio_stream::{Stream, StreamExt};
use tonic::{Code, Request, Status};

use super::FederationService;
use crate::store::{AddClusters, AddFederations, Apply, ModifyClusters, Store};

const STRANGER: u32 = 3_999_999_001;
const SLURM_USER: u32 = 3_999_999_002;
/// A generous bound for a stream item that is due (never a timing assertion).
const DUE: Duration = Duration::from_secs(20);
/// The first job id of the cluster with fed id 1.
const JOB: u32 = (1 << 26) | 1;

fn setup(dir: &tempfile::TempDir) -> (Arc<Store>, FederationService) {
    let url = format!("sqlite://{}", dir.path().join("acct.db").display());
    let store = Arc::new(Store::connect_at(&url, 1_000).unwrap());
    let add = AddClusters {
        names: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    store.add_clusters(&add, Apply::Commit, 1_000).unwrap();
    let fed = AddFederations {
        names: vec!["fed".into()],
        clusters: vec!["a".into(), "b".into()],
    };
    store.add_federations(&fed, Apply::Commit, 1_000).unwrap();
    let svc = FederationService::new(Arc::clone(&store), vec![0, SLURM_USER]);
    (store, svc)
}

fn as_uid<T>(uid: u32, msg: T) -> Request<T> {
    let mut req = Request::new(msg);
    req.extensions_mut().insert(Identity { uid, gid: uid });
    req
}

fn submit(cluster: &str, job_id: u32) -> proto::FedSubmitRequest {
    proto::FedSubmitRequest {
        cluster: cluster.into(),
        job_id,
        desc: b"script".to_vec(),
        ..Default::default()
    }
}

async fn next<T>(stream: &mut (impl Stream<Item = Result<T, Status>> + Unpin)) -> T {
    match tokio::time::timeout(DUE, stream.next()).await {
        Ok(Some(Ok(item))) => item,
        other => panic!(
            "stream item expected, got {:?}",
            other.map(|o| o.map(|r| r.err()))
        ),
    }
}

#[tokio::test]
async fn job_requests_need_an_admin_and_views_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, svc) = setup(&dir);
    let denied = svc
        .submit_fed_job(as_uid(STRANGER, submit("a", JOB)))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    let job = svc
        .submit_fed_job(as_uid(SLURM_USER, submit("a", JOB)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (job.viable.clone(), job.active.clone()),
        (vec!["a".into(), "b".into()], vec!["a".into(), "b".into()])
    );
    let seen = svc
        .get_fed_job(as_uid(
            STRANGER,
            proto::FedJobRequest {
                cluster: "b".into(),
                job_id: JOB,
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(seen.origin, "a");
    let view = svc
        .get_federation_view(as_uid(
            STRANGER,
            proto::FedClusterRequest {
                cluster: "b".into(),
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(view.federation, "fed");
    assert_eq!(view.self_.unwrap().fed_id, 2);
    assert_eq!(view.siblings.len(), 1);
    // Slurm's texts travel in the status.
    let bad = proto::FedSubmitRequest {
        cluster_features: "nosuch".into(),
        ..submit("a", JOB + 1)
    };
    let e = svc.submit_fed_job(as_uid(0, bad)).await.unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (
            Code::InvalidArgument,
            "Invalid cluster feature specification"
        )
    );
    let unknown = proto::FedCancelRequest {
        cluster: "a".into(),
        job_id: JOB + 7,
        requester_uid: Some(1000),
    };
    let e = svc.cancel_fed_job(as_uid(0, unknown)).await.unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (Code::NotFound, "Invalid job id specified")
    );
}

#[tokio::test]
async fn the_watch_stream_pushes_an_admin_change_and_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (store, svc) = setup(&dir);
    let req = proto::FedClusterRequest {
        cluster: "a".into(),
    };
    let mut watch = svc
        .watch_federation(as_uid(0, req))
        .await
        .unwrap()
        .into_inner();
    let first = next(&mut watch).await;
    assert_eq!(first.siblings[0].fed_state_name, "ACTIVE");
    assert!(!first.siblings[0].connected);
    let drain = ModifyClusters {
        names: vec!["b".into()],
        fed_state: Some(17),
        ..Default::default()
    };
    store.modify_clusters(&drain, Apply::Commit, 2_000).unwrap();
    let second = next(&mut watch).await;
    assert_eq!(second.siblings[0].fed_state_name, "DRAIN");
    // b opening its event stream shows as connected.
    let ev = proto::FedEventsRequest {
        cluster: "b".into(),
        after: 0,
    };
    let events = svc.events(as_uid(0, ev)).await.unwrap().into_inner();
    let third = next(&mut watch).await;
    assert!(third.siblings[0].connected, "{third:?}");
    drop(events);
    svc.stop_streams();
    // The stream ends at shutdown (after at most one more view).
    let end = tokio::time::timeout(DUE, async {
        while let Some(item) = watch.next().await {
            item.unwrap();
        }
    })
    .await;
    assert!(end.is_ok(), "the watch stream did not end at shutdown");
}

#[tokio::test]
async fn the_event_stream_sends_backlog_then_live_events_and_resumes_after_the_ack() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, svc) = setup(&dir);
    for i in 0..3 {
        svc.submit_fed_job(as_uid(0, submit("a", JOB + i)))
            .await
            .unwrap();
    }
    let open = |after| proto::FedEventsRequest {
        cluster: "b".into(),
        after,
    };
    let mut events = svc.events(as_uid(0, open(0))).await.unwrap().into_inner();
    let mut seqs = Vec::new();
    for i in 0..3 {
        let e = next(&mut events).await;
        match e.kind {
            Some(Kind::SiblingOffered(o)) => {
                assert_eq!(
                    (o.job_id, o.origin.as_str(), o.desc.as_slice()),
                    (JOB + i, "a", &b"script"[..])
                );
            }
            other => panic!("offer expected, got {other:?}"),
        }
        seqs.push(e.seq);
    }
    assert_eq!(seqs, vec![1, 2, 3]);
    assert!(next(&mut events).await.caught_up);
    // A live event.
    svc.submit_fed_job(as_uid(0, submit("a", JOB + 3)))
        .await
        .unwrap();
    let live = next(&mut events).await;
    assert_eq!(live.seq, 4);
    drop(events);
    let acked = svc
        .ack_events(as_uid(
            0,
            proto::FedAckRequest {
                cluster: "b".into(),
                seq: 2,
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(acked.acked, 2);
    // A restarted controller without its own cursor resumes after the acknowledged one.
    let mut events = svc.events(as_uid(0, open(0))).await.unwrap().into_inner();
    assert_eq!(next(&mut events).await.seq, 3);
    assert_eq!(next(&mut events).await.seq, 4);
    assert!(next(&mut events).await.caught_up);
    let e = svc
        .events(as_uid(
            0,
            proto::FedEventsRequest {
                cluster: "zz".into(),
                after: 0,
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
}
