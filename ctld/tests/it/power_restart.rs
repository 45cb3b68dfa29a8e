//! Power state across a controller restart: powered-down, powering and requested states,
//! LastBusyTime and addresses set by `scontrol` come back from the store, and a job that was
//! CONFIGURING still waits for its node, then launches when it registers.

use crate::power_support;

use power_support::{builder, cluster, register, register_local, status};
use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::{
    Core, PowerRequest, PowerStatus, SubmitRequest, on_node_comm, on_node_power,
};
use sluice_ctld::store::StateStore;
use sluice_ctld::testkit::CoreFixture;
use std::path::Path;

fn restart(dir: &Path, fx: &mut CoreFixture) -> CoreFixture {
    let mut store = StateStore::open(dir).unwrap();
    let out = fx.out.take();
    store.commit(&fx.core, &out.saves, &out.acct).unwrap();
    drop(store);
    let store = StateStore::open(dir).unwrap();
    let snap = store.load().unwrap();
    let ids = snap.id_lease(None).unwrap();
    let conf = CtldConf::parse(Path::new("slurm.conf"), &builder(&[]).text())
        .unwrap()
        .0;
    let groups = |_: &str| None;
    let core = Core::restore(&conf, snap, Box::new(ids), &groups, fx.now).unwrap();
    CoreFixture {
        core,
        out: Default::default(),
        now: fx.now,
    }
}

#[test]
fn power_states_and_configuring_jobs_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut fx = cluster(&[]);
    register_local(&mut fx);
    let id = fx
        .submit(SubmitRequest::new(1000, "burst").partition("cloud"))
        .unwrap();
    fx.tick();
    assert!(fx.core.job_configuring(id));
    let admin = fx.admin();
    on_node_power(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin,
        "tux2",
        PowerRequest::Down,
    )
    .unwrap();
    on_node_comm(
        &mut fx.core,
        &mut fx.out,
        admin,
        "ec3",
        Some("10.1.2.3".into()),
        Some("vm-3".into()),
    )
    .unwrap();
    let before: Vec<_> = fx.core.nodes().iter().map(|n| n.power.clone()).collect();

    let mut back = restart(dir.path(), &mut fx);
    let after: Vec<_> = back.core.nodes().iter().map(|n| n.power.clone()).collect();
    let visible = |v: &[sluice_ctld::core::NodePower]| {
        v.iter()
            .map(|p| (p.status, p.down_requested, p.last_busy, p.hostname.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(visible(&after), visible(&before));
    assert!(matches!(
        status(&back, "ec1"),
        PowerStatus::PoweringUp { .. }
    ));
    assert_eq!(back.core.node("ec3").unwrap().addr, "10.1.2.3");
    assert!(back.core.job_configuring(id), "still waiting for ec1");
    register(&mut back, "ec1");
    assert_eq!(back.out.launched(), [id]);
}

#[test]
fn a_script_started_on_its_batch_host_is_not_launched_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut fx = cluster(&[]);
    register_local(&mut fx);
    let admin = fx.admin();
    on_node_power(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin,
        "tux2",
        PowerRequest::Down,
    )
    .unwrap();
    fx.tick();
    fx.advance(31);
    fx.tick();
    assert_eq!(status(&fx, "tux2"), PowerStatus::Off);
    // A two-node job on tux1 (up) and tux2 (booting): its script starts on tux1 at once.
    let mut req = SubmitRequest::new(1000, "two").nodes(2).minutes(10);
    req.place.nodelist = vec!["tux1".into(), "tux2".into()];
    let id = fx.submit(req).unwrap();
    fx.tick();
    assert!(fx.core.job_configuring(id));
    assert_eq!(fx.out.launched(), [id]);
    let mut back = restart(dir.path(), &mut fx);
    assert!(back.core.job_configuring(id), "still waiting for tux2");
    register(&mut back, "tux2");
    assert!(!back.core.job_configuring(id));
    assert!(
        back.out.launched().is_empty(),
        "launched once, before the restart"
    );
}
