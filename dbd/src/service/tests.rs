//! Permission checks of the service, called directly with an identity in the request.

use std::sync::Arc;

use sluice_wire::auth::Identity;
use sluice_wire::proto;
use sluice_wire::proto::accounting_server::Accounting;
use tonic::{Code, Request};

use super::AccountingService;
use crate::store::Store;

/// A uid no account database maps to a login name.
const STRANGER: u32 = 3_999_999_001;
const SLURM_USER: u32 = 3_999_999_002;

fn service(dir: &tempfile::TempDir) -> AccountingService {
    let url = format!("sqlite://{}", dir.path().join("acct.db").display());
    let store = Store::connect_at(&url, 1_000).unwrap();
    AccountingService::new(Arc::new(store), vec![0, SLURM_USER])
}

fn as_uid<T>(uid: u32, msg: T) -> Request<T> {
    let mut req = Request::new(msg);
    req.extensions_mut().insert(Identity { uid });
    req
}

fn add_cluster(name: &str) -> proto::AddClustersRequest {
    proto::AddClustersRequest {
        names: vec![name.to_string()],
        commit: true,
        ..Default::default()
    }
}

#[tokio::test]
async fn changes_need_an_admin_and_lists_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let denied = svc
        .add_clusters(as_uid(STRANGER, add_cluster("c1")))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    assert_eq!(denied.message(), "Access/permission denied");
    let lease = proto::LeaseJobIdsRequest {
        cluster: "c1".into(),
        count: 1,
        in_use: vec![],
    };
    let denied = svc
        .lease_job_ids(as_uid(STRANGER, lease.clone()))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);

    let reply = svc
        .add_clusters(as_uid(SLURM_USER, add_cluster("c1")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (reply.committed, reply.names, reply.nothing_changed),
        (true, vec!["c1".to_string()], false)
    );
    let leased = svc
        .lease_job_ids(as_uid(0, lease))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        leased.ranges,
        vec![proto::JobIdRange { first: 1, count: 1 }]
    );

    let listed = svc
        .list_clusters(as_uid(STRANGER, proto::ListClustersRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.clusters.len(), 1);
    let ping = svc
        .ping(as_uid(STRANGER, proto::PingRequest {}))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((ping.caller_uid, ping.caller_is_admin), (STRANGER, false));
    let ping = svc
        .ping(as_uid(0, proto::PingRequest {}))
        .await
        .unwrap()
        .into_inner();
    assert!(ping.caller_is_admin);
}

#[tokio::test]
async fn unauthenticated_requests_and_store_errors_map_to_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let anon = svc
        .list_clusters(Request::new(proto::ListClustersRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(anon.code(), Code::Unauthenticated);
    svc.add_clusters(as_uid(0, add_cluster("c1")))
        .await
        .unwrap();
    let dup = svc
        .add_clusters(as_uid(0, add_cluster("c1")))
        .await
        .unwrap_err();
    assert_eq!(dup.code(), Code::AlreadyExists);
    let bad_edit = proto::ModifyClustersRequest {
        names: vec!["c1".into()],
        features: Some(proto::ListEdit {
            op: 0,
            items: vec!["x".into()],
        }),
        commit: true,
        ..Default::default()
    };
    let err = svc.modify_clusters(as_uid(0, bad_edit)).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let nothing = proto::ModifyClustersRequest {
        names: vec!["c1".into()],
        commit: true,
        ..Default::default()
    };
    let err = svc.modify_clusters(as_uid(0, nothing)).await.unwrap_err();
    assert_eq!(
        (err.code(), err.message()),
        (Code::FailedPrecondition, "Nothing to change")
    );
    let bad_level = proto::ListUsersRequest {
        admin_levels: vec!["bogus".into()],
        ..Default::default()
    };
    assert_eq!(
        svc.list_users(as_uid(0, bad_level))
            .await
            .unwrap_err()
            .code(),
        Code::InvalidArgument
    );
    let preview = svc
        .add_clusters(as_uid(
            0,
            proto::AddClustersRequest {
                commit: false,
                ..add_cluster("c2")
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(!preview.committed);
    let listed = svc
        .list_clusters(as_uid(0, proto::ListClustersRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.clusters.len(), 1, "the preview was rolled back");
}

/// `nobody` (a login name every test host has) and `someone` in account `a`, with
/// `PrivateData=users,accounts` unless `operator`, in which case `nobody` is an Operator.
async fn private_site(dir: &tempfile::TempDir, operator: bool) -> (AccountingService, u32) {
    let private = sluice_vocab::private_data::PrivateData::parse("users,accounts").unwrap();
    let svc = service(dir).with_private_data(private);
    svc.add_clusters(as_uid(0, add_cluster("c1")))
        .await
        .unwrap();
    let account = proto::AddAccountsRequest {
        names: vec!["a".into()],
        commit: true,
        ..Default::default()
    };
    svc.add_accounts(as_uid(0, account)).await.unwrap();
    let users = proto::AddUsersRequest {
        names: vec!["nobody".into(), "someone".into()],
        accounts: vec!["a".into()],
        admin_level: operator.then(|| "Operator".to_string()),
        commit: true,
        ..Default::default()
    };
    svc.add_users(as_uid(0, users)).await.unwrap();
    let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
    (svc, nobody.uid.as_raw())
}

async fn user_names(svc: &AccountingService, uid: u32) -> Vec<String> {
    let reply = svc
        .list_users(as_uid(uid, proto::ListUsersRequest::default()))
        .await
        .unwrap();
    reply
        .into_inner()
        .users
        .into_iter()
        .map(|u| u.name)
        .collect()
}

#[tokio::test]
async fn private_users_and_accounts_hide_others_from_users_not_operators() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, nobody) = private_site(&dir, false).await;
    assert_eq!(user_names(&svc, nobody).await, ["nobody"]);
    assert!(user_names(&svc, STRANGER).await.is_empty());
    assert_eq!(user_names(&svc, 0).await.len(), 3, "root, nobody, someone");
    let assocs = proto::ListAssociationsRequest::default();
    let mine = svc.list_associations(as_uid(nobody, assocs)).await.unwrap();
    let users: Vec<String> = mine
        .into_inner()
        .associations
        .into_iter()
        .map(|a| a.user)
        .collect();
    assert_eq!(users, ["nobody"]);
    let accounts = proto::ListAccountsRequest::default();
    let denied = svc
        .list_accounts(as_uid(nobody, accounts.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        (denied.code(), denied.message()),
        (Code::PermissionDenied, "Access/permission denied")
    );
    assert!(svc.list_accounts(as_uid(0, accounts.clone())).await.is_ok());
    let dir = tempfile::tempdir().unwrap();
    let (svc, nobody) = private_site(&dir, true).await;
    assert_eq!(
        user_names(&svc, nobody).await.len(),
        3,
        "an Operator sees all"
    );
    assert!(svc.list_accounts(as_uid(nobody, accounts)).await.is_ok());
}
