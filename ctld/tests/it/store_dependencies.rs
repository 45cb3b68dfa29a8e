//! A dependency decided before a controller crash stays decided after it: the dependant is
//! saved when its target's start or end decides it (found by the fault suite, `sluice soak`:
//! an `afterok` dependant stayed PENDING (Dependency) forever after `kill -9` of the
//! controller right after its target completed).

use crate::store_util;

use sluice_ctld::core::JobReason;
use sluice_ctld::store::StateStore;
use sluice_vocab::JobState;
use store_util::{cluster, commit, job, restore};

#[test]
fn a_dependency_met_before_a_crash_is_met_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    let ok = fx.submit(job("ok")).unwrap();
    let bad = fx.submit(job("bad")).unwrap();
    fx.schedule();
    let on_ok = fx
        .submit(job("on_ok").dependency(&format!("afterok:{ok}")))
        .unwrap();
    let on_bad = fx
        .submit(job("on_bad").dependency(&format!("afterok:{bad}")))
        .unwrap();
    fx.schedule();
    commit(&mut store, &mut fx);

    // The targets end; only what the core asked to save reaches the store, then it crashes.
    fx.exit(ok, 0).unwrap();
    fx.exit(bad, 3).unwrap();
    commit(&mut store, &mut fx);
    drop(store);

    let mut back = restore(dir.path(), fx.now);
    back.schedule();
    assert_eq!(back.state(on_ok), JobState::Running);
    assert_eq!(
        (back.state(on_bad), back.reason(on_bad)),
        (JobState::Pending, JobReason::DependencyNeverSatisfied)
    );
}
