//! `StepStats` (sstat's question): the usage so far of a job's running steps, for the job's
//! owner and admins only.

use crate::common;
use sluice_testkit::eventually;

use common::*;
use sluice_wire::auth::Key;
use sluice_wire::proto::{SignalJobRequest, SignalKind, StepStatsRequest};

const NODE: &str = "NodeName=n1 NodeAddr=127.0.0.1 Port=0 CPUs=4";
/// A uid that owns nothing here and is no admin of the daemon.
const STRANGER: u32 = 65534;

fn stats(job_id: u32) -> StepStatsRequest {
    StepStatsRequest { job_id }
}

#[tokio::test]
async fn a_running_batch_step_is_shown_to_its_owner_only() {
    let ctld = FakeCtld::start(&Key::from_bytes(vec![42; 64]), 0, Vec::new()).await;
    let cluster = TestCluster::new(ctld.port, NODE);
    let noded = cluster.start_noded("n1").await;
    let work = cluster.workdir("s1");
    let req = launch_request(401, &work, "#!/bin/sh\nsleep 60\n");
    let owner = req.uid;
    noded.client().await.launch_batch(req).await.unwrap();
    let mut client = noded.client_as(owner).await;
    let steps = eventually("the batch step is sampled", async || {
        let reply = client.step_stats(stats(401)).await.unwrap().into_inner();
        (!reply.steps.is_empty()).then_some(reply.steps)
    })
    .await;
    assert_eq!(steps.len(), 1);
    assert_eq!((steps[0].step_id, steps[0].node_list.as_str()), (-4, "n1"));
    assert_eq!(steps[0].usage.as_ref().map(|u| u.tasks), Some(1));
    assert!(!steps[0].pids.is_empty(), "the script's pid");

    let mut stranger = noded.client_as(STRANGER).await;
    let refused = stranger.step_stats(stats(401)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let none = stranger.step_stats(stats(999)).await.unwrap().into_inner();
    assert!(
        none.steps.is_empty(),
        "a job with nothing here has no steps"
    );

    let kill = SignalJobRequest {
        job_id: 401,
        kind: SignalKind::Terminate as i32,
        ..Default::default()
    };
    noded.client().await.signal_job(kill).await.unwrap();
    ctld.exit_of(401).await;
    noded.stop().await;
}
