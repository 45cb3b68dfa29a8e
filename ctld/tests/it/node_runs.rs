//! The runs a node daemon reports holding (registration and heartbeat): an entry of an older
//! run of a requeued job is never taken for the current run; the node is told to kill that run
//! (or the steps that ended) and nothing else.

use sluice_ctld::core::{
    Caller, NodeRegistration, NodeRun, StepEnd, StepRequest, SubmitRequest, on_node_heartbeat,
    on_node_registered, on_step_create, on_step_done,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

fn cluster() -> CoreFixture {
    ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=8 RealMemory=4000 TmpDisk=100")
        .partition("p", "Nodes=n[1-2] Default=YES")
        .conf("SlurmdTimeout=60")
        .build()
}

fn reg(fx: &CoreFixture, name: &str, jobs: Vec<NodeRun>) -> NodeRegistration {
    NodeRegistration {
        name: name.into(),
        cpus: 8,
        real_memory_mb: 4000,
        tmp_disk_mb: 100,
        boot_time: fx.now,
        jobs,
        pid: 0,
        again: false,
    }
}

fn run(job: FedJobId, run: u32, steps: Vec<u32>) -> NodeRun {
    NodeRun {
        job,
        run,
        batch: true,
        steps,
    }
}

/// A job on n1, requeued when n1 went silent, running its second run on n2.
fn requeued_onto_n2(fx: &mut CoreFixture) -> FedJobId {
    fx.register_all();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "rq"));
    assert_eq!(fx.nodes_of(id), "n1");
    fx.advance(31);
    on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n2", &[]).unwrap();
    fx.advance(30);
    on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n2", &[]).unwrap();
    fx.tick();
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "DOWN*");
    fx.schedule();
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.state, job.restarts), (JobState::Running, 1));
    assert_eq!(fx.nodes_of(id), "n2");
    id
}

/// A controller killed between recording a batch job's start and sending its launch comes
/// back with the job RUNNING on a node that never heard of it; the node registers at once,
/// before the start timeout. Its heartbeats tell the rest (Slurm's "missing from batch node").
#[test]
fn a_batch_job_missing_from_its_node_past_the_start_timeout_is_requeued_at_a_heartbeat() {
    let mut fx = cluster();
    fx.register_all();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "lost"));
    assert_eq!(fx.nodes_of(id), "n1");
    // Before the timeout the launch may still be on its way: left alone.
    fx.advance(5);
    on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n1", &[]).unwrap();
    assert_eq!(fx.state(id), JobState::Running);
    // Past it, another node's heartbeat and one reporting the run change nothing.
    fx.advance(10);
    on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n2", &[]).unwrap();
    on_node_heartbeat(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        "n1",
        &[run(id, 0, vec![])],
    )
    .unwrap();
    assert_eq!(fx.state(id), JobState::Running);
    // The batch node knows nothing of it: requeued, and it runs again.
    on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n1", &[]).unwrap();
    assert_eq!(fx.state(id), JobState::Pending);
    fx.schedule();
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.state, job.restarts), (JobState::Running, 1));
    // The new run is as new as its start: not failed again at once.
    on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n1", &[]).unwrap();
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn a_node_back_with_an_older_run_is_told_to_kill_that_run_only() {
    let mut fx = cluster();
    let id = requeued_onto_n2(&mut fx);
    let r = reg(&fx, "n1", vec![run(id, 0, vec![])]);
    let kill = on_node_registered(&mut fx.core, &mut fx.out, fx.now, r).unwrap();
    assert_eq!(kill, [NodeRun::whole(id, 0)]);
    assert_eq!(fx.state(id), JobState::Running, "the new run is untouched");
    // n2 holding the current run has nothing to kill.
    let r = reg(&fx, "n2", vec![run(id, 1, vec![])]);
    let kill = on_node_registered(&mut fx.core, &mut fx.out, fx.now, r).unwrap();
    assert!(kill.is_empty(), "{kill:?}");
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn a_node_reporting_an_older_run_only_has_lost_the_current_one() {
    let mut fx = cluster();
    let id = requeued_onto_n2(&mut fx);
    // n2's node daemon rebooted: it holds (somehow) run 0 but not run 1, which started
    // before its boot: the current run is lost, never matched by the old entry.
    fx.advance(5);
    let r = reg(&fx, "n2", vec![run(id, 0, vec![])]);
    let kill = on_node_registered(&mut fx.core, &mut fx.out, fx.now, r).unwrap();
    assert_eq!(kill, [NodeRun::whole(id, 0)]);
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.state, job.restarts), (JobState::Pending, 2));
}

#[test]
fn a_heartbeat_naming_an_older_run_sends_the_node_back_to_registering() {
    let mut fx = cluster();
    let id = requeued_onto_n2(&mut fx);
    let err = on_node_heartbeat(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        "n2",
        &[run(id, 0, vec![])],
    )
    .unwrap_err();
    assert!(
        matches!(err, CtldError::StaleRun { job, run: 0, .. } if job == id),
        "{err}"
    );
    on_node_heartbeat(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        "n2",
        &[run(id, 1, vec![])],
    )
    .unwrap();
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn steps_that_ended_are_killed_and_open_ones_kept() {
    let mut fx = cluster();
    fx.register_all();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "steps"));
    let mut step = || {
        on_step_create(
            &mut fx.core,
            &mut fx.out,
            fx.now,
            Caller::user(1),
            StepRequest::new(id),
        )
        .unwrap()
        .step
    };
    let (s0, s1) = (step(), step());
    on_step_done(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::user(1),
        StepEnd {
            job: id,
            step: s0,
            exit_code: 0,
            signal: 0,
            usage: None,
        },
    )
    .unwrap();
    let r = reg(&fx, "n1", vec![run(id, 0, vec![s0, s1])]);
    let kill = on_node_registered(&mut fx.core, &mut fx.out, fx.now, r).unwrap();
    assert_eq!(
        kill,
        [NodeRun {
            job: id,
            run: 0,
            batch: false,
            steps: vec![s0],
        }]
    );
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn an_admin_down_stays_down_when_a_node_registers_again_but_not_when_its_daemon_restarts() {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=8 RealMemory=4000 TmpDisk=100")
        .partition("p", "Nodes=n[1-2] Default=YES")
        .conf("ReturnToService=2")
        .build();
    fx.register_all();
    sluice_ctld::core::on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        "n2",
        sluice_ctld::core::NodeUpdate::Down {
            reason: "maint".into(),
        },
    )
    .unwrap();
    let mut again = reg(&fx, "n2", Vec::new());
    again.again = true;
    on_node_registered(&mut fx.core, &mut fx.out, fx.now, again).unwrap();
    let n2 = fx.core.node("n2").unwrap();
    assert_eq!(
        (n2.state_name(), n2.reason.as_deref()),
        ("DOWN".into(), Some("maint"))
    );
    // Its node daemon restarted: ReturnToService=2 brings it back.
    let restarted = reg(&fx, "n2", Vec::new());
    on_node_registered(&mut fx.core, &mut fx.out, fx.now, restarted).unwrap();
    assert_eq!(fx.core.node("n2").unwrap().state_name(), "IDLE");
}

#[test]
fn with_prolog_flags_alloc_the_batch_launch_waits_for_every_other_nodes_prolog() {
    use sluice_ctld::core::{NodeCommand, on_node_prolog_done};
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-3]", "CPUs=8 RealMemory=4000 TmpDisk=100")
        .partition("p", "Nodes=n[1-3] Default=YES")
        .conf("PrologFlags=Alloc")
        .build();
    fx.register_all();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "x").nodes(3));
    let launched = |fx: &CoreFixture| {
        fx.out
            .node_cmds
            .iter()
            .any(|c| matches!(c, NodeCommand::LaunchBatch { job, .. } if *job == id))
    };
    assert!(fx.out.node_cmds.iter().any(|c| matches!(
        c,
        NodeCommand::AllocProlog { job, nodes } if *job == id && nodes.len() == 2
    )));
    assert!(!launched(&fx), "held for the other nodes' prologs");
    assert!(fx.core.job_configuring(id));
    on_node_prolog_done(&mut fx.core, &mut fx.out, fx.now, id, "n2", 0);
    // A report of another run, or from the batch host, counts for nothing.
    on_node_prolog_done(&mut fx.core, &mut fx.out, fx.now, id, "n3", 1);
    on_node_prolog_done(&mut fx.core, &mut fx.out, fx.now, id, "n1", 0);
    assert!(!launched(&fx));
    on_node_prolog_done(&mut fx.core, &mut fx.out, fx.now, id, "n3", 0);
    assert!(launched(&fx), "every prolog done: the script starts");
    assert!(!fx.core.job_configuring(id));
    assert_eq!(fx.state(id), JobState::Running);
}
