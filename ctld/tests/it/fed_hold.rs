//! Holds, dependencies and arrays against the start lock, in the pure core and simulated time.
//! A hold or a new dependency at the origin while a start lock is in flight: withdrawn at
//! once when a sibling may be locking; the origin's own commit, if it still went through, does
//! not launch the job but gives the start back to the dbd as a held requeue; a copy whose lock
//! the withdrawal voided gives its reservation back and is dropped. An array's record ends at
//! the dbd with its last task, whether it ran out or was cancelled (from a sibling too).
//! Cluster `test` (fed id 1, nodes n1 n2) with siblings `b` (2) and `c` (3).

use crate::fed_core_support::{B_AND_C, carried_offer, fixture, info, job, lock, origin_submit};
use sluice_ctld::core::federation::{
    self, CommitOutcome, EndReport, FedDesc, FedEvent, FedEventKind, FedRequest, FedRequeue,
    InfoPhase,
};
use sluice_ctld::core::{
    HoldKind, JobChange, JobReason, JobRef, LaunchSpec, SubmitRequest, on_cancel, on_hold,
    on_release, on_update_job,
};
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::{FedJobId, JobState};

const VIABLE: [&str; 3] = ["b", "c", "test"];

/// Submits `req` as the origin; the dbd records it (held) over `viable`, and the origin's
/// offer, if it makes one, leaves `active` holding copies. Returns the job (array) id.
fn submit(fx: &mut CoreFixture, req: SubmitRequest, viable: &[&str], active: &[&str]) -> FedJobId {
    let now = fx.now;
    let rec = origin_submit(fx, req);
    let id = rec.reply.job_id;
    let recorded = info(id, InfoPhase::Pending, true, viable, &["test"]);
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &recorded);
    // As at the end of a pass that did not start it.
    federation::start::send_due_offers(&mut fx.core, &mut fx.out);
    let offered = std::mem::take(&mut fx.out.fed_reqs)
        .iter()
        .any(|r| matches!(r, FedRequest::Offer { job, .. } if *job == id));
    if offered {
        federation::on_offer_synced(&mut fx.core, &mut fx.out, id, true);
        let synced = info(id, InfoPhase::Pending, false, viable, active);
        federation::on_fed_info(&mut fx.core, &mut fx.out, now, &synced);
    }
    id
}

/// Holds `id` as an admin would (`scontrol hold`, or `uhold` for [`HoldKind::User`]).
fn hold(fx: &mut CoreFixture, id: FedJobId, kind: HoldKind) {
    let admin = fx.admin();
    on_hold(&mut fx.core, &mut fx.out, admin, JobRef::Job(id), kind).unwrap();
}

fn held_requeue() -> EndReport {
    EndReport {
        state: JobState::Pending.stored(),
        exit_code: 0,
        requeue: FedRequeue::Hold,
    }
}

/// The dbd took the start back: pending, held on the origin, which alone holds a copy.
fn given_back(fx: &mut CoreFixture, id: FedJobId) {
    let now = fx.now;
    let i = info(id, InfoPhase::Pending, true, &VIABLE, &["test"]);
    federation::on_end_reported(&mut fx.core, &mut fx.out, now, id, Some(i));
    assert!(
        federation::unsynced(&fx.core).is_empty(),
        "nothing owed any more"
    );
}

/// The next pass starts `id` here (its nodes are free), the start lock carrying its offer.
fn started_with_its_offer(fx: &mut CoreFixture, id: FedJobId) {
    fx.schedule();
    carried_offer(&fx.out.take().fed_reqs, id);
}

#[test]
fn a_hold_while_the_origins_own_lock_is_in_flight_keeps_the_job_from_running() {
    let mut fx = fixture("n[1-2]", B_AND_C);
    let id = submit(&mut fx, job("h"), &VIABLE, &VIABLE);
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    let admin = fx.admin();
    hold(&mut fx, id, HoldKind::User);
    fx.schedule();
    // The commit went through before the dbd heard of the hold: not launched, given back.
    let now = fx.now;
    let outcome = federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    assert_eq!(outcome, CommitOutcome::Withheld);
    let out = fx.out.take();
    assert!(out.launched().is_empty(), "a held job never runs");
    let report = held_requeue();
    assert_eq!(out.fed_reqs, [FedRequest::Ended { job: id, report }]);
    assert_eq!(fx.state(id), JobState::Pending);
    assert_eq!(fx.reason(id), JobReason::JobHeldUser);
    // Owed until the dbd has it; meanwhile the job asks for no lock and its nodes are free.
    assert_eq!(
        federation::unsynced(&fx.core),
        [FedRequest::Ended { job: id, report }]
    );
    let both = fx.submit(job("local").nodes(2)).unwrap();
    fx.schedule();
    assert_eq!(fx.state(both), JobState::Running);
    assert!(fx.out.take().fed_reqs.is_empty());
    given_back(&mut fx, id);
    // Released: started with its offer, launched once committed.
    fx.exit(both, 0).unwrap();
    on_release(&mut fx.core, &mut fx.out, admin, JobRef::Job(id)).unwrap();
    started_with_its_offer(&mut fx, id);
    let now = fx.now;
    let outcome = federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    assert_eq!(outcome, CommitOutcome::Launched);
    assert_eq!(fx.out.launched(), [id]);
}

#[test]
fn a_new_dependency_while_the_origins_lock_is_in_flight_keeps_the_job_from_running() {
    let mut fx = fixture("n[1-2]", B_AND_C);
    let first = fx.submit(job("first")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(first), JobState::Running);
    let id = submit(&mut fx, job("then"), &VIABLE, &VIABLE);
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    let (admin, now) = (fx.admin(), fx.now);
    let change = [JobChange::Dependency(format!("afterok:{first}"))];
    on_update_job(
        &mut fx.core,
        &mut fx.out,
        now,
        admin,
        JobRef::Job(id),
        &change,
        &[],
    )
    .unwrap();
    let outcome = federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    assert_eq!(outcome, CommitOutcome::Withheld);
    let out = fx.out.take();
    assert!(out.launched().is_empty(), "a dependent job never runs");
    let report = held_requeue();
    assert_eq!(out.fed_reqs, [FedRequest::Ended { job: id, report }]);
    given_back(&mut fx, id);
    fx.schedule();
    assert!(fx.out.take().fed_reqs.is_empty(), "still dependent");
    assert_eq!(fx.reason(id), JobReason::Dependency);
    // The dependency is met: started with its offer.
    fx.exit(first, 0).unwrap();
    started_with_its_offer(&mut fx, id);
}

#[test]
fn a_hold_before_the_pass_keeps_the_due_offer_from_leaving() {
    let mut fx = fixture("n[1-2]", B_AND_C);
    let now = fx.now;
    let rec = origin_submit(&mut fx, job("h"));
    let id = rec.reply.job_id;
    let recorded = info(id, InfoPhase::Pending, true, &VIABLE, &["test"]);
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &recorded);
    // Held in the same batch, before its pass: the offer never leaves, so there is nothing to
    // withdraw either (the dbd still records the job held).
    let admin = fx.admin();
    hold(&mut fx, id, HoldKind::User);
    fx.schedule_fresh();
    assert!(fx.out.take().fed_reqs.is_empty());
    let f = fx.core.fed_job(id).unwrap();
    assert_eq!((f.offered, f.offer_synced), (false, true));
    assert!(federation::unsynced(&fx.core).is_empty(), "nothing owed");
    // Released: started here with the offer.
    on_release(&mut fx.core, &mut fx.out, admin, JobRef::Job(id)).unwrap();
    started_with_its_offer(&mut fx, id);
}

#[test]
fn a_hold_withdraws_the_job_from_siblings_in_the_same_pass() {
    let mut fx = fixture("n[1-2]", B_AND_C);
    // Both nodes busy: only a sibling can be taking the start lock.
    let both = fx.submit(job("local").nodes(2)).unwrap();
    fx.schedule();
    assert_eq!(fx.state(both), JobState::Running);
    let id = submit(&mut fx, job("h"), &VIABLE, &VIABLE);
    fx.schedule();
    assert!(fx.out.take().fed_reqs.is_empty());
    hold(&mut fx, id, HoldKind::Admin);
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [FedRequest::Withdraw { job: id }]);
    federation::on_offer_synced(&mut fx.core, &mut fx.out, id, false);
    let now = fx.now;
    federation::on_fed_info(
        &mut fx.core,
        &mut fx.out,
        now,
        &info(id, InfoPhase::Pending, true, &VIABLE, &["test"]),
    );
    let f = fx.core.fed_job(id).unwrap();
    assert_eq!(
        (f.offered, f.active.as_slice()),
        (false, &["test".to_string()][..])
    );
    fx.schedule();
    assert!(fx.out.fed_reqs.is_empty(), "nothing more to withdraw");
}

fn b_job(local: u32) -> FedJobId {
    FedJobId::from_raw((2 << 26) | local).unwrap()
}

fn desc(name: &str) -> Vec<u8> {
    FedDesc {
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
        name: name.into(),
        min_nodes: 2,
        ntasks: 2,
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

#[test]
fn a_copy_whose_lock_a_withdrawal_voided_gives_it_back_and_is_dropped() {
    let mut fx = fixture("n[1-2]", B_AND_C);
    let id = b_job(5);
    let now = fx.now;
    let offered = FedEventKind::SiblingOffered {
        job: id,
        origin: "b".into(),
        viable: vec!["b".into(), "test".into()],
        desc: desc("copy"),
    };
    federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        FedEvent {
            seq: 1,
            kind: offered,
        },
    );
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    // b held it: the dbd refused this cluster's commit, then revoked the copy.
    federation::on_start_refused(&mut fx.core, &mut fx.out, now, id, 2);
    let revoked = FedEventKind::SiblingRevoked {
        job: id,
        winner: None,
    };
    federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        FedEvent {
            seq: 2,
            kind: revoked,
        },
    );
    assert_eq!(fx.state(id), JobState::Revoked, "the copy is gone");
    let both = fx.submit(job("local").nodes(2)).unwrap();
    fx.schedule();
    assert_eq!(fx.state(both), JobState::Running, "its nodes are free");
    assert!(fx.out.launched().iter().all(|j| *j != id));
}

/// An array of `tasks` tasks (one node each), recorded: viable and active on the origin only.
fn array(fx: &mut CoreFixture, tasks: &str) -> (FedJobId, Vec<FedJobId>) {
    let id = submit(fx, job("arr").array(tasks), &["test"], &["test"]);
    let ids: Vec<FedJobId> = fx
        .core
        .jobs()
        .filter(|j| j.array.is_some_and(|a| a.job == id))
        .map(|j| j.id)
        .collect();
    assert!(
        fx.out.take().fed_reqs.is_empty(),
        "an array is offered to nobody"
    );
    let mut sorted = ids;
    sorted.sort();
    (id, sorted)
}

fn ended(fx: &CoreFixture) -> Vec<(FedJobId, u32, i32)> {
    fx.out
        .fed_reqs
        .iter()
        .filter_map(|r| match r {
            FedRequest::Ended { job, report } => Some((*job, report.state, report.exit_code)),
            _ => None,
        })
        .collect()
}

#[test]
fn an_array_ends_at_the_dbd_once_its_last_task_is_over() {
    let mut fx = fixture("n[1-2]", B_AND_C);
    let (id, tasks) = array(&mut fx, "0-2");
    fx.schedule();
    assert_eq!(fx.state(tasks[0]), JobState::Running);
    assert_eq!(fx.state(tasks[1]), JobState::Running);
    fx.exit(tasks[0], 3).unwrap();
    assert!(ended(&fx).is_empty(), "two tasks left");
    // scancel of the array: the pending task ends now, the running one once its processes
    // are gone; then the array's record ends, CANCELLED, with the highest exit code.
    let (admin, now) = (fx.admin(), fx.now);
    let req = sluice_ctld::core::CancelRequest {
        job: JobRef::Job(id),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, now, admin, req).unwrap();
    assert!(ended(&fx).is_empty(), "a task is still being killed");
    fx.exit(tasks[1], 0).unwrap();
    let cancelled = JobState::Cancelled.stored();
    assert_eq!(ended(&fx), [(tasks[1], cancelled, 3)]);
    let owed = federation::unsynced(&fx.core);
    assert!(matches!(owed.as_slice(), [FedRequest::Ended { job, .. }] if *job == tasks[1]));
    federation::on_end_reported(&mut fx.core, &mut fx.out, now, tasks[1], None);
    assert!(federation::unsynced(&fx.core).is_empty());
    // An array that runs out completes.
    fx.out.take();
    let (_, done) = array(&mut fx, "1-2");
    fx.schedule();
    fx.exit(done[0], 0).unwrap();
    assert!(ended(&fx).is_empty());
    fx.exit(done[1], 0).unwrap();
    assert_eq!(ended(&fx), [(done[1], JobState::Completed.stored(), 0)]);
}

#[test]
fn an_array_cancelled_from_a_sibling_cancels_every_task() {
    let mut fx = fixture("n[1-2]", B_AND_C);
    let (id, tasks) = array(&mut fx, "0-3");
    fx.schedule();
    let now = fx.now;
    let cancel = FedEventKind::SiblingCancelled {
        job: id,
        requeue: FedRequeue::None,
        requester_uid: None,
    };
    federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        FedEvent {
            seq: 1,
            kind: cancel,
        },
    );
    for t in &tasks {
        assert_eq!(fx.state(*t), JobState::Cancelled, "task {t}");
    }
    for t in &tasks[..2] {
        fx.exit(*t, 0).unwrap();
    }
    assert_eq!(ended(&fx), [(tasks[1], JobState::Cancelled.stored(), 0)]);
}
