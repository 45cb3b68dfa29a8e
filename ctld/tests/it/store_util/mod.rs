//! Shared by the `store_*` tests: a cluster, a workload putting jobs in every state, and
//! helpers committing a fixture's outbox to a store and restoring a core from it.

use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::snapshot::{JobSnap, NodeSnap};
use sluice_ctld::core::{
    Caller, CancelRequest, Core, HoldKind, JobRef, LaunchSpec, NodeUpdate, SimTime, SubmitRequest,
    on_cancel, on_hold, on_node_update, on_requeue, on_suspend,
};
use sluice_ctld::store::StateStore;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::FedJobId;
use std::path::Path;

/// Eight 4-CPU nodes in one default partition; finished jobs stay 300 s.
pub fn builder() -> ClusterBuilder {
    ClusterBuilder::new()
        .nodes("n[1-8]", "CPUs=4 RealMemory=1000 Feature=x")
        .partition("debug", "Nodes=ALL Default=YES MaxTime=2:00:00")
        .conf("KillWait=30")
        .conf("MinJobAge=300")
        .conf("SlurmdTimeout=0")
}

/// The fixture of [`builder`] with every node registered.
pub fn cluster() -> CoreFixture {
    let mut fx = builder().build();
    fx.register_all();
    fx
}

/// A job of uid 1000 with a launch spec worth checking.
pub fn job(name: &str) -> SubmitRequest {
    let mut req = SubmitRequest::new(1000, name);
    req.launch = LaunchSpec {
        script: format!("#!/bin/sh\necho {name}\n"),
        workdir: "/home/alice".into(),
        env: vec![("A".into(), "1".into())],
        user: "alice".into(),
        account: "physics".into(),
        ..LaunchSpec::default()
    };
    req
}

/// Writes what the fixture's core asked to save since the last call.
pub fn commit(store: &mut StateStore, fx: &mut CoreFixture) {
    let out = fx.out.take();
    store
        .commit(&fx.core, &out.saves, &out.acct)
        .expect("commit");
}

/// The fixture's configuration.
pub fn conf() -> CtldConf {
    CtldConf::parse(Path::new("slurm.conf"), &builder().text())
        .expect("conf")
        .0
}

/// The core restored from the store in `dir` at `now`.
pub fn restore(dir: &Path, now: SimTime) -> CoreFixture {
    let store = StateStore::open(dir).expect("reopen");
    let snap = store.load().expect("load");
    let ids = snap.id_lease(None).expect("saved id source");
    let groups = |g: &str| g.strip_prefix('g').and_then(|n| n.parse().ok());
    let core = Core::restore(&conf(), snap, Box::new(ids), &groups, now).expect("restore");
    CoreFixture {
        core,
        out: Default::default(),
        now,
    }
}

/// Every job of a core in its saved form, by id.
pub fn jobs_of(core: &Core) -> Vec<JobSnap> {
    let mut v: Vec<JobSnap> = core.jobs().map(|j| JobSnap::of(core, j)).collect();
    v.sort_by_key(|j| j.id);
    v
}

/// Every node of a core: its saved form, its state name and its job.
pub fn nodes_of(core: &Core) -> Vec<(NodeSnap, String, Option<FedJobId>)> {
    core.nodes()
        .iter()
        .map(|n| (NodeSnap::of(n), n.state_name(), n.job))
        .collect()
}

/// The jobs of [`every_state`], by what they show.
pub struct Workload {
    pub running: FedJobId,
    pub suspended: FedJobId,
    pub cancelling: FedJobId,
    pub requeueing: FedJobId,
    pub completed: FedJobId,
    pub failed: FedJobId,
    pub timed_out: FedJobId,
    pub node_failed: FedJobId,
    pub cancelled_pending: FedJobId,
    pub held_user: FedJobId,
    pub held_admin: FedJobId,
    pub dependent: FedJobId,
    pub array: Vec<FedJobId>,
    pub waiting: FedJobId,
}

fn admin() -> Caller {
    Caller::admin()
}

fn cancel(fx: &mut CoreFixture, id: FedJobId) {
    on_cancel(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin(),
        CancelRequest {
            job: JobRef::Job(id),
            signal: None,
        },
    )
    .expect("cancel");
}

fn start(fx: &mut CoreFixture, store: &mut StateStore, req: SubmitRequest) -> FedJobId {
    let id = fx.submit(req).expect("submit");
    fx.schedule();
    commit(store, fx);
    id
}

/// Drives the fixture through every job state, committing to `store` after each step.
pub fn every_state(fx: &mut CoreFixture, store: &mut StateStore) -> Workload {
    let completed = start(fx, store, job("done"));
    let failed = start(fx, store, job("bad"));
    let timed_out = start(fx, store, job("slow").minutes(1));
    let node_failed = start(fx, store, job("unlucky").no_requeue());
    fx.advance(10);
    fx.exit(completed, 0).expect("exit");
    fx.exit(failed, 3).expect("exit");
    let name = fx.core.job(node_failed).expect("job").nodes[0];
    let name = fx.core.nodes()[name.get() as usize].name.clone();
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin(),
        &name,
        NodeUpdate::Down {
            reason: "bad dimm".into(),
        },
    )
    .expect("down");
    fx.advance(60);
    fx.tick();
    fx.exit(timed_out, 0).expect("exit");
    commit(store, fx);
    let running = start(fx, store, job("run"));
    let suspended = start(fx, store, job("sus"));
    on_suspend(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin(),
        JobRef::Job(suspended),
    )
    .expect("s");
    let cancelling = start(fx, store, job("cg"));
    cancel(fx, cancelling);
    let requeueing = start(fx, store, job("rq"));
    on_requeue(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin(),
        JobRef::Job(requeueing),
    )
    .expect("rq");
    commit(store, fx);
    let held_user = start(fx, store, job("hu").held());
    let held_admin = start(fx, store, job("ha").held());
    on_hold(
        &mut fx.core,
        &mut fx.out,
        admin(),
        JobRef::Job(held_admin),
        HoldKind::Admin,
    )
    .expect("hold");
    let cancelled_pending = start(fx, store, job("cp").held());
    cancel(fx, cancelled_pending);
    let dependent = start(
        fx,
        store,
        job("dep").dependency(&format!("afterok:{running}")),
    );
    fx.advance(1);
    let array_id = start(fx, store, job("arr").array("1-4%2"));
    let array = fx
        .core
        .jobs()
        .filter(|j| j.array.is_some_and(|a| a.job == array_id))
        .map(|j| j.id)
        .collect();
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin(),
        "n6",
        NodeUpdate::Drain {
            reason: "maintenance".into(),
        },
    )
    .expect("drain");
    // The suspended job gave its node back to `cg`, so two nodes are left free: this
    // three-node job waits for resources.
    let waiting = start(fx, store, job("wait").nodes(3));
    commit(store, fx);
    Workload {
        running,
        suspended,
        cancelling,
        requeueing,
        completed,
        failed,
        timed_out,
        node_failed,
        cancelled_pending,
        held_user,
        held_admin,
        dependent,
        array,
        waiting,
    }
}
