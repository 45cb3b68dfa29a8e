//! How many nodes and CPUs a job gets within what it asked, on the pure core: a `-N min-max`
//! range (as many nodes as are free, up to the maximum and one per task), `--use-min-nodes`,
//! `--spread-job`, and `-O/--overcommit` (one task's CPUs per node, tasks sharing them, in
//! the job and in its steps).

use sluice_ctld::core::{NodeCountPref, PlaceOpts, StepRequest, SubmitRequest, on_step_create};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;

/// n[1-4] with 8 CPUs each, partition `debug` of all four; CPUs allocated one by one.
fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=8 RealMemory=1000")
        .partition("debug", "Nodes=n[1-4] Default=YES MaxTime=60")
        .conf("SelectType=select/cons_tres")
        .conf("SelectTypeParameters=CR_CPU")
        .conf("SlurmdTimeout=0")
        .build();
    fx.register_all();
    fx
}

/// `-N min-max` with `place`.
fn range(name: &str, min: u32, max: u32, place: PlaceOpts) -> SubmitRequest {
    let mut req = SubmitRequest::new(1000, name)
        .minutes(10)
        .nodes(min)
        .place(place);
    req.max_nodes = Some(max);
    req
}

fn cpus_of(fx: &CoreFixture, id: sluice_vocab::FedJobId) -> Vec<u32> {
    let j = fx.core.job(id).unwrap();
    fx.core.cpus_held(id, &j.nodes)
}

#[test]
fn a_node_range_gets_as_many_free_nodes_as_it_may() {
    let mut fx = cluster();
    // -N 1-3 with four idle nodes: three (it used to take the first count that fits, one).
    let a = fx.submit_and_schedule(range("a", 1, 3, PlaceOpts::default()));
    assert_eq!(fx.nodes_of(a), "n[1-3]");
    assert_eq!(cpus_of(&fx, a), [1, 1, 1]);
    fx.exit(a, 0).unwrap();
    // -N 1-3 -c 8 with only n4 free of a whole node's CPUs: it starts there, on one.
    let hog = fx.submit_and_schedule(range("hog", 3, 3, PlaceOpts::default()).cpus_per_task(8));
    assert_eq!(fx.nodes_of(hog), "n[1-3]");
    let a = fx.submit_and_schedule(range("a", 1, 3, PlaceOpts::default()).cpus_per_task(8));
    assert_eq!(fx.nodes_of(a), "n4");
    fx.exit(a, 0).unwrap();
    // -N 2-4 -c 8 with one node left: it waits for its minimum rather than starting short.
    let b = fx.submit_and_schedule(range("b", 2, 4, PlaceOpts::default()).cpus_per_task(8));
    assert_eq!(fx.state(b), JobState::Pending);
    fx.exit(hog, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(b), "n[1-4]");
    fx.exit(b, 0).unwrap();
    // -N 1-4 -n 2: no more nodes than tasks.
    let c = fx.submit_and_schedule(range("c", 1, 4, PlaceOpts::default()).ntasks(2));
    assert_eq!(fx.nodes_of(c), "n[1-2]");
    fx.exit(c, 0).unwrap();
    // Only -N 2 (no range) or only -n: the fewest nodes, as before.
    let d = fx.submit_and_schedule(SubmitRequest::new(1000, "d").minutes(10).ntasks(4));
    assert_eq!(fx.nodes_of(d), "n1");
    assert_eq!(cpus_of(&fx, d), [4]);
}

#[test]
fn use_min_nodes_keeps_to_the_minimum_of_the_range() {
    let mut fx = cluster();
    let min = PlaceOpts {
        node_pref: NodeCountPref::UseMin,
        ..PlaceOpts::default()
    };
    let a = fx.submit_and_schedule(range("a", 1, 3, min));
    assert_eq!(fx.nodes_of(a), "n1");
}

#[test]
fn spread_job_takes_a_node_per_task_and_deals_the_tasks_evenly() {
    let mut fx = cluster();
    let spread = PlaceOpts {
        node_pref: NodeCountPref::Spread,
        ..PlaceOpts::default()
    };
    // -n 6 --spread-job without -N: all four nodes, tasks 2+2+1+1.
    let a = fx.submit_and_schedule(
        SubmitRequest::new(1000, "a")
            .minutes(10)
            .ntasks(6)
            .place(spread.clone()),
    );
    assert_eq!(fx.nodes_of(a), "n[1-4]");
    assert_eq!(cpus_of(&fx, a), [2, 2, 1, 1]);
    fx.exit(a, 0).unwrap();
    // -n 2: two nodes, one task each (without it, both fit on n1).
    let b = fx.submit_and_schedule(
        SubmitRequest::new(1000, "b")
            .minutes(10)
            .ntasks(2)
            .place(spread),
    );
    assert_eq!(fx.nodes_of(b), "n[1-2]");
    assert_eq!(cpus_of(&fx, b), [1, 1]);
}

#[test]
fn overcommit_allocates_one_tasks_cpus_per_node() {
    let mut fx = cluster();
    let over = PlaceOpts {
        overcommit: true,
        ..PlaceOpts::default()
    };
    // -O -n 8 on 8-CPU nodes: one node, one CPU, eight tasks.
    let a = fx.submit_and_schedule(
        SubmitRequest::new(1000, "a")
            .minutes(10)
            .ntasks(8)
            .place(over.clone()),
    );
    let j = fx.core.job(a).unwrap();
    assert_eq!((j.req.ntasks, j.req.min_nodes), (8, 1));
    assert_eq!(cpus_of(&fx, a), [1]);
    // -O -n 40 -c 2: more tasks than the cluster has CPUs, still one node of two CPUs.
    let b = fx.submit_and_schedule(
        SubmitRequest::new(1000, "b")
            .minutes(10)
            .ntasks(40)
            .cpus_per_task(2)
            .place(over.clone()),
    );
    assert_eq!(fx.state(b), JobState::Running);
    assert_eq!(cpus_of(&fx, b), [2]);
    // -O -N 2 -n 8 --ntasks-per-node=1: two nodes, one CPU each (the per-node cap is ignored).
    let c = fx.submit_and_schedule(
        SubmitRequest::new(1000, "c")
            .minutes(10)
            .nodes(2)
            .ntasks(8)
            .place(PlaceOpts {
                ntasks_per_node: Some(1),
                ..over
            }),
    );
    assert_eq!(cpus_of(&fx, c), [1, 1]);
    // Without -O the same -n 40 -c 2 can never run here.
    let d = fx
        .submit(
            SubmitRequest::new(1000, "d")
                .minutes(10)
                .ntasks(40)
                .cpus_per_task(2),
        )
        .unwrap();
    fx.schedule();
    assert_eq!(fx.state(d), JobState::Pending);
}

#[test]
fn an_overcommitted_step_runs_more_tasks_than_cpus() {
    let mut fx = cluster();
    let a = fx.submit_and_schedule(
        SubmitRequest::new(1000, "a")
            .minutes(10)
            .nodes(2)
            .ntasks(8)
            .place(PlaceOpts {
                overcommit: true,
                ..PlaceOpts::default()
            }),
    );
    assert_eq!(cpus_of(&fx, a), [1, 1]);
    let (now, admin) = (fx.now, fx.admin());
    let step = |min: u32, over: bool| StepRequest {
        ntasks: Some(8),
        min_nodes: Some(min),
        overcommit: over,
        overlap: true,
        ..StepRequest::new(a)
    };
    // Eight tasks on two CPUs: refused without -O.
    assert!(on_step_create(&mut fx.core, &mut fx.out, now, admin, step(2, false)).is_err());
    let grant = on_step_create(&mut fx.core, &mut fx.out, now, admin, step(2, true)).unwrap();
    assert_eq!(grant.tasks, [4, 4]);
    assert_eq!(grant.cpus, [1, 1]);
}
