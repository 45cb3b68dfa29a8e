//! `scontrol update PartitionName=... State=...` on the core: administrators only; DOWN keeps
//! jobs queued, DRAIN and INACTIVE refuse submissions; the state is saved and restored.

use sluice_ctld::conf::{CtldConf, PartState};
use sluice_ctld::core::snapshot::{NodeSnap, Snapshot};
use sluice_ctld::core::{
    Caller, Core, IdLease, JobReason, SaveHint, SubmitRequest, on_partition_state,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{JobState, LocalJobId};
use std::path::Path;

fn builder() -> ClusterBuilder {
    ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=2")
        .partition("debug", "Nodes=n[1-2] Default=YES")
        .conf("SlurmdTimeout=0")
}

fn set(fx: &mut CoreFixture, caller: Caller, state: PartState) -> Result<(), CtldError> {
    on_partition_state(&mut fx.core, &mut fx.out, caller, "debug", state)
}

#[test]
fn only_administrators_change_a_partitions_state() {
    let mut fx = builder().build();
    fx.register_all();
    assert!(matches!(
        set(&mut fx, Caller::user(1000), PartState::Down),
        Err(CtldError::AccessDenied)
    ));
    assert_eq!(fx.core.partitions()[0].state, PartState::Up);
    assert!(matches!(
        on_partition_state(
            &mut fx.core,
            &mut fx.out,
            Caller::admin(),
            "nosuch",
            PartState::Down
        ),
        Err(CtldError::InvalidPartitionName { .. })
    ));
    set(&mut fx, Caller::admin(), PartState::Down).unwrap();
    assert_eq!(fx.core.partitions()[0].state, PartState::Down);
    assert!(
        fx.out
            .saves
            .iter()
            .any(|h| matches!(h, SaveHint::Partitions))
    );
}

#[test]
fn down_queues_drain_and_inactive_refuse_and_up_starts_again() {
    let mut fx = builder().build();
    fx.register_all();
    set(&mut fx, Caller::admin(), PartState::Down).unwrap();
    let job = fx.submit(SubmitRequest::new(1000, "a")).unwrap();
    fx.tick();
    assert_eq!(
        (fx.state(job), fx.reason(job)),
        (JobState::Pending, JobReason::PartitionDown)
    );
    for state in [PartState::Drain, PartState::Inactive] {
        set(&mut fx, Caller::admin(), state).unwrap();
        let err = fx.submit(SubmitRequest::new(1000, "b")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Required partition not available (inactive or drain)"
        );
    }
    fx.tick();
    assert_eq!(fx.reason(job), JobReason::PartitionInactive);
    set(&mut fx, Caller::admin(), PartState::Up).unwrap();
    fx.tick();
    assert_eq!(fx.state(job), JobState::Running);
}

#[test]
fn a_partitions_state_survives_a_restart() {
    let b = builder();
    let mut fx = b.build();
    fx.register_all();
    set(&mut fx, Caller::admin(), PartState::Drain).unwrap();
    let snap = Snapshot {
        cluster: Some("test".into()),
        nodes: fx.core.nodes().iter().map(NodeSnap::of).collect(),
        partitions: vec![
            ("debug".into(), "DRAIN".into()),
            ("gone".into(), "DOWN".into()),
        ],
        ..Snapshot::default()
    };
    let (conf, _) = CtldConf::parse(Path::new("slurm.conf"), &b.text()).unwrap();
    let ids = IdLease::with_range(None, LocalJobId::new(100).unwrap(), 10);
    let core = Core::restore(&conf, snap, Box::new(ids), &|_| None, fx.now).unwrap();
    assert_eq!(core.partitions()[0].state, PartState::Drain);
}
