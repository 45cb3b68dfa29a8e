//! Selection when jobs may share nodes: CPUs and cores handed out per job, memory that must
//! fit together, `OverSubscribe` limits, exclusive partitions.

use sluice_ctld::core::{JobReason, NodeCommand, SubmitRequest};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

fn cluster(nodes: &str, part: &str, conf: &[&str]) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .nodes(nodes, "CPUs=8 RealMemory=1000")
        .partition("p", &format!("Nodes=ALL Default=YES {part}"));
    for line in conf {
        b = b.conf(line);
    }
    let mut fx = b.build();
    fx.register_all();
    fx
}

fn job(ntasks: u32) -> SubmitRequest {
    SubmitRequest::new(1000, "j").ntasks(ntasks)
}

fn suspends(fx: &CoreFixture) -> usize {
    fx.out
        .node_cmds
        .iter()
        .filter(|c| matches!(c, NodeCommand::Suspend { .. }))
        .count()
}

#[test]
fn cr_cpu_packs_small_jobs_on_one_node_without_suspending_any() {
    let mut fx = cluster(
        "n1",
        "OverSubscribe=FORCE",
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "PreemptMode=GANG",
        ],
    );
    let ids: Vec<FedJobId> = (0..4).map(|_| fx.submit_and_schedule(job(2))).collect();
    for &id in &ids {
        assert_eq!(fx.state(id), JobState::Running);
        assert_eq!(fx.core.job_cpus(id), [2]);
    }
    assert_eq!(suspends(&fx), 0);
    let n1 = fx.core.node("n1").unwrap();
    assert_eq!((n1.alloc_cpus, n1.jobs.len()), (8, 4));
    assert_eq!(n1.state_name(), "ALLOCATED");
    // A fifth job shares CPUs with others, so the timeslicer suspends it.
    let fifth = fx.submit_and_schedule(job(2));
    assert_eq!(fx.state(fifth), JobState::Suspended);
    assert_eq!(suspends(&fx), 1);
}

#[test]
fn cr_cpu_without_oversubscribe_shares_nodes_but_never_cpus() {
    let mut fx = cluster(
        "n[1-2]",
        "",
        &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"],
    );
    let a = fx.submit_and_schedule(job(6));
    let b = fx.submit_and_schedule(job(2));
    assert_eq!(fx.nodes_of(a), "n1");
    assert_eq!(
        fx.nodes_of(b),
        "n1",
        "the two CPUs left on n1 are used first"
    );
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "ALLOCATED");
    let c = fx.submit_and_schedule(job(3));
    assert_eq!(fx.nodes_of(c), "n2");
    assert_eq!(fx.core.node("n2").unwrap().state_name(), "MIXED");
    let d = fx.submit_and_schedule(job(6));
    assert_eq!(
        (fx.state(d), fx.reason(d)),
        (JobState::Pending, JobReason::Resources)
    );
    fx.exit(a, 0).unwrap();
    fx.schedule();
    assert_eq!(
        (fx.state(d), fx.nodes_of(d)),
        (JobState::Running, "n1".into())
    );
}

#[test]
fn tasks_spread_over_the_requested_nodes() {
    let mut fx = cluster(
        "n[1-5]",
        "",
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
        ],
    );
    let id = fx.submit_and_schedule(job(10).nodes(5));
    assert_eq!(fx.core.job_cpus(id), [2, 2, 2, 2, 2]);
    let alloc = fx.core.job_alloc(id).unwrap();
    assert_eq!(alloc.cores, vec![vec![0u16, 1]; 5]);
    let cpt = fx.submit_and_schedule(job(3).cpus_per_task(2));
    assert_eq!(fx.core.job_cpus(cpt), [6], "three tasks of two CPUs on n1");
}

#[test]
fn jobs_share_a_node_only_when_their_memory_fits_together() {
    let mut fx = cluster(
        "n1",
        "OverSubscribe=FORCE",
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "PreemptMode=GANG",
        ],
    );
    let a = fx.submit_and_schedule(job(8).mem_mb(600));
    let b = fx.submit_and_schedule(job(8).mem_mb(600));
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(
        (fx.state(b), fx.reason(b)),
        (JobState::Pending, JobReason::Resources),
        "CPUs may be shared, memory may not: 600 + 600 > 1000"
    );
    let c = fx.submit_and_schedule(job(8).mem_mb(400));
    assert_eq!(
        fx.state(c),
        JobState::Suspended,
        "co-allocated, then timesliced"
    );
    assert_eq!(fx.core.node("n1").unwrap().alloc_mem_mb, 1000);
    // Without --mem and without DefMemPerCPU a job takes the whole node's memory.
    fx.exit(a, 0).unwrap();
    assert_eq!(fx.state(c), JobState::Running, "c is alone on its CPUs now");
    fx.schedule();
    assert_eq!(
        (fx.state(b), fx.state(c)),
        (JobState::Suspended, JobState::Running),
        "b's memory fits beside c's now; their CPUs are timesliced"
    );
    let whole = fx.submit_and_schedule(job(1));
    assert_eq!(fx.state(whole), JobState::Pending);
}

#[test]
fn default_memory_per_cpu_limits_how_many_tasks_a_node_takes() {
    let mut fx = cluster(
        "n[1-2]",
        "",
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "DefMemPerCPU=200",
        ],
    );
    // 1000 MB at 200 MB per CPU: five tasks per node although there are eight CPUs, so
    // eight tasks need both nodes.
    let id = fx.submit_and_schedule(job(8));
    assert_eq!(fx.core.job_cpus(id), [4, 4]);
    assert_eq!(fx.core.job_alloc(id).unwrap().mem_mb, [800, 800]);
    // 200 MB left on each node: one more task each, not three.
    let more = fx.submit_and_schedule(job(3));
    assert_eq!(fx.state(more), JobState::Pending);
    let two = fx.submit_and_schedule(job(2));
    assert_eq!(fx.core.job_cpus(two), [1, 1]);
}

#[test]
fn force_2_lets_at_most_two_jobs_share_a_resource() {
    for select in [
        &["SelectType=select/linear"][..],
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
        ],
        &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"],
    ] {
        let mut conf = vec!["PreemptMode=GANG"];
        conf.extend_from_slice(select);
        let mut fx = cluster("n1", "OverSubscribe=FORCE:2", &conf);
        let a = fx.submit_and_schedule(job(8));
        let b = fx.submit_and_schedule(job(8));
        let c = fx.submit_and_schedule(job(8));
        assert_eq!(
            (fx.state(a), fx.state(b), fx.state(c)),
            (JobState::Running, JobState::Suspended, JobState::Pending),
            "{select:?}"
        );
        assert_eq!(fx.reason(c), JobReason::Resources);
        assert_eq!(fx.core.node("n1").unwrap().jobs.len(), 2);
    }
}

#[test]
fn exclusive_partitions_take_whole_empty_nodes() {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=8 RealMemory=1000")
        .partition("shared", "Nodes=ALL Default=YES OverSubscribe=FORCE")
        .partition("excl", "Nodes=ALL OverSubscribe=EXCLUSIVE")
        .conf("SelectType=select/cons_tres")
        .conf("SelectTypeParameters=CR_CPU")
        .build();
    fx.register_all();
    let small = fx.submit_and_schedule(job(1));
    assert_eq!(fx.nodes_of(small), "n1");
    let ex = fx.submit_and_schedule(job(1).partition("excl"));
    assert_eq!(fx.nodes_of(ex), "n2", "n1 is not empty");
    assert_eq!(fx.core.job_cpus(ex), [8]);
    let other = fx.submit_and_schedule(job(1));
    assert_eq!(fx.nodes_of(other), "n1", "nobody joins an exclusive job");
}
