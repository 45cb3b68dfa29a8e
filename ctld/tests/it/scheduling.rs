//! Scheduling scenarios: FIFO and reasons, backfill, weights, features.

use sluice_ctld::core::{JobReason, NodeCommand, SubmitRequest};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;

fn four_nodes() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=4 RealMemory=1000")
        .partition("debug", "Nodes=n[1-4] Default=YES MaxTime=UNLIMITED")
        .build();
    fx.register_all();
    fx
}

fn job(name: &str) -> SubmitRequest {
    SubmitRequest::new(1000, name)
}

#[test]
fn fifo_blocks_the_partition_with_resources_then_priority() {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=4")
        .partition("debug", "Nodes=n[1-4] Default=YES")
        .conf("SchedulerType=sched/builtin")
        .build();
    fx.register_all();
    let a = fx.submit(job("a").nodes(3).minutes(10)).unwrap();
    let b = fx.submit(job("b").nodes(2).minutes(10)).unwrap();
    let c = fx.submit(job("c").nodes(1).minutes(10)).unwrap();
    let stats = fx.schedule();
    assert_eq!(stats.started, 1);
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(fx.nodes_of(a), "n[1-3]");
    assert_eq!(
        (fx.state(b), fx.reason(b)),
        (JobState::Pending, JobReason::Resources)
    );
    // c would fit on n4, but strict FIFO keeps it behind b.
    assert_eq!(
        (fx.state(c), fx.reason(c)),
        (JobState::Pending, JobReason::Priority)
    );
    assert_eq!(fx.out.launched(), [a]);

    fx.advance(60);
    fx.exit(a, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.state(a), JobState::Completed);
    assert_eq!(
        (fx.state(b), fx.state(c)),
        (JobState::Running, JobState::Running)
    );
    assert_eq!(fx.out.launched(), [a, b, c]);
}

#[test]
fn same_submit_time_goes_by_lower_id() {
    let mut fx = four_nodes();
    let first = fx.submit(job("first").nodes(4)).unwrap();
    let second = fx.submit(job("second").nodes(4)).unwrap();
    assert!(first < second);
    fx.schedule();
    assert_eq!(fx.state(first), JobState::Running);
    assert_eq!(fx.reason(second), JobReason::Resources);
}

#[test]
fn backfill_starts_a_short_job_that_ends_before_the_top_job_could_start() {
    let mut fx = four_nodes();
    let long = fx.submit(job("long").nodes(3).minutes(60)).unwrap();
    fx.schedule();
    let top = fx.submit(job("top").nodes(4).minutes(10)).unwrap();
    let short = fx.submit(job("short").nodes(1).minutes(30)).unwrap();
    let stats = fx.schedule();
    assert_eq!(fx.state(long), JobState::Running);
    assert_eq!(
        (fx.state(top), fx.reason(top)),
        (JobState::Pending, JobReason::Resources)
    );
    assert_eq!(stats.backfilled, 1);
    assert_eq!(fx.state(short), JobState::Running);
    assert_eq!(fx.nodes_of(short), "n4");
}

#[test]
fn backfill_refuses_a_job_that_would_delay_the_top_job() {
    let mut fx = four_nodes();
    let long = fx.submit(job("long").nodes(3).minutes(60)).unwrap();
    fx.schedule();
    let top = fx.submit(job("top").nodes(4).minutes(10)).unwrap();
    // Ends after `long` would, so it would push `top` back: must wait.
    let too_long = fx.submit(job("too-long").nodes(1).minutes(90)).unwrap();
    let unlimited = fx.submit(job("unlimited").nodes(1)).unwrap();
    let stats = fx.schedule();
    assert_eq!(stats.backfilled, 0);
    assert_eq!(fx.state(long), JobState::Running);
    for id in [too_long, unlimited] {
        assert_eq!(
            (fx.state(id), fx.reason(id)),
            (JobState::Pending, JobReason::Priority)
        );
    }
    assert_eq!(fx.reason(top), JobReason::Resources);
}

#[test]
fn backfill_may_use_nodes_the_top_job_will_not_need() {
    let mut fx = ClusterBuilder::new()
        .nodes("small[1-2]", "CPUs=4 Weight=1")
        .nodes("big[1-2]", "CPUs=4 RealMemory=4000 Weight=10")
        .partition("all", "Nodes=small[1-2],big[1-2] Default=YES")
        .build();
    fx.register_all();
    let hog = fx
        .submit(job("hog").nodes(2).mem_mb(4000).minutes(60))
        .unwrap();
    fx.submit(job("wait-a-bit").nodes(1).minutes(5)).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(hog), "big[1-2]");
    // Top job needs both big nodes; a long job on a small node cannot delay it.
    let top = fx
        .submit(job("top").nodes(2).mem_mb(4000).minutes(10))
        .unwrap();
    let long_small = fx.submit(job("long-small").nodes(1).minutes(600)).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(top), JobReason::Resources);
    assert_eq!(fx.state(long_small), JobState::Running);
    assert!(fx.nodes_of(long_small).starts_with("small"));
}

#[test]
fn bf_max_job_test_bounds_the_jobs_backfill_tries_per_pass() {
    let scenario = |params: &str| {
        let mut fx = ClusterBuilder::new()
            .nodes("n[1-4]", "CPUs=4 RealMemory=1000")
            .partition("debug", "Nodes=n[1-4] Default=YES MaxTime=UNLIMITED")
            .conf(params)
            .build();
        fx.register_all();
        fx.submit(job("long").nodes(2).minutes(60)).unwrap();
        fx.schedule();
        fx.submit(job("top").nodes(4).minutes(10)).unwrap();
        let shorts: Vec<_> = (0..2)
            .map(|i| {
                fx.submit(job(&format!("short{i}")).nodes(1).minutes(30))
                    .unwrap()
            })
            .collect();
        let backfilled = fx.schedule().backfilled;
        let states: Vec<JobState> = shorts.iter().map(|&id| fx.state(id)).collect();
        (backfilled, states)
    };
    // Slurm's default (500) tries both short jobs; one allowed try starts only the first.
    assert_eq!(
        scenario("SchedulerParameters=bf_window=1440"),
        (2, vec![JobState::Running, JobState::Running])
    );
    assert_eq!(
        scenario("SchedulerParameters=bf_max_job_test=1"),
        (1, vec![JobState::Running, JobState::Pending])
    );
}

#[test]
fn bf_interval_spaces_backfill_and_default_queue_depth_limits_a_pass() {
    let cluster = |params: &str| {
        let mut fx = ClusterBuilder::new()
            .nodes("n[1-4]", "CPUs=4 RealMemory=1000")
            .partition("debug", "Nodes=n[1-4] Default=YES MaxTime=UNLIMITED")
            .conf(params)
            .build();
        fx.register_all();
        fx
    };
    // Backfill ran in the first pass; a short job that could backfill waits for the next
    // backfill, 30 s later, while plain passes run meanwhile.
    let mut fx = cluster("SchedulerParameters=bf_interval=30");
    fx.submit(job("long").nodes(2).minutes(60)).unwrap();
    fx.schedule();
    fx.submit(job("top").nodes(4).minutes(10)).unwrap();
    let short = fx.submit(job("short").nodes(1).minutes(30)).unwrap();
    fx.advance(29);
    assert_eq!(fx.schedule().backfilled, 0);
    assert_eq!(fx.state(short), JobState::Pending);
    fx.advance(1);
    assert_eq!(fx.schedule().backfilled, 1);
    assert_eq!(fx.state(short), JobState::Running);

    // bf_interval=-1: never.
    let mut fx = cluster("SchedulerParameters=bf_interval=-1");
    fx.submit(job("long").nodes(2).minutes(60)).unwrap();
    fx.submit(job("top").nodes(4).minutes(10)).unwrap();
    let short = fx.submit(job("short").nodes(1).minutes(30)).unwrap();
    fx.schedule();
    fx.advance(3600);
    fx.schedule();
    assert_eq!(fx.state(short), JobState::Pending);

    // default_queue_depth=1: after the first (whole-queue) pass, a pass considers only the
    // first queued job; the second one starts at the next whole-queue pass, 60 s on.
    let mut fx = cluster("SchedulerParameters=default_queue_depth=1");
    fx.schedule();
    let held = fx.submit(job("held").nodes(1).minutes(5).held()).unwrap();
    let next = fx.submit(job("next").nodes(1).minutes(5)).unwrap();
    fx.advance(59);
    let stats = fx.schedule();
    assert_eq!((stats.considered, fx.state(next)), (1, JobState::Pending));
    fx.advance(1);
    fx.schedule();
    assert_eq!(
        (fx.state(held), fx.state(next)),
        (JobState::Pending, JobState::Running)
    );
}

#[test]
fn a_plan_beyond_bf_window_reserves_nothing() {
    let scenario = |params: &str| {
        let mut fx = ClusterBuilder::new()
            .nodes("n[1-4]", "CPUs=4 RealMemory=1000")
            .partition("debug", "Nodes=n[1-4] Default=YES MaxTime=UNLIMITED")
            .conf(params)
            .build();
        fx.register_all();
        fx.submit(job("long").nodes(3).minutes(60)).unwrap();
        fx.schedule();
        fx.submit(job("top").nodes(4).minutes(10)).unwrap();
        let too_long = fx.submit(job("too-long").nodes(1).minutes(90)).unwrap();
        fx.schedule();
        fx.state(too_long)
    };
    // The top job's planned start is an hour away: within the default day, so a 90-minute job
    // may not delay it; beyond a 30-minute window there is no plan to delay.
    assert_eq!(
        scenario("SchedulerParameters=bf_window=1440"),
        JobState::Pending
    );
    assert_eq!(
        scenario("SchedulerParameters=bf_window=30"),
        JobState::Running
    );
}

#[test]
fn builtin_scheduler_never_backfills() {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=4")
        .partition("debug", "Nodes=n[1-4] Default=YES")
        .conf("SchedulerType=sched/builtin")
        .build();
    fx.register_all();
    fx.submit(job("long").nodes(3).minutes(60)).unwrap();
    fx.submit(job("top").nodes(4).minutes(10)).unwrap();
    let short = fx.submit(job("short").nodes(1).minutes(5)).unwrap();
    assert_eq!(fx.schedule().backfilled, 0);
    assert_eq!(fx.state(short), JobState::Pending);
}

#[test]
fn lowest_weight_nodes_are_allocated_first() {
    let mut fx = ClusterBuilder::new()
        .nodes("heavy[1-2]", "CPUs=4 Weight=50")
        .nodes("light[1-2]", "CPUs=4 Weight=5")
        .nodes("mid1", "CPUs=4 Weight=10")
        .partition("p", "Nodes=ALL Default=YES")
        .build();
    fx.register_all();
    let a = fx.submit(job("a").nodes(2)).unwrap();
    let b = fx.submit(job("b").nodes(2)).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(a), "light[1-2]");
    assert_eq!(fx.nodes_of(b), "heavy1,mid1");
}

#[test]
fn constraints_pick_matching_nodes() {
    let mut fx = ClusterBuilder::new()
        .nodes("a[1-2]", "CPUs=4 Feature=intel,ib")
        .nodes("b[1-2]", "CPUs=4 Feature=amd,ib")
        .nodes("c1", "CPUs=4 Feature=amd")
        .partition("p", "Nodes=ALL Default=YES")
        .build();
    fx.register_all();
    let amd_ib = fx.submit(job("x").nodes(2).constraint("amd&ib")).unwrap();
    let either = fx
        .submit(job("y").nodes(2).constraint("intel|amd"))
        .unwrap();
    let third = fx.submit(job("z").nodes(1).constraint("amd&ib")).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(amd_ib), "b[1-2]");
    assert_eq!(fx.nodes_of(either), "a[1-2]");
    assert_eq!(
        (fx.state(third), fx.reason(third)),
        (JobState::Pending, JobReason::Resources)
    );
    let launch = fx.out.node_cmds.iter().find_map(|c| match c {
        NodeCommand::LaunchBatch { job, node_list, .. } if *job == amd_ib => {
            Some(node_list.clone())
        }
        _ => None,
    });
    assert_eq!(launch.as_deref(), Some("b[1-2]"));
}

#[test]
fn task_counts_decide_how_many_nodes() {
    let mut fx = four_nodes();
    // 10 tasks of 2 CPUs need 20 CPUs: five 4-CPU nodes would be needed but only four exist.
    // EnforcePartLimits=NO (the default): it pends for good, behind nothing.
    let big = fx.submit(job("big").ntasks(10).cpus_per_task(2)).unwrap();
    let fits = fx.submit(job("ok").ntasks(6).cpus_per_task(2)).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(big), JobReason::PartitionConfig);
    assert_eq!(fx.nodes_of(fits), "n[1-3]");
}

#[test]
fn partition_down_holds_jobs_with_its_reason() {
    let mut fx = ClusterBuilder::new()
        .nodes("n1", "CPUs=1")
        .partition("p", "Nodes=n1 Default=YES State=DOWN")
        .build();
    fx.register_all();
    let id = fx.submit(job("x")).unwrap();
    fx.schedule();
    assert_eq!(
        (fx.state(id), fx.reason(id)),
        (JobState::Pending, JobReason::PartitionDown)
    );
}
