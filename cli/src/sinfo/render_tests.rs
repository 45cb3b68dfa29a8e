//! Golden outputs of sinfo's views over hand-built nodes and partitions.

use sluice_wire::proto::{NodeInfo, PartitionInfo};

use super::args::{Invocation, parse};
use super::render;
use crate::timefmt::Zone;

const NOW: i64 = 1_795_255_200;

fn node(name: &str, state: &str, parts: &[&str]) -> NodeInfo {
    NodeInfo {
        name: name.into(),
        addr: "127.0.0.1".into(),
        state: state.into(),
        cpus: 4,
        alloc_cpus: if state == "ALLOCATED" {
            4
        } else if state == "MIXED" {
            2
        } else {
            0
        },
        real_memory_mb: 1000,
        weight: 1,
        partitions: parts.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn part(name: &str, default: bool, max: i64, nodes: &[&str]) -> PartitionInfo {
    PartitionInfo {
        name: name.into(),
        is_default: default,
        state: "UP".into(),
        max_time_min: max,
        max_nodes: -1,
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn cluster() -> (Vec<NodeInfo>, Vec<PartitionInfo>) {
    let mut drained = node("n4", "IDLE", &["debug"]);
    drained.drain = true;
    drained.reason = "disk bad".into();
    drained.reason_uid = 0;
    drained.reason_time = NOW - 60;
    let mut down = node("n5", "DOWN", &["debug", "long"]);
    down.not_responding = true;
    down.reason = "Not responding".into();
    down.reason_time = NOW - 30;
    let nodes = vec![
        node("n1", "IDLE", &["debug", "long"]),
        node("n2", "IDLE", &["debug", "long"]),
        node("n3", "ALLOCATED", &["debug"]),
        drained,
        down,
        node("n10", "MIXED", &["long"]),
    ];
    let parts = vec![
        part("debug", true, 30, &["n1", "n2", "n3", "n4", "n5"]),
        part("long", false, -1, &["n1", "n2", "n5", "n10"]),
    ];
    (nodes, parts)
}

fn show(args: &[&str]) -> String {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let Invocation::Run(o) = parse(&a, &|_| None).unwrap() else {
        panic!("not a run")
    };
    let (nodes, parts) = cluster();
    let (out, err) = render(&nodes, &parts, &o, Zone::Utc, NOW);
    assert_eq!(err, "");
    out
}

#[test]
fn partition_view_groups_by_state_with_default_marked() {
    assert_eq!(
        show(&[]),
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n\
         debug*       up      30:00      1  down* n5\n\
         debug*       up      30:00      1  drain n4\n\
         debug*       up      30:00      1  alloc n3\n\
         debug*       up      30:00      2   idle n[1-2]\n\
         long         up   infinite      1  down* n5\n\
         long         up   infinite      1    mix n10\n\
         long         up   infinite      2   idle n[1-2]\n"
    );
}

#[test]
fn node_view_lists_each_node_and_partition() {
    assert_eq!(
        show(&["-N", "-n", "n[1,5,10]"]),
        "NODELIST   NODES PARTITION STATE \n\
         n1             1 debug*    idle  \n\
         n1             1 long      idle  \n\
         n5             1 debug*    down* \n\
         n5             1 long      down* \n\
         n10            1 long      mix   \n"
    );
}

#[test]
fn reasons_list_shows_down_and_drained_nodes() {
    assert_eq!(
        show(&["-R"]),
        "REASON               USER      TIMESTAMP           NODELIST\n\
         disk bad             root      2026-11-21T09:59:00 n4\n\
         Not responding       root      2026-11-21T09:59:30 n5\n"
    );
}

#[test]
fn format_letters_states_and_filters() {
    assert_eq!(
        show(&["-h", "-p", "long", "-o", "%R|%T|%D|%C|%F|%c|%m"]),
        "long|down*|1|0/0/4/4|0/0/1/1|4|1000\n\
         long|mixed|1|2/2/0/4|1/0/0/1|4|1000\n\
         long|idle|2|0/8/0/8|0/2/0/2|4|1000\n"
    );
    assert_eq!(
        show(&["-h", "-t", "idle", "-o", "%P %N"]),
        "debug* n[1-2]\nlong n[1-2]\n"
    );
    assert_eq!(
        show(&["-h", "-t", "drain", "-o", "%P %N %E"]),
        "debug* n4 disk bad\n"
    );
    assert_eq!(
        show(&["-h", "-s"]),
        "debug*       up      30:00          1/2/2/5 n[1-5]\nlong         up   infinite          1/2/1/4 n[1-2,5,10]\n"
    );
}
