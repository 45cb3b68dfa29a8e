//! The federation handlers of the pure core, in simulated time: the start lock (reserve
//! instead of launch, commit → launch, refusal → release), sibling copies and their
//! revocation, the origin's tracker, run-end reports, offers following holds, fedstates and
//! leaving the federation. Cluster `test` (fed id 1) with siblings `b` (2) and `c` (3).

use crate::fed_core_support::{
    B_AND_C, builder, carried_offer, info, job, join, lock, origin_submit, view,
};
use sluice_ctld::core::deps::DepStatus;
use sluice_ctld::core::federation::{
    self, CommitOutcome, EndReport, FedDesc, FedEvent, FedEventKind, FedRequest, FedRequeue,
    FedSubmit, FedView, InfoPhase, OriginSubmit,
};
use sluice_ctld::core::{
    AcctRecord, JobReason, LaunchSpec, NodeCommand, SimTime, SubmitRequest, on_release,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, FedState, JobState};

/// One node (2 CPUs), in federation `fed` as `test` with fedstate `state`.
fn fixture(state: FedState) -> CoreFixture {
    let mut fx = builder("n1").build();
    fx.register_all();
    join(&mut fx, view(state, B_AND_C));
    fx
}

/// Submits `req` as the origin and has the dbd record it (held, as every origin records its
/// submissions), then, unless held, offer it with `active` holding copies.
fn submit_recorded(fx: &mut CoreFixture, req: SubmitRequest, active: &[&str]) -> FedJobId {
    let now = fx.now;
    let held = req.hold;
    let rec = origin_submit(fx, req);
    let id = rec.reply.job_id;
    let viable = ["b", "c", "test"];
    let recorded_on = if held { active } else { &["test"] };
    let i = info(id, InfoPhase::Pending, true, &viable, recorded_on);
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &i);
    assert!(fx.out.fed_reqs.is_empty(), "the offer waits for the pass");
    // As at the end of a pass that did not start it.
    federation::start::send_due_offers(&mut fx.core, &mut fx.out);
    let offers = std::mem::take(&mut fx.out.fed_reqs);
    if held {
        assert!(offers.is_empty(), "held: offered to nobody: {offers:?}");
        return id;
    }
    assert!(
        matches!(offers.as_slice(), [FedRequest::Offer { job, .. }] if *job == id),
        "offered once recorded: {offers:?}"
    );
    federation::on_offer_synced(&mut fx.core, &mut fx.out, id, true);
    federation::on_fed_info(
        &mut fx.core,
        &mut fx.out,
        now,
        &info(id, InfoPhase::Pending, false, &viable, active),
    );
    id
}

fn submitted_records(fx: &CoreFixture, id: FedJobId) -> usize {
    let is_sub = |r: &&AcctRecord| matches!(r, AcctRecord::JobSubmitted { job, .. } if *job == id);
    fx.out.acct.iter().filter(is_sub).count()
}

fn event(seq: u64, kind: FedEventKind) -> FedEvent {
    FedEvent { seq, kind }
}

#[test]
fn a_federated_job_is_reserved_then_launched_only_after_the_commit() {
    let mut fx = fixture(FedState::Active);
    let now = fx.now;
    let rec = match federation::on_fed_submit(
        &mut fx.core,
        &mut fx.out,
        now,
        job("f"),
        FedSubmit::default(),
    )
    .unwrap()
    {
        OriginSubmit::Federated(rec) => rec,
        other => panic!("{other:?}"),
    };
    let id = rec.reply.job_id;
    // Federated id: fed id 1 in the top bits.
    assert_eq!(id.get() >> 26, 1);
    // Not recorded by the dbd yet: no accounting record and never scheduled.
    assert_eq!(submitted_records(&fx, id), 0);
    fx.schedule();
    assert!(fx.out.fed_reqs.is_empty() && fx.out.launched().is_empty());

    let i = info(
        id,
        InfoPhase::Pending,
        false,
        &["b", "c", "test"],
        &["b", "c", "test"],
    );
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &i);
    assert_eq!(submitted_records(&fx, id), 1);
    fx.schedule();
    assert_eq!(fx.out.fed_reqs, [lock(id)]);
    assert!(fx.out.launched().is_empty(), "no launch before the commit");
    assert_eq!(fx.state(id), JobState::Pending);

    // The reservation holds the node: a local job cannot take it meanwhile.
    let other = fx.submit(job("local")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(other), JobState::Pending);
    assert_eq!(fx.reason(other), JobReason::Resources);

    let outcome = federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    assert_eq!(outcome, CommitOutcome::Launched);
    assert_eq!(fx.out.launched(), [id]);
    assert_eq!(fx.state(id), JobState::Running);
    let f = fx.core.fed_job(id).unwrap();
    assert_eq!(f.running_on.as_deref(), Some("test"));
    assert_eq!(f.active, ["test"]);
}

#[test]
fn a_refused_lock_releases_the_allocation_and_waits_before_asking_again() {
    let mut fx = fixture(FedState::Active);
    let id = submit_recorded(&mut fx, job("f"), &["b", "test"]);
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    let now = fx.now;
    federation::on_start_refused(&mut fx.core, &mut fx.out, now, id, 5);
    assert_eq!(fx.reason(id), JobReason::FedJobLock);
    // The node is free again: a local job starts at once.
    let local = fx.submit(job("local")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(local), JobState::Running);
    assert!(fx.out.take().fed_reqs.is_empty(), "no new lock request yet");
    fx.exit(local, 0).unwrap();
    fx.advance(5);
    fx.schedule();
    assert_eq!(fx.out.fed_reqs, [lock(id)]);
    assert!(fx.out.launched().is_empty());
}

fn desc(name: &str) -> Vec<u8> {
    FedDesc {
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
        name: name.into(),
        min_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        requeue: true,
        submit_time: 1_600_000_000,
        launch: LaunchSpec {
            script: "#!/bin/sh\ntrue\n".into(),
            ..LaunchSpec::default()
        },
        ..FedDesc::default()
    }
    .encode()
}

fn b_job(local: u32) -> FedJobId {
    FedJobId::from_raw((2 << 26) | local).unwrap()
}

#[test]
fn an_offered_copy_is_pending_and_a_revoked_one_is_recorded_and_dropped_once() {
    let mut fx = fixture(FedState::Active);
    let id = b_job(7);
    let offered = FedEventKind::SiblingOffered {
        job: id,
        origin: "b".into(),
        viable: vec!["c".into(), "b".into(), "test".into()],
        desc: desc("copy"),
    };
    let now = fx.now;
    assert!(federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        event(1, offered.clone())
    ));
    assert_eq!(fx.state(id), JobState::Pending);
    assert_eq!(submitted_records(&fx, id), 1);
    let f = fx.core.fed_job(id).unwrap();
    assert_eq!((f.origin.as_str(), f.origin_here), ("b", false));
    assert_eq!(f.viable, ["b", "c", "test"]);
    // The origin's submit time is kept.
    assert_eq!(fx.core.job(id).unwrap().submit_time.secs(), 1_600_000_000);
    // Redelivered: skipped.
    assert!(!federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        event(1, offered)
    ));

    let revoked = FedEventKind::SiblingRevoked {
        job: id,
        winner: Some("c".into()),
    };
    assert!(federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        event(2, revoked.clone())
    ));
    assert!(
        fx.core.job(id).is_none(),
        "a revoked sibling leaves the core"
    );
    let ended: Vec<_> = fx
        .out
        .acct
        .iter()
        .filter(|r| matches!(r, AcctRecord::JobEnded { job, state: JobState::Revoked, .. } if *job == id))
        .collect();
    assert_eq!(ended.len(), 1);
    assert!(!federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        event(2, revoked)
    ));
    assert_eq!(fx.core.fed_cursor(), 2);
}

#[test]
fn an_unreadable_offer_is_rejected() {
    let mut fx = fixture(FedState::Active);
    let id = b_job(8);
    let bad = FedEventKind::SiblingOffered {
        job: id,
        origin: "b".into(),
        viable: vec!["test".into()],
        desc: b"{}".to_vec(),
    };
    let now = fx.now;
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(1, bad));
    assert!(fx.core.job(id).is_none());
    assert_eq!(fx.out.fed_reqs, [FedRequest::Reject { job: id }]);
}

/// The event stream and the registration run side by side: a sibling's copy can be applied
/// before this cluster's first view. It still starts only through the dbd's lock.
#[test]
fn a_copy_that_arrives_before_the_first_view_still_takes_the_lock() {
    let mut fx = builder("n1").build();
    fx.register_all();
    let id = b_job(11);
    let now = fx.now;
    let offered = FedEventKind::SiblingOffered {
        job: id,
        origin: "b".into(),
        viable: vec!["test".into(), "b".into()],
        desc: desc("early"),
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(1, offered));
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    assert!(fx.out.launched().is_empty(), "no launch without the lock");
    assert_eq!(fx.state(id), JobState::Pending);
}

#[test]
fn a_revoked_copy_while_locking_gives_its_reservation_back() {
    let mut fx = fixture(FedState::Active);
    let id = b_job(9);
    let now = fx.now;
    let offered = FedEventKind::SiblingOffered {
        job: id,
        origin: "b".into(),
        viable: vec!["test".into(), "b".into()],
        desc: desc("copy"),
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(1, offered));
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    let revoked = FedEventKind::SiblingRevoked {
        job: id,
        winner: Some("b".into()),
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(2, revoked));
    // A late commit finds nothing to launch.
    assert_eq!(
        federation::on_start_committed(&mut fx.core, &mut fx.out, now, id),
        CommitOutcome::Unknown
    );
    let local = fx.submit(job("local")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(local), JobState::Running);
}

/// Job `id` starts on sibling `c` (event 1): the origin's copy becomes its tracker. Returns
/// when.
fn starts_elsewhere(fx: &mut CoreFixture, id: FedJobId) -> SimTime {
    let now = fx.now;
    let started = FedEventKind::JobStartedElsewhere {
        job: id,
        cluster: "c".into(),
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(1, started));
    assert_eq!(fx.state(id), JobState::Revoked);
    now
}

/// 30 s on, the run of `id` on `c` ends in `state` with `exit_code` (event 2, after the
/// start); returns when.
fn ends_elsewhere(fx: &mut CoreFixture, id: FedJobId, state: JobState, exit_code: i32) -> SimTime {
    fx.advance(30);
    let ended = FedEventKind::JobEnded {
        job: id,
        cluster: "c".into(),
        state: state.stored(),
        exit_code,
    };
    let now = fx.now;
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(2, ended));
    now
}

#[test]
fn the_origin_keeps_a_revoked_tracker_until_the_run_elsewhere_ends() {
    let mut fx = fixture(FedState::Active);
    let id = submit_recorded(&mut fx, job("f"), &["b", "c", "test"]);
    starts_elsewhere(&mut fx, id);
    let f = fx.core.fed_job(id).unwrap();
    assert_eq!(f.running_on.as_deref(), Some("c"));
    assert_eq!(f.active, ["c"]);
    fx.schedule();
    assert!(
        fx.out.take().fed_reqs.is_empty(),
        "a tracker is never scheduled"
    );

    ends_elsewhere(&mut fx, id, JobState::Failed, 3);
    let j = fx.core.job(id).unwrap();
    assert_eq!((j.state, j.exit_code), (JobState::Failed, 3));
    // Its own record is REVOKED: the run is recorded by the cluster that ran it.
    assert!(fx.out.acct.iter().any(
        |r| matches!(r, AcctRecord::JobEnded { job, state: JobState::Revoked, .. } if *job == id)
    ));
}

#[test]
fn an_offer_the_dbd_confirmed_is_new_to_the_pass_over_new_jobs() {
    // The runtime answers an offer's confirmation with the narrow pass (not one over the whole
    // queue, which walked every pending job per answer under a burst): the job must be in it.
    let mut fx = fixture(FedState::Active);
    fx.schedule();
    let now = fx.now;
    let rec = origin_submit(&mut fx, job("f"));
    let id = rec.reply.job_id;
    let i = info(id, InfoPhase::Pending, true, &["b", "c", "test"], &["test"]);
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &i);
    // Offered alone, as at the end of a batch whose pass did not start it.
    federation::start::send_due_offers(&mut fx.core, &mut fx.out);
    fx.schedule_fresh();
    assert!(
        !fx.out
            .take()
            .fed_reqs
            .iter()
            .any(|r| matches!(r, FedRequest::StartLock { .. })),
        "gated while its offer is in flight"
    );
    federation::on_offer_synced(&mut fx.core, &mut fx.out, id, true);
    let stats = fx.schedule_fresh();
    assert_eq!(stats.considered, 1);
    assert_eq!(fx.out.fed_reqs, [lock(id)]);
}

/// A job the origin records (held, as every dependent job: it stays on its origin), with
/// the record's answer applied.
fn submit_dependent(fx: &mut CoreFixture, req: SubmitRequest) -> FedJobId {
    let now = fx.now;
    let rec = origin_submit(fx, req);
    let i = info(
        rec.reply.job_id,
        InfoPhase::Pending,
        true,
        &["test"],
        &["test"],
    );
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &i);
    rec.reply.job_id
}

/// Where the one dependency of `id` stands.
fn dep_status(fx: &CoreFixture, id: FedJobId) -> DepStatus {
    let deps = fx
        .core
        .job(id)
        .and_then(|j| j.deps.clone())
        .expect("a dependency");
    assert_eq!(deps.items.len(), 1);
    deps.items[0].status
}

#[test]
fn dependants_of_a_tracker_wait_for_the_run_elsewhere_to_end() {
    // The soak's finding: `afterok` on a job running on a sibling, submitted to its origin,
    // was judged failed at once (the REVOKED tracker counted as ended) and never ran.
    let mut fx = fixture(FedState::Active);
    let id = submit_recorded(&mut fx, job("f"), &["b", "c", "test"]);
    let before_start = submit_dependent(&mut fx, job("after").dependency(&format!("after:{id}")));
    assert_eq!(dep_status(&fx, before_start), DepStatus::Waiting);
    let now = starts_elsewhere(&mut fx, id);
    let ok = submit_dependent(&mut fx, job("ok").dependency(&format!("afterok:{id}")));
    let any = submit_dependent(&mut fx, job("any").dependency(&format!("afterany:{id}")));
    let not_ok = submit_dependent(
        &mut fx,
        job("notok").dependency(&format!("afternotok:{id}")),
    );
    let after = submit_dependent(&mut fx, job("after2").dependency(&format!("after:{id}")));
    for d in [ok, any, not_ok] {
        assert_eq!(
            dep_status(&fx, d),
            DepStatus::Waiting,
            "waits for the run elsewhere"
        );
    }
    // `after`: the job started (elsewhere), before or after the dependant came.
    for d in [before_start, after] {
        assert_eq!(dep_status(&fx, d), DepStatus::Satisfied(now));
    }
    fx.schedule();
    // Offered to the siblings once its dependency holds no more (the pass offers them).
    let offered = |fx: &CoreFixture, d: FedJobId| fx.core.fed_job(d).is_some_and(|f| f.offered);
    assert!(offered(&fx, before_start) && offered(&fx, after));
    assert!(![ok, any, not_ok].iter().any(|&d| offered(&fx, d)));

    let now = ends_elsewhere(&mut fx, id, JobState::Completed, 0);
    assert_eq!(dep_status(&fx, ok), DepStatus::Satisfied(now));
    assert_eq!(dep_status(&fx, any), DepStatus::Satisfied(now));
    assert_eq!(dep_status(&fx, not_ok), DepStatus::Failed);
    fx.out.take();
    fx.schedule();
    assert!(
        offered(&fx, ok) && offered(&fx, any),
        "{:?}",
        fx.out.fed_reqs
    );
    assert!(!offered(&fx, not_ok));
    assert_eq!(fx.reason(not_ok), JobReason::DependencyNeverSatisfied);
}

#[test]
fn an_origin_that_is_not_viable_tracks_the_job_from_the_start() {
    let mut fx = fixture(FedState::Active);
    let id = submit_recorded(&mut fx, job("f"), &["b"]);
    assert_eq!(fx.state(id), JobState::Revoked);
    fx.schedule();
    assert!(fx.out.fed_reqs.is_empty());
    // An update makes the origin viable again: its copy is active (SiblingOffered to itself).
    let now = fx.now;
    let back = FedEventKind::SiblingOffered {
        job: id,
        origin: "test".into(),
        viable: vec!["b".into(), "test".into()],
        desc: Vec::new(),
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(1, back));
    assert_eq!(fx.state(id), JobState::Pending);
    fx.schedule();
    assert_eq!(fx.out.fed_reqs, [lock(id)]);
}

#[test]
fn the_end_of_a_run_here_is_reported_until_acknowledged() {
    let mut fx = fixture(FedState::Active);
    let id = submit_recorded(&mut fx, job("f"), &["b", "test"]);
    fx.schedule();
    let now = fx.now;
    federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    fx.out.take();
    fx.exit(id, 2).unwrap();
    let report = EndReport {
        state: JobState::Failed.stored(),
        exit_code: 2,
        requeue: FedRequeue::None,
    };
    assert_eq!(fx.out.fed_reqs, [FedRequest::Ended { job: id, report }]);
    // Owed until the dbd has it (a restart would resend it).
    assert_eq!(
        federation::unsynced(&fx.core),
        [FedRequest::Ended { job: id, report }]
    );
    federation::on_end_reported(&mut fx.core, &mut fx.out, now, id, None);
    assert!(federation::unsynced(&fx.core).is_empty());
}

#[test]
fn a_requeue_asked_by_the_dbd_kills_the_run_and_reports_it_requeued() {
    let mut fx = fixture(FedState::Active);
    let id = b_job(11);
    let now = fx.now;
    let offered = FedEventKind::SiblingOffered {
        job: id,
        origin: "b".into(),
        viable: vec!["b".into(), "test".into()],
        desc: desc("copy"),
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(1, offered));
    fx.schedule();
    federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    fx.out.take();
    let requeue = FedEventKind::SiblingCancelled {
        job: id,
        requeue: FedRequeue::Requeue,
        requester_uid: None,
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(2, requeue));
    // Reported only once the killed run's processes are gone (no second run meanwhile).
    assert!(fx.out.take().fed_reqs.is_empty());
    assert!(federation::unsynced(&fx.core).is_empty());
    fx.exit(id, 0).unwrap();
    let reqs = fx.out.take().fed_reqs;
    assert!(
        matches!(
            reqs.as_slice(),
            [FedRequest::Ended {
                report: EndReport {
                    requeue: FedRequeue::Requeue,
                    ..
                },
                ..
            }]
        ),
        "{reqs:?}"
    );
    // Until the dbd has the report, the copy does not ask for the lock again.
    fx.schedule();
    assert!(fx.out.fed_reqs.is_empty());
    // The dbd offered it to this cluster again: it stays, pending.
    let mut i = info(
        id,
        InfoPhase::Pending,
        false,
        &["b", "test"],
        &["b", "test"],
    );
    i.origin = "b".into();
    federation::on_end_reported(&mut fx.core, &mut fx.out, now, id, Some(i));
    assert_eq!(fx.state(id), JobState::Pending);
}

#[test]
fn holds_and_releases_withdraw_and_offer_the_origin_job() {
    let mut fx = fixture(FedState::Active);
    let id = submit_recorded(&mut fx, job("h").held(), &["test"]);
    fx.schedule();
    assert!(
        fx.out.take().fed_reqs.is_empty(),
        "held: stays on the origin"
    );
    let admin = fx.admin();
    on_release(
        &mut fx.core,
        &mut fx.out,
        admin,
        sluice_ctld::core::JobRef::Job(id),
    )
    .unwrap();
    // Released with room here: the start lock carries the offer.
    fx.schedule();
    let offer = carried_offer(&fx.out.take().fed_reqs, id);
    assert_eq!((offer.name.as_str(), offer.uid), ("h", 1000));
    // Refused (by the dbd, offer and all): the offer goes alone.
    let now = fx.now;
    federation::on_start_refused(&mut fx.core, &mut fx.out, now, id, 0);
    let reqs = fx.out.take().fed_reqs;
    assert!(
        matches!(reqs.as_slice(), [FedRequest::Offer { job, desc }]
            if *job == id && FedDesc::decode(desc).unwrap() == offer),
        "{reqs:?}"
    );
    // The dbd refuses the lock of a job it holds: the origin asks once the offer arrived.
    fx.schedule();
    assert!(fx.out.take().fed_reqs.is_empty());
    federation::on_offer_synced(&mut fx.core, &mut fx.out, id, true);
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    let now = fx.now;
    federation::on_start_refused(&mut fx.core, &mut fx.out, now, id, 0);
    // Held again after being offered: withdrawn.
    sluice_ctld::core::on_hold(
        &mut fx.core,
        &mut fx.out,
        admin,
        sluice_ctld::core::JobRef::Job(id),
        sluice_ctld::core::HoldKind::User,
    )
    .unwrap();
    fx.schedule();
    assert_eq!(fx.out.fed_reqs, [FedRequest::Withdraw { job: id }]);
}

#[test]
fn inactive_schedules_no_federated_work_and_drain_takes_no_new_jobs() {
    let mut fx = fixture(FedState::Active);
    let id = submit_recorded(&mut fx, job("f"), &["test"]);
    let now = fx.now;
    federation::on_fed_view(
        &mut fx.core,
        &mut fx.out,
        now,
        view(FedState::Inactive, B_AND_C),
    );
    fx.schedule();
    assert!(fx.out.take().fed_reqs.is_empty(), "INACTIVE: no start");
    let refused = federation::on_fed_submit(
        &mut fx.core,
        &mut fx.out,
        now,
        job("g"),
        FedSubmit::default(),
    );
    assert!(matches!(refused, Err(CtldError::SubmissionsDisabled)));
    assert_eq!(
        CtldError::SubmissionsDisabled.to_string(),
        "System submissions disabled"
    );

    federation::on_fed_view(
        &mut fx.core,
        &mut fx.out,
        now,
        view(FedState::Drain, B_AND_C),
    );
    let refused = federation::on_fed_submit(
        &mut fx.core,
        &mut fx.out,
        now,
        job("g"),
        FedSubmit::default(),
    );
    assert!(matches!(refused, Err(CtldError::SubmissionsDisabled)));
    fx.schedule();
    assert_eq!(fx.out.fed_reqs, [lock(id)], "DRAIN runs what it has");
}

#[test]
fn leaving_the_federation_keeps_local_work_and_drops_the_rest() {
    let mut fx = fixture(FedState::Active);
    let mine = submit_recorded(&mut fx, job("mine"), &["b", "test"]);
    let tracked = submit_recorded(&mut fx, job("tracked"), &["b"]);
    let copy = b_job(12);
    let now = fx.now;
    let offered = FedEventKind::SiblingOffered {
        job: copy,
        origin: "b".into(),
        viable: vec!["b".into(), "test".into()],
        desc: desc("copy"),
    };
    federation::on_fed_event(&mut fx.core, &mut fx.out, now, event(1, offered));
    assert!(federation::on_fed_view(
        &mut fx.core,
        &mut fx.out,
        now,
        FedView::default()
    ));
    assert_eq!(fx.state(mine), JobState::Pending);
    assert!(fx.core.fed_job(mine).is_none(), "now a plain local job");
    assert!(fx.core.job(tracked).is_none(), "its tracker is dropped");
    assert!(
        fx.core.job(copy).is_none(),
        "another cluster's copy is revoked"
    );
    fx.out.take();
    fx.schedule();
    assert_eq!(fx.out.launched(), [mine], "starts without the lock now");
    // New ids are plain again.
    let next = fx.submit(job("plain")).unwrap();
    assert_eq!(next.get() >> 26, 0);
}

#[test]
fn outside_a_federation_submissions_are_plain() {
    let mut fx = ClusterBuilder::new()
        .nodes("n1", "CPUs=2")
        .partition("debug", "Nodes=n1 Default=YES")
        .build();
    fx.register_all();
    let now = fx.now;
    let r = federation::on_fed_submit(
        &mut fx.core,
        &mut fx.out,
        now,
        job("p"),
        FedSubmit::default(),
    );
    let id = match r.unwrap() {
        OriginSubmit::Local(reply) => reply.job_id,
        other => panic!("{other:?}"),
    };
    fx.schedule();
    assert_eq!(fx.out.launched(), [id]);
    assert!(matches!(
        fx.out.node_cmds.first(),
        Some(NodeCommand::LaunchBatch { .. })
    ));
}
