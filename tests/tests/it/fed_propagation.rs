//! Changes made with `sacctmgr` reach every controller of a three-cluster federation: each
//! controller's own view (its `GetFederation` RPC, what it schedules and validates by) follows
//! cluster features and fedstates set at the accounting daemon. How fast is measured by
//! `sluice bench fed` (tests never judge wall time).

use crate::common;

use common::federation::Federation;

/// How controller `i` sees member `name`: its fedstate name and sorted features.
fn member(fed: &Federation, i: usize, name: &str) -> Option<(String, Vec<String>)> {
    let view = fed.controller_view(i);
    view.self_
        .iter()
        .chain(&view.siblings)
        .find(|m| m.name == name)
        .map(|m| {
            let mut features = m.features.clone();
            features.sort();
            (m.fed_state_name.clone(), features)
        })
}

/// Waits until every controller sees `name` as `check` wants it.
fn wait_everywhere(
    fed: &Federation,
    name: &str,
    what: &str,
    check: impl Fn(&str, &[String]) -> bool,
) {
    for i in 0..fed.names.len() {
        fed.wait_for(&format!("{} to see {name} {what}", fed.names[i]), || {
            member(fed, i, name).is_some_and(|(state, f)| check(&state, &f))
        });
    }
}

#[test]
fn sacctmgr_changes_reach_every_controller() {
    let fed = Federation::start(3);
    wait_everywhere(&fed, "cluster2", "ACTIVE without features", |s, f| {
        s == "ACTIVE" && f.is_empty()
    });

    fed.sacctmgr(&["modify", "cluster", "cluster2", "set", "features=gpu,fast"]);
    wait_everywhere(&fed, "cluster2", "with gpu,fast", |_, f| {
        f == ["fast", "gpu"]
    });
    fed.sacctmgr(&["modify", "cluster", "cluster2", "set", "features=bigmem"]);
    wait_everywhere(&fed, "cluster2", "with bigmem only", |_, f| f == ["bigmem"]);

    // A drain: DRAIN, then DRAINED once its (no) federated jobs are done; then active again.
    fed.sacctmgr(&["modify", "cluster", "cluster3", "set", "fedstate=drain"]);
    wait_everywhere(&fed, "cluster3", "draining", |s, _| {
        s == "DRAIN" || s == "DRAINED"
    });
    fed.sacctmgr(&["modify", "cluster", "cluster3", "set", "fedstate=active"]);
    wait_everywhere(&fed, "cluster3", "ACTIVE", |s, _| s == "ACTIVE");
    fed.sacctmgr(&["modify", "cluster", "cluster1", "set", "fedstate=inactive"]);
    wait_everywhere(&fed, "cluster1", "INACTIVE", |s, _| s == "INACTIVE");
    // The other members were left as they were.
    for i in 0..3 {
        let (state, features) = member(&fed, i, "cluster2").expect("cluster2 is a member");
        assert_eq!(
            (state.as_str(), features),
            ("ACTIVE", vec!["bigmem".to_string()])
        );
    }
}
