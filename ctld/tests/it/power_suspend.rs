//! Powering idle nodes down in simulated time: SuspendTime and LastBusyTime, exclusions
//! (nodes, counted sets, partitions, states), SuspendRate, SuspendTimeout, and manual power
//! requests (power_down, power_down_asap, power_down_force, power_up, resume).

use crate::power_support;

use power_support::{
    cluster, powering_down, powering_up, programs, register, register_local, status,
};
use sluice_ctld::core::{
    AcctRecord, NodeEventKind, NodeUpdate, PowerRequest, PowerStatus, SubmitRequest, on_node_power,
    on_node_update,
};
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::JobState;

fn power(fx: &mut CoreFixture, node: &str, req: PowerRequest) {
    let admin = fx.admin();
    on_node_power(&mut fx.core, &mut fx.out, fx.now, admin, node, req).unwrap();
}

fn suspended(fx: &CoreFixture) -> Vec<String> {
    programs(fx)
        .into_iter()
        .filter(|p| p.starts_with("suspend:"))
        .collect()
}

#[test]
fn idle_nodes_power_down_after_suspend_time_then_suspend_timeout() {
    let mut fx = cluster(&[]);
    register_local(&mut fx);
    assert_eq!(fx.core.node("tux1").unwrap().power.last_busy, Some(fx.now));
    fx.advance(300);
    fx.tick();
    assert!(
        suspended(&fx).is_empty(),
        "idle exactly SuspendTime: not yet"
    );
    fx.advance(1);
    fx.tick();
    assert_eq!(suspended(&fx), ["suspend:tux[1-4]"]);
    assert!(powering_down(&fx, "tux1"));
    assert!(
        !fx.core.node("tux1").unwrap().available(),
        "idle% takes no work"
    );
    fx.advance(29);
    fx.tick();
    assert!(powering_down(&fx, "tux1"));
    fx.advance(1);
    fx.tick();
    assert_eq!(status(&fx, "tux1"), PowerStatus::Off);
    assert!(fx.core.node("tux1").unwrap().available(), "idle~ is usable");
    assert!(fx.out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::NodeEvent { node, kind: NodeEventKind::PowerDown, reason: Some(why), .. }
            if node == "tux1" && why == "Powered down after SuspendTimeout"
    )));
    // Work resumes it.
    fx.submit(SubmitRequest::new(1000, "j")).unwrap();
    fx.tick();
    assert!(powering_up(&fx, "tux1"));
}

#[test]
fn last_busy_time_is_when_the_job_ended() {
    let mut fx = cluster(&[]);
    register_local(&mut fx);
    let id = fx.submit(SubmitRequest::new(1000, "j")).unwrap();
    fx.tick();
    assert_eq!(fx.nodes_of(id), "tux1");
    fx.advance(1000);
    fx.tick();
    assert!(!powering_down(&fx, "tux1"), "busy nodes stay up");
    fx.exit(id, 0).unwrap();
    fx.tick();
    let ended = fx.now;
    assert_eq!(fx.core.node("tux1").unwrap().power.last_busy, Some(ended));
    fx.advance(300);
    fx.tick();
    assert!(!powering_down(&fx, "tux1"));
    fx.advance(1);
    fx.tick();
    assert!(powering_down(&fx, "tux1"));
}

#[test]
fn exclusions_keep_nodes_up() {
    let mut fx = cluster(&["SuspendExcNodes=tux1,tux[2-4]:1", "SuspendExcParts=cloud"]);
    register_local(&mut fx);
    register(&mut fx, "ec1");
    fx.advance(301);
    fx.tick();
    // tux1 excluded; one of tux[2-4] kept (the first usable); ec1's partition excluded.
    assert_eq!(suspended(&fx), ["suspend:tux[3-4]"]);
    assert_eq!(status(&fx, "ec1"), PowerStatus::On);
}

#[test]
fn excluded_states_and_infinite_partitions_stay_up() {
    let mut fx = cluster(&["SuspendExcStates=DRAIN"]);
    register_local(&mut fx);
    let admin = fx.admin();
    let drain = NodeUpdate::Drain {
        reason: "disk".into(),
    };
    on_node_update(&mut fx.core, &mut fx.out, fx.now, admin, "tux2", drain).unwrap();
    fx.advance(301);
    fx.tick();
    assert_eq!(suspended(&fx), ["suspend:tux[1,3-4]"]);

    let mut fx = power_support::cluster(&["SuspendTime=INFINITE"]);
    register_local(&mut fx);
    fx.advance(100_000);
    fx.tick();
    assert!(suspended(&fx).is_empty(), "power save is off");
}

#[test]
fn suspend_rate_limits_each_minute() {
    let mut fx = cluster(&["SuspendRate=2"]);
    register_local(&mut fx);
    fx.advance(301);
    fx.tick();
    assert_eq!(suspended(&fx), ["suspend:tux[1-2]"]);
    fx.advance(1);
    fx.tick();
    assert_eq!(suspended(&fx).len(), 1, "the minute's budget is spent");
    fx.advance(60);
    fx.tick();
    assert_eq!(suspended(&fx), ["suspend:tux[1-2]", "suspend:tux[3-4]"]);
}

#[test]
fn power_down_waits_for_the_job_then_skips_suspend_time() {
    let mut fx = cluster(&[]);
    register_local(&mut fx);
    let id = fx.submit(SubmitRequest::new(1000, "j")).unwrap();
    fx.tick();
    power(&mut fx, "tux1", PowerRequest::Down);
    power(&mut fx, "tux2", PowerRequest::Down);
    assert!(fx.core.node("tux2").unwrap().power.down_requested, "idle!");
    fx.tick();
    assert_eq!(suspended(&fx), ["suspend:tux2"]);
    assert_eq!(status(&fx, "tux1"), PowerStatus::On, "alloc! keeps running");
    fx.exit(id, 0).unwrap();
    fx.tick();
    assert_eq!(suspended(&fx), ["suspend:tux2", "suspend:tux1"]);
}

#[test]
fn power_down_asap_drains_first_and_force_requeues() {
    let mut fx = cluster(&[]);
    register_local(&mut fx);
    let a = fx.submit(SubmitRequest::new(1000, "a")).unwrap();
    let b = fx.submit(SubmitRequest::new(1000, "b")).unwrap();
    fx.tick();
    power(&mut fx, "tux1", PowerRequest::DownAsap { reason: None });
    let tux1 = fx.core.node("tux1").unwrap();
    assert!(tux1.drain && tux1.power.down_requested);
    assert_eq!(tux1.state_name(), "DRAINING");
    fx.exit(a, 0).unwrap();
    fx.tick();
    assert!(powering_down(&fx, "tux1"));
    assert!(
        !fx.core.node("tux1").unwrap().drain,
        "drain cleared on power down"
    );

    power(&mut fx, "tux2", PowerRequest::DownForce);
    let job = fx.core.job(b).unwrap();
    assert_eq!((job.state, job.restarts), (JobState::Pending, 1));
    fx.exit(b, 9).unwrap();
    fx.tick();
    assert!(powering_down(&fx, "tux2"));
    assert_ne!(fx.nodes_of(b), "tux2", "the requeued job runs elsewhere");
}

#[test]
fn power_up_and_resume_move_nodes_by_hand() {
    let mut fx = cluster(&[]);
    power(&mut fx, "ec3", PowerRequest::Up);
    fx.tick();
    assert_eq!(programs(&fx), ["resume:ec3"]);
    register(&mut fx, "ec3");
    assert_eq!(status(&fx, "ec3"), PowerStatus::On);
    power(&mut fx, "ec3", PowerRequest::Down);
    fx.tick();
    assert!(powering_down(&fx, "ec3"));
    // `state=resume` ends the wait for SuspendTimeout.
    let admin = fx.admin();
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin,
        "ec3",
        NodeUpdate::Resume,
    )
    .unwrap();
    assert_eq!(status(&fx, "ec3"), PowerStatus::Off);
    let user = sluice_ctld::core::Caller::user(1000);
    let denied = on_node_power(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        user,
        "ec3",
        PowerRequest::Up,
    );
    assert!(denied.is_err());
}

#[test]
fn power_down_on_idle_partitions_power_down_at_once() {
    let mut fx = sluice_ctld::testkit::ClusterBuilder::new()
        .conf("SuspendTime=INFINITE")
        .conf("SuspendProgram=/s")
        .conf("ResumeProgram=/r")
        .conf("SlurmdTimeout=0")
        .nodes("ec[1-2]", "CPUs=4 State=CLOUD")
        .partition("cloud", "Nodes=ec[1-2] Default=YES PowerDownOnIdle=YES")
        .build();
    let id = fx.submit(SubmitRequest::new(1000, "j")).unwrap();
    fx.tick();
    register(&mut fx, "ec1");
    fx.exit(id, 0).unwrap();
    fx.tick();
    assert_eq!(suspended(&fx), ["suspend:ec1"]);
}
