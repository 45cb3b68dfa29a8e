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
    req.extensions_mut().insert(Identity { uid, gid: uid });
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

fn account_under(name: &str, parent: Option<&str>) -> proto::AddAccountsRequest {
    proto::AddAccountsRequest {
        names: vec![name.into()],
        parent: parent.map(str::to_string),
        commit: true,
        ..Default::default()
    }
}

fn coordinators(names: &[&str], accounts: &[&str]) -> proto::CoordinatorsRequest {
    proto::CoordinatorsRequest {
        names: names.iter().map(|n| n.to_string()).collect(),
        accounts: accounts.iter().map(|a| a.to_string()).collect(),
        commit: true,
    }
}

#[tokio::test]
async fn a_coordinator_manages_users_sub_accounts_and_coordinators_of_its_realm_only() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, nobody) = private_site(&dir, false).await;
    svc.add_accounts(as_uid(0, account_under("b", None)))
        .await
        .unwrap();
    let denied = |r: Result<_, tonic::Status>| {
        let e = r.unwrap_err();
        assert_eq!(
            (e.code(), e.message()),
            (Code::PermissionDenied, "Access/permission denied")
        );
    };
    // Not a coordinator yet: nothing.
    denied(
        svc.add_accounts(as_uid(nobody, account_under("sub", Some("a"))))
            .await,
    );
    denied(
        svc.add_coordinators(as_uid(nobody, coordinators(&["nobody"], &["a"])))
            .await,
    );
    svc.add_coordinators(as_uid(0, coordinators(&["nobody"], &["a"])))
        .await
        .unwrap();
    // Within account a: sub-accounts, users, coordinators, removing users' associations.
    svc.add_accounts(as_uid(nobody, account_under("sub", Some("a"))))
        .await
        .unwrap();
    let user = proto::AddUsersRequest {
        names: vec!["newbie".into()],
        accounts: vec!["sub".into()],
        commit: true,
        ..Default::default()
    };
    svc.add_users(as_uid(nobody, user.clone())).await.unwrap();
    svc.add_coordinators(as_uid(nobody, coordinators(&["someone"], &["sub"])))
        .await
        .unwrap();
    let leave = proto::DeleteUsersRequest {
        names: vec!["someone".into()],
        accounts: vec!["a".into()],
        commit: false,
    };
    svc.delete_users(as_uid(nobody, leave)).await.unwrap();
    // Outside it, or beyond a coordinator's powers: refused.
    denied(
        svc.add_accounts(as_uid(nobody, account_under("top2", None)))
            .await,
    );
    denied(
        svc.add_accounts(as_uid(nobody, account_under("bsub", Some("b"))))
            .await,
    );
    let elsewhere = proto::AddUsersRequest {
        accounts: vec!["b".into()],
        ..user.clone()
    };
    denied(svc.add_users(as_uid(nobody, elsewhere)).await);
    let admin = proto::AddUsersRequest {
        admin_level: Some("Administrator".into()),
        ..user
    };
    denied(svc.add_users(as_uid(nobody, admin)).await);
    denied(
        svc.add_coordinators(as_uid(nobody, coordinators(&["nobody"], &["b"])))
            .await,
    );
    let whole = proto::DeleteUsersRequest {
        names: vec!["someone".into()],
        accounts: vec![],
        commit: false,
    };
    denied(svc.delete_users(as_uid(nobody, whole)).await);
    denied(
        svc.delete_coordinators(as_uid(nobody, coordinators(&["someone"], &[])))
            .await,
    );
    let modify = proto::ModifyUsersRequest {
        names: vec!["someone".into()],
        admin_level: Some("Operator".into()),
        commit: true,
        ..Default::default()
    };
    denied(svc.modify_users(as_uid(nobody, modify)).await);
    // Revoking within the realm works and reports the grants.
    let reply = svc
        .delete_coordinators(as_uid(nobody, coordinators(&[], &["sub"])))
        .await
        .unwrap()
        .into_inner();
    let revoked: Vec<(String, String)> = reply
        .revoked
        .into_iter()
        .map(|g| (g.user, g.account))
        .collect();
    assert_eq!(revoked, [("someone".to_string(), "sub".to_string())]);
    // Lists show the realm.
    let users = svc
        .list_users(as_uid(0, proto::ListUsersRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .users;
    let coord = users.iter().find(|u| u.name == "nobody").unwrap();
    assert_eq!(coord.coord_accounts, ["a", "sub"]);
}

#[tokio::test]
async fn controllers_watching_associations_hear_of_committed_changes_only() {
    use tokio_stream::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir);
    let req = || proto::WatchAssociationsRequest {
        cluster: "c1".into(),
    };
    let refused = svc.watch_associations(as_uid(STRANGER, req())).await;
    assert_eq!(
        refused.err().map(|s| s.code()),
        Some(Code::PermissionDenied)
    );
    let mut stream = svc
        .watch_associations(as_uid(SLURM_USER, req()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stream.next().await.unwrap().unwrap().generation, 0);
    // A preview changes nothing and tells nothing; a commit does.
    let mut preview = add_cluster("c1");
    preview.commit = false;
    svc.add_clusters(as_uid(0, preview)).await.unwrap();
    svc.add_clusters(as_uid(0, add_cluster("c1")))
        .await
        .unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap().generation, 1);
    svc.change_signal().stop_streams();
    assert!(stream.next().await.is_none());
}
