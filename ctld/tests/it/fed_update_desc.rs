//! `scontrol update job` of a federated origin job, in simulated time: a time limit or a
//! partition set after submission is part of the description its siblings get, as if the
//! submission had asked for it (a sibling otherwise applies its own partition defaults).

use crate::fed_core_support::{B, carried_offer, fixture};
use sluice_ctld::conf::TimeLimit;
use sluice_ctld::core::federation::{self, FedDesc, FedInfo, FedSubmit, InfoPhase, OriginSubmit};
use sluice_ctld::core::{JobChange, JobRef, LaunchSpec, SubmitRequest, on_release, on_update_job};
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::FedJobId;

/// A held federated job submitted without `-t` or `-p`, recorded at the dbd.
fn held_job(fx: &mut CoreFixture) -> FedJobId {
    let mut req = SubmitRequest::new(1000, "u");
    req.launch = LaunchSpec {
        script: "#!/bin/sh\ntrue\n".into(),
        ..LaunchSpec::default()
    };
    let now = fx.now;
    let rec = match federation::on_fed_submit(
        &mut fx.core,
        &mut fx.out,
        now,
        req.held(),
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
        held: true,
        viable: vec!["b".into(), "test".into()],
        active: vec!["test".into()],
        winner: None,
        final_state: 0,
        exit_code: 0,
    };
    federation::on_fed_recorded(&mut fx.core, &mut fx.out, now, &rec.reply.jobs, &info);
    fx.out.take();
    id
}

/// Releases `id`; the description of the offer to its siblings (carried by its start lock:
/// the node is free).
fn offered_desc(fx: &mut CoreFixture, id: FedJobId) -> FedDesc {
    let admin = fx.admin();
    on_release(&mut fx.core, &mut fx.out, admin, JobRef::Job(id)).unwrap();
    fx.schedule();
    carried_offer(&fx.out.take().fed_reqs, id)
}

#[test]
fn a_job_without_limit_or_partition_leaves_them_to_the_siblings() {
    let mut fx = fixture("n1", B);
    let id = held_job(&mut fx);
    let desc = offered_desc(&mut fx, id);
    assert_eq!((desc.time_limit_min, desc.partition), (None, None));
}

#[test]
fn an_updated_time_limit_and_partition_reach_the_description() {
    let mut fx = fixture("n1", B);
    let id = held_job(&mut fx);
    let (now, admin) = (fx.now, fx.admin());
    let changes = [
        JobChange::TimeLimit(TimeLimit::Minutes(20)),
        JobChange::Partition("debug".into()),
    ];
    on_update_job(
        &mut fx.core,
        &mut fx.out,
        now,
        admin,
        JobRef::Job(id),
        &changes,
        &[],
    )
    .unwrap();
    let desc = offered_desc(&mut fx, id);
    assert_eq!(desc.time_limit_min, Some(20));
    assert_eq!(desc.partition.as_deref(), Some("debug"));
}
