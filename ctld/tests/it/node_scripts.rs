//! A node's failed prolog or epilog, as Slurm handles it: the node is drained (`Prolog error`,
//! `Epilog error`); a batch job whose prolog failed is requeued and held (`launch failed
//! requeued held`) until an administrator releases it, or ends NODE_FAIL with `--no-requeue`.

use sluice_ctld::core::completion::WHOLE_JOB_STEP;
use sluice_ctld::core::{
    AcctRecord, Caller, HoldKind, JobExit, JobReason, JobRef, NodeCommand, NodeScript, RunReport,
    SimTime, SubmitRequest, on_job_exited, on_release,
};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=4 RealMemory=1000")
        .partition("debug", "Nodes=ALL Default=YES")
        .conf("SlurmdTimeout=0")
        .build();
    fx.register_all();
    fx.now = SimTime::from_secs(1_000);
    fx
}

fn started(fx: &mut CoreFixture, req: SubmitRequest) -> FedJobId {
    let id = fx.submit(req).unwrap();
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running);
    fx.out.take();
    id
}

fn node_view(fx: &CoreFixture, name: &str) -> (String, Option<String>) {
    let n = fx.core.node(name).unwrap();
    (n.state_name(), n.reason.clone())
}

#[test]
fn a_failed_prolog_drains_the_node_and_requeues_the_job_held() {
    let mut fx = cluster();
    let id = started(&mut fx, SubmitRequest::new(1000, "b"));
    assert_eq!(fx.nodes_of(id), "n1");
    fx.advance(5);
    fx.report_script_failure(id, 1, NodeScript::Prolog).unwrap();
    assert_eq!(
        node_view(&fx, "n1"),
        ("DRAINED".into(), Some("Prolog error".into()))
    );
    assert_eq!(fx.state(id), JobState::Pending);
    assert_eq!(fx.reason(id), JobReason::LaunchFailedRequeuedHeld);
    assert_eq!(fx.reason(id).as_str(), "launch failed requeued held");
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.hold, job.restarts), (Some(HoldKind::Admin), 1));
    let out = fx.out.take();
    assert!(
        out.node_cmds
            .iter()
            .any(|c| matches!(c, NodeCommand::Terminate { job, .. } if *job == id))
    );
    let requeued = out.acct.iter().any(|r| {
        matches!(r, AcctRecord::JobEnded { job, state: JobState::Requeued, run: 0, .. } if *job == id)
    });
    assert!(requeued, "the failed run is recorded as requeued");
    let drained = out.acct.iter().any(|r| {
        matches!(r, AcctRecord::NodeEvent { node, reason: Some(why), .. } if node == "n1" && why == "Prolog error")
    });
    assert!(drained, "the drain is recorded for sacctmgr/sreport");

    fx.schedule();
    assert_eq!(fx.state(id), JobState::Pending, "held: not started again");
    assert_eq!(fx.reason(id), JobReason::LaunchFailedRequeuedHeld);
    let user = Caller::user(1000);
    let denied = on_release(&mut fx.core, &mut fx.out, user, JobRef::Job(id)).unwrap_err();
    assert_eq!(denied.to_string(), "Access/permission denied");
    on_release(&mut fx.core, &mut fx.out, Caller::admin(), JobRef::Job(id)).unwrap();
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running);
    assert_eq!(fx.nodes_of(id), "n2", "the drained node takes no work");
}

#[test]
fn a_job_that_may_not_be_requeued_ends_node_fail() {
    let mut fx = cluster();
    let id = started(&mut fx, SubmitRequest::new(1000, "b").no_requeue());
    fx.report_script_failure(id, 1, NodeScript::Prolog).unwrap();
    assert_eq!(fx.state(id), JobState::NodeFail);
    assert_eq!(node_view(&fx, "n1").1.as_deref(), Some("Prolog error"));
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "DRAINED");
}

#[test]
fn a_failed_epilog_drains_the_node_and_the_job_keeps_its_exit() {
    let mut fx = cluster();
    let id = started(&mut fx, SubmitRequest::new(1000, "b"));
    fx.report_script_failure(id, 0, NodeScript::Epilog).unwrap();
    assert_eq!(fx.state(id), JobState::Completed);
    assert_eq!(
        node_view(&fx, "n1"),
        ("DRAINED".into(), Some("Epilog error".into()))
    );
    assert_eq!(node_view(&fx, "n2"), ("IDLE".into(), None));
}

#[test]
fn a_prolog_failure_of_a_job_being_cancelled_ends_it_cancelled() {
    let mut fx = cluster();
    let id = started(&mut fx, SubmitRequest::new(1000, "b"));
    fx.cancel(Caller::admin(), id, None).unwrap();
    fx.report_script_failure(id, 1, NodeScript::Prolog).unwrap();
    assert_eq!(fx.state(id), JobState::Cancelled);
    assert!(fx.core.job(id).unwrap().hold.is_none());
    assert_eq!(node_view(&fx, "n1").0, "DRAINED");
}

/// `node`'s report that `failed` failed for job `id` as a whole there.
fn whole_job(fx: &mut CoreFixture, id: FedJobId, node: &str, failed: NodeScript) {
    let exit = JobExit {
        job: id,
        exit_code: 0,
        signal: 0,
        usage: None,
        from: Some(RunReport {
            node: node.into(),
            run: 0,
            step: WHOLE_JOB_STEP,
        }),
        failed: Some(failed),
    };
    on_job_exited(&mut fx.core, &mut fx.out, fx.now, exit).unwrap();
}

#[test]
fn a_node_running_only_steps_reports_its_prolog_and_epilog_for_the_whole_job() {
    let mut fx = cluster();
    let mut req = SubmitRequest::new(1000, "two");
    req.min_nodes = Some(2);
    let id = started(&mut fx, req);
    assert_eq!(fx.nodes_of(id), "n[1-2]");
    whole_job(&mut fx, id, "n2", NodeScript::Prolog);
    assert_eq!(node_view(&fx, "n2").1.as_deref(), Some("Prolog error"));
    assert_eq!(node_view(&fx, "n1"), ("IDLE".into(), None));
    assert_eq!(fx.reason(id), JobReason::LaunchFailedRequeuedHeld);

    whole_job(&mut fx, id, "n2", NodeScript::Epilog);
    assert_eq!(
        node_view(&fx, "n2").1.as_deref(),
        Some("Prolog error"),
        "the first failure stays the reason"
    );

    let other = started(&mut fx, SubmitRequest::new(1000, "one"));
    assert_eq!(fx.nodes_of(other), "n1");
    fx.exit(other, 0).unwrap();
    whole_job(&mut fx, other, "n1", NodeScript::Epilog);
    assert_eq!(fx.state(other), JobState::Completed);
    assert_eq!(node_view(&fx, "n1").1.as_deref(), Some("Epilog error"));
}

#[test]
fn an_srun_allocation_whose_prolog_failed_ends_node_fail() {
    let mut fx = cluster();
    let mut req = SubmitRequest::new(1000, "interactive");
    req.launch.interactive = true;
    let id = started(&mut fx, req);
    whole_job(&mut fx, id, "n1", NodeScript::Prolog);
    assert_eq!(fx.state(id), JobState::NodeFail);
    assert_eq!(node_view(&fx, "n1").0, "DRAINED");
}

#[test]
fn processes_outliving_their_kill_drain_the_node_and_end_the_killed_job() {
    let mut fx = cluster();
    let id = started(&mut fx, SubmitRequest::new(1000, "stuck"));
    fx.cancel(Caller::user(1000), id, None).unwrap();
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.state, job.completing), (JobState::Cancelled, true));
    fx.advance(90);
    whole_job(&mut fx, id, "n1", NodeScript::KillTask);
    assert_eq!(
        node_view(&fx, "n1"),
        ("DRAINED".into(), Some("Kill task failed".into()))
    );
    let job = fx.core.job(id).unwrap();
    assert_eq!((job.state, job.completing), (JobState::Cancelled, false));
    let out = fx.out.take();
    assert!(out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::Step { job, state: JobState::Cancelled, .. } if *job == id
    )));
    // The script's end coming after all (the processes thawed) changes nothing.
    let late = fx.exit(id, 0);
    assert!(late.is_err(), "{late:?}");
    assert_eq!(fx.state(id), JobState::Cancelled);

    // A running job's node reporting it (a step's processes) is only drained.
    let other = started(&mut fx, SubmitRequest::new(1000, "other"));
    assert_eq!(fx.nodes_of(other), "n2");
    whole_job(&mut fx, other, "n2", NodeScript::KillTask);
    assert_eq!(node_view(&fx, "n2").1.as_deref(), Some("Kill task failed"));
    assert_eq!(fx.state(other), JobState::Running);
}
