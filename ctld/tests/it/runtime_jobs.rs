//! The controller runtime and service with fake node daemons: launch only after the commit,
//! exits, cancel permissions, srun allocations.

use crate::runtime_support;

use runtime_support::*;
use sluice_testkit::eventually;
use sluice_vocab::JobState;
use sluice_wire::proto::allocation_event::Event;
use sluice_wire::proto::{
    CancelRequest, CompleteAllocationRequest, CreateStepRequest, JobShare, ListJobsRequest,
    SignalKind, StepDoneRequest, SubmitJobRequest,
};

async fn job_state(c: &mut sluice_wire::client::CtldClient, id: u32) -> (JobState, i32) {
    let jobs = c
        .list_jobs(ListJobsRequest {
            job_ids: vec![id],
            include_finished: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .jobs;
    let j = &jobs[0];
    (JobState::from_stored(j.state).unwrap(), j.exit_code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exits_end_jobs_completed_or_failed() {
    let (dir, state) = temp();
    let (ports, mut events) = fake_nodes(&["n1", "n2"]).await;
    let ctld = Ctld::start(conf(dir.path(), &conf_text(&state, 2, "")), None).await;
    let mut admin = client(ctld.port, 0).await;
    register(&mut admin, "n1", ports[0], vec![]).await;
    register(&mut admin, "n2", ports[1], vec![]).await;
    let mut user = client(ctld.port, 4242).await;
    let a = user.submit(job("ok")).await.unwrap().into_inner().job_id;
    let b = user.submit(job("bad")).await.unwrap().into_inner().job_id;
    let mut host = std::collections::HashMap::new();
    for _ in 0..2 {
        if let NodeEvent::Launch { node, req } = next_event(&mut events).await {
            host.insert(req.job_id, node);
        }
    }
    assert_eq!(job_state(&mut user, a).await.0, JobState::Running);
    exited(&mut admin, &host[&a], a, 0).await;
    exited(&mut admin, &host[&b], b, 3).await;
    assert_eq!(job_state(&mut user, a).await, (JobState::Completed, 0));
    assert_eq!(job_state(&mut user, b).await, (JobState::Failed, 3));
    // A repeated report (lost reply) is acknowledged and changes nothing.
    exited(&mut admin, &host[&b], b, 0).await;
    assert_eq!(job_state(&mut user, b).await, (JobState::Failed, 3));
    // Node daemons' calls need an administrator's signature.
    let mut rogue = client(ctld.port, 4242).await;
    let e = rogue
        .job_exited(sluice_wire::proto::JobExitedRequest::default())
        .await
        .unwrap_err();
    assert_eq!(e.message(), "Access/permission denied");
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_cancel_only_their_own_jobs_and_admins_any() {
    let OneNode {
        _dir,
        ctld,
        mut admin,
        mut events,
        ..
    } = one_node().await;
    let mut owner = client(ctld.port, 1001).await;
    let mut other = client(ctld.port, 1002).await;
    let running = owner.submit(job("r")).await.unwrap().into_inner().job_id;
    let pending = owner.submit(job("p")).await.unwrap().into_inner().job_id;
    let last = owner.submit(job("q")).await.unwrap().into_inner().job_id;
    assert!(matches!(
        next_event(&mut events).await,
        NodeEvent::Launch { .. }
    ));

    let by_id = |id: u32| CancelRequest {
        job_ids: vec![id],
        ..Default::default()
    };
    let reply = other.cancel(by_id(pending)).await.unwrap().into_inner();
    assert!(reply.cancelled.is_empty());
    assert_eq!(reply.errors[0].message, "Access/permission denied");
    assert_eq!(job_state(&mut owner, pending).await.0, JobState::Pending);
    // A user's filters reach only the user's own jobs.
    let reply = other
        .cancel(CancelRequest {
            names: vec!["p".into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.cancelled.is_empty() && reply.errors.is_empty());

    let reply = owner.cancel(by_id(pending)).await.unwrap().into_inner();
    assert_eq!(reply.cancelled, [pending]);
    assert_eq!(job_state(&mut owner, pending).await.0, JobState::Cancelled);

    let reply = admin.cancel(by_id(running)).await.unwrap().into_inner();
    assert_eq!(reply.cancelled, [running]);
    let NodeEvent::Signal { req, .. } = next_event(&mut events).await else {
        panic!("expected the job to be killed");
    };
    assert_eq!(
        (req.job_id, req.kind),
        (running, SignalKind::Terminate as i32)
    );
    let reply = admin.cancel(by_id(last)).await.unwrap().into_inner();
    assert_eq!(reply.cancelled, [last]);
    let reply = owner.cancel(by_id(999_999)).await.unwrap().into_inner();
    assert_eq!(reply.errors[0].message, "Invalid job id specified");
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srun_allocations_stream_queued_then_granted_and_end_with_their_step() {
    let OneNode {
        _dir,
        ctld,
        mut admin,
        node_port,
        mut events,
    } = one_node().await;
    let mut user = client(ctld.port, 4242).await;
    let batch = user.submit(job("busy")).await.unwrap().into_inner().job_id;
    assert!(matches!(
        next_event(&mut events).await,
        NodeEvent::Launch { .. }
    ));

    let mut srun = user
        .allocate(job("interactive"))
        .await
        .unwrap()
        .into_inner();
    let first = srun.message().await.unwrap().unwrap();
    assert_eq!(first.event, Some(Event::Queued("Resources".into())));
    let alloc_id = first.job_id;
    exited(&mut admin, "n1", batch, 0).await;
    let granted = granted(&mut srun).await;
    assert_eq!(
        (granted.job_id, granted.node_list.as_str()),
        (alloc_id, "n1")
    );
    assert_eq!(granted.nodes[0].port, u32::from(node_port));
    assert!(srun.message().await.unwrap().is_none(), "the stream ends");

    let step = user
        .create_step(CreateStepRequest {
            job_id: alloc_id,
            ntasks: Some(2),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(step.allocation.unwrap().ntasks, 2);
    user.step_done(StepDoneRequest {
        job_id: alloc_id,
        step_id: step.step_id,
        exit_code: 0,
        signal: 0,
        end_job: true,
        usage: None,
    })
    .await
    .unwrap();
    assert_eq!(
        job_state(&mut user, alloc_id).await,
        (JobState::Completed, 0)
    );
    // The interactive job was never sent a batch launch: only its cleanup reached the node.
    let NodeEvent::Signal { req, .. } = next_event(&mut events).await else {
        panic!("an srun allocation got a batch launch");
    };
    assert_eq!(req.job_id, batch);
    let NodeEvent::Signal { req, .. } = next_event(&mut events).await else {
        panic!("an srun allocation got a batch launch");
    };
    assert_eq!(req.job_id, alloc_id);
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn salloc_follows_its_allocation_to_the_end_and_completes_it_with_its_status() {
    let OneNode {
        _dir,
        ctld,
        mut admin,
        ..
    } = one_node().await;
    let mut user = client(ctld.port, 4242).await;
    let mut other = client(ctld.port, 4343).await;
    // Whole-node jobs: the next one starts only once the node is free.
    let exclusive = |name: &str| SubmitJobRequest {
        share: JobShare::Exclusive.into(),
        ..job(name)
    };
    let follow = |name: &str| SubmitJobRequest {
        follow_end: true,
        ..exclusive(name)
    };

    // Completed by its owner with the command's status; nobody else may.
    let mut salloc = user
        .allocate(follow("interactive"))
        .await
        .unwrap()
        .into_inner();
    let id = granted(&mut salloc).await.job_id;
    let done = |exit_code| CompleteAllocationRequest {
        job_id: id,
        exit_code,
        signal: 0,
    };
    let refused = other.complete_allocation(done(0)).await.unwrap_err();
    assert_eq!(refused.message(), "Access/permission denied");
    user.complete_allocation(done(3)).await.unwrap();
    assert_eq!(job_state(&mut user, id).await, (JobState::Failed, 3));
    let ev = salloc.message().await.unwrap().unwrap();
    assert_eq!(ev.event, Some(Event::Ended("FAILED".into())));

    // Revoked by scancel: salloc is told, and the nodes are free although nobody reports
    // the allocation's end.
    let mut salloc = user
        .allocate(follow("interactive"))
        .await
        .unwrap()
        .into_inner();
    let id = granted(&mut salloc).await.job_id;
    admin
        .cancel(CancelRequest {
            job_ids: vec![id],
            ..Default::default()
        })
        .await
        .unwrap();
    let ev = salloc.message().await.unwrap().unwrap();
    assert_eq!(ev.event, Some(Event::Ended("CANCELLED".into())));
    assert!(salloc.message().await.unwrap().is_none(), "the stream ends");
    let next = user
        .submit(exclusive("after"))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    eventually("the next job to start on the freed node", async || {
        (job_state(&mut user, next).await.0 == JobState::Running).then_some(())
    })
    .await;
    // A late completion of the revoked allocation changes nothing.
    user.complete_allocation(CompleteAllocationRequest {
        job_id: id,
        exit_code: 0,
        signal: 0,
    })
    .await
    .unwrap();
    assert_eq!(job_state(&mut user, id).await.0, JobState::Cancelled);
    ctld.stop().await;
}
