//! The records service called directly with an identity in the request.

use std::sync::Arc;

use sluice_wire::auth::Identity;
use sluice_wire::proto::{self, accounting_records_server::AccountingRecords, acct_record::Kind};
use tokio_stream::StreamExt;
use tonic::{Code, Request};

use super::{PAGE, RecordsService};

const STRANGER: u32 = 3_999_999_001;
const SLURM_USER: u32 = 3_999_999_002;

fn service(dir: &tempfile::TempDir) -> RecordsService {
    let store = crate::store::test_support::sqlite_with_c1(dir, 1_000);
    RecordsService::new(Arc::new(store), vec![0, SLURM_USER])
}

fn as_uid<T>(uid: u32, msg: T) -> Request<T> {
    let mut req = Request::new(msg);
    req.extensions_mut().insert(Identity { uid, gid: uid });
    req
}

fn submits(cluster: &str, ids: std::ops::RangeInclusive<u32>) -> proto::RecordBatchRequest {
    let records = ids
        .map(|id| proto::AcctRecord {
            seq: u64::from(id),
            kind: Some(Kind::JobSubmitted(proto::JobSubmittedRecord {
                job_id: id,
                name: format!("j{id}"),
                account: "a".into(),
                submit: 5_000 + i64::from(id),
                eligible: 5_000 + i64::from(id),
                ..Default::default()
            })),
        })
        .collect();
    proto::RecordBatchRequest {
        cluster: cluster.into(),
        records,
        stream_id: 0x5eed,
    }
}

#[tokio::test]
async fn record_batches_need_an_admin_and_a_known_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let denied = svc
        .record_batch(as_uid(STRANGER, submits("c1", 1..=3)))
        .await
        .unwrap_err();
    assert_eq!(
        (denied.code(), denied.message()),
        (Code::PermissionDenied, "Access/permission denied")
    );
    let unknown = svc
        .record_batch(as_uid(SLURM_USER, submits("nope", 1..=3)))
        .await
        .unwrap_err();
    assert_eq!(
        (unknown.code(), unknown.message()),
        (
            Code::NotFound,
            "The cluster nope doesn't exist. Please add first."
        )
    );
    let no_kind = proto::RecordBatchRequest {
        cluster: "c1".into(),
        records: vec![proto::AcctRecord { seq: 1, kind: None }],
        stream_id: 0x5eed,
    };
    let bad = svc.record_batch(as_uid(0, no_kind)).await.unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    // Nothing of the refused batches was stored.
    let reply = svc
        .record_batch(as_uid(0, submits("c1", 1..=3)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.applied_seq, 3);
}

#[tokio::test]
async fn list_jobs_streams_every_page_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let total = u32::try_from(PAGE * 2 + 7).unwrap();
    let reply = svc
        .record_batch(as_uid(SLURM_USER, submits("c1", 1..=total)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.applied_seq, u64::from(total));
    let mut stream = svc
        .list_jobs(as_uid(STRANGER, proto::JobQuery::default()))
        .await
        .unwrap()
        .into_inner();
    let mut ids = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = stream.next().await {
        chunks += 1;
        for row in chunk.unwrap().rows {
            assert_eq!(row.name, format!("j{}", row.job_id));
            ids.push(row.job_id);
        }
    }
    assert_eq!(ids, (1..=total).collect::<Vec<_>>());
    // One message per page, not per row.
    assert_eq!(chunks, 3);
}

#[tokio::test]
async fn capacity_records_are_taken_and_nameless_node_events_refused() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let batch = |kind| proto::RecordBatchRequest {
        cluster: "c1".into(),
        records: vec![proto::AcctRecord {
            seq: 1,
            kind: Some(kind),
        }],
        stream_id: 0x5eed,
    };
    // A node event without a node would close the cluster's capacity period.
    let nameless = Kind::NodeEvent(proto::NodeEventRecord {
        at: 5_000,
        kind: "up".into(),
        ..Default::default()
    });
    let bad = svc
        .record_batch(as_uid(0, batch(nameless)))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    let capacity = Kind::Capacity(proto::ClusterCapacityRecord {
        at: 5_000,
        cpus: 64,
        mem_mb: 256_000,
        nodes: 2,
    });
    let reply = svc.record_batch(as_uid(0, batch(capacity))).await.unwrap();
    assert_eq!(reply.into_inner().applied_seq, 1);
    let events = svc.store().list_node_events("c1", None).unwrap();
    let got: Vec<_> = events
        .iter()
        .map(|e| (e.node.as_str(), e.start, e.cpus))
        .collect();
    assert_eq!(got, vec![("", 5_000, 64)]);
}

/// Jobs 1..=4, the odd ones of `STRANGER` and the even ones of `OTHER`.
fn two_users_jobs() -> proto::RecordBatchRequest {
    let mut batch = submits("c1", 1..=4);
    for r in &mut batch.records {
        if let Some(Kind::JobSubmitted(j)) = &mut r.kind {
            j.uid = if j.job_id % 2 == 1 { STRANGER } else { OTHER };
        }
    }
    batch
}

const OTHER: u32 = 3_999_999_003;

async fn listed(svc: &RecordsService, uid: u32, uids: Vec<u32>) -> Vec<u32> {
    let q = proto::JobQuery {
        uids,
        ..Default::default()
    };
    let mut stream = svc.list_jobs(as_uid(uid, q)).await.unwrap().into_inner();
    let mut ids = Vec::new();
    while let Some(chunk) = stream.next().await {
        ids.extend(chunk.unwrap().rows.into_iter().map(|r| r.job_id));
    }
    ids
}

#[tokio::test]
async fn private_jobs_show_a_user_only_their_own_and_admins_everything() {
    let dir = tempfile::tempdir().unwrap();
    let private = sluice_vocab::private_data::PrivateData::parse("jobs").unwrap();
    let svc = service(&dir).with_private_data(private);
    svc.record_batch(as_uid(SLURM_USER, two_users_jobs()))
        .await
        .unwrap();
    assert_eq!(listed(&svc, STRANGER, vec![]).await, [1, 3]);
    assert_eq!(listed(&svc, STRANGER, vec![OTHER]).await, Vec::<u32>::new());
    assert_eq!(listed(&svc, OTHER, vec![STRANGER, OTHER]).await, [2, 4]);
    assert_eq!(listed(&svc, SLURM_USER, vec![]).await, [1, 2, 3, 4]);
    let open_dir = tempfile::tempdir().unwrap();
    let open = service(&open_dir);
    open.record_batch(as_uid(0, two_users_jobs()))
        .await
        .unwrap();
    assert_eq!(listed(&open, STRANGER, vec![]).await, [1, 2, 3, 4]);
}
