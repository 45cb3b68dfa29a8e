//! Job-level sharing over time: jobs sharing under `OverSubscribe=YES` take turns as under
//! `FORCE`, a job that did not ask is never timesliced, and what a job asked survives a
//! controller restart and reaches the resume program.

use crate::gang_support;
use crate::power_support;

use gang_support::{run_secs_from_records, run_to};
use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::snapshot::{JobSnap, NodeSnap, Snapshot};
use sluice_ctld::core::{
    Core, IdLease, JobShare, NodeCommand, PowerCommand, RecordingOutbox, SubmitRequest,
};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState, LocalJobId};
use std::path::Path;

/// One node of 4 CPUs in partition `p` with `OverSubscribe=<os>`, `PreemptMode=GANG` and
/// 30 s timeslices, plus `conf` lines.
fn gang_node(os: &str, conf: &[&str]) -> ClusterBuilder {
    let mut b = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=4 RealMemory=1000")
        .partition("p", &format!("Nodes=n1 Default=YES OverSubscribe={os}"))
        .conf("PreemptMode=GANG")
        .conf("SchedulerTimeSlice=30")
        // No heartbeats in these scenarios: nodes never time out.
        .conf("SlurmdTimeout=0");
    for line in conf {
        b = b.conf(line);
    }
    b
}

fn start(b: &ClusterBuilder) -> CoreFixture {
    let mut fx = b.build();
    fx.register_all();
    fx.tick();
    fx
}

fn whole_node() -> SubmitRequest {
    SubmitRequest::new(1000, "j").ntasks(4)
}

fn suspends(fx: &CoreFixture) -> usize {
    fx.out
        .node_cmds
        .iter()
        .filter(|c| matches!(c, NodeCommand::Suspend { .. }))
        .count()
}

#[test]
fn jobs_sharing_under_yes_take_turns() {
    for select in [
        &["SelectType=select/linear"][..],
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
        ],
    ] {
        let mut fx = start(&gang_node("YES", select));
        let a = fx.submit_and_schedule(whole_node().oversubscribe());
        let b = fx.submit_and_schedule(whole_node().oversubscribe());
        assert_eq!(
            (fx.state(a), fx.state(b)),
            (JobState::Running, JobState::Suspended),
            "{select:?}: co-allocated, so timesliced at once"
        );
        run_to(&mut fx, 30);
        assert_eq!(
            (fx.state(a), fx.state(b)),
            (JobState::Suspended, JobState::Running),
            "{select:?}: they swap after one timeslice"
        );
        run_to(&mut fx, 30 * 10);
        let ran = run_secs_from_records(&fx);
        assert_eq!(ran.get(&a), Some(&150), "{select:?}");
        assert_eq!(ran.get(&b), Some(&150), "{select:?}");
    }
}

#[test]
fn under_yes_a_job_that_did_not_ask_is_never_timesliced() {
    let mut fx = start(&gang_node("YES", &[]));
    let lone = fx.submit_and_schedule(whole_node());
    let asking = fx.submit_and_schedule(whole_node().oversubscribe());
    run_to(&mut fx, 30 * 4);
    assert_eq!(fx.state(lone), JobState::Running);
    assert_eq!(fx.state(asking), JobState::Pending);
    assert_eq!(suspends(&fx), 0);
}

#[test]
fn what_a_job_asked_survives_a_restart() {
    let builder = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=8 RealMemory=1000")
        .partition("p", "Nodes=ALL Default=YES OverSubscribe=YES")
        .conf("SelectType=select/cons_tres")
        .conf("SelectTypeParameters=CR_CPU");
    let mut fx = builder.build();
    fx.register_all();
    let lone = fx.submit_and_schedule(whole_node().ntasks(2));
    let ex = fx.submit_and_schedule(whole_node().ntasks(1).exclusive());
    assert_eq!(
        (fx.nodes_of(lone), fx.nodes_of(ex)),
        ("n1".into(), "n2".into())
    );
    let pending = fx.submit(whole_node().oversubscribe()).unwrap();

    let jobs: Vec<JobSnap> = fx.core.jobs().map(|j| JobSnap::of(&fx.core, j)).collect();
    let text = |id: FedJobId| {
        let snap = jobs.iter().find(|s| s.id == id.get()).unwrap();
        serde_json::to_string(snap).unwrap()
    };
    assert!(text(ex).contains(r#""share":"exclusive""#));
    assert!(text(pending).contains(r#""share":"over_subscribe""#));
    assert!(!text(lone).contains("share"), "neither option is not saved");
    // A record saved before the options existed loads as neither.
    let old = text(lone);
    let back: JobSnap = serde_json::from_str(&old).unwrap();
    assert_eq!(back.share, JobShare::Unset);

    let snap = Snapshot {
        cluster: Some("test".into()),
        jobs,
        nodes: fx.core.nodes().iter().map(NodeSnap::of).collect(),
        job_ids: None,
        partitions: Vec::new(),
    };
    let (conf, _) = CtldConf::parse(Path::new("slurm.conf"), &builder.text()).unwrap();
    let ids = IdLease::with_range(None, LocalJobId::new(100).unwrap(), 10);
    let groups = |_: &str| None;
    let core = Core::restore(&conf, snap, Box::new(ids), &groups, fx.now).unwrap();
    let mut fx = CoreFixture {
        core,
        out: RecordingOutbox::default(),
        now: fx.now,
    };
    assert_eq!(
        fx.core.job(pending).unwrap().req.share,
        JobShare::OverSubscribe
    );
    assert!(fx.core.job_alloc(ex).unwrap().exclusive);
    fx.schedule();
    assert_eq!(
        fx.state(pending),
        JobState::Pending,
        "n1 still holds a job that may not share, n2 an exclusive one"
    );
    let lone2 = fx.submit_and_schedule(whole_node().ntasks(6));
    assert_eq!(fx.nodes_of(lone2), "n1");
}

#[test]
fn the_resume_file_shows_what_the_job_asked() {
    let mut fx = power_support::cluster(&[]);
    let mut ids = Vec::new();
    for share in [JobShare::Exclusive, JobShare::OverSubscribe] {
        let mut req = SubmitRequest::new(1000, "burst").partition("cloud");
        req.share = share;
        ids.push(fx.submit(req).unwrap());
    }
    fx.tick();
    let shown: Vec<(u32, String)> = fx
        .out
        .power_cmds
        .iter()
        .filter_map(|c| match c {
            PowerCommand::Resume { file, .. } => Some(file),
            _ => None,
        })
        .flat_map(|f| f.jobs.iter().map(|j| (j.job_id, j.oversubscribe.clone())))
        .collect();
    assert_eq!(
        shown,
        [
            (ids[0].get(), "NO".to_string()),
            (ids[1].get(), "YES".to_string())
        ]
    );
}
