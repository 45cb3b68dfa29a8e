use super::*;
use crate::core::{
    AcctRecord, Caller, NodeUpdate, SubmitRequest, on_node_update, on_step_create,
    steps::StepRequest,
};
use crate::error::CtldError;
use crate::testkit::{ClusterBuilder, CoreFixture};

const OWNER: u32 = 1000;

/// Four 2-CPU nodes in `batch`, one of them a hot spare, with the guide's settings.
fn cluster(nonstop: &str) -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=2")
        .partition("batch", "Nodes=n[1-4] Default=YES")
        .nonstop(nonstop)
        .build();
    fx.register_all();
    fx
}

const CONF: &str = "HotSpareCount=batch:1\nMaxSpareNodeCount=1\nTimeLimitDelay=5\n\
                    TimeLimitExtend=2\nTimeLimitDrop=30\nUserDrainAllow=alan,1001\n";

fn owner() -> Caller {
    Caller::user(OWNER)
}

/// A two-node `--no-kill` job of OWNER with a 10-minute limit.
fn two_node_job(fx: &mut CoreFixture) -> FedJobId {
    let req = SubmitRequest::new(OWNER, "steps")
        .nodes(2)
        .minutes(10)
        .no_kill();
    fx.submit_and_schedule(req)
}

fn down(fx: &mut CoreFixture, node: &str) {
    let update = NodeUpdate::Down {
        reason: "test".into(),
    };
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        node,
        update,
    )
    .unwrap();
}

fn kinds(fx: &CoreFixture) -> Vec<(EventKind, String)> {
    fx.out
        .nonstop_events
        .iter()
        .map(|e| (e.kind, e.node.clone()))
        .collect()
}

#[test]
fn hot_spares_are_kept_out_of_ordinary_jobs_and_refill_from_resumed_nodes() {
    let mut fx = cluster(CONF);
    let a = fx.submit_and_schedule(SubmitRequest::new(OWNER, "a").nodes(3));
    assert_eq!(fx.nodes_of(a), "n[1-3]");
    let b = fx.submit_and_schedule(SubmitRequest::new(OWNER, "b"));
    assert_eq!(fx.state(b), JobState::Pending, "n4 is the spare");
    assert!(spares::is_spare(
        &fx.core,
        fx.core.nodes.lookup("n4").unwrap()
    ));
    // The spare goes to a job replacing a node; once the failed node is resumed it is the
    // partition's spare in turn.
    fx.core.jobs.map.get_mut(&a).unwrap().no_kill = true;
    down(&mut fx, "n2");
    on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), a, "n2").unwrap();
    assert_eq!(fx.nodes_of(a), "n[1,3-4]");
    fx.schedule();
    assert_eq!(fx.state(b), JobState::Pending);
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        "n2",
        NodeUpdate::Resume,
    )
    .unwrap();
    fx.schedule();
    assert_eq!(fx.state(b), JobState::Pending, "n2 refilled the pool");
    assert!(spares::is_spare(
        &fx.core,
        fx.core.nodes.lookup("n2").unwrap()
    ));
}

#[test]
fn a_no_kill_job_survives_a_failed_node_and_its_steps_there_are_killed() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    let step = on_step_create(&mut fx.core, &mut fx.out, fx.now, owner(), {
        let mut r = StepRequest::new(id);
        r.ntasks = Some(4);
        r
    })
    .unwrap();
    assert_eq!(step.nodes.len(), 2);
    fx.out.take();
    down(&mut fx, "n2");
    assert_eq!(fx.state(id), JobState::Running);
    assert_eq!(
        fx.nodes_of(id),
        "n[1-2]",
        "the failed node stays in the allocation"
    );
    assert!(fx.out.node_cmds.iter().any(|c| matches!(c,
        NodeCommand::SignalPart { part: JobPart::Step(s), signal: 9, nodes, .. }
            if *s == step.step && nodes.len() == 1)));
    let n2 = fx.core.nodes.lookup("n2").unwrap();
    assert!(fx.out.node_cmds.contains(&NodeCommand::Terminate {
        job: id,
        nodes: vec![n2]
    }));
    assert_eq!(kinds(&fx), [(EventKind::Failed, "n2".to_string())]);
    // The next steps run on the nodes left.
    let next = on_step_create(&mut fx.core, &mut fx.out, fx.now, owner(), {
        let mut r = StepRequest::new(id);
        r.ntasks = Some(2);
        r.overlap = true;
        r
    })
    .unwrap();
    assert_eq!(fx.core.hostlist(&next.nodes), "n1");
    let v = on_job_nodes(&fx.core, owner(), id).unwrap();
    assert_eq!(v.nodes[1].health, Health::Failed);
    assert_eq!(v.cpus_per_node, "2(x2)");
}

#[test]
fn without_no_kill_a_failed_node_still_ends_the_job() {
    let mut fx = cluster(CONF);
    let req = SubmitRequest::new(OWNER, "plain").nodes(2).no_requeue();
    let id = fx.submit_and_schedule(req);
    down(&mut fx, "n2");
    assert_eq!(fx.state(id), JobState::NodeFail);
    assert!(kinds(&fx).contains(&(EventKind::JobEnded, String::new())));
}

#[test]
fn a_failed_batch_host_ends_even_a_no_kill_job() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    down(&mut fx, "n1");
    assert_ne!(fx.state(id), JobState::Running);
}

#[test]
fn replace_moves_the_job_to_the_spare_and_tells_accounting() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    down(&mut fx, "n2");
    fx.out.take();
    let v = on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n2").unwrap();
    assert_eq!(v.node_list, "n[1,4]");
    // n4 left the pool; n3, idle, is the partition's spare now.
    assert_eq!((v.spares_used, v.spares_free), (1, 1));
    assert!(spares::is_spare(
        &fx.core,
        fx.core.nodes.lookup("n3").unwrap()
    ));
    assert_eq!(v.extend_available_min, 2);
    let a = fx.core.job_alloc(id).unwrap();
    assert_eq!(a.cpus, [2, 2]);
    let n2 = fx.core.node("n2").unwrap();
    assert!(n2.jobs.is_empty() && n2.state_name() == "DOWN");
    assert_eq!(fx.core.node("n4").unwrap().state_name(), "ALLOCATED");
    assert!(fx.out.acct.iter().any(|r| matches!(r,
        AcctRecord::JobResized { node_list, node_count: 2, cpus: 4, at, .. }
            if node_list == "n[1,4]" && *at == fx.now)));
    assert_eq!(fx.out.nonstop_events[0].replacement.as_deref(), Some("n4"));
    // The next step runs on the new node list.
    let step = on_step_create(&mut fx.core, &mut fx.out, fx.now, owner(), {
        let mut r = StepRequest::new(id);
        r.ntasks = Some(4);
        r
    })
    .unwrap();
    assert_eq!(fx.core.hostlist(&step.nodes), "n[1,4]");
}

#[test]
fn replace_refuses_healthy_nodes_strangers_and_jobs_over_max_spare_node_count() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    let e = on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n2").unwrap_err();
    assert!(matches!(e, CtldError::NodeNotFailed { .. }), "{e}");
    down(&mut fx, "n2");
    let e =
        on_replace_node(&mut fx.core, &mut fx.out, fx.now, Caller::user(7), id, "n2").unwrap_err();
    assert!(matches!(e, CtldError::AccessDenied));
    let e = on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n3").unwrap_err();
    assert!(matches!(e, CtldError::NodeNotInJob { .. }), "{e}");
    on_replace_node(&mut fx.core, &mut fx.out, fx.now, Caller::admin(), id, "n2").unwrap();
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        "n2",
        NodeUpdate::Resume,
    )
    .unwrap();
    down(&mut fx, "n4");
    let e = on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n4").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("job {id} already used its 1 spare nodes (MaxSpareNodeCount)")
    );
}

#[test]
fn no_spare_grants_the_delay_then_drop_earns_time_limit_drop() {
    let mut fx = cluster("TimeLimitDelay=1\nTimeLimitDrop=30\n");
    let id = fx.submit_and_schedule(
        SubmitRequest::new(OWNER, "all")
            .nodes(4)
            .minutes(10)
            .no_kill(),
    );
    down(&mut fx, "n3");
    let e = on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n3").unwrap_err();
    assert_eq!(e.to_string(), "Failed to replace the node");
    let v = on_extend_time(&mut fx.core, &mut fx.out, fx.now, owner(), id, 1).unwrap();
    assert_eq!((v.time_limit_min, v.extend_available_min), (11, 0));
    let e = on_extend_time(&mut fx.core, &mut fx.out, fx.now, owner(), id, 1).unwrap_err();
    assert!(
        matches!(e, CtldError::ExtensionRefused { available: 0, .. }),
        "{e}"
    );
    let v = on_drop_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n3").unwrap();
    assert_eq!(
        (v.node_list.as_str(), v.extend_available_min),
        ("n[1-2,4]", 30)
    );
    let v = on_extend_time(&mut fx.core, &mut fx.out, fx.now, owner(), id, 30).unwrap();
    assert_eq!(v.time_limit_min, 41);
    assert_eq!(fx.core.job(id).unwrap().deadline(), fx.now.plus(41 * 60));
    assert!(fx.core.node("n3").unwrap().jobs.is_empty());
}

#[test]
fn drop_refuses_the_batch_host_and_the_only_node() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    let e = on_drop_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n1").unwrap_err();
    assert!(e.to_string().contains("batch script"), "{e}");
    on_drop_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n2").unwrap();
    assert_eq!(
        fx.out.node_cmds.last(),
        Some(&NodeCommand::Terminate {
            job: id,
            nodes: vec![fx.core.nodes.lookup("n2").unwrap()]
        }),
        "its processes on the dropped node end"
    );
    let e = on_drop_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n1").unwrap_err();
    assert!(e.to_string().contains("only node"), "{e}");
}

#[test]
fn user_drain_allow_and_deny_decide_who_drains_their_own_nodes() {
    let mut fx = cluster("UserDrainAllow=ALL\nUserDrainDeny=mallory\n");
    let id = two_node_job(&mut fx);
    let v = on_drain_node(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        owner(),
        "alan",
        id,
        "n2",
        "flaky",
    )
    .unwrap();
    assert_eq!(v.nodes[1].health, Health::Failing);
    assert_eq!(fx.core.node("n2").unwrap().state_name(), "DRAINING");
    assert_eq!(
        kinds(&fx).last(),
        Some(&(EventKind::Failing, "n2".to_string()))
    );
    let e = on_drain_node(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        owner(),
        "mallory",
        id,
        "n1",
        "x",
    )
    .unwrap_err();
    assert!(matches!(e, CtldError::AccessDenied));
    // scontrol's path: only nodes of the user's own running jobs.
    on_user_drain(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        owner(),
        "alan",
        "n1",
        "r",
    )
    .unwrap();
    let e = on_user_drain(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        owner(),
        "alan",
        "n3",
        "r",
    )
    .unwrap_err();
    assert!(matches!(e, CtldError::AccessDenied));
    let e = on_user_drain(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::user(7),
        "eve",
        "n1",
        "r",
    )
    .unwrap_err();
    assert!(matches!(e, CtldError::AccessDenied));
}

#[test]
fn drain_needs_user_drain_allow_by_name_or_id() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    let e = on_drain_node(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        owner(),
        "bob",
        id,
        "n2",
        "r",
    )
    .unwrap_err();
    assert!(matches!(e, CtldError::AccessDenied));
    on_drain_node(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        owner(),
        "alan",
        id,
        "n2",
        "r",
    )
    .unwrap();
    let id2 = fx.submit_and_schedule(SubmitRequest::new(1001, "other").nodes(1));
    let node = fx.nodes_of(id2);
    on_drain_node(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::user(1001),
        "",
        id2,
        &node,
        "r",
    )
    .unwrap();
}

#[test]
fn a_failing_node_replaced_is_told_to_end_the_jobs_processes() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    on_drain_node(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        "",
        id,
        "n2",
        "r",
    )
    .unwrap();
    fx.out.take();
    on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n2").unwrap();
    let n2 = fx.core.nodes.lookup("n2").unwrap();
    assert!(fx.out.node_cmds.contains(&NodeCommand::Terminate {
        job: id,
        nodes: vec![n2]
    }));
    assert_eq!(fx.core.node("n2").unwrap().state_name(), "DRAINED");
}

#[test]
fn not_responding_and_back_are_failed_then_recovered() {
    let mut fx = cluster(CONF);
    fx.core.config_mut().slurmd_timeout = 300;
    let id = two_node_job(&mut fx);
    let n2 = fx.core.nodes.lookup("n2").unwrap();
    fx.core.nodes.get_mut(n2).last_heard = fx.now;
    fx.advance(150);
    // The nodes report the job's run (its batch node would otherwise have lost its launch).
    let runs = [crate::core::NodeRun::whole(id, 0)];
    let names: Vec<String> = ["n1", "n3", "n4"].map(String::from).to_vec();
    for n in &names {
        crate::core::on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, n, &runs).unwrap();
    }
    fx.tick();
    assert_eq!(kinds(&fx), [(EventKind::Failed, "n2".to_string())]);
    crate::core::on_node_heartbeat(&mut fx.core, &mut fx.out, fx.now, "n2", &runs).unwrap();
    assert_eq!(kinds(&fx)[1], (EventKind::Recovered, "n2".to_string()));
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn requests_without_the_plugin_are_not_configured() {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=2")
        .partition("batch", "Nodes=n[1-2] Default=YES")
        .build();
    fx.register_all();
    let id = fx.submit_and_schedule(SubmitRequest::new(OWNER, "j"));
    let e = on_job_nodes(&fx.core, owner(), id).unwrap_err();
    assert_eq!(
        e.to_string(),
        "failure management (SlurmctldPlugin=slurmctld/nonstop) is not configured"
    );
    let e = on_user_drain(&mut fx.core, &mut fx.out, fx.now, owner(), "u", "n1", "r").unwrap_err();
    assert!(matches!(e, CtldError::AccessDenied));
    assert!(fx.out.nonstop_events.is_empty());
}

#[test]
fn the_job_end_closes_the_stream() {
    let mut fx = cluster(CONF);
    let id = two_node_job(&mut fx);
    fx.exit(id, 0).unwrap();
    let last = fx.out.nonstop_events.last().unwrap();
    assert_eq!(last.kind, EventKind::JobEnded);
    assert!(fx.core.nonstop().unwrap().jobs.is_empty());
}

#[test]
fn what_a_job_was_granted_is_saved_with_it_and_given_back_after_a_restart() {
    use crate::core::snapshot::{JobSnap, RecoverySnap};
    let mut fx = cluster("TimeLimitDelay=1\nTimeLimitDrop=30\n");
    let id = fx.submit_and_schedule(
        SubmitRequest::new(OWNER, "all")
            .nodes(4)
            .minutes(10)
            .no_kill(),
    );
    let fresh = JobSnap::of(&fx.core, fx.core.job(id).unwrap());
    assert_eq!(fresh.recovery, None, "nothing granted, nothing saved");
    down(&mut fx, "n3");
    fx.out.take();
    on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n3").unwrap_err();
    assert!(
        fx.out.saves.contains(&crate::core::SaveHint::Job(id)),
        "the delay granted is saved"
    );
    on_extend_time(&mut fx.core, &mut fx.out, fx.now, owner(), id, 1).unwrap();
    let saved = JobSnap::of(&fx.core, fx.core.job(id).unwrap());
    let back: JobSnap = serde_json::from_str(&serde_json::to_string(&saved).unwrap()).unwrap();
    let counts = back.recovery.clone().unwrap();
    assert_eq!(
        counts,
        RecoverySnap {
            delay_granted: true,
            extended_min: 1,
            ..RecoverySnap::default()
        }
    );
    // A restarted controller knows nothing until the saved counts are given back: then the
    // minute already taken stays taken.
    fx.core.nonstop.as_mut().unwrap().jobs.remove(&id);
    counts.restore(&mut fx.core, id);
    let e = on_extend_time(&mut fx.core, &mut fx.out, fx.now, owner(), id, 1).unwrap_err();
    assert!(
        matches!(e, CtldError::ExtensionRefused { available: 0, .. }),
        "{e}"
    );
}

#[test]
fn under_gang_scheduling_the_row_follows_a_replacement() {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-3]", "CPUs=2")
        .partition("batch", "Nodes=n[1-3] Default=YES OverSubscribe=FORCE")
        .conf("PreemptMode=GANG")
        .conf("SchedulerTimeSlice=30")
        .conf("SlurmdTimeout=0")
        .nonstop("HotSpareCount=batch:1\n")
        .build();
    fx.register_all();
    let id = two_node_job(&mut fx);
    assert_eq!(fx.nodes_of(id), "n[1-2]");
    down(&mut fx, "n2");
    on_replace_node(&mut fx.core, &mut fx.out, fx.now, owner(), id, "n2").unwrap();
    let n = |name: &str| fx.core.nodes.lookup(name).unwrap().get() as usize;
    let uses = |node: usize| crate::core::gang::row_uses(&fx.core, 0, node);
    assert!(uses(n("n1")) && uses(n("n3")), "the new node is in the row");
    assert!(!uses(n("n2")), "the replaced node left the row");
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn test_only_estimates_leave_the_hot_spares_out_as_starting_does() {
    let mut fx = cluster(CONF);
    let a = fx.submit_and_schedule(SubmitRequest::new(OWNER, "a").nodes(3).minutes(10));
    assert_eq!(fx.nodes_of(a), "n[1-3]");
    let spare = fx.core.nodes.lookup("n4").unwrap();
    assert!(spares::is_spare(&fx.core, spare));
    // One node: free now only on the spare, so it waits for `a` (the pick of a start now).
    // Two nodes: planned on what `a` gives back (backfill's plan).
    for nodes in [1, 2] {
        let req = SubmitRequest::new(OWNER, "b").nodes(nodes);
        let w = crate::core::on_will_run(&mut fx.core, fx.now, req).unwrap();
        assert!(!w.nodes.contains(&spare), "{nodes} node(s): {:?}", w.nodes);
        assert_eq!(w.nodes.len(), nodes as usize, "{:?}", w.nodes);
        assert!(w.start.is_some_and(|s| s > fx.now), "{:?}", w.start);
    }
    // Four nodes: the partition's whole, spare included, which no plan may count on.
    let req = SubmitRequest::new(OWNER, "c").nodes(4);
    let w = crate::core::on_will_run(&mut fx.core, fx.now, req).unwrap();
    assert_eq!((w.start, w.nodes), (None, Vec::new()));
}
