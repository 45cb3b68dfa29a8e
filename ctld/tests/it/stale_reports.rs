//! Node reports name the node, the job, the run and the step; the core drops a report about an
//! earlier run, from a node that does not hold the step, or about a step that ended already,
//! without touching the job, its nodes or its accounting.

use sluice_ctld::CtldError;
use sluice_ctld::core::{
    BATCH_STEP, JobRef, NodeUpdate, RunReport, Stale, SubmitRequest, on_launch_failed,
    on_node_update, on_requeue,
};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=1")
        .partition("p", "Nodes=n[1-2] Default=YES")
        .build();
    fx.register_all();
    fx
}

fn report(node: &str, run: u32) -> Option<RunReport> {
    Some(RunReport {
        node: node.into(),
        run,
        step: BATCH_STEP,
    })
}

/// Asserts that `result` is a dropped report of `kind` and that it sent and recorded nothing.
fn assert_dropped(fx: &mut CoreFixture, id: FedJobId, result: Result<(), CtldError>, kind: Stale) {
    match result {
        Err(CtldError::StaleReport { job, stale }) => assert_eq!((job, stale), (id, kind)),
        other => panic!("expected a stale report, got {other:?}"),
    }
    let out = fx.out.take();
    assert!(out.node_cmds.is_empty(), "{:?}", out.node_cmds);
    assert!(out.acct.is_empty(), "{:?}", out.acct);
}

/// A job that ran on n1 (run 0), whose node went DOWN: requeued, now running on n2 as run 1.
fn requeued_to_n2(fx: &mut CoreFixture) -> FedJobId {
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "job"));
    assert_eq!(fx.nodes_of(id), "n1");
    let admin = fx.admin();
    let down = NodeUpdate::Down {
        reason: "gone".into(),
    };
    on_node_update(&mut fx.core, &mut fx.out, fx.now, admin, "n1", down).unwrap();
    fx.schedule();
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.state, job.restarts), (JobState::Running, 1));
    assert_eq!(fx.nodes_of(id), "n2");
    fx.out.take();
    id
}

#[test]
fn the_exit_of_an_earlier_run_is_dropped_and_the_new_run_ends_with_its_own_exit() {
    let mut fx = cluster();
    let id = requeued_to_n2(&mut fx);
    // The old node's daemon comes back and reports run 0 ended ("exit status unknown": 1).
    let result = fx.report_exit(id, 1, report("n1", 0));
    assert_dropped(
        &mut fx,
        id,
        result,
        Stale::OlderRun {
            reported: 0,
            current: 1,
        },
    );
    assert_eq!(fx.state(id), JobState::Running);
    // Even from the node the new run is on.
    let result = fx.report_exit(id, 1, report("n2", 0));
    assert!(matches!(
        result,
        Err(CtldError::StaleReport {
            stale: Stale::OlderRun { .. },
            ..
        })
    ));
    fx.exit(id, 0).unwrap();
    assert_eq!(fx.state(id), JobState::Completed);
    assert_eq!(fx.core.job(id).unwrap().exit_code, 0);
}

#[test]
fn an_earlier_runs_exit_is_dropped_while_the_job_waits_in_the_queue() {
    let mut fx = ClusterBuilder::new()
        .nodes("n1", "CPUs=1")
        .partition("p", "Nodes=n1 Default=YES")
        .build();
    fx.register_all();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "job"));
    let admin = fx.admin();
    let down = NodeUpdate::Down {
        reason: "gone".into(),
    };
    on_node_update(&mut fx.core, &mut fx.out, fx.now, admin, "n1", down).unwrap();
    assert_eq!(fx.state(id), JobState::Pending);
    fx.out.take();
    let result = fx.report_exit(id, 1, report("n1", 0));
    assert_dropped(
        &mut fx,
        id,
        result,
        Stale::OlderRun {
            reported: 0,
            current: 1,
        },
    );
    assert_eq!(fx.state(id), JobState::Pending);
}

#[test]
fn an_exit_from_a_node_that_is_not_the_runs_batch_host_is_dropped() {
    let mut fx = cluster();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "job"));
    assert_eq!(fx.nodes_of(id), "n1");
    fx.out.take();
    let result = fx.report_exit(id, 1, report("n2", 0));
    assert_dropped(
        &mut fx,
        id,
        result,
        Stale::NotAllocated { node: "n2".into() },
    );
    // Nor does a step other than the batch script end the job.
    let other_step = Some(RunReport {
        node: "n1".into(),
        run: 0,
        step: 0,
    });
    let result = fx.report_exit(id, 1, other_step);
    assert_dropped(
        &mut fx,
        id,
        result,
        Stale::NotAllocated { node: "n1".into() },
    );
    assert_eq!(fx.state(id), JobState::Running);
    fx.exit(id, 3).unwrap();
    assert_eq!(
        (fx.state(id), fx.core.job(id).unwrap().exit_code),
        (JobState::Failed, 3)
    );
}

#[test]
fn a_second_exit_of_an_ended_batch_step_is_dropped() {
    let mut fx = cluster();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "job"));
    fx.exit(id, 0).unwrap();
    assert_eq!(fx.state(id), JobState::Completed);
    fx.out.take();
    let result = fx.report_exit(id, 1, report("n1", 0));
    assert_dropped(&mut fx, id, result, Stale::StepEnded);
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.state, job.exit_code), (JobState::Completed, 0));
}

#[test]
fn the_exit_of_a_run_requeued_while_it_runs_still_ends_that_run() {
    // A requeue keeps the job completing on its node until the old run's script ends: that
    // report (run 0, while the job already counts run 1) is the one the core waits for.
    let mut fx = cluster();
    let id = fx.submit_and_schedule(SubmitRequest::new(1, "job"));
    let admin = fx.admin();
    on_requeue(&mut fx.core, &mut fx.out, fx.now, admin, JobRef::Job(id)).unwrap();
    let job = fx.core.job(id).unwrap();
    assert!(job.completing);
    assert_eq!((job.state, job.restarts), (JobState::Pending, 1));
    fx.report_exit(id, 0, report("n1", 0)).unwrap();
    assert!(!fx.core.job(id).unwrap().completing);
}

#[test]
fn a_launch_failure_of_an_earlier_run_is_dropped() {
    let mut fx = cluster();
    let id = requeued_to_n2(&mut fx);
    let from = RunReport {
        node: "n2".into(),
        run: 0,
        step: BATCH_STEP,
    };
    let result = on_launch_failed(&mut fx.core, &mut fx.out, fx.now, id, &from);
    assert_dropped(
        &mut fx,
        id,
        result,
        Stale::OlderRun {
            reported: 0,
            current: 1,
        },
    );
    assert_eq!(fx.state(id), JobState::Running);
    assert_eq!(fx.core.node("n2").unwrap().state_name(), "ALLOCATED");
    // The current run's launch failure requeues the job and takes the node down.
    let from = RunReport { run: 1, ..from };
    on_launch_failed(&mut fx.core, &mut fx.out, fx.now, id, &from).unwrap();
    assert_eq!(fx.state(id), JobState::Pending);
}
