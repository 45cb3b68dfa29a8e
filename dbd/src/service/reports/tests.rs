//! The reports service called directly, over a store with one rolled-up day.

use std::sync::Arc;

use sluice_reports::Calendar;
use sluice_wire::auth::Identity;
use sluice_wire::proto::{self, reports_server::Reports};
use tonic::{Code, Request};

use super::ReportsService;
use crate::store::{
    AddAccounts, AddUsers, Apply, ClusterCapacity, JobEnded, JobStarted, JobSubmitted, Record,
    RecordKind,
};

/// 2026-11-01T00:00:00Z.
const DAY0: i64 = 1_793_491_200;
const HOUR: i64 = 3_600;
/// A uid no account database maps to a login name: anyone may read usage.
const STRANGER: u32 = 3_999_999_001;

fn as_uid<T>(uid: u32, msg: T) -> Request<T> {
    let mut req = Request::new(msg);
    req.extensions_mut().insert(Identity { uid, gid: uid });
    req
}

/// Cluster c1 with 8 CPUs from DAY0; alice (account phys under root) runs 4 CPUs for two
/// hours from DAY0+1h. Nothing is rolled up yet: the service catches up before it reads.
fn service(dir: &tempfile::TempDir) -> ReportsService {
    let store = crate::store::test_support::sqlite_with_c1(dir, 1_000);
    let accounts = AddAccounts {
        names: vec!["phys".into()],
        ..Default::default()
    };
    store.add_accounts(&accounts, Apply::Commit, 1_000).unwrap();
    let users = AddUsers {
        names: vec!["alice".into()],
        accounts: vec!["phys".into()],
        ..Default::default()
    };
    store.add_users(&users, Apply::Commit, 1_000).unwrap();
    let kinds = [
        RecordKind::ClusterCapacity(ClusterCapacity {
            at: DAY0,
            cpus: 8,
            mem_mb: 8_000,
            nodes: 2,
        }),
        RecordKind::JobSubmitted(Box::new(JobSubmitted {
            job_id: 1,
            user: "alice".into(),
            account: "phys".into(),
            submit: DAY0 + HOUR,
            eligible: DAY0 + HOUR,
            req_cpus: 4,
            ..Default::default()
        })),
        RecordKind::JobStarted(JobStarted {
            job_id: 1,
            start: DAY0 + HOUR,
            node_count: 1,
            cpus: 4,
            mem_mb: 1_000,
            ..Default::default()
        }),
        RecordKind::JobEnded(JobEnded {
            job_id: 1,
            end: DAY0 + 3 * HOUR,
            state: sluice_vocab::states::JobState::Completed.stored(),
            ..Default::default()
        }),
    ];
    let records: Vec<Record> = kinds
        .into_iter()
        .zip(1..)
        .map(|(kind, seq)| Record { seq, kind })
        .collect();
    store.record_batch("c1", 1, &records).unwrap();
    let now = DAY0 + 10 * 24 * HOUR;
    ReportsService::new(Arc::new(store), Calendar::utc(), Arc::new(move || now))
}

fn day_query() -> proto::UsageQuery {
    proto::UsageQuery {
        start: DAY0,
        end: DAY0 + 24 * HOUR,
        ..Default::default()
    }
}

#[tokio::test]
async fn cluster_utilization_reads_the_day_table() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let reply = svc
        .cluster_utilization(as_uid(STRANGER, day_query()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.table, "day");
    assert_eq!(
        reply.rows,
        vec![proto::ClusterUsage {
            cluster: "c1".into(),
            tres: "cpu".into(),
            count: 8,
            alloc_secs: 4 * 2 * HOUR as u64,
            down_secs: 0,
            pdown_secs: 0,
            idle_secs: 8 * 24 * HOUR as u64 - 8 * HOUR as u64,
            plan_secs: 0,
            over_secs: 0,
            total_secs: 8 * 24 * HOUR as u64,
        }]
    );
    let mut hours = day_query();
    hours.end = DAY0 + 2 * HOUR;
    hours.tres = vec!["mem".into(), "NODE".into()];
    let reply = svc
        .cluster_utilization(as_uid(STRANGER, hours))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.table, "hour");
    let got: Vec<_> = reply
        .rows
        .iter()
        .map(|r| (r.tres.as_str(), r.alloc_secs, r.total_secs))
        .collect();
    assert_eq!(
        got,
        vec![
            ("mem", 1_000 * 3_600, 8_000 * 7_200),
            ("node", 3_600, 2 * 7_200)
        ]
    );
}

#[tokio::test]
async fn association_rows_hold_their_subtree() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let reply = svc
        .assoc_utilization(as_uid(STRANGER, day_query()))
        .await
        .unwrap()
        .into_inner();
    let rows: Vec<_> = reply
        .rows
        .iter()
        .map(|r| {
            (
                r.account.as_str(),
                r.user.as_str(),
                r.parent_account.as_str(),
                r.alloc_secs,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("phys", "", "root", 28_800),
            ("phys", "alice", "phys", 28_800),
            ("root", "", "", 28_800),
        ]
    );
    assert_eq!(reply.table, "day");
    assert_eq!(reply.clusters.len(), 1);
}

#[tokio::test]
async fn job_sizes_bucket_by_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let q = proto::JobSizesQuery {
        start: DAY0,
        end: DAY0 + 24 * HOUR,
        grouping: vec![2, 8],
        ..Default::default()
    };
    let reply = svc
        .job_sizes(as_uid(STRANGER, q))
        .await
        .unwrap()
        .into_inner();
    let rows: Vec<_> = reply
        .rows
        .iter()
        .map(|r| {
            (
                r.account.as_str(),
                r.bucket_secs.clone(),
                r.bucket_jobs.clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("phys", vec![0, 28_800, 0], vec![0, 1, 0]),
            ("root", vec![0, 0, 0], vec![0, 0, 0]),
        ]
    );
    assert!(reply.sizes.is_empty(), "sizes only come with individual");
}

#[tokio::test]
async fn job_sizes_individual_and_by_user() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let q = |uids: Vec<u32>| proto::JobSizesQuery {
        start: DAY0,
        end: DAY0 + 24 * HOUR,
        individual: true,
        uids,
        ..Default::default()
    };
    // The job was submitted with uid 0 (the record's default).
    let reply = svc
        .job_sizes(as_uid(STRANGER, q(vec![0])))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.sizes, vec![4]);
    assert_eq!(reply.rows[0].bucket_jobs, vec![1]);
    let none = svc
        .job_sizes(as_uid(STRANGER, q(vec![1_000])))
        .await
        .unwrap()
        .into_inner();
    assert!(none.sizes.is_empty() && none.rows.is_empty());
}

#[tokio::test]
async fn bad_queries_and_anonymous_callers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let anonymous = svc.cluster_utilization(Request::new(day_query())).await;
    assert_eq!(anonymous.unwrap_err().code(), Code::Unauthenticated);
    let mut q = day_query();
    q.tres = vec!["gres/gpu".into()];
    let e = svc
        .assoc_utilization(as_uid(STRANGER, q))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("gres/gpu"), "{}", e.message());
    let mut q = day_query();
    (q.start, q.end) = (q.end, q.start);
    let e = svc
        .cluster_utilization(as_uid(STRANGER, q))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn private_usage_shows_a_user_only_their_own_rows_and_root_all() {
    let dir = tempfile::tempdir().unwrap();
    let private = sluice_vocab::private_data::PrivateData::parse("usage").unwrap();
    let svc = service(&dir).with_privacy(vec![0], private);
    let users = |uid: u32| {
        let svc = svc.clone();
        async move {
            let reply = svc
                .assoc_utilization(as_uid(uid, day_query()))
                .await
                .unwrap();
            let rows = reply.into_inner().rows;
            rows.into_iter().map(|r| r.user).collect::<Vec<String>>()
        }
    };
    assert!(users(STRANGER).await.is_empty(), "not alice: no rows");
    assert_eq!(users(0).await, ["", "alice", ""]);
}
