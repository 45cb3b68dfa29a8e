//! `PrologFlags=Alloc` across a controller restart, in simulated time: the batch launch held
//! for the other nodes' prologs stays held by the restarted controller (not taken for a lost
//! launch and requeued), the nodes whose prolog had not reported are asked again (once), and
//! the script starts when the last one succeeds.

use std::path::Path;

use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::{
    Core, NodeCommand, NodeRegistration, SimTime, SubmitRequest, on_node_prolog_done,
    on_node_registered,
};
use sluice_ctld::store::StateStore;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

fn builder() -> ClusterBuilder {
    ClusterBuilder::new()
        .nodes("n[1-3]", "CPUs=4 RealMemory=1000")
        .partition("debug", "Nodes=ALL Default=YES")
        .conf("SlurmdTimeout=0")
        .conf("PrologFlags=Alloc")
}

/// Commits what `fx` did to the store in `dir`.
fn commit(dir: &Path, fx: &mut CoreFixture) {
    let mut store = StateStore::open(dir).unwrap();
    let out = fx.out.take();
    store.commit(&fx.core, &out.saves, &out.acct).unwrap();
}

/// The core restored from the store in `dir` at `now`.
fn restart(dir: &Path, now: SimTime) -> CoreFixture {
    let snap = StateStore::open(dir).unwrap().load().unwrap();
    let ids = snap.id_lease(None).unwrap();
    let conf = CtldConf::parse(Path::new("slurm.conf"), &builder().text())
        .unwrap()
        .0;
    let core = Core::restore(&conf, snap, Box::new(ids), &|_| None, now).unwrap();
    CoreFixture {
        core,
        out: Default::default(),
        now,
    }
}

/// `name` registers again (its daemon did not restart: it booted at `boot`), holding nothing
/// of the job (the batch host never got the launch).
fn register(fx: &mut CoreFixture, name: &str, boot: SimTime) {
    let reg = NodeRegistration {
        name: name.into(),
        cpus: 4,
        real_memory_mb: 1000,
        tmp_disk_mb: 0,
        boot_time: boot,
        jobs: Vec::new(),
        pid: 0,
        again: true,
    };
    on_node_registered(&mut fx.core, &mut fx.out, fx.now, reg).unwrap();
}

/// The nodes `fx` asked for `id`'s allocation prolog, by name.
fn asked(fx: &CoreFixture, id: FedJobId) -> Vec<Vec<String>> {
    fx.out
        .node_cmds
        .iter()
        .filter_map(|c| match c {
            NodeCommand::AllocProlog { job, nodes } if *job == id => Some(
                nodes
                    .iter()
                    .map(|&n| fx.core.nodes()[n.get() as usize].name.clone())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

#[test]
fn a_restarted_controller_keeps_holding_the_launch_for_the_node_prologs() {
    let dir = tempfile::tempdir().unwrap();
    let mut fx = builder().build();
    fx.register_all();
    fx.now = SimTime::from_secs(1_000);
    let boot = fx.now;
    let id = fx.submit_and_schedule(SubmitRequest::new(1000, "b").nodes(3));
    assert_eq!(asked(&fx, id), [["n2", "n3"]]);
    commit(dir.path(), &mut fx);
    on_node_prolog_done(&mut fx.core, &mut fx.out, fx.now, id, "n2", 0);
    assert!(fx.out.launched().is_empty());
    commit(dir.path(), &mut fx);

    // Well past the time a batch host must know its job: still no lost launch.
    let mut back = restart(dir.path(), fx.now.plus(60));
    assert!(back.core.job_configuring(id), "held again");
    for n in ["n1", "n2", "n3"] {
        register(&mut back, n, boot);
    }
    back.tick();
    assert_eq!(back.state(id), JobState::Running);
    assert_eq!(back.core.job(id).unwrap().restarts, 0, "not requeued");
    assert_eq!(asked(&back, id), [["n3"]], "asked again, once, for n3 only");
    assert!(back.out.launched().is_empty());
    // A repeated report of n2 changes nothing; n3's releases the script.
    on_node_prolog_done(&mut back.core, &mut back.out, back.now, id, "n2", 0);
    assert!(back.out.launched().is_empty());
    on_node_prolog_done(&mut back.core, &mut back.out, back.now, id, "n3", 0);
    assert_eq!(back.out.launched(), [id]);
    assert!(!back.core.job_configuring(id));
    commit(dir.path(), &mut back);

    // Restarted once more after the launch: nothing is held any longer.
    let again = restart(dir.path(), back.now.plus(5));
    assert!(!again.core.job_configuring(id));
    assert_eq!(again.state(id), JobState::Running);
}
