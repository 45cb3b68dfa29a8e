//! A controller with an accounting daemon (a fake one): batch and srun steps reach it as
//! Step records, the dbd's administrators are the controller's, and a batch launch carries the
//! job's script arguments and the CPUs it holds.

use crate::runtime_support;
use sluice_testkit::eventually;
use sluice_wire::jobacct::StepUsageWire;

use runtime_support::fake_dbd::FakeDbd;
use runtime_support::*;
use sluice_vocab::JobState;
use sluice_wire::client::CtldClient;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::{
    CreateStepReply, CreateStepRequest, StepDoneRequest, StepRecord, SubmitJobRequest,
    UpdateNodeRequest,
};

/// The next batch launch the fake nodes got (cleanups of ended jobs are skipped).
async fn next_launch(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<NodeEvent>,
) -> sluice_wire::proto::LaunchBatchRequest {
    loop {
        if let NodeEvent::Launch { req, .. } = next_event(events).await {
            return *req;
        }
    }
}

/// The step records the dbd got, in order.
fn steps(dbd: &FakeDbd) -> Vec<StepRecord> {
    dbd.records()
        .into_iter()
        .filter_map(|r| match r.kind {
            Some(Kind::Step(s)) => Some(s),
            _ => None,
        })
        .collect()
}

/// A two-task step `hostname` created in allocation `job_id`, and its start record at the dbd.
async fn hostname_step(
    user: &mut CtldClient,
    dbd: &FakeDbd,
    job_id: u32,
) -> (CreateStepReply, StepRecord) {
    let step = user
        .create_step(CreateStepRequest {
            job_id,
            ntasks: Some(2),
            name: "hostname".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let running = eventually("the step's start record", async || {
        steps(dbd).into_iter().find(|s| s.job_id == job_id)
    })
    .await;
    (step, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_and_srun_steps_are_shipped_and_the_launch_carries_the_jobs_view() {
    let (dir, state) = temp();
    let dbd = FakeDbd::start(&[]).await;
    let (ports, mut events) = fake_nodes(&["n1"]).await;
    let text = conf_text(&state, 1, &dbd.conf_lines());
    let ctld = Ctld::start(conf(dir.path(), &text), None).await;
    let mut admin = client(ctld.port, 0).await;
    register(&mut admin, "n1", ports[0], vec![]).await;
    let mut user = client(ctld.port, 4242).await;

    // Job ids come from the dbd's lease once it answered.
    let submit = SubmitJobRequest {
        script_args: vec!["in.dat".into(), "two words".into()],
        user: "ignored-the-controller-looks-it-up".into(),
        ..job("batch")
    };
    let id = eventually("a job id lease", async || {
        user.submit(submit.clone())
            .await
            .ok()
            .map(|r| r.into_inner().job_id)
    })
    .await;
    let req = next_launch(&mut events).await;
    assert_eq!(req.job_id, id);
    assert_eq!(req.script_args, ["in.dat", "two words"]);
    assert_eq!(
        req.user, "4242",
        "the login name the controller knows for the uid"
    );
    assert_eq!(
        (
            req.cpus_on_node,
            req.cpus_per_node.as_slice(),
            req.cpus_per_task
        ),
        (2, &[2][..], 0),
        "the CPUs it holds; no -c, so no SLURM_CPUS_PER_TASK"
    );
    exited(&mut admin, "n1", id, 3).await;
    let batch = eventually("the batch step record", async || {
        steps(&dbd).into_iter().find(|s| s.job_id == id)
    })
    .await;
    assert_eq!(
        (batch.step_id, batch.name.as_str(), batch.node_list.as_str()),
        (-4, "batch", "n1")
    );
    assert_eq!(
        (batch.exit_code, batch.state, batch.cpus),
        (3, JobState::Failed.stored(), 2)
    );
    assert!(batch.start > 0 && batch.end >= batch.start);

    // `-c 1` given: SLURM_CPUS_PER_TASK is set.
    let with_c = SubmitJobRequest {
        cpus_per_task: Some(1),
        ..job("c")
    };
    let c = user.submit(with_c).await.unwrap().into_inner().job_id;
    let req = next_launch(&mut events).await;
    assert_eq!((req.job_id, req.cpus_per_task), (c, 1));
    exited(&mut admin, "n1", c, 0).await;

    // An srun allocation and its step: a record when it starts, another when it ends.
    let mut srun = user
        .allocate(job("interactive"))
        .await
        .unwrap()
        .into_inner();
    let alloc = granted(&mut srun).await;
    let (step, running) = hostname_step(&mut user, &dbd, alloc.job_id).await;
    assert_eq!(
        (running.name.as_str(), running.end, running.ntasks),
        ("hostname", 0, 2)
    );
    assert_eq!(running.state, JobState::Running.stored());
    // srun reports what the step's tasks used; it goes to the dbd with the step's end.
    let used =
        sluice_vocab::jobacct::StepUsage::from_tasks(&[Default::default()]).map(|u| u.to_proto());
    user.step_done(StepDoneRequest {
        job_id: alloc.job_id,
        step_id: step.step_id,
        exit_code: 0,
        signal: 0,
        end_job: true,
        usage: used.clone(),
    })
    .await
    .unwrap();
    let done = eventually("the step's end record", async || {
        steps(&dbd)
            .into_iter()
            .find(|s| s.job_id == alloc.job_id && s.end > 0)
    })
    .await;
    assert_eq!(
        (done.step_id, done.state, done.start),
        (
            i32::try_from(step.step_id).unwrap(),
            JobState::Completed.stored(),
            running.start
        )
    );
    assert_eq!(done.usage, used);
    assert!(
        steps(&dbd)
            .iter()
            .all(|s| s.job_id != alloc.job_id || s.step_id >= 0),
        "an srun allocation has no batch step"
    );
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dbds_administrators_are_administrators() {
    let (dir, state) = temp();
    // uid 1 is `daemon` on this host; the dbd lists it as an Administrator.
    let name = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(1))
        .unwrap()
        .expect("uid 1 has a name")
        .name;
    let dbd = FakeDbd::start(&[name.as_str()]).await;
    let text = conf_text(&state, 1, &dbd.conf_lines());
    let ctld = Ctld::start(conf(dir.path(), &text), None).await;
    let drain = |reason: &str| UpdateNodeRequest {
        nodes: vec!["n1".into()],
        state: Some("DRAIN".into()),
        reason: Some(reason.into()),
        ..Default::default()
    };
    let mut stranger = client(ctld.port, 4242).await;
    let e = stranger.update_node(drain("no")).await.unwrap_err();
    assert_eq!(e.message(), "Access/permission denied");
    let mut dbd_admin = client(ctld.port, 1).await;
    eventually("the dbd's administrators fetched", async || {
        dbd_admin.update_node(drain("by a dbd admin")).await.ok()
    })
    .await;
    assert!(stranger.update_node(drain("still no")).await.is_err());
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_started_before_a_controller_restart_ends_with_its_start() {
    let (dir, state) = temp();
    let dbd = FakeDbd::start(&[]).await;
    let (ports, _events) = fake_nodes(&["n1"]).await;
    let text = conf_text(&state, 1, &dbd.conf_lines());
    let ctld = Ctld::start(conf(dir.path(), &text), None).await;
    let mut admin = client(ctld.port, 0).await;
    register(&mut admin, "n1", ports[0], vec![]).await;
    let mut user = client(ctld.port, 4242).await;
    // Job ids come from the dbd's lease once it answered.
    let mut srun = eventually("a job id lease", async || {
        user.allocate(job("interactive"))
            .await
            .ok()
            .map(|r| r.into_inner())
    })
    .await;
    let alloc = granted(&mut srun).await;
    let (step, running) = hostname_step(&mut user, &dbd, alloc.job_id).await;
    assert!(running.start > 0);
    drop(srun);
    ctld.stop().await;

    // A new controller process over the same state: the step's start came back with its job.
    let ctld = Ctld::start(conf(dir.path(), &text), None).await;
    let mut admin = client(ctld.port, 0).await;
    register(&mut admin, "n1", ports[0], vec![alloc.job_id]).await;
    let mut user = client(ctld.port, 4242).await;
    user.step_done(StepDoneRequest {
        job_id: alloc.job_id,
        step_id: step.step_id,
        exit_code: 0,
        signal: 0,
        end_job: true,
        usage: None,
    })
    .await
    .unwrap();
    let done = eventually("the step's end record", async || {
        steps(&dbd)
            .into_iter()
            .find(|s| s.job_id == alloc.job_id && s.end > 0)
    })
    .await;
    assert_eq!(
        (
            done.step_id,
            done.state,
            done.start,
            done.name.as_str(),
            done.ntasks,
            done.node_list.as_str()
        ),
        (
            i32::try_from(step.step_id).unwrap(),
            JobState::Completed.stored(),
            running.start,
            "hostname",
            2,
            running.node_list.as_str()
        )
    );
    assert!(done.end >= done.start);
    ctld.stop().await;
}
