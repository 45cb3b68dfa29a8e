use crate::core::{PlaceOpts, SubmitRequest};
use crate::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::FedJobId;

const OWNER: u32 = 1000;

/// Two partitions of two 1-CPU nodes each (whole nodes), backfill on.
fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=1")
        .partition("p1", "Nodes=n[1-2] Default=YES")
        .partition("p2", "Nodes=n[3-4]")
        .build();
    fx.register_all();
    fx
}

fn job(name: &str, part: &str, nodes: u32, minutes: u32) -> SubmitRequest {
    SubmitRequest::new(OWNER, name)
        .partition(part)
        .nodes(nodes)
        .minutes(minutes)
}

/// Every job's state, reason and nodes, in id order.
fn outcome(fx: &CoreFixture, ids: &[FedJobId]) -> Vec<String> {
    ids.iter()
        .map(|&id| {
            format!(
                "{id} {:?} {:?} {}",
                fx.state(id),
                fx.reason(id),
                fx.nodes_of(id)
            )
        })
        .collect()
}

/// Submits `reqs` to both fixtures, then runs the whole pass on `whole` and the pass over new
/// jobs on `fresh`; returns how many jobs each considered.
fn step(
    whole: &mut CoreFixture,
    fresh: &mut CoreFixture,
    ids: &mut Vec<FedJobId>,
    reqs: Vec<SubmitRequest>,
) -> (u32, u32) {
    for req in reqs {
        let a = whole.submit(req.clone()).expect("submit");
        let b = fresh.submit(req).expect("submit");
        assert_eq!(a, b);
        ids.push(a);
    }
    (
        whole.schedule().considered,
        fresh.schedule_fresh().considered,
    )
}

#[test]
fn new_jobs_get_what_the_whole_pass_gives_them_without_walking_the_queue() {
    let (mut whole, mut fresh) = (cluster(), cluster());
    let mut ids = Vec::new();
    let held: Vec<SubmitRequest> = (0..20)
        .map(|i| job(&format!("h{i}"), "p1", 1, 5).held())
        .collect();
    // No whole pass yet: the first pass walks the queue.
    assert_eq!(step(&mut whole, &mut fresh, &mut ids, held), (20, 20));
    let bursts = [
        // Fills p1.
        vec![job("a", "p1", 2, 10)],
        // Blocked (Resources), then a short one behind it (Priority, backfill finds no room).
        vec![job("b", "p1", 1, 60), job("c", "p1", 1, 5)],
        // p2: one starts, one does not fit, a short one behind it is backfilled next to it.
        vec![
            job("d", "p2", 1, 30),
            job("e", "p2", 2, 60),
            job("f", "p2", 1, 5),
        ],
        vec![job("g", "p2", 1, 50), job("h", "p1", 1, 1)],
    ];
    for burst in bursts {
        let n = burst.len() as u32;
        let (w, f) = step(&mut whole, &mut fresh, &mut ids, burst);
        assert!(w > 20, "the whole pass walks the held jobs too ({w})");
        assert_eq!(f, n, "only the new jobs are considered");
        assert_eq!(outcome(&fresh, &ids), outcome(&whole, &ids));
    }
    assert_eq!(fresh.out.launched(), whole.out.launched());
}

#[test]
fn a_blocked_job_that_left_the_queue_brings_back_the_whole_pass() {
    let mut fx = cluster();
    let held: Vec<FedJobId> = (0..5)
        .map(|i| fx.submit(job(&format!("h{i}"), "p1", 1, 5).held()).unwrap())
        .collect();
    fx.submit(job("a", "p1", 2, 10)).unwrap();
    let b = fx.submit(job("b", "p1", 2, 10)).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(b), crate::core::JobReason::Resources);
    let admin = fx.admin();
    fx.cancel(admin, b, None).unwrap();
    let c = fx.submit(job("c", "p1", 1, 10)).unwrap();
    let stats = fx.schedule_fresh();
    assert_eq!(stats.considered as usize, held.len() + 1);
    assert_eq!(fx.reason(c), crate::core::JobReason::Resources);
}

#[test]
fn a_new_job_ahead_of_the_blocked_one_brings_back_the_whole_pass() {
    let mut fx = cluster();
    fx.submit(job("a", "p1", 2, 10)).unwrap();
    let b = fx.submit(job("b", "p1", 1, 10)).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(b), crate::core::JobReason::Resources);
    let mut first = job("first", "p1", 1, 10).place(PlaceOpts {
        nice: -10,
        ..PlaceOpts::default()
    });
    first.admin = true;
    let c = fx.submit(first).unwrap();
    assert_eq!(fx.schedule_fresh().considered, 2);
    // As the whole pass leaves them: the new job is now the partition's first.
    assert_eq!(fx.reason(c), crate::core::JobReason::Resources);
    assert_eq!(fx.reason(b), crate::core::JobReason::Priority);
}

#[test]
fn a_pass_cut_by_queue_depth_is_not_built_on() {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=1")
        .partition("p1", "Nodes=n[1-2] Default=YES")
        .conf("SchedulerParameters=default_queue_depth=2")
        .build();
    fx.register_all();
    for i in 0..4 {
        fx.submit(job(&format!("h{i}"), "p1", 1, 5).held()).unwrap();
    }
    // The first pass sees the whole queue (none before it), the next one only two jobs.
    assert_eq!(fx.schedule().considered, 4);
    fx.advance(1);
    assert_eq!(fx.schedule().considered, 2);
    fx.submit(job("n", "p1", 1, 5)).unwrap();
    // Not known what the jobs past the depth wait for: a (depth-limited) pass again.
    assert_eq!(fx.schedule_fresh().considered, 2);
}

#[test]
fn nodes_freed_without_a_pass_bring_back_the_whole_pass() {
    // Two partitions over the same nodes: a new job of the other partition must not take
    // nodes an older blocked job now fits on.
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=1")
        .partition("p1", "Nodes=n[1-2] Default=YES")
        .partition("p2", "Nodes=n[1-2]")
        .build();
    fx.register_all();
    let a = fx.submit(job("a", "p1", 2, 10)).unwrap();
    let b = fx.submit(job("b", "p1", 2, 10)).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(b), crate::core::JobReason::Resources);
    // The nodes come back outside any pass (the runtime's tick or a completion would pass).
    fx.exit(a, 0).unwrap();
    let c = fx.submit(job("c", "p2", 1, 10)).unwrap();
    fx.schedule_fresh();
    assert_eq!(fx.state(b), sluice_vocab::JobState::Running);
    assert_eq!(fx.state(c), sluice_vocab::JobState::Pending);
}
