//! Who cancelled a federated job through the dbd (`CANCELLED by <uid>`), in simulated time:
//! the uid the dbd's `SiblingCancelled` event names, or the one this cluster's own cancel at
//! the dbd was made by, reaches the end record of every copy it cancels here — a pending copy,
//! the origin's job and its REVOKED tracker, a run killed here. Cluster `test` (fed id 1)
//! with siblings `b` (2) and `c` (3).

use crate::fed_core_support::{B_AND_C, fixture};
use sluice_ctld::core::federation::{
    self, FedDesc, FedEvent, FedEventKind, FedInfo, FedRequeue, FedSubmit, InfoPhase, OriginSubmit,
};
use sluice_ctld::core::{AcctRecord, LaunchSpec, SubmitRequest};
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::{FedJobId, JobState};

fn launch() -> LaunchSpec {
    LaunchSpec {
        script: "#!/bin/sh\ntrue\n".into(),
        ..LaunchSpec::default()
    }
}

/// This cluster's own job, recorded by the dbd with copies on `active` (without `test`: the
/// origin keeps a REVOKED tracker).
fn origin_job(fx: &mut CoreFixture, active: &[&str]) -> FedJobId {
    let mut req = SubmitRequest::new(1000, "origin");
    req.launch = launch();
    let now = fx.now;
    let rec = match federation::on_fed_submit(
        &mut fx.core,
        &mut fx.out,
        now,
        req,
        FedSubmit::default(),
    ) {
        Ok(OriginSubmit::Federated(rec)) => rec,
        other => panic!("a federated submission expected, got {other:?}"),
    };
    let id = rec.reply.job_id;
    let info = FedInfo {
        job: id,
        origin: "test".into(),
        phase: InfoPhase::Pending,
        held: false,
        viable: vec!["b".into(), "c".into(), "test".into()],
        active: active.iter().map(|s| s.to_string()).collect(),
        winner: None,
        final_state: 0,
        exit_code: 0,
    };
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &info);
    federation::on_offer_synced(&mut fx.core, &mut fx.out, id, true);
    federation::on_fed_info(&mut fx.core, &mut fx.out, now, &info);
    id
}

/// A copy of `b`'s job `local`, offered to this cluster.
fn copy_of_b(fx: &mut CoreFixture, seq: u64, local: u32) -> FedJobId {
    let id = FedJobId::from_raw((2 << 26) | local).unwrap();
    let desc = FedDesc {
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
        name: "copy".into(),
        min_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        submit_time: 1_600_000_000,
        launch: launch(),
        ..FedDesc::default()
    };
    let offered = FedEventKind::SiblingOffered {
        job: id,
        origin: "b".into(),
        viable: vec!["b".into(), "test".into()],
        desc: desc.encode(),
    };
    event(fx, seq, offered);
    assert_eq!(fx.state(id), JobState::Pending);
    id
}

fn event(fx: &mut CoreFixture, seq: u64, kind: FedEventKind) {
    let now = fx.now;
    assert!(federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        FedEvent { seq, kind }
    ));
}

fn cancelled(job: FedJobId, requester_uid: Option<u32>) -> FedEventKind {
    FedEventKind::SiblingCancelled {
        job,
        requeue: FedRequeue::None,
        requester_uid,
    }
}

/// (state, requester) of every end record of `id`, in order.
fn ends(fx: &CoreFixture, id: FedJobId) -> Vec<(JobState, Option<u32>)> {
    fx.out
        .acct
        .iter()
        .filter_map(|r| match r {
            AcctRecord::JobEnded {
                job,
                state,
                requester_uid,
                ..
            } if *job == id => Some((*state, *requester_uid)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_pending_job_cancelled_from_another_cluster_names_the_canceller() {
    let mut fx = fixture("n1", B_AND_C);
    // The origin's own pending job, and its tracker (not viable here).
    let own = origin_job(&mut fx, &["b", "test"]);
    let tracked = origin_job(&mut fx, &["b"]);
    assert_eq!(fx.state(tracked), JobState::Revoked);
    // A pending copy of b's job.
    let copy = copy_of_b(&mut fx, 1, 7);

    event(&mut fx, 2, cancelled(own, Some(1000)));
    event(&mut fx, 3, cancelled(tracked, Some(0)));
    event(&mut fx, 4, cancelled(copy, Some(1000)));
    assert_eq!(ends(&fx, own), [(JobState::Cancelled, Some(1000))]);
    assert_eq!(ends(&fx, tracked), [(JobState::Cancelled, Some(0))]);
    assert_eq!(ends(&fx, copy), [(JobState::Cancelled, Some(1000))]);
}

#[test]
fn an_event_that_names_nobody_records_plain_cancelled() {
    // An event from a dbd that does not name the canceller (or a cancel of its own).
    let mut fx = fixture("n1", B_AND_C);
    let copy = copy_of_b(&mut fx, 1, 8);
    event(&mut fx, 2, cancelled(copy, None));
    assert_eq!(ends(&fx, copy), [(JobState::Cancelled, None)]);
}

#[test]
fn this_clusters_own_cancel_at_the_dbd_names_its_caller() {
    let mut fx = fixture("n1", B_AND_C);
    let copy = copy_of_b(&mut fx, 1, 9);
    let now = fx.now;
    // scancel here of b's pending job: the dbd cancelled it everywhere; the copy here too.
    federation::on_fed_cancelled(&mut fx.core, &mut fx.out, now, copy, "", Some(1000));
    assert_eq!(ends(&fx, copy), [(JobState::Cancelled, Some(1000))]);
}

#[test]
fn a_run_here_killed_by_a_cancel_elsewhere_names_the_canceller() {
    let mut fx = fixture("n1", B_AND_C);
    let copy = copy_of_b(&mut fx, 1, 10);
    fx.schedule();
    let now = fx.now;
    federation::on_start_committed(&mut fx.core, &mut fx.out, now, copy);
    assert_eq!(fx.state(copy), JobState::Running);
    event(&mut fx, 2, cancelled(copy, Some(1000)));
    assert_eq!(ends(&fx, copy), [(JobState::Cancelled, Some(1000))]);
    // Its processes' exit adds no other end.
    fx.exit(copy, 0).unwrap();
    assert_eq!(ends(&fx, copy), [(JobState::Cancelled, Some(1000))]);
}
