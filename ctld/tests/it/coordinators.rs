//! Account coordinators in the core, in simulated time: a coordinator of an account may cancel,
//! hold and release the jobs charged to it (and to accounts below it, as the dbd expands the
//! realm) and sees them under `PrivateData=jobs`; other accounts' jobs stay out of reach, and
//! running steps stays the owner's.

use std::collections::BTreeSet;

use sluice_ctld::core::coordinators::{self, Realms};
use sluice_ctld::core::private::sees_job;
use sluice_ctld::core::{
    Caller, CancelRequest, HoldKind, JobRef, SubmitRequest, on_cancel, on_hold, on_release,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

const COORD: u32 = 500;

/// One busy node, so submitted jobs stay pending; uid 500 coordinates `chem` and `chemsub`.
fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .conf("PrivateData=jobs")
        .nodes("n1", "CPUs=1")
        .partition("p", "Nodes=n1 Default=YES")
        .build();
    fx.register_all();
    let realm: BTreeSet<String> = ["chem", "chemsub"].map(String::from).into();
    coordinators::set(&mut fx.core, Realms::from([(COORD, realm)]));
    fx
}

fn submit(fx: &mut CoreFixture, uid: u32, account: &str) -> FedJobId {
    let mut r = SubmitRequest::new(uid, "x");
    r.launch.account = account.to_string();
    fx.submit(r).unwrap()
}

fn cancel(fx: &mut CoreFixture, caller: Caller, id: FedJobId) -> Result<(), CtldError> {
    let req = CancelRequest {
        job: JobRef::Job(id),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, caller, req)
}

#[test]
fn a_coordinator_manages_and_sees_its_accounts_jobs_only() {
    let mut fx = cluster();
    let coord = Caller::user(COORD);
    let in_chem = submit(&mut fx, 1001, "chem");
    let in_sub = submit(&mut fx, 1002, "chemsub");
    let in_phys = submit(&mut fx, 1003, "physics");
    let job = |fx: &CoreFixture, id| fx.core.job(id).unwrap().clone();
    assert!(sees_job(&fx.core, coord, &job(&fx, in_chem)));
    assert!(sees_job(&fx.core, coord, &job(&fx, in_sub)));
    assert!(!sees_job(&fx.core, coord, &job(&fx, in_phys)));

    on_hold(
        &mut fx.core,
        &mut fx.out,
        coord,
        JobRef::Job(in_sub),
        HoldKind::Admin,
    )
    .unwrap();
    assert_eq!(
        fx.core.job(in_sub).unwrap().hold,
        Some(HoldKind::User),
        "a coordinator's hold is a user hold"
    );
    on_release(&mut fx.core, &mut fx.out, coord, JobRef::Job(in_sub)).unwrap();
    assert_eq!(fx.core.job(in_sub).unwrap().hold, None);
    assert!(matches!(
        on_hold(
            &mut fx.core,
            &mut fx.out,
            coord,
            JobRef::Job(in_phys),
            HoldKind::User
        ),
        Err(CtldError::AccessDenied)
    ));

    cancel(&mut fx, coord, in_chem).unwrap();
    assert_eq!(fx.state(in_chem), JobState::Cancelled);
    assert!(matches!(
        cancel(&mut fx, coord, in_phys),
        Err(CtldError::AccessDenied)
    ));
    assert_eq!(fx.state(in_phys), JobState::Pending);
    // Another user of the same account is no coordinator.
    assert!(matches!(
        cancel(&mut fx, Caller::user(1001), in_sub),
        Err(CtldError::AccessDenied)
    ));
    // The realm is replaced as a whole when the dbd's users are fetched again.
    coordinators::set(&mut fx.core, Realms::new());
    assert!(matches!(
        cancel(&mut fx, coord, in_sub),
        Err(CtldError::AccessDenied)
    ));
}
