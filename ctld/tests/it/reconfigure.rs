//! `scontrol reconfigure` on the core, in simulated time: what a new `slurm.conf` changes live
//! (scheduler and partition settings, node features, power save), what it refuses (changes
//! that need a restart, leaving the core as it was), and `ReconfigFlags=KeepPowerSaveSettings`
//! against runtime `SuspendExc*` updates.

use crate::power_support;

use power_support::{builder as power_builder, register_local};
use sluice_ctld::conf::{CtldConf, PartState, TimeLimit};
use sluice_ctld::core::{
    Caller, JobReason, SubmitRequest, SuspendExcKey, UpdateMode, on_reconfigure,
    on_suspend_exc_update,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;
use std::path::Path;
use std::sync::Arc;

/// Two 4-CPU nodes, `n1` with feature `big`, in partition `debug`; `top` lines first and
/// `debug`'s line ending in `part`.
fn cluster(top: &[&str], n2: &str, part: &str) -> ClusterBuilder {
    let mut b = ClusterBuilder::new()
        .conf("KillWait=0")
        .conf("SlurmdTimeout=0");
    for line in top {
        b = b.conf(line);
    }
    b.nodes("n1", "CPUs=4 Features=big")
        .nodes("n2", &format!("CPUs=4 {n2}"))
        .partition("debug", &format!("Nodes=n[1-2] Default=YES {part}"))
}

fn conf(b: &ClusterBuilder) -> CtldConf {
    CtldConf::parse(Path::new("slurm.conf"), &b.text())
        .expect("valid test configuration")
        .0
}

fn groups(g: &str) -> Option<u32> {
    g.strip_prefix('g').and_then(|n| n.parse().ok())
}

fn reconfigure(fx: &mut CoreFixture, b: &ClusterBuilder) -> Result<(), CtldError> {
    on_reconfigure(&mut fx.core, Caller::admin(), conf(b), &groups)
}

#[test]
fn scheduler_parameters_change_live() {
    let mut fx = cluster(&[], "", "").build();
    assert_eq!(
        (
            fx.core.config().bf_window_secs,
            fx.core.config().bf_max_job_test
        ),
        (86_400, 500)
    );
    let tuned = cluster(
        &["SchedulerParameters=bf_window=30,bf_max_job_test=2"],
        "",
        "",
    );
    reconfigure(&mut fx, &tuned).unwrap();
    assert_eq!(
        (
            fx.core.config().bf_window_secs,
            fx.core.config().bf_max_job_test
        ),
        (1800, 2)
    );
    assert_eq!(
        fx.core.conf().sched.text.as_deref(),
        Some("bf_window=30,bf_max_job_test=2")
    );
    // Without the key, Slurm's defaults again.
    reconfigure(&mut fx, &cluster(&[], "", "")).unwrap();
    assert_eq!(
        (
            fx.core.config().bf_window_secs,
            fx.core.config().bf_max_job_test
        ),
        (86_400, 500)
    );
}

#[test]
fn scheduler_and_partition_settings_change_live() {
    let mut fx = cluster(&[], "", "MaxTime=60").build();
    fx.register_all();
    reconfigure(
        &mut fx,
        &cluster(
            &["KillWait=7", "SchedulerTimeSlice=45", "MinJobAge=9"],
            "",
            "MaxTime=10 State=DOWN MaxNodes=1",
        ),
    )
    .unwrap();
    let part = &fx.core.partitions()[0];
    assert_eq!(part.max_time, TimeLimit::Minutes(10));
    assert_eq!((part.state, part.max_nodes), (PartState::Down, Some(1)));
    assert_eq!(
        (fx.core.config().kill_wait, fx.core.config().min_job_age),
        (7, 9)
    );
    assert_eq!(fx.core.time_slice_secs(), 45);
    assert_eq!(fx.core.conf().select.time_slice_secs, 45);
    // The new limits hold for what is submitted next (EnforcePartLimits=NO: a job over
    // MaxTime pends), and the partition is down.
    let long = fx
        .submit(SubmitRequest::new(1000, "long").minutes(30))
        .unwrap();
    let job = fx.submit(SubmitRequest::new(1000, "short")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(job), JobState::Pending);
    assert_eq!(fx.reason(job), JobReason::PartitionDown);
    assert_eq!(fx.reason(long), JobReason::PartitionTimeLimit);
    reconfigure(&mut fx, &cluster(&[], "", "MaxTime=10")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(job), JobState::Running);
    assert_eq!(fx.reason(long), JobReason::PartitionTimeLimit);
    // A MaxTime that now allows it: it runs.
    reconfigure(&mut fx, &cluster(&[], "", "MaxTime=60")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(long), JobState::Running);
}

#[test]
fn new_node_features_reach_waiting_jobs() {
    let mut fx = cluster(&[], "", "").build();
    fx.register_all();
    let first = fx
        .submit(SubmitRequest::new(1000, "a").constraint("big"))
        .unwrap();
    let second = fx
        .submit(SubmitRequest::new(1000, "b").constraint("big"))
        .unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(first), "n1");
    assert_eq!(fx.state(second), JobState::Pending, "only n1 is big");
    reconfigure(&mut fx, &cluster(&[], "Features=big,fast", "")).unwrap();
    assert_eq!(fx.core.node("n2").unwrap().features, ["big", "fast"]);
    fx.schedule();
    assert_eq!(fx.state(second), JobState::Running);
    assert_eq!(fx.nodes_of(second), "n2");
}

#[test]
fn changes_that_need_a_restart_are_all_named_and_nothing_is_applied() {
    let mut fx = cluster(&[], "", "MaxTime=60").build();
    fx.register_all();
    let before = Arc::clone(fx.core.conf());
    let next = ClusterBuilder::new()
        .conf("ClusterName=other")
        .conf("KillWait=7")
        .conf("SluiceStateSync=full")
        .nodes("n1", "CPUs=8 Features=big")
        .nodes("n3", "CPUs=4")
        .partition("debug", "Nodes=n1,n3 Default=YES MaxTime=10")
        .partition("extra", "Nodes=n1");
    let err = reconfigure(&mut fx, &next).unwrap_err();
    let CtldError::RestartNeeded { changes } = &err else {
        panic!("expected a restart to be needed, got {err:?}");
    };
    for expected in [
        "ClusterName changed (test -> other)",
        "SluiceStateSync changed (normal -> full)",
        "nodes n3 added",
        "nodes n2 removed",
        "CPUs changed on n1",
        "partitions extra added",
        "Nodes of partition debug changed",
    ] {
        assert!(
            changes.iter().any(|c| c == expected),
            "{expected:?} not in {changes:?}"
        );
    }
    assert!(err.to_string().contains("need a controller restart"));
    assert!(err.to_string().ends_with("(nothing was changed)"));
    // Nothing of the file reached the core, not even what could change live.
    assert!(Arc::ptr_eq(&before, fx.core.conf()));
    assert_eq!(fx.core.partitions()[0].max_time, TimeLimit::Minutes(60));
    assert_eq!(fx.core.config().kill_wait, 0);
    assert_eq!(fx.core.nodes().len(), 2);
}

#[test]
fn weights_apply_while_the_node_order_stays() {
    let mut fx = cluster(&[], "Weight=5", "").build();
    reconfigure(&mut fx, &cluster(&[], "Weight=9", "")).unwrap();
    assert_eq!(fx.core.node("n2").unwrap().weight, 9);
    // n1 (weight 1) before n2: a weight of 0 for n2 would put it first.
    let before = Arc::clone(fx.core.conf());
    let err = reconfigure(&mut fx, &cluster(&[], "Weight=0", "")).unwrap_err();
    assert!(
        matches!(&err, CtldError::RestartNeeded { changes } if changes[0].starts_with("Weight changes reorder")),
        "{err:?}"
    );
    assert!(Arc::ptr_eq(&before, fx.core.conf()));
    assert_eq!(fx.core.node("n2").unwrap().weight, 9);
}

#[test]
fn unknown_groups_and_non_admins_change_nothing() {
    let mut fx = cluster(&[], "", "MaxTime=60").build();
    let before = Arc::clone(fx.core.conf());
    let err = reconfigure(&mut fx, &cluster(&[], "", "MaxTime=5 AllowGroups=nosuch")).unwrap_err();
    assert!(err.to_string().contains("AllowGroups"), "{err}");
    let err = on_reconfigure(
        &mut fx.core,
        Caller::user(1000),
        conf(&cluster(&[], "", "MaxTime=5")),
        &groups,
    )
    .unwrap_err();
    assert!(matches!(err, CtldError::AccessDenied));
    assert!(Arc::ptr_eq(&before, fx.core.conf()));
    assert_eq!(fx.core.partitions()[0].max_time, TimeLimit::Minutes(60));
    reconfigure(&mut fx, &cluster(&[], "", "MaxTime=5 AllowGroups=g7")).unwrap();
    assert!(fx.core.partitions()[0].allows(&[7]));
    assert!(!fx.core.partitions()[0].allows(&[8]));
}

fn exclude(fx: &mut CoreFixture, key: SuspendExcKey, mode: UpdateMode, value: &str) {
    on_suspend_exc_update(&mut fx.core, Caller::admin(), key, mode, value).unwrap();
}

/// The local nodes the power pass suspends once they were idle past SuspendTime=300.
fn suspended_after_idle(fx: &mut CoreFixture) -> Vec<String> {
    fx.advance(301);
    fx.tick();
    let mut names: Vec<String> = fx
        .core
        .nodes()
        .iter()
        .filter(|n| n.name.starts_with("tux") && n.power.powering_down())
        .map(|n| n.name.clone())
        .collect();
    names.sort();
    names
}

#[test]
fn keep_power_save_settings_keeps_the_runtime_exclusions() {
    let mut fx = power_builder(&["SuspendExcNodes=tux4"]).build();
    register_local(&mut fx);
    exclude(&mut fx, SuspendExcKey::Nodes, UpdateMode::Set, "tux1");
    exclude(&mut fx, SuspendExcKey::States, UpdateMode::Add, "DOWN");
    let keep = power_builder(&[
        "SuspendExcNodes=tux2",
        "ReconfigFlags=KeepPowerSaveSettings",
        "SuspendRate=0",
    ]);
    reconfigure(&mut fx, &keep).unwrap();
    let power = &fx.core.conf().power;
    assert_eq!(power.suspend_exc_nodes[0].nodes, ["tux1"]);
    assert_eq!(power.suspend_rate, 0, "the rest comes from the file");
    assert_eq!(power.suspend_exc_states.len(), 1);
    assert_eq!(suspended_after_idle(&mut fx), ["tux2", "tux3", "tux4"]);
}

#[test]
fn without_keep_power_save_settings_the_file_replaces_runtime_exclusions() {
    let mut fx = power_builder(&[]).build();
    register_local(&mut fx);
    exclude(&mut fx, SuspendExcKey::Nodes, UpdateMode::Set, "tux1");
    reconfigure(&mut fx, &power_builder(&["SuspendExcNodes=tux2"])).unwrap();
    assert_eq!(fx.core.conf().power.suspend_exc_nodes[0].nodes, ["tux2"]);
    assert_eq!(suspended_after_idle(&mut fx), ["tux1", "tux3", "tux4"]);
}

#[test]
fn runtime_exclusions_set_add_and_remove() {
    let mut fx = power_builder(&[]).build();
    register_local(&mut fx);
    exclude(&mut fx, SuspendExcKey::Nodes, UpdateMode::Set, "tux[1-2]");
    exclude(&mut fx, SuspendExcKey::Nodes, UpdateMode::Add, "tux3,tux1");
    exclude(&mut fx, SuspendExcKey::Nodes, UpdateMode::Remove, "tux2");
    let power = &fx.core.conf().power;
    assert_eq!(power.suspend_exc_nodes[0].nodes, ["tux1", "tux3"]);
    exclude(&mut fx, SuspendExcKey::Parts, UpdateMode::Add, "cloud");
    exclude(&mut fx, SuspendExcKey::Parts, UpdateMode::Remove, "cloud");
    assert!(fx.core.conf().power.suspend_exc_parts.is_empty());
    assert_eq!(suspended_after_idle(&mut fx), ["tux2", "tux4"]);
}

#[test]
fn bad_runtime_exclusions_are_refused_and_change_nothing() {
    let mut fx = power_builder(&[]).build();
    exclude(&mut fx, SuspendExcKey::Nodes, UpdateMode::Set, "tux[1-4]:2");
    let before = Arc::clone(fx.core.conf());
    let mut update = |key, mode, value: &str| {
        on_suspend_exc_update(&mut fx.core, Caller::admin(), key, mode, value).unwrap_err()
    };
    let nodes = SuspendExcKey::Nodes;
    assert!(matches!(
        update(nodes, UpdateMode::Set, "tux9"),
        CtldError::InvalidNodeName { name } if name == "tux9"
    ));
    assert!(matches!(
        update(nodes, UpdateMode::Add, "tux1"),
        CtldError::SuspendExcHasCounts
    ));
    assert!(matches!(
        update(nodes, UpdateMode::Add, "tux1:1"),
        CtldError::SuspendExcCountUpdate
    ));
    assert!(matches!(
        update(SuspendExcKey::Parts, UpdateMode::Set, "nosuch"),
        CtldError::InvalidPartitionName { .. }
    ));
    let bad_state = update(SuspendExcKey::States, UpdateMode::Set, "IDLE");
    assert_eq!(bad_state.to_string(), "Invalid SuspendExcState IDLE");
    let err = on_suspend_exc_update(
        &mut fx.core,
        Caller::user(1000),
        nodes,
        UpdateMode::Set,
        "tux1",
    )
    .unwrap_err();
    assert!(matches!(err, CtldError::AccessDenied));
    assert!(Arc::ptr_eq(&before, fx.core.conf()));
}
