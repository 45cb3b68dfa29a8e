//! The origin's federated submission in simulated time, around the dbd's answer: the job is
//! offered to its siblings only once the dbd recorded it, and a submission the dbd never
//! answered is withdrawn: the request stays in the job's saved state across a restart until
//! the dbd answers, the job is never scheduled meanwhile, and it then leaves without a trace.

use crate::fed_core_support::{B, builder, carried_offer, fixture, job, lock, origin_submit};
use sluice_ctld::core::federation::{self, FedInfo, FedPhase, FedRecord, FedRequest, InfoPhase};
use sluice_ctld::core::{AcctRecord, Core, IdLease};
use sluice_ctld::store::StateStore;
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::{FedJobId, LocalJobId};

/// The dbd's record of `id`: pending, held on the origin (as origins record submissions).
/// The dbd's answer to `rec`, recorded (pending, held) and applied by the origin now.
fn record(fx: &mut CoreFixture, rec: &FedRecord) {
    let now = fx.now;
    federation::on_fed_recorded(
        &mut fx.core,
        &mut fx.out,
        now,
        &rec.reply.jobs,
        &recorded(rec.reply.job_id),
    );
}

fn recorded(id: FedJobId) -> FedInfo {
    FedInfo {
        job: id,
        origin: "test".into(),
        phase: InfoPhase::Pending,
        held: true,
        viable: vec!["b".into(), "test".into()],
        active: vec!["test".into()],
        winner: None,
        final_state: 0,
        exit_code: 0,
    }
}

fn submitted_records(acct: &[AcctRecord], id: FedJobId) -> usize {
    let is_sub = |r: &&AcctRecord| matches!(r, AcctRecord::JobSubmitted { job, .. } if *job == id);
    acct.iter().filter(is_sub).count()
}

#[test]
fn a_job_is_offered_to_its_siblings_only_once_the_dbd_recorded_it() {
    // Two 2-CPU nodes: the first job takes both, the second must wait for room.
    let mut fx = fixture("n[1-2]", B);
    let rec = origin_submit(&mut fx, job("f").nodes(2));
    let id = rec.reply.job_id;
    fx.schedule();
    assert!(
        fx.out.take().fed_reqs.is_empty(),
        "nothing before the answer"
    );
    let now = fx.now;
    record(&mut fx, &rec);
    let out = fx.out.take();
    assert_eq!(submitted_records(&out.acct, id), 1);
    assert!(out.fed_reqs.is_empty(), "the offer waits for the pass");
    // The pass starts it here: the start lock carries the offer, which no sibling then gets.
    fx.schedule_fresh();
    let reqs = fx.out.take().fed_reqs;
    assert_eq!(
        reqs,
        [FedRequest::StartLock {
            job: id,
            offer: Some(rec.desc.clone())
        }]
    );
    assert!(
        !fx.core.fed_job(id).unwrap().offer_synced,
        "owed until answered"
    );
    let outcome = federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    assert_eq!(outcome, federation::CommitOutcome::Launched);
    assert!(fx.core.fed_job(id).unwrap().offer_synced);
    assert!(federation::unsynced(&fx.core).is_empty(), "nothing owed");
    fx.out.take();

    // No room here: the pass ends by offering it alone, and the origin asks for the lock
    // only once the dbd has the offer (it refuses the lock of a job it records held).
    let rec = origin_submit(&mut fx, job("g"));
    let waits = rec.reply.job_id;
    record(&mut fx, &rec);
    fx.out.take();
    fx.schedule_fresh();
    let out = fx.out.take();
    let [FedRequest::Offer { job: offered, desc }] = out.fed_reqs.as_slice() else {
        panic!("one offer expected: {:?}", out.fed_reqs);
    };
    assert_eq!((*offered, desc), (waits, &rec.desc));
    fx.exit(id, 0).unwrap();
    fx.schedule();
    let reqs = fx.out.take().fed_reqs;
    assert!(
        !reqs
            .iter()
            .any(|r| matches!(r, FedRequest::StartLock { job, .. } if *job == waits)),
        "gated while the offer is in flight: {reqs:?}"
    );
    federation::on_offer_synced(&mut fx.core, &mut fx.out, waits, true);
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(waits)]);

    // A held job is recorded and stays on the origin: nothing offered.
    let rec = origin_submit(&mut fx, job("h").held());
    record(&mut fx, &rec);
    fx.schedule();
    assert!(fx.out.take().fed_reqs.is_empty());
}

#[test]
fn a_carried_offer_without_an_answer_is_sent_alone_and_a_restart_owes_it() {
    let mut fx = fixture("n1", B);
    let rec = origin_submit(&mut fx, job("f"));
    let id = rec.reply.job_id;
    let now = fx.now;
    record(&mut fx, &rec);
    fx.schedule_fresh();
    carried_offer(&fx.out.take().fed_reqs, id);
    // Until the dbd answers, a restart (which forgets the start in flight) owes the offer.
    assert!(
        matches!(federation::unsynced(&fx.core).as_slice(), [FedRequest::Offer { job, .. }] if *job == id)
    );
    // No answer: the job waits, and the offer leaves alone (a repeat the dbd answers
    // harmlessly if the start went through after all).
    federation::on_start_refused(&mut fx.core, &mut fx.out, now, id, 5);
    let reqs = fx.out.take().fed_reqs;
    assert!(
        matches!(reqs.as_slice(), [FedRequest::Offer { job, desc }] if *job == id && *desc == rec.desc),
        "{reqs:?}"
    );
    // A start the dbd later answers `started` (the first one went through) launches it.
    federation::on_offer_synced(&mut fx.core, &mut fx.out, id, true);
    fx.advance(5);
    fx.schedule();
    assert_eq!(fx.out.take().fed_reqs, [lock(id)]);
    let now = fx.now;
    let outcome = federation::on_start_committed(&mut fx.core, &mut fx.out, now, id);
    assert_eq!(outcome, federation::CommitOutcome::Launched);
}

#[test]
fn an_unanswered_submission_is_withdrawn_durably_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = fixture("n1", B);
    let rec = origin_submit(&mut fx, job("lost"));
    let id = rec.reply.job_id;
    // The dbd never answered: the submitter is told it failed, the withdrawal is owed.
    assert!(federation::on_fed_submit_abandoned(
        &mut fx.core,
        &mut fx.out,
        &rec.reply.jobs
    ));
    assert_eq!(
        fx.out.fed_reqs,
        [FedRequest::WithdrawSubmission {
            record: rec.clone()
        }]
    );
    assert_eq!(
        fx.core.fed_job(id).map(|f| f.phase),
        Some(FedPhase::Withdrawing)
    );
    // A late answer changes nothing; the job is never scheduled nor offered.
    record(&mut fx, &rec);
    fx.schedule();
    fx.advance(30);
    fx.tick();
    let out = fx.out.take();
    assert_eq!(
        out.fed_reqs.len(),
        1,
        "only the withdrawal: {:?}",
        out.fed_reqs
    );
    assert!(out.launched().is_empty());
    assert_eq!(submitted_records(&out.acct, id), 0);
    store.commit(&fx.core, &out.saves, &out.acct).unwrap();
    drop(store);

    // A restart before the dbd answered: the withdrawal is owed still.
    let store = StateStore::open(dir.path()).unwrap();
    let mut core = restore(&store, fx.now);
    assert_eq!(
        federation::withdrawals(&core),
        [FedRequest::WithdrawSubmission {
            record: rec.clone()
        }]
    );
    assert!(federation::resubmissions(&core).is_empty());
    // Once the dbd answered, the job leaves without a trace, and nothing is owed.
    let mut out = sluice_ctld::core::RecordingOutbox::default();
    federation::on_submission_withdrawn(&mut core, &mut out, &rec.reply.jobs);
    assert!(core.job(id).is_none());
    assert!(out.acct.is_empty());
    let mut store = store;
    store.commit(&core, &out.saves, &out.acct).unwrap();
    drop(store);
    let store = StateStore::open(dir.path()).unwrap();
    let core = restore(&store, fx.now);
    assert!(core.job(id).is_none());
    assert!(federation::withdrawals(&core).is_empty());
}

#[test]
fn an_answer_that_arrived_meanwhile_keeps_the_job() {
    let mut fx = fixture("n1", B);
    let rec = origin_submit(&mut fx, job("kept"));
    let id = rec.reply.job_id;
    // A resubmission (after a restart) got the dbd's answer before the submitter gave up.
    record(&mut fx, &rec);
    fx.out.take();
    assert!(!federation::on_fed_submit_abandoned(
        &mut fx.core,
        &mut fx.out,
        &rec.reply.jobs
    ));
    assert!(fx.out.fed_reqs.is_empty());
    assert_eq!(
        fx.core.fed_job(id).map(|f| f.phase),
        Some(FedPhase::Recorded)
    );
}

/// The core as a restarted controller rebuilds it from `store`.
fn restore(store: &StateStore, now: sluice_ctld::core::SimTime) -> Core {
    let (conf, _) = sluice_ctld::conf::CtldConf::parse(
        std::path::Path::new("slurm.conf"),
        &builder("n1").text(),
    )
    .unwrap();
    let ids = IdLease::with_range(None, LocalJobId::new(1).unwrap(), 10);
    let snap = store.load().unwrap();
    let mut core = Core::restore(&conf, snap, Box::new(ids), &|_| None, now).unwrap();
    let (v, cursor) = store.load_fed().unwrap().unwrap();
    core.restore_fed(v, cursor);
    core
}

#[test]
fn the_pass_after_a_recorded_submission_considers_the_recorded_job_alone() {
    let mut fx = fixture("n1", B);
    for i in 0..5 {
        origin_submit(&mut fx, job(&format!("h{i}")).held());
    }
    fx.schedule();
    let rec = origin_submit(&mut fx, job("f"));
    // Not recorded yet: considered as new, and gated.
    assert_eq!(fx.schedule_fresh().considered, 1);
    record(&mut fx, &rec);
    // The runtime follows a pending record with the pass over new jobs: the recorded job is
    // one of them (the held ones are not walked again).
    assert_eq!(fx.schedule_fresh().considered, 1);
}
