//! Who cancelled a job (Slurm's `requid`, sacct's `CANCELLED by <uid>`): kept on the job,
//! saved with it, and put in the run's end record; other ends and later runs carry none.

use crate::store_util;

use sluice_ctld::core::snapshot::JobSnap;
use sluice_ctld::core::{AcctRecord, Caller, JobRef, on_requeue};
use sluice_ctld::store::StateStore;
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::{FedJobId, JobState};
use store_util::{cluster, commit, job, restore};

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
fn the_end_record_names_the_canceller() {
    let mut fx = cluster();
    // Eight nodes: two small jobs run; a job asking for all eight waits.
    let running = fx.submit(job("running")).unwrap();
    let signalled = fx.submit(job("signalled")).unwrap();
    fx.schedule();
    let mut wide = job("wide");
    (wide.min_nodes, wide.max_nodes) = (Some(8), Some(8));
    let pending = fx.submit(wide).unwrap();
    fx.schedule();
    assert_eq!(fx.state(running), JobState::Running);
    assert_eq!(fx.state(pending), JobState::Pending);

    // A user cancels a running job; an administrator (root) a pending one.
    fx.cancel(Caller::user(1000), running, None).unwrap();
    assert_eq!(ends(&fx, running), [(JobState::Cancelled, Some(1000))]);
    assert_eq!(fx.core.job(running).unwrap().requester_uid, Some(1000));
    fx.cancel(Caller::admin(), pending, None).unwrap();
    assert_eq!(ends(&fx, pending), [(JobState::Cancelled, Some(0))]);

    // A signal is no cancel: the job's own end names nobody.
    fx.cancel(Caller::user(1000), signalled, Some(10)).unwrap();
    fx.exit(signalled, 0).unwrap();
    assert_eq!(ends(&fx, signalled), [(JobState::Completed, None)]);

    // Requeued after its cancel, the next run starts with no canceller.
    fx.exit(running, 0).unwrap();
    on_requeue(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(running),
    )
    .unwrap();
    assert_eq!(fx.core.job(running).unwrap().requester_uid, None);
    fx.schedule();
    fx.exit(running, 1).unwrap();
    assert_eq!(
        ends(&fx, running),
        [(JobState::Cancelled, Some(1000)), (JobState::Failed, None)]
    );
}

#[test]
fn the_canceller_is_saved_with_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    let id = fx.submit(job("a")).unwrap();
    fx.schedule();
    fx.cancel(Caller::user(1000), id, None).unwrap();
    commit(&mut store, &mut fx);
    drop(store);
    let back = restore(dir.path(), fx.now);
    let job = back.core.job(id).unwrap();
    assert_eq!((job.state, job.completing), (JobState::Cancelled, true));
    assert_eq!(job.requester_uid, Some(1000));

    // A record saved before the field existed loads with no canceller.
    let mut saved = serde_json::to_value(JobSnap::of(&back.core, job)).unwrap();
    assert_eq!(saved["requester_uid"], 1000);
    saved.as_object_mut().unwrap().remove("requester_uid");
    let old: JobSnap = serde_json::from_value(saved).unwrap();
    assert_eq!(old.requester_uid, None);
}
