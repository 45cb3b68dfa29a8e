//! The timeslicer over time: fairness over many slices counted from the core's accounting
//! records, the time-limit clock of suspended jobs, administrators' suspend and resume, and
//! the gang state after a controller restart.

use crate::gang_support;

use gang_support::{run_secs_from_records, run_to};
use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::snapshot::{JobSnap, NodeSnap, Snapshot};
use sluice_ctld::core::{
    AcctRecord, Caller, Core, IdLease, JobRef, NodeCommand, SubmitRequest, on_resume, on_suspend,
};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState, LocalJobId};
use std::path::Path;

fn one_node(oversubscribe: &str, gang: bool) -> ClusterBuilder {
    let b = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=4 RealMemory=1000")
        .partition(
            "p",
            &format!("Nodes=n1 Default=YES OverSubscribe={oversubscribe}"),
        )
        .conf("SchedulerTimeSlice=30")
        // No heartbeats in these scenarios: nodes never time out.
        .conf("SlurmdTimeout=0");
    if gang { b.conf("PreemptMode=GANG") } else { b }
}

fn start(b: &ClusterBuilder) -> CoreFixture {
    let mut fx = b.build();
    fx.register_all();
    fx.tick();
    fx
}

fn whole_node() -> SubmitRequest {
    SubmitRequest::new(1000, "j")
}

fn resumes_of(fx: &CoreFixture, id: FedJobId) -> usize {
    fx.out
        .node_cmds
        .iter()
        .filter(|c| matches!(c, NodeCommand::Resume { job, .. } if *job == id))
        .count()
}

#[test]
fn each_of_n_jobs_gets_its_share_of_the_slices() {
    for n in 2..=4u64 {
        let mut fx = start(&one_node("FORCE:4", true));
        let ids: Vec<FedJobId> = (0..n)
            .map(|_| fx.submit_and_schedule(whole_node()))
            .collect();
        let slices = 12 * n;
        run_to(&mut fx, slices * 30);
        let ran = run_secs_from_records(&fx);
        let total: u64 = ids.iter().map(|id| ran.get(id).copied().unwrap_or(0)).sum();
        assert_eq!(total, slices * 30, "exactly one job runs at any time");
        for id in &ids {
            let share = ran.get(id).copied().unwrap_or(0);
            let fair = total / n;
            assert!(
                share.abs_diff(fair) <= 30,
                "job {id} ran {share} s of {total} with {n} jobs"
            );
            assert_eq!(
                fx.core.suspended_secs(*id, fx.now) + share,
                fx.now.since(fx.core.job(*id).unwrap().start_time.unwrap())
            );
        }
    }
}

#[test]
fn a_suspended_jobs_time_limit_clock_stops() {
    let mut fx = start(&one_node("FORCE:2", true));
    let limited = fx.submit_and_schedule(whole_node().minutes(1));
    let other = fx.submit_and_schedule(whole_node());
    assert_eq!(fx.state(other), JobState::Suspended);
    run_to(&mut fx, 89);
    assert_eq!(
        fx.state(limited),
        JobState::Running,
        "ran 0-30 and 60-89: 59 s"
    );
    run_to(&mut fx, 90);
    assert_eq!(fx.state(limited), JobState::Timeout);
    assert_eq!(
        fx.state(other),
        JobState::Running,
        "alone once the other is gone"
    );
}

#[test]
fn an_administrator_suspend_gives_resources_back_and_the_timeslicer_leaves_the_job_be() {
    let mut fx = start(&one_node("FORCE:2", true));
    let a = fx.submit_and_schedule(whole_node());
    let b = fx.submit_and_schedule(whole_node());
    assert_eq!(
        (fx.state(a), fx.state(b)),
        (JobState::Running, JobState::Suspended)
    );
    on_suspend(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(a),
    )
    .unwrap();
    assert!(fx.core.is_manually_suspended(a));
    assert_eq!(
        fx.state(b),
        JobState::Running,
        "b has the node to itself now"
    );
    assert_eq!(fx.core.node("n1").unwrap().jobs, [a, b]);
    run_to(&mut fx, 100);
    assert_eq!(
        (fx.state(a), fx.state(b)),
        (JobState::Suspended, JobState::Running)
    );
    // Its resources are free: a third job is co-allocated beside b.
    let c = fx.submit_and_schedule(whole_node());
    assert_eq!(fx.state(c), JobState::Suspended);

    // Resumed, it takes its resources again (3 jobs on a FORCE:2 node) and waits its turn.
    on_resume(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(a),
    )
    .unwrap();
    assert!(!fx.core.is_manually_suspended(a));
    assert_eq!(fx.state(a), JobState::Suspended);
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "ALLOCATED");
    let before = resumes_of(&fx, a);
    run_to(&mut fx, 150);
    assert!(resumes_of(&fx, a) > before, "the timeslicer runs it again");

    // A job the timeslicer suspended is the timeslicer's: resume changes nothing.
    let suspended = [a, b, c]
        .into_iter()
        .find(|&j| fx.state(j) == JobState::Suspended)
        .unwrap();
    on_resume(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(suspended),
    )
    .unwrap();
    assert_eq!(fx.state(suspended), JobState::Suspended);
}

#[test]
fn without_gang_a_suspended_jobs_node_can_be_used_then_shared_on_resume() {
    let mut fx = start(&one_node("NO", false));
    let a = fx.submit_and_schedule(whole_node());
    on_suspend(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(a),
    )
    .unwrap();
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "IDLE");
    let b = fx.submit_and_schedule(whole_node());
    assert_eq!(fx.state(b), JobState::Running);
    on_resume(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(a),
    )
    .unwrap();
    assert_eq!(
        (fx.state(a), fx.state(b)),
        (JobState::Running, JobState::Running)
    );
    assert_eq!(
        fx.core.node("n1").unwrap().alloc_cpus,
        8,
        "both hold the node's 4 CPUs"
    );
    let records: Vec<bool> = fx
        .out
        .acct
        .iter()
        .filter_map(|r| match r {
            AcctRecord::JobSuspended { job, suspended, .. } if *job == a => Some(*suspended),
            _ => None,
        })
        .collect();
    assert_eq!(records, [true, false]);
}

#[test]
fn the_gang_and_allocations_survive_a_restart() {
    let builder = one_node("FORCE:3", true)
        .conf("SelectType=select/cons_tres")
        .conf("SelectTypeParameters=CR_Core");
    let mut fx = start(&builder);
    let a = fx.submit_and_schedule(whole_node().ntasks(3));
    let b = fx.submit_and_schedule(whole_node().ntasks(2));
    let c = fx.submit_and_schedule(whole_node().ntasks(1));
    on_suspend(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(c),
    )
    .unwrap();
    let part = fx.core.job(a).unwrap().partition;
    let queue = fx.core.gang_queue(part);
    assert_eq!(queue, [(a, true), (b, false)]);

    let snap = Snapshot {
        cluster: Some("test".into()),
        jobs: fx.core.jobs().map(|j| JobSnap::of(&fx.core, j)).collect(),
        nodes: fx.core.nodes().iter().map(NodeSnap::of).collect(),
        job_ids: None,
        partitions: Vec::new(),
    };
    let (conf, _) = CtldConf::parse(Path::new("slurm.conf"), &builder.text()).unwrap();
    let ids = IdLease::with_range(None, LocalJobId::new(100).unwrap(), 10);
    let groups = |_: &str| None;
    let back = Core::restore(&conf, snap, Box::new(ids), &groups, fx.now).unwrap();
    assert_eq!(back.gang_queue(part), queue);
    for id in [a, b, c] {
        assert_eq!(
            back.job_alloc(id).map(|x| &x.cores),
            fx.core.job_alloc(id).map(|x| &x.cores)
        );
    }
    assert!(back.is_manually_suspended(c));
    let n1 = back.node("n1").unwrap();
    assert_eq!(
        (n1.alloc_cpus, n1.jobs.len()),
        (5, 3),
        "c holds nothing while suspended"
    );
}
