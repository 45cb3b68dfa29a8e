//! Golden outputs of sinfo's federated view: every member in one table with a CLUSTER column.

use sluice_wire::proto::{NodeInfo, PartitionInfo};

use super::args::{Invocation, View, parse};
use super::{ClusterInfo, render_clusters};
use crate::timefmt::Zone;

const NOW: i64 = 1_795_255_200;

fn member(name: &str, idle: &[&str], busy: &[&str]) -> ClusterInfo {
    let node = |n: &&str, state: &str| NodeInfo {
        name: n.to_string(),
        state: state.into(),
        cpus: 2,
        partitions: vec!["debug".into()],
        ..Default::default()
    };
    let nodes: Vec<NodeInfo> = idle
        .iter()
        .map(|n| node(n, "IDLE"))
        .chain(busy.iter().map(|n| node(n, "ALLOCATED")))
        .collect();
    ClusterInfo {
        name: name.into(),
        parts: vec![PartitionInfo {
            name: "debug".into(),
            is_default: true,
            state: "UP".into(),
            max_time_min: -1,
            max_nodes: -1,
            nodes: nodes.iter().map(|n| n.name.clone()).collect(),
            ..Default::default()
        }],
        nodes,
    }
}

fn opts(args: &[&str]) -> super::args::SinfoOpts {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let Invocation::Run(o) = parse(&a, &|_| None).unwrap() else {
        panic!("not a run")
    };
    *o
}

#[test]
fn the_federated_view_names_each_lines_cluster() {
    let o = opts(&["--federation"]);
    assert_eq!(o.view, View::Federation);
    let clusters = [
        member("c1", &["a1", "a2"], &[]),
        member("c2", &["b1"], &["b2"]),
    ];
    let (out, err) = render_clusters(&clusters, &o, Zone::Utc, NOW);
    assert_eq!(err, "");
    assert_eq!(
        out,
        "PARTITION CLUSTER  AVAIL  TIMELIMIT  NODES  STATE NODELIST\n\
         debug*    c1          up   infinite      2   idle a[1-2]\n\
         debug*    c2          up   infinite      1  alloc b2\n\
         debug*    c2          up   infinite      1   idle b1\n"
    );
}

#[test]
fn cluster_options_pick_the_view() {
    assert_eq!(opts(&[]).view, View::Local);
    assert_eq!(opts(&["--federation", "--local"]).view, View::Local);
    assert_eq!(
        opts(&["--federation", "-M", "all"]).view,
        View::Clusters("all".into())
    );
    // -M keeps the plain layout (each cluster under its own CLUSTER: line).
    assert!(!opts(&["-M", "c1"]).format.contains("%8V"));
    assert_eq!(
        opts(&["--federation", "-o", "%P %V"]).format,
        "%P %V",
        "a given format is kept"
    );
    let (out, _) = render_clusters(
        &[member("c9", &["z1"], &[])],
        &opts(&["-h", "-o", "%V|%P"]),
        Zone::Utc,
        NOW,
    );
    assert_eq!(out, "c9|debug*\n");
}
