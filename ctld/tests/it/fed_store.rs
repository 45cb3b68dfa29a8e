//! The federation state in the controller store: the view and the event cursor are saved in
//! the commit of the change that moved them, and a job's federation state with the job; a
//! store reopened after a crash restores them, and an event at or below the restored cursor
//! is not applied again.

use crate::fed_core_support::{B, view};
use sluice_ctld::core::federation::{self, FedDesc, FedEvent, FedEventKind};
use sluice_ctld::core::{Core, IdLease, LaunchSpec, RecordingOutbox};
use sluice_ctld::store::StateStore;
use sluice_ctld::testkit::ClusterBuilder;
use sluice_vocab::{FedJobId, FedState, LocalJobId};

fn offer(seq: u64, job: FedJobId) -> FedEvent {
    let desc = FedDesc {
        uid: 1000,
        gid: 1000,
        name: "copy".into(),
        min_nodes: 1,
        ntasks: 1,
        cpus_per_task: 1,
        launch: LaunchSpec {
            script: "#!/bin/sh\n".into(),
            ..LaunchSpec::default()
        },
        ..FedDesc::default()
    };
    FedEvent {
        seq,
        kind: FedEventKind::SiblingOffered {
            job,
            origin: "b".into(),
            viable: vec!["b".into(), "test".into()],
            desc: desc.encode(),
        },
    }
}

#[test]
fn the_view_cursor_and_copies_survive_a_restart_and_events_are_not_reapplied() {
    let dir = tempfile::tempdir().unwrap();
    let builder = ClusterBuilder::new()
        .nodes("n1", "CPUs=2")
        .partition("debug", "Nodes=n1 Default=YES");
    let mut fx = builder.build();
    let mut store = StateStore::open(dir.path()).unwrap();
    let now = fx.now;
    federation::on_fed_view(&mut fx.core, &mut fx.out, now, view(FedState::Active, B));
    let job = FedJobId::from_raw((2 << 26) | 4).unwrap();
    assert!(federation::on_fed_event(
        &mut fx.core,
        &mut fx.out,
        now,
        offer(7, job)
    ));
    let out = fx.out.take();
    store.commit(&fx.core, &out.saves, &out.acct).unwrap();
    drop(store);

    let store = StateStore::open(dir.path()).unwrap();
    assert_eq!(
        store.load_fed().unwrap(),
        Some((view(FedState::Active, B), 7))
    );
    let snap = store.load().unwrap();
    let saved = snap.jobs.iter().find(|j| j.id == job.get()).unwrap();
    assert_eq!(saved.fed.as_ref().map(|f| f.origin.as_str()), Some("b"));

    let (conf, _) =
        sluice_ctld::conf::CtldConf::parse(std::path::Path::new("slurm.conf"), &builder.text())
            .unwrap();
    let ids = IdLease::with_range(None, LocalJobId::new(1).unwrap(), 10);
    let mut core = Core::restore(&conf, snap, Box::new(ids), &|_| None, now).unwrap();
    let (v, cursor) = store.load_fed().unwrap().unwrap();
    core.restore_fed(v, cursor);
    assert_eq!(
        core.fed_job(job).map(|f| f.viable.clone()),
        Some(vec!["b".into(), "test".into()])
    );
    // The event redelivered after the restart (acknowledged or not) changes nothing.
    let mut out = RecordingOutbox::default();
    assert!(!federation::on_fed_event(
        &mut core,
        &mut out,
        now,
        offer(7, job)
    ));
    assert!(out.saves.is_empty() && out.acct.is_empty());
    // Ids keep the federation's origin bits from the saved view.
    let next = core.job_ids_mut().next_id().unwrap();
    assert_eq!(next.get() >> 26, 1);
}
