//! scontrol-style requests through the service: hold/release, suspend (admins only), job
//! updates, node drain, `--test-only`, and the configuration listing.

use crate::runtime_support;

use runtime_support::*;
use sluice_wire::proto::{
    ControlJobRequest, EnvVar, GetConfigRequest, JobAction, ListJobsRequest, ListNodesRequest,
    SubmitJobRequest, UpdateJobRequest, UpdateNodeRequest,
};

fn control(action: JobAction, id: u32) -> ControlJobRequest {
    ControlJobRequest {
        action: action as i32,
        jobs: vec![id.to_string()],
    }
}

async fn reason(c: &mut sluice_wire::client::CtldClient, id: u32) -> (String, i64) {
    let j = c
        .list_jobs(ListJobsRequest {
            job_ids: vec![id],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .jobs
        .remove(0);
    (j.reason, j.time_limit_min)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_suspends_updates_and_drains_follow_slurms_rules() {
    let OneNode {
        _dir,
        ctld,
        mut admin,
        mut events,
        ..
    } = one_node().await;
    let mut user = client(ctld.port, 4242).await;
    let running = user.submit(job("r")).await.unwrap().into_inner().job_id;
    assert!(matches!(
        next_event(&mut events).await,
        NodeEvent::Launch { .. }
    ));
    let pending = user.submit(job("p")).await.unwrap().into_inner().job_id;

    let errors = |r: tonic::Response<sluice_wire::proto::ControlJobReply>| {
        r.into_inner()
            .errors
            .into_iter()
            .map(|e| e.message)
            .collect::<Vec<_>>()
    };
    let r = user
        .control_job(control(JobAction::Uhold, pending))
        .await
        .unwrap();
    assert!(errors(r).is_empty());
    assert_eq!(reason(&mut user, pending).await.0, "JobHeldUser");
    let r = user
        .control_job(control(JobAction::Release, pending))
        .await
        .unwrap();
    assert!(errors(r).is_empty());
    let update = |key: &str, value: &str| UpdateJobRequest {
        jobs: vec![pending.to_string()],
        settings: vec![EnvVar {
            name: key.into(),
            value: value.into(),
        }],
    };
    let r = user.update_job(update("TimeLimit", "10")).await.unwrap();
    assert!(errors(r).is_empty());
    assert_eq!(reason(&mut user, pending).await.1, 10);
    let r = user.update_job(update("TimeLimit", "20")).await.unwrap();
    assert_eq!(
        errors(r),
        ["Access/permission denied"],
        "only admins raise limits"
    );
    let r = user.update_job(update("Partition", "nope")).await.unwrap();
    assert_eq!(errors(r), ["Invalid partition name specified"]);

    let r = user
        .control_job(control(JobAction::Suspend, running))
        .await
        .unwrap();
    assert_eq!(errors(r), ["Access/permission denied"]);
    let r = admin
        .control_job(control(JobAction::Suspend, running))
        .await
        .unwrap();
    assert!(errors(r).is_empty());
    let NodeEvent::Signal { req, .. } = next_event(&mut events).await else {
        panic!("expected a suspend");
    };
    assert_eq!(req.kind, sluice_wire::proto::SignalKind::Suspend as i32);
    // Suspended by an administrator, it gave its node back: the pending job runs there now.
    let NodeEvent::Launch { .. } = next_event(&mut events).await else {
        panic!("expected the pending job's launch on the freed node");
    };

    let drain = UpdateNodeRequest {
        nodes: vec!["n[1]".into()],
        state: Some("DRAIN".into()),
        reason: Some("maintenance".into()),
        ..Default::default()
    };
    let e = user.update_node(drain.clone()).await.unwrap_err();
    assert_eq!(e.message(), "Access/permission denied");
    admin.update_node(drain).await.unwrap();
    let nodes = user
        .list_nodes(ListNodesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .nodes;
    assert!(nodes[0].drain);
    assert_eq!(nodes[0].reason, "maintenance");
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_only_queues_nothing_and_config_is_listed() {
    let (dir, state) = temp();
    let (ports, _events) = fake_nodes(&["n1"]).await;
    let ctld = Ctld::start(conf(dir.path(), &conf_text(&state, 1, "")), None).await;
    let mut admin = client(ctld.port, 0).await;
    register(&mut admin, "n1", ports[0], vec![]).await;
    let mut user = client(ctld.port, 4242).await;
    let probe = SubmitJobRequest {
        test_only: true,
        ..job("probe")
    };
    let r = user.submit(probe).await.unwrap().into_inner();
    // The id the job would get, the cluster's first, which stays unused.
    assert_eq!((r.job_id, r.test_nodes.as_str(), r.test_cpus), (1, "n1", 2));
    assert!(r.test_start > 0);
    let bad = SubmitJobRequest {
        test_only: true,
        partition: Some("nope".into()),
        ..job("probe")
    };
    let e = user.submit(bad).await.unwrap_err();
    assert_eq!(e.message(), "Invalid partition name specified");
    let jobs = user
        .list_jobs(ListJobsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .jobs;
    assert!(jobs.is_empty(), "--test-only queued a job");
    let first = user.submit(job("real")).await.unwrap().into_inner().job_id;
    assert_eq!(first, 1, "--test-only used up no id");

    let conf = user
        .get_config(GetConfigRequest {})
        .await
        .unwrap()
        .into_inner()
        .entries;
    let get = |k: &str| conf.iter().find(|e| e.name == k).map(|e| e.value.clone());
    assert_eq!(get("ClusterName").as_deref(), Some("test"));
    assert_eq!(get("KillWait").as_deref(), Some("0 sec"));
    assert_eq!(get("SlurmUser").as_deref(), Some("root(0)"));
    ctld.stop().await;
}
