//! The federated core the federation scenarios run on, in simulated time: cluster `test` (fed
//! id 1) in federation `fed`, one partition `debug` (MaxTime 60) of 2-CPU nodes, with the
//! siblings each test names (usually [`B_AND_C`]: `b` (2) and `c` (3)).

use sluice_ctld::core::federation::{
    self, FedInfo, FedMember, FedRecord, FedRequest, FedSubmit, FedView, InfoPhase, OriginSubmit,
};
use sluice_ctld::core::{LaunchSpec, SubmitRequest};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, FedState};

/// Siblings `b` (fed id 2) and `c` (3).
pub const B_AND_C: &[(&str, u32)] = &[("b", 2), ("c", 3)];
/// Sibling `b` (fed id 2) alone.
pub const B: &[(&str, u32)] = &[("b", 2)];

/// A federation member in fedstate `state`.
pub fn member(name: &str, fed_id: u32, state: FedState) -> FedMember {
    FedMember {
        name: name.into(),
        fed_id,
        fed_state: state.stored(),
        ..FedMember::default()
    }
}

/// Federation `fed` as `test` (fedstate `state`) sees it, with ACTIVE `siblings`.
pub fn view(state: FedState, siblings: &[(&str, u32)]) -> FedView {
    FedView {
        federation: "fed".into(),
        me: member("test", 1, state),
        siblings: siblings
            .iter()
            .map(|&(name, id)| member(name, id, FedState::Active))
            .collect(),
    }
}

/// Hands the core `view` as the dbd would; what that emits is discarded.
pub fn join(fx: &mut CoreFixture, view: FedView) {
    let now = fx.now;
    assert!(federation::on_fed_view(
        &mut fx.core,
        &mut fx.out,
        now,
        view
    ));
    fx.out.take();
}

/// Registered `nodes` (a hostlist) of 2 CPUs in partition `debug`.
pub fn builder(nodes: &str) -> ClusterBuilder {
    ClusterBuilder::new()
        .nodes(nodes, "CPUs=2")
        .partition("debug", &format!("Nodes={nodes} Default=YES MaxTime=60"))
}

/// [`builder`]'s cluster, registered, ACTIVE in the federation with `siblings`.
pub fn fixture(nodes: &str, siblings: &[(&str, u32)]) -> CoreFixture {
    let mut fx = builder(nodes).build();
    fx.register_all();
    join(&mut fx, view(FedState::Active, siblings));
    fx
}

/// A batch job of uid 1000 named `name` with a trivial script.
pub fn job(name: &str) -> SubmitRequest {
    let mut req = SubmitRequest::new(1000, name);
    req.launch = LaunchSpec {
        script: "#!/bin/sh\ntrue\n".into(),
        ..LaunchSpec::default()
    };
    req
}

/// Step 1 of the origin's federated submission of `req`: the record it sends to the dbd.
pub fn origin_submit(fx: &mut CoreFixture, req: SubmitRequest) -> FedRecord {
    let now = fx.now;
    match federation::on_fed_submit(&mut fx.core, &mut fx.out, now, req, FedSubmit::default()) {
        Ok(OriginSubmit::Federated(rec)) => rec,
        other => panic!("a federated submission expected, got {other:?}"),
    }
}

/// The dbd's record of `id`, submitted by `test`, in `phase`, over `viable` with copies on
/// `active`.
pub fn info(
    id: FedJobId,
    phase: InfoPhase,
    held: bool,
    viable: &[&str],
    active: &[&str],
) -> FedInfo {
    FedInfo {
        job: id,
        origin: "test".into(),
        phase,
        held,
        viable: viable.iter().map(|s| s.to_string()).collect(),
        active: active.iter().map(|s| s.to_string()).collect(),
        winner: None,
        final_state: 0,
        exit_code: 0,
    }
}

/// The start lock request of `id`, carrying no offer (the job was offered before).
pub fn lock(id: FedJobId) -> FedRequest {
    FedRequest::StartLock {
        job: id,
        offer: None,
    }
}

/// The description the start lock of `id`, the only request in `reqs`, carries as its offer.
pub fn carried_offer(reqs: &[FedRequest], id: FedJobId) -> federation::FedDesc {
    match reqs {
        [
            FedRequest::StartLock {
                job,
                offer: Some(desc),
            },
        ] if *job == id => federation::FedDesc::decode(desc).unwrap(),
        other => panic!("the start lock of {id} with its offer expected: {other:?}"),
    }
}
