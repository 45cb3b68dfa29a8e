//! The real `sinfo` binary against a fake controller: both views and the reasons list.

use crate::fake;

use fake::{FakeCluster, FakeState};
use sluice_wire::proto::{NodeInfo, PartitionInfo};

const SINFO: &str = env!("CARGO_BIN_EXE_sinfo");

fn node(name: &str, state: &str) -> NodeInfo {
    NodeInfo {
        name: name.into(),
        state: state.into(),
        cpus: 2,
        partitions: vec!["debug".into()],
        ..Default::default()
    }
}

fn cluster() -> FakeCluster {
    let mut drained = node("n3", "IDLE");
    drained.drain = true;
    drained.reason = "maint".into();
    drained.reason_time = 1_795_255_200;
    FakeCluster::start(FakeState {
        nodes: vec![node("n1", "IDLE"), node("n2", "ALLOCATED"), drained],
        partitions: vec![PartitionInfo {
            name: "debug".into(),
            is_default: true,
            state: "UP".into(),
            max_time_min: -1,
            max_nodes: -1,
            nodes: vec!["n1".into(), "n2".into(), "n3".into()],
            ..Default::default()
        }],
        ..Default::default()
    })
}

#[test]
fn partition_view() {
    let out = cluster().run(SINFO, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n\
         debug*       up   infinite      1  drain n3\n\
         debug*       up   infinite      1  alloc n2\n\
         debug*       up   infinite      1   idle n1\n"
    );
}

#[test]
fn node_view_and_reasons() {
    let c = cluster();
    let out = c.run(SINFO, &["-N", "-h"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "n1             1 debug*    idle  \nn2             1 debug*    alloc \nn3             1 debug*    drain \n"
    );
    let out = c.run(SINFO, &["-R", "-h", "-o", "%E|%H|%N"]);
    assert_eq!(out.stdout, "maint|2026-11-21T10:00:00|n3\n");
}

#[test]
fn bad_state_is_an_error() {
    let out = cluster().run(SINFO, &["-t", "sleepy"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("sinfo: error: Bad node state specified: sleepy\n"),
        "{}",
        out.stderr
    );
}
