//! Node manager scenarios: registration checks, heartbeats, DOWN on silence with its jobs'
//! fate, admin updates, and job steps.

use sluice_ctld::core::{
    AcctRecord, Caller, JobReason, JobRef, NodeCommand, NodeEventKind, NodeRegistration, NodeRun,
    NodeUpdate, StepRequest, SubmitRequest, on_controller_stalled, on_node_heartbeat,
    on_node_registered, on_node_update, on_requeue, on_step_create,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

fn cluster(extra: &str) -> CoreFixture {
    ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=8 RealMemory=4000 TmpDisk=100")
        .partition("p", "Nodes=n[1-2] Default=YES")
        .conf("SlurmdTimeout=60")
        .conf(extra)
        .build()
}

fn reg(fx: &CoreFixture, name: &str, cpus: u32, mem: u64) -> NodeRegistration {
    NodeRegistration {
        name: name.into(),
        cpus,
        real_memory_mb: mem,
        tmp_disk_mb: 100,
        boot_time: fx.now,
        jobs: Vec::new(),
        pid: 0,
        again: false,
    }
}

fn register(fx: &mut CoreFixture, r: NodeRegistration) {
    on_node_registered(&mut fx.core, &mut fx.out, fx.now, r).unwrap();
}

/// A heartbeat of node `name` reporting the runs the controller placed there (a node running
/// what it was given: one reporting nothing would have lost its batch launches).
fn beat(fx: &mut CoreFixture, name: &str) {
    let runs: Vec<NodeRun> = fx
        .core
        .node(name)
        .unwrap()
        .jobs
        .iter()
        .filter_map(|&job| Some(NodeRun::whole(job, fx.core.job(job)?.restarts)))
        .collect();
    on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, name, &runs).unwrap();
}

#[test]
fn nodes_are_unusable_until_they_register() {
    let mut fx = cluster("");
    let id = fx.submit(SubmitRequest::new(1, "x")).unwrap();
    fx.schedule();
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "UNKNOWN");
    assert_eq!(fx.reason(id), JobReason::Resources);
    let r = reg(&fx, "n2", 8, 4000);
    register(&mut fx, r);
    fx.schedule();
    assert_eq!(fx.nodes_of(id), "n2");
    assert_eq!(fx.core.node("n2").unwrap().state_name(), "ALLOCATED");
    let err = on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n9", &[]).unwrap_err();
    assert_eq!(err.to_string(), "Invalid node name specified");
}

#[test]
fn registering_with_too_few_resources_drains_the_node_as_invalid() {
    let mut fx = cluster("");
    let r = reg(&fx, "n1", 4, 3000);
    register(&mut fx, r);
    let n1 = fx.core.node("n1").unwrap();
    assert_eq!(
        n1.reason.as_deref(),
        Some("Low CPUs, Low RealMemory (reported:3000 < 100.00% of configured:4000)")
    );
    assert!(n1.invalid && n1.drain);
    assert_eq!(n1.state_name(), "INVAL");
    assert!(fx.out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::NodeEvent {
            kind: NodeEventKind::Drain,
            ..
        }
    )));
    let r = reg(&fx, "n2", 16, 8000);
    register(&mut fx, r);
    assert_eq!(
        fx.core.node("n2").unwrap().state_name(),
        "IDLE",
        "more than configured is fine"
    );
    let a = fx.submit(SubmitRequest::new(1, "a")).unwrap();
    let b = fx.submit(SubmitRequest::new(1, "b")).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(a), "n2");
    assert_eq!(fx.reason(b), JobReason::Resources);
}

#[test]
fn silent_node_goes_down_and_its_job_is_requeued_or_fails() {
    let mut fx = cluster("");
    fx.register_all();
    let requeued = fx.submit(SubmitRequest::new(1, "rq")).unwrap();
    let failed = fx.submit(SubmitRequest::new(1, "nf").no_requeue()).unwrap();
    fx.schedule();
    assert_eq!(
        (fx.nodes_of(requeued), fx.nodes_of(failed)),
        ("n1".into(), "n2".into())
    );
    fx.advance(19);
    fx.tick();
    assert!(
        !fx.core.node("n1").unwrap().not_responding,
        "19s is within the ping interval"
    );
    fx.advance(11);
    beat(&mut fx, "n1");
    fx.tick();
    assert_eq!(fx.core.node("n2").unwrap().state_name(), "ALLOCATED*");
    fx.advance(30);
    fx.tick();
    // n2 silent for 60s: DOWN; n1 heard 30s ago.
    let n2 = fx.core.node("n2").unwrap();
    assert_eq!(
        (n2.state_name().as_str(), n2.reason.as_deref()),
        ("DOWN*", Some("Not responding"))
    );
    assert_eq!(
        (fx.state(failed), fx.reason(failed)),
        (JobState::NodeFail, JobReason::NodeDown)
    );
    assert_eq!(fx.state(requeued), JobState::Running);
    fx.advance(30);
    fx.tick();
    // n1 silent too: its job goes back to the queue, recorded as NODE_FAIL.
    let job = fx.core.job(requeued).unwrap();
    assert_eq!((job.state, job.restarts), (JobState::Pending, 1));
    let ended: Vec<(FedJobId, JobState)> = fx
        .out
        .acct
        .iter()
        .filter_map(|r| match r {
            AcctRecord::JobEnded { job, state, .. } => Some((*job, *state)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        [(failed, JobState::NodeFail), (requeued, JobState::NodeFail)]
    );
    assert_eq!(fx.reason(requeued), JobReason::Resources, "no node left");
}

#[test]
fn return_to_service_decides_whether_a_down_node_comes_back() {
    for (rts, back) in [("ReturnToService=0", false), ("ReturnToService=1", true)] {
        let mut fx = cluster(rts);
        fx.register_all();
        fx.advance(61);
        fx.tick();
        assert_eq!(fx.core.node("n1").unwrap().state_name(), "DOWN*");
        let r = reg(&fx, "n1", 8, 4000);
        register(&mut fx, r);
        assert_eq!(
            fx.core.node("n1").unwrap().state_name() == "IDLE",
            back,
            "{rts}"
        );
    }
}

#[test]
fn a_rebooted_node_loses_its_jobs_and_unknown_jobs_are_killed() {
    let mut fx = cluster("");
    fx.register_all();
    let id = fx.submit(SubmitRequest::new(1, "x").no_requeue()).unwrap();
    fx.schedule();
    fx.advance(30);
    let mut r = reg(&fx, "n1", 8, 4000);
    r.jobs = vec![NodeRun::whole(FedJobId::from_raw(4242).unwrap(), 0)];
    register(&mut fx, r);
    assert_eq!(fx.state(id), JobState::NodeFail);
    assert!(
        fx.out
            .node_cmds
            .iter()
            .any(|c| matches!(c, NodeCommand::Terminate { job, .. } if job.get() == 4242))
    );
}

#[test]
fn admin_drain_and_resume() {
    let mut fx = cluster("");
    fx.register_all();
    let drain = NodeUpdate::Drain {
        reason: "maint".into(),
    };
    let err = on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::user(1),
        "n1",
        drain.clone(),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Access/permission denied");
    let id = fx.submit(SubmitRequest::new(1, "x")).unwrap();
    fx.schedule();
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        "n1",
        drain,
    )
    .unwrap();
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "DRAINING");
    fx.exit(id, 0).unwrap();
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "DRAINED");
    let next = fx.submit(SubmitRequest::new(1, "y")).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(next), "n2");
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        "n1",
        NodeUpdate::Resume,
    )
    .unwrap();
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "IDLE");
}

#[test]
fn steps_launch_on_the_jobs_nodes() {
    let mut fx = cluster("");
    fx.register_all();
    let id = fx.submit(SubmitRequest::new(1, "x").nodes(2)).unwrap();
    let pending = fx.submit(SubmitRequest::new(1, "y")).unwrap();
    fx.schedule();
    let step = |fx: &mut CoreFixture, job| {
        on_step_create(
            &mut fx.core,
            &mut fx.out,
            fx.now,
            Caller::user(1),
            StepRequest {
                ntasks: Some(2),
                min_nodes: Some(2),
                ..StepRequest::new(job)
            },
        )
        .map(|grant| grant.step)
    };
    assert_eq!(step(&mut fx, id).unwrap(), 0);
    assert_eq!(step(&mut fx, id).unwrap(), 1);
    assert!(
        matches!(fx.out.node_cmds.last(), Some(NodeCommand::LaunchStep { step: 1, node_list, .. }) if node_list == "n[1-2]")
    );
    assert_eq!(
        step(&mut fx, pending).unwrap_err().to_string(),
        "Job is pending execution"
    );
}

#[test]
fn a_node_heartbeating_every_interval_never_shows_not_responding() {
    // SlurmdTimeout=60: nodes beat every 20 s; a tick may come just before a beat (or with
    // the beat a second late) without the node flapping to `*`.
    let mut fx = cluster("");
    fx.register_all();
    for _ in 0..5 {
        fx.advance(21);
        fx.tick();
        assert!(
            !fx.core.node("n1").unwrap().not_responding,
            "a beat due now is not yet missed"
        );
        beat(&mut fx, "n1");
    }
    fx.advance(30);
    fx.tick();
    assert!(
        fx.core.node("n1").unwrap().not_responding,
        "a missed beat shows"
    );
}

#[test]
fn a_node_down_for_silence_that_beats_again_must_register_and_return_to_service_decides() {
    // Every node silent past SlurmdTimeout (the controller ran all along: a network cut).
    let mut fx = cluster("ReturnToService=1");
    fx.register_all();
    fx.advance(61);
    fx.tick();
    let n1 = fx.core.node("n1").unwrap();
    assert_eq!(n1.reason.as_deref(), Some("Not responding"));
    // Its next heartbeat is answered "register again" (the node daemon does), and the
    // registration brings it back under ReturnToService=1.
    let err = on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n1", &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node n1 is DOWN (Not responding): register again"
    );
    let r = reg(&fx, "n1", 8, 4000);
    register(&mut fx, r);
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "IDLE");
    beat(&mut fx, "n1");
    // A node an administrator set DOWN is not asked to register: it stays down.
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        "n1",
        NodeUpdate::Down {
            reason: "maintenance".into(),
        },
    )
    .unwrap();
    beat(&mut fx, "n1");
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "DOWN");
}

#[test]
fn a_controller_stopped_past_slurmd_timeout_does_not_blame_the_nodes_for_its_own_silence() {
    // The controller was held (SIGSTOP) for 61 s past a 60 s SlurmdTimeout while a job ran:
    // its nodes were fine, and its job must keep running (its end, if it came meanwhile, is
    // reported once the nodes are heard again).
    let mut fx = cluster("");
    fx.register_all();
    let job = fx.submit(SubmitRequest::new(1, "j")).unwrap();
    fx.schedule();
    fx.advance(10);
    beat(&mut fx, "n1");
    beat(&mut fx, "n2");
    fx.advance(10);
    fx.tick();
    fx.advance(61);
    on_controller_stalled(&mut fx.core, fx.now, 61);
    fx.tick();
    for n in ["n1", "n2"] {
        let node = fx.core.node(n).unwrap();
        assert!(
            node.reason.is_none() && !node.not_responding,
            "{n} blamed for the controller's stop: {:?}",
            node.reason
        );
    }
    assert_eq!(fx.state(job), JobState::Running);
    // The silence before the stop still counts: 10 s before it and 20 s after, the nodes are
    // shown not responding (SlurmdTimeout=60 beats every 20 s), and 30 s later they are DOWN.
    fx.advance(20);
    fx.tick();
    assert!(fx.core.node("n1").unwrap().not_responding);
    assert_eq!(fx.core.node("n1").unwrap().reason, None);
    fx.advance(30);
    fx.tick();
    assert_eq!(
        fx.core.node("n1").unwrap().reason.as_deref(),
        Some("Not responding")
    );
}

#[test]
fn an_srun_allocation_on_a_node_set_down_ends_as_node_fail_and_frees_the_node() {
    // The default `--requeue` requeues a batch job; an srun or salloc allocation ends with
    // its command, so it is never requeued (Slurm answers "Only batch jobs ..." to
    // `scontrol requeue` of one).
    let mut fx = cluster("ReturnToService=1");
    fx.register_all();
    let mut req = SubmitRequest::new(1, "srun");
    req.launch.interactive = true;
    let alloc = fx.submit(req).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(alloc), "n1");
    let refused = on_requeue(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(alloc),
    );
    assert!(matches!(refused, Err(CtldError::BatchOnly)), "{refused:?}");
    fx.advance(30);
    beat(&mut fx, "n2");
    fx.advance(31);
    fx.tick();
    let n1 = fx.core.node("n1").unwrap();
    assert_eq!(n1.state_name(), "DOWN*");
    assert!(n1.jobs.is_empty(), "{:?}", n1.jobs);
    assert_eq!(
        (fx.state(alloc), fx.reason(alloc)),
        (JobState::NodeFail, JobReason::NodeDown)
    );
    assert_eq!(fx.core.job(alloc).unwrap().restarts, 0);
    // The node back is idle: nothing holds it.
    let r = reg(&fx, "n1", 8, 4000);
    register(&mut fx, r);
    fx.tick();
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "IDLE");
    assert_eq!(fx.state(alloc), JobState::NodeFail);
}
