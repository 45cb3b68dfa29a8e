//! Steps inside a job's allocation, as Slurm 20.11+ gives them CPUs: each step takes CPUs no
//! other step of the job holds (`--overlap` shares with all), waits busy while they are
//! taken, is refused at once when larger than the allocation, gives them back when done or
//! when the job ends, and keeps them across a controller restart.

use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::snapshot::{JobSnap, NodeSnap, Snapshot};
use sluice_ctld::core::{
    AcctRecord, Caller, Core, IdLease, NodeCommand, RecordingOutbox, SaveHint, StepEnd, StepGrant,
    StepRequest, SubmitRequest, on_cancel, on_step_create, on_step_done,
};
use sluice_ctld::core::{CancelRequest, JobRef};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, LocalJobId};
use std::path::Path;

fn builder() -> ClusterBuilder {
    ClusterBuilder::new()
        .nodes("n[1-3]", "CPUs=4 RealMemory=4000")
        .partition("p", "Nodes=n[1-3] Default=YES")
        .conf("SelectType=select/cons_tres")
        .conf("SelectTypeParameters=CR_CPU")
}

/// A running job of uid 1 with `req`.
fn running(fx: &mut CoreFixture, req: SubmitRequest) -> FedJobId {
    let id = fx.submit(req).unwrap();
    fx.schedule();
    assert_eq!(fx.state(id), sluice_vocab::JobState::Running);
    id
}

fn step(fx: &mut CoreFixture, req: StepRequest) -> Result<StepGrant, CtldError> {
    on_step_create(&mut fx.core, &mut fx.out, fx.now, Caller::user(1), req)
}

/// uid 1's step `step` of `job` ended with exit code 0.
fn done(fx: &mut CoreFixture, job: FedJobId, step: u32) {
    let end = StepEnd {
        job,
        step,
        exit_code: 0,
        signal: 0,
        usage: None,
    };
    on_step_done(&mut fx.core, &mut fx.out, fx.now, Caller::user(1), end).unwrap();
}

fn tasks(job: FedJobId, n: u32) -> StepRequest {
    StepRequest {
        ntasks: Some(n),
        ..StepRequest::new(job)
    }
}

fn names(fx: &CoreFixture, g: &StepGrant) -> String {
    fx.core.hostlist(&g.nodes)
}

#[test]
fn steps_fill_the_cpus_then_wait_busy_until_one_is_done() {
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").ntasks(2));
    let a = step(&mut fx, tasks(job, 1)).unwrap();
    let b = step(&mut fx, tasks(job, 1)).unwrap();
    assert_eq!((a.step, b.step), (0, 1));
    assert_eq!((a.cpus.clone(), b.cpus.clone()), (vec![1], vec![1]));
    let busy = step(&mut fx, tasks(job, 1)).unwrap_err();
    assert_eq!(busy.to_string(), "Requested nodes are busy");
    assert_eq!(fx.core.job_steps(job).map(|s| s.len()), Some(2));

    done(&mut fx, job, a.step);
    let c = step(&mut fx, tasks(job, 1)).unwrap();
    assert_eq!(c.step, 2, "a refused step takes no step id");
    assert!(matches!(
        fx.out.node_cmds.last(),
        Some(NodeCommand::LaunchStep {
            step: 2,
            ntasks: 1,
            ..
        })
    ));
}

#[test]
fn overlapping_steps_share_every_cpu() {
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").ntasks(2));
    step(&mut fx, tasks(job, 2)).unwrap();
    assert!(matches!(
        step(&mut fx, tasks(job, 1)),
        Err(CtldError::NodesBusy)
    ));
    let overlap = |n| StepRequest {
        overlap: true,
        ..tasks(job, n)
    };
    let o = step(&mut fx, overlap(2)).unwrap();
    assert_eq!(o.cpus, vec![2]);
    step(&mut fx, overlap(1)).unwrap();
    assert!(matches!(
        step(&mut fx, overlap(3)),
        Err(CtldError::TooManyProcessors)
    ));
}

#[test]
fn a_step_larger_than_the_allocation_is_refused_at_once() {
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").ntasks(2));
    let err = step(&mut fx, tasks(job, 3)).unwrap_err();
    assert_eq!(err.to_string(), "More processors requested than permitted");
    let wide = StepRequest {
        cpus_per_task: Some(2),
        ..tasks(job, 2)
    };
    assert!(matches!(
        step(&mut fx, wide),
        Err(CtldError::TooManyProcessors)
    ));
    let too_many_nodes = StepRequest {
        min_nodes: Some(2),
        ..tasks(job, 2)
    };
    assert!(matches!(
        step(&mut fx, too_many_nodes),
        Err(CtldError::NodeConfigUnavailable)
    ));
}

#[test]
fn nodes_and_nodelist_choose_where_the_step_runs() {
    let mut fx = builder().build();
    fx.register_all();
    // 3 nodes, 4 CPUs each: 12 tasks fill them.
    let job = running(&mut fx, SubmitRequest::new(1, "j").nodes(3).ntasks(12));
    let one = step(&mut fx, tasks(job, 3)).unwrap();
    assert_eq!(names(&fx, &one), "n1", "as few nodes as the tasks need");
    let spread = StepRequest {
        min_nodes: Some(2),
        max_nodes: Some(2),
        ..tasks(job, 3)
    };
    let s = step(&mut fx, spread).unwrap();
    assert_eq!(names(&fx, &s), "n[1-2]");
    assert_eq!(
        s.tasks,
        vec![1, 2],
        "n1 has 1 CPU left after step 0's three"
    );
    let pinned = StepRequest {
        nodelist: vec!["n3".into()],
        ..tasks(job, 4)
    };
    let p = step(&mut fx, pinned).unwrap();
    assert_eq!(
        (names(&fx, &p), p.tasks.clone()),
        ("n3".to_string(), vec![4])
    );
    let busy = StepRequest {
        nodelist: vec!["n3".into()],
        ..tasks(job, 1)
    };
    assert!(matches!(step(&mut fx, busy), Err(CtldError::NodesBusy)));
    // More nodes than tasks: Slurm runs fewer nodes rather than nodes without a task.
    let clamp = StepRequest {
        min_nodes: Some(3),
        ..tasks(job, 1)
    };
    assert_eq!(step(&mut fx, clamp).unwrap().nodes.len(), 1);
    let unknown = StepRequest {
        nodelist: vec!["nope".into()],
        ..tasks(job, 1)
    };
    assert_eq!(
        step(&mut fx, unknown).unwrap_err().to_string(),
        "Invalid node name specified"
    );
}

#[test]
fn a_whole_step_holds_every_cpu_of_its_nodes() {
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").nodes(2).ntasks(8));
    let whole = StepRequest {
        whole: true,
        ..tasks(job, 1)
    };
    let w = step(&mut fx, whole.clone()).unwrap();
    assert_eq!(
        (names(&fx, &w), w.cpus.clone(), w.tasks.clone()),
        ("n1".to_string(), vec![4], vec![1])
    );
    // The exact (default) step gets the CPUs the whole one left: all of n2.
    let e = step(&mut fx, tasks(job, 1)).unwrap();
    assert_eq!(
        (names(&fx, &e), e.cpus.clone()),
        ("n2".to_string(), vec![1])
    );
    // n1 is held whole, n2 partly: a second whole step waits for a node to be free.
    assert!(matches!(
        step(&mut fx, whole.clone()),
        Err(CtldError::NodesBusy)
    ));
    done(&mut fx, job, e.step);
    let w2 = step(&mut fx, whole).unwrap();
    assert_eq!(
        (names(&fx, &w2), w2.cpus.clone()),
        ("n2".to_string(), vec![4])
    );
}

#[test]
fn relative_steps_start_at_the_given_node() {
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").nodes(3).ntasks(3));
    let second = StepRequest {
        relative: Some(1),
        overlap: true,
        ..tasks(job, 1)
    };
    let g = step(&mut fx, second).unwrap();
    assert_eq!(names(&fx, &g), "n2");
    let two = StepRequest {
        relative: Some(1),
        min_nodes: Some(2),
        overlap: true,
        ..tasks(job, 2)
    };
    let g = step(&mut fx, two).unwrap();
    assert_eq!(names(&fx, &g), "n[2-3]");
    let beyond = StepRequest {
        relative: Some(3),
        ..tasks(job, 1)
    };
    assert_eq!(
        step(&mut fx, beyond).unwrap_err().to_string(),
        "Requested node configuration is not available"
    );
    let too_many = StepRequest {
        relative: Some(2),
        min_nodes: Some(2),
        ..tasks(job, 2)
    };
    assert!(step(&mut fx, too_many).is_err());
}

#[test]
fn a_node_outside_the_allocation_is_not_available() {
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").ntasks(1));
    let outside = StepRequest {
        nodelist: vec!["n2".into()],
        ..tasks(job, 1)
    };
    assert!(matches!(
        step(&mut fx, outside),
        Err(CtldError::NodeConfigUnavailable)
    ));
}

#[test]
fn steps_of_a_job_that_ends_hold_nothing() {
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").ntasks(2));
    step(&mut fx, tasks(job, 2)).unwrap();
    fx.exit(job, 0).unwrap();
    assert!(fx.core.job_steps(job).is_none());
    let other = running(&mut fx, SubmitRequest::new(1, "k").ntasks(2));
    step(&mut fx, tasks(other, 2)).unwrap();
    let cancel = CancelRequest {
        job: JobRef::Job(other),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, Caller::user(1), cancel).unwrap();
    fx.exit(other, 0).unwrap();
    assert!(fx.core.job_steps(other).is_none());
}

#[test]
fn step_holdings_survive_a_restart_and_old_saves_have_none() {
    let builder = builder();
    let mut fx = builder.build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").nodes(2).ntasks(8));
    step(&mut fx, tasks(job, 4)).unwrap();
    let overlap = StepRequest {
        overlap: true,
        ..tasks(job, 2)
    };
    step(&mut fx, overlap).unwrap();
    let jobs: Vec<JobSnap> = fx.core.jobs().map(|j| JobSnap::of(&fx.core, j)).collect();
    let json = serde_json::to_string(&jobs).unwrap();
    let snap = Snapshot {
        cluster: Some("test".into()),
        jobs: serde_json::from_str(&json).unwrap(),
        nodes: fx.core.nodes().iter().map(NodeSnap::of).collect(),
        job_ids: None,
        partitions: Vec::new(),
    };
    let (conf, _) = CtldConf::parse(Path::new("slurm.conf"), &builder.text()).unwrap();
    let ids = || IdLease::with_range(None, LocalJobId::new(100).unwrap(), 10);
    let mut back = CoreFixture {
        core: Core::restore(&conf, snap.clone(), Box::new(ids()), &|_| None, fx.now).unwrap(),
        out: Default::default(),
        now: fx.now,
    };
    assert_eq!(back.core.job_steps(job), fx.core.job_steps(job));
    let rest = step(&mut back, tasks(job, 4)).unwrap();
    assert_eq!((rest.step, names(&back, &rest)), (2, "n2".to_string()));
    assert!(matches!(
        step(&mut back, tasks(job, 1)),
        Err(CtldError::NodesBusy)
    ));

    // A save from before step CPU accounting: no "steps" key, nothing held.
    let mut old = snap;
    for j in &mut old.jobs {
        let mut v = serde_json::to_value(&*j).unwrap();
        v.as_object_mut().unwrap().remove("steps");
        *j = serde_json::from_value(v).unwrap();
    }
    let mut back = CoreFixture {
        core: Core::restore(&conf, old, Box::new(ids()), &|_| None, fx.now).unwrap(),
        out: Default::default(),
        now: fx.now,
    };
    assert!(back.core.job_steps(job).is_none());
    assert_eq!(step(&mut back, tasks(job, 8)).unwrap().nodes.len(), 2);
}

/// The step records in `out`, as (step, start, end, name, ntasks, cpus).
fn step_records(out: &RecordingOutbox) -> Vec<(i32, u64, Option<u64>, String, u32, u32)> {
    out.acct
        .iter()
        .filter_map(|r| match r {
            AcctRecord::Step {
                step,
                start,
                end,
                name,
                ntasks,
                cpus,
                ..
            } if *step >= 0 => Some((
                *step,
                start.secs(),
                end.map(|e| e.secs()),
                name.clone(),
                *ntasks,
                *cpus,
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn a_steps_start_is_saved_with_its_job_and_recorded_with_its_end_after_a_restart() {
    let builder = builder();
    let mut fx = builder.build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").ntasks(2));
    let named = StepRequest {
        name: "hostname".into(),
        ..tasks(job, 2)
    };
    let started = fx.now.secs();
    let grant = step(&mut fx, named).unwrap();
    assert_eq!(
        step_records(&fx.out),
        vec![(0, started, None, "hostname".to_string(), 2, 2)]
    );
    let jobs: Vec<JobSnap> = fx.core.jobs().map(|j| JobSnap::of(&fx.core, j)).collect();
    let snap = Snapshot {
        cluster: Some("test".into()),
        jobs: serde_json::from_str(&serde_json::to_string(&jobs).unwrap()).unwrap(),
        nodes: fx.core.nodes().iter().map(NodeSnap::of).collect(),
        job_ids: None,
        partitions: Vec::new(),
    };
    let (conf, _) = CtldConf::parse(Path::new("slurm.conf"), &builder.text()).unwrap();
    let ids = || IdLease::with_range(None, LocalJobId::new(100).unwrap(), 10);
    let restart = |snap: Snapshot, now| CoreFixture {
        core: Core::restore(&conf, snap, Box::new(ids()), &|_| None, now).unwrap(),
        out: Default::default(),
        now,
    };

    // Restarted 30 s later, the step ends 10 s after that: its end carries its start.
    let mut back = restart(snap.clone(), fx.now.plus(30));
    back.advance(10);
    done(&mut back, job, grant.step);
    let end = back.now.secs();
    assert_eq!(
        step_records(&back.out),
        vec![(0, started, Some(end), "hostname".to_string(), 2, 2)]
    );
    assert!(back.core.job(job).unwrap().open_steps.is_empty());
    assert!(back.out.saves.contains(&SaveHint::Job(job)));

    // A save from before step starts were kept: the end is recorded without a start.
    let mut old = snap;
    for j in &mut old.jobs {
        let mut v = serde_json::to_value(&*j).unwrap();
        v.as_object_mut().unwrap().remove("open_steps");
        *j = serde_json::from_value(v).unwrap();
    }
    let mut back = restart(old, fx.now.plus(30));
    done(&mut back, job, grant.step);
    assert_eq!(
        step_records(&back.out),
        vec![(0, 0, Some(back.now.secs()), String::new(), 0, 0)]
    );
}

/// The step records in `out`, as (step, end, state, signal).
fn step_ends(out: &RecordingOutbox) -> Vec<(i32, Option<u64>, sluice_vocab::JobState, i32)> {
    out.acct
        .iter()
        .filter_map(|r| match r {
            AcctRecord::Step {
                step,
                end,
                state,
                signal,
                ..
            } if *step >= 0 => Some((*step, end.map(|e| e.secs()), *state, *signal)),
            _ => None,
        })
        .collect()
}

#[test]
fn steps_still_open_when_their_job_ends_are_recorded_cancelled_and_a_late_end_changes_nothing() {
    use sluice_vocab::JobState;
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j").ntasks(2));
    step(&mut fx, tasks(job, 1)).unwrap();
    step(&mut fx, tasks(job, 1)).unwrap();
    done(&mut fx, job, 0);
    fx.out.take();
    fx.advance(5);
    // The job is cancelled while step 1's srun is still running (and never reports, killed
    // with its tasks): step 1 is recorded ended with the job, CANCELLED 0:15, not left open.
    let cancel = CancelRequest {
        job: JobRef::Job(job),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, Caller::user(1), cancel).unwrap();
    let out = fx.out.take();
    assert_eq!(
        step_ends(&out),
        vec![(1, Some(fx.now.secs()), JobState::Cancelled, 15)]
    );
    // Its srun's report of the killed tasks arrives after all: nothing more is recorded.
    fx.advance(1);
    let late = StepEnd {
        job,
        step: 1,
        exit_code: 0,
        signal: 9,
        usage: None,
    };
    on_step_done(&mut fx.core, &mut fx.out, fx.now, Caller::user(1), late).unwrap();
    assert_eq!(step_ends(&fx.out.take()), vec![]);
}

#[test]
fn steps_open_when_their_node_fails_are_recorded_node_fail_with_the_requeued_run() {
    use sluice_ctld::core::{NodeUpdate, on_node_update};
    use sluice_vocab::JobState;
    let mut fx = builder().build();
    fx.register_all();
    let job = running(&mut fx, SubmitRequest::new(1, "j"));
    step(&mut fx, tasks(job, 1)).unwrap();
    let node = fx.nodes_of(job);
    fx.out.take();
    let down = NodeUpdate::Down {
        reason: "dead".into(),
    };
    on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        &node,
        down,
    )
    .unwrap();
    let out = fx.out.take();
    assert_eq!(
        step_ends(&out),
        vec![(0, Some(fx.now.secs()), JobState::NodeFail, 0)]
    );
    assert!(out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::Step {
            run: 0,
            step: 0,
            ..
        }
    )));
    assert_eq!(fx.core.job(job).unwrap().restarts, 1, "requeued");
}
