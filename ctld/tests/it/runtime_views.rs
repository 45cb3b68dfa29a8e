//! Through the service: a job being killed shows COMPLETING, dependencies show as Slurm's,
//! `scancel N.S` and `scancel -b` signal a part of a job, and a restart drops (from the store
//! too) what the configuration lost, and refuses another cluster's state.

use crate::runtime_support;

use runtime_support::*;
use sluice_ctld::runtime::{self, RuntimeConfig, RuntimeError};
use sluice_ctld::store::StateStore;
use sluice_vocab::JobState;
use sluice_wire::proto::{
    CancelRequest, CreateStepRequest, JobInfo, ListJobsRequest, SignalKind, SubmitJobRequest,
};

async fn show(c: &mut sluice_wire::client::CtldClient, id: u32) -> JobInfo {
    c.list_jobs(ListJobsRequest {
        job_ids: vec![id],
        include_finished: true,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .jobs
    .remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completing_jobs_show_cg_and_dependencies_show_as_slurms() {
    let OneNode {
        _dir,
        ctld,
        mut admin,
        mut events,
        ..
    } = one_node().await;
    let mut user = client(ctld.port, 4242).await;
    let a = user.submit(job("a")).await.unwrap().into_inner().job_id;
    assert!(matches!(
        next_event(&mut events).await,
        NodeEvent::Launch { .. }
    ));
    let dependent = SubmitJobRequest {
        dependency: Some(format!("afterok:{a}")),
        ..job("b")
    };
    let b = user.submit(dependent).await.unwrap().into_inner().job_id;
    assert_eq!(
        show(&mut user, b).await.dependency,
        format!("afterok:{a}(unfulfilled)")
    );
    assert_eq!(show(&mut user, a).await.dependency, "");

    let cancel = CancelRequest {
        job_ids: vec![a],
        ..Default::default()
    };
    let reply = user.cancel(cancel).await.unwrap().into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    // Killed but not exited yet: COMPLETING, found by `-t CG` and by its run's state.
    assert_eq!(
        show(&mut user, a).await.state,
        JobState::Completing.stored()
    );
    for state in [JobState::Completing, JobState::Cancelled] {
        let found = user
            .list_jobs(ListJobsRequest {
                states: vec![state.stored()],
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .jobs;
        assert_eq!(found.iter().map(|j| j.job_id).collect::<Vec<_>>(), [a]);
    }
    assert_eq!(
        show(&mut user, b).await.dependency,
        format!("afterok:{a}(failed)")
    );
    exited(&mut admin, "n1", a, 0).await;
    assert_eq!(show(&mut user, a).await.state, JobState::Cancelled.stored());
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scancel_of_a_step_or_the_batch_shell_signals_only_that() {
    let OneNode {
        _dir,
        ctld,
        mut events,
        ..
    } = one_node().await;
    let mut user = client(ctld.port, 4242).await;
    let id = user.submit(job("s")).await.unwrap().into_inner().job_id;
    assert!(matches!(
        next_event(&mut events).await,
        NodeEvent::Launch { .. }
    ));
    let steps = |texts: &[String], signal: Option<i32>| CancelRequest {
        job_steps: texts.to_vec(),
        signal,
        ..Default::default()
    };

    // No step 0 yet.
    let reply = user
        .cancel(steps(&[format!("{id}.0")], None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.errors.len(), 1);
    assert_eq!(reply.errors[0].message, "Invalid job id specified");
    assert_eq!(reply.errors[0].job, format!("{id}.0"));
    let step = user
        .create_step(CreateStepRequest {
            job_id: id,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .step_id;
    let text = vec![format!("{id}.{step}")];
    let reply = user
        .cancel(steps(&text, Some(10)))
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty() && reply.cancelled.is_empty());
    let NodeEvent::Signal { req, .. } = next_event(&mut events).await else {
        panic!("expected a signal");
    };
    assert_eq!(
        (
            req.job_id,
            req.kind,
            req.signal,
            req.step_id,
            req.batch_only
        ),
        (id, SignalKind::Signal as i32, 10, Some(step), false)
    );
    user.cancel(steps(&text, None)).await.unwrap();
    let NodeEvent::Signal { req, .. } = next_event(&mut events).await else {
        panic!("expected a signal");
    };
    assert_eq!(
        (req.signal, req.step_id),
        (9, Some(step)),
        "a step is cancelled with SIGKILL"
    );
    let mut stranger = client(ctld.port, 5000).await;
    let reply = stranger
        .cancel(steps(&text, None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.errors[0].message, "Access/permission denied");

    // `scancel -b -s USR1`: the batch shell only; the job runs on.
    let batch = CancelRequest {
        job_ids: vec![id],
        batch_only: true,
        signal: Some(10),
        ..Default::default()
    };
    user.cancel(batch).await.unwrap();
    let NodeEvent::Signal { req, .. } = next_event(&mut events).await else {
        panic!("expected a signal");
    };
    assert_eq!((req.signal, req.step_id, req.batch_only), (10, None, true));
    assert_eq!(show(&mut user, id).await.state, JobState::Running.stored());
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_drops_what_the_conf_lost_from_the_store_and_refuses_another_cluster() {
    let (dir, state) = temp();
    let extra = "PartitionName=old Nodes=ALL MaxTime=1:00:00\n";
    let ctld = Ctld::start(conf(dir.path(), &conf_text(&state, 1, extra)), None).await;
    let mut user = client(ctld.port, 4242).await;
    let old = SubmitJobRequest {
        partition: Some("old".into()),
        ..job("o")
    };
    let gone = user.submit(old).await.unwrap().into_inner().job_id;
    let kept = user.submit(job("k")).await.unwrap().into_inner().job_id;
    ctld.stop().await;

    // The partition is gone from slurm.conf: its job leaves the core and the store.
    let ctld = Ctld::start(conf(dir.path(), &conf_text(&state, 1, "")), None).await;
    let mut user = client(ctld.port, 4242).await;
    let ids: Vec<u32> = user
        .list_jobs(ListJobsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .jobs
        .iter()
        .map(|j| j.job_id)
        .collect();
    assert_eq!(ids, [kept]);
    ctld.stop().await;
    let saved: Vec<u32> = StateStore::open(&state)
        .unwrap()
        .load()
        .unwrap()
        .jobs
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(saved, [kept], "job {gone} deleted from the store");

    // Another ClusterName over the same StateSaveLocation is refused.
    let other = conf_text(&state, 1, "").replace("ClusterName=test", "ClusterName=other");
    let cfg = RuntimeConfig {
        conf: conf(dir.path(), &other),
        key: key(),
        ctld_addr: "127.0.0.1:1".into(),
    };
    let Err(e) = runtime::start(cfg) else {
        panic!("started over another cluster's state");
    };
    assert!(matches!(e, RuntimeError::ClusterMismatch { .. }));
    let text = e.to_string();
    assert!(text.contains("CLUSTER NAME MISMATCH"), "{text}");
    assert!(
        text.contains("\"ClusterName=other\"") && text.contains("\"test\""),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_federation_port_is_handed_out_once_and_only_with_a_dbd() {
    let start = |extra: &str| {
        let (dir, state) = temp();
        let cfg = RuntimeConfig {
            conf: conf(dir.path(), &conf_text(&state, 1, extra)),
            key: key(),
            ctld_addr: "ctl.example:6817".into(),
        };
        (dir, runtime::start(cfg).unwrap())
    };
    let (_dir, mut alone) = start("");
    assert!(alone.take_federation_port().is_none());
    alone.shutdown().await;

    // A dbd that is never reached: the port says where this controller is and when it started.
    let (_dir, mut rt) = start("AccountingStorageHost=127.0.0.1\nAccountingStoragePort=1\n");
    let port = rt.take_federation_port().expect("a port with a dbd");
    assert_eq!(port.control_host_port(), ("ctl.example".to_string(), 6817));
    assert!(port.started.secs() > 0);
    assert!(rt.take_federation_port().is_none(), "handed out once");
    rt.shutdown().await;
}
