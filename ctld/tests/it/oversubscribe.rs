//! Job-level sharing: `-s/--oversubscribe` and `--exclusive` against the partition's
//! `OverSubscribe` (`NO`, `YES[:n]`, `FORCE[:n]`, `EXCLUSIVE`), under each selection type, and
//! what a job shows as its `OverSubscribe`.

use sluice_ctld::core::{JobReason, JobShare, SubmitRequest};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

const LINEAR: &[&str] = &["SelectType=select/linear"];
const CR_CORE: &[&str] = &[
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_Core",
];
const CR_CPU: &[&str] = &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"];

/// Nodes of 8 CPUs, one partition `p` over all of them with `part`, plus `conf` lines. No
/// gang scheduling: jobs co-allocated on a resource all run at once.
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

fn waits(fx: &CoreFixture, id: FedJobId) -> bool {
    (fx.state(id), fx.reason(id)) == (JobState::Pending, JobReason::Resources)
}

#[test]
fn yes_lets_jobs_that_ask_share_and_keeps_the_others_alone() {
    for select in [LINEAR, CR_CORE, CR_CPU] {
        let mut fx = cluster("n1", "OverSubscribe=YES", select);
        let a = fx.submit_and_schedule(job(8).oversubscribe());
        let b = fx.submit_and_schedule(job(8).oversubscribe());
        assert_eq!(
            (fx.state(a), fx.state(b)),
            (JobState::Running, JobState::Running),
            "{select:?}: both asked, so they share n1"
        );
        assert_eq!(fx.core.node("n1").unwrap().jobs, [a, b]);
        let lone = fx.submit_and_schedule(job(1));
        assert!(waits(&fx, lone), "{select:?}: it did not ask to share");

        let mut fx = cluster("n1", "OverSubscribe=YES", select);
        let lone = fx.submit_and_schedule(job(8));
        let asking = fx.submit_and_schedule(job(8).oversubscribe());
        assert_eq!(fx.state(lone), JobState::Running);
        assert!(
            waits(&fx, asking),
            "{select:?}: a job that did not ask uses its resources alone"
        );
        fx.exit(lone, 0).unwrap();
        fx.schedule();
        assert_eq!(fx.state(asking), JobState::Running);
    }
}

#[test]
fn yes_2_lets_at_most_two_jobs_share_a_resource() {
    for select in [LINEAR, CR_CORE, CR_CPU] {
        let mut fx = cluster("n1", "OverSubscribe=YES:2", select);
        let ids: Vec<FedJobId> = (0..3)
            .map(|_| fx.submit_and_schedule(job(8).oversubscribe()))
            .collect();
        assert_eq!(
            ids.iter().map(|&id| fx.state(id)).collect::<Vec<_>>(),
            [JobState::Running, JobState::Running, JobState::Pending],
            "{select:?}"
        );
        assert!(waits(&fx, ids[2]));
        assert_eq!(fx.core.node("n1").unwrap().jobs.len(), 2);
    }
}

#[test]
fn a_sharing_job_never_joins_a_node_held_by_one_that_may_not() {
    let mut fx = cluster("n[1-2]", "OverSubscribe=YES", CR_CPU);
    let lone = fx.submit_and_schedule(job(2));
    assert_eq!(fx.nodes_of(lone), "n1");
    let s1 = fx.submit_and_schedule(job(2).oversubscribe());
    assert_eq!(fx.nodes_of(s1), "n2", "n1 holds a job that may not share");
    let lone2 = fx.submit_and_schedule(job(2));
    assert_eq!(
        fx.nodes_of(lone2),
        "n1",
        "free CPUs beside another lone job are fine"
    );
    // Eight CPUs: n2 has six free, so s2 shares two of s1's CPUs rather than touch n1.
    let s2 = fx.submit_and_schedule(job(8).oversubscribe());
    assert_eq!(
        (fx.nodes_of(s2), fx.core.job_cpus(s2)),
        ("n2".into(), vec![8])
    );
    assert_eq!(fx.core.node("n2").unwrap().alloc_cpus, 10);
    // Every CPU of n2 is held now: a lone job fits only in what n1 has left (4 CPUs).
    let lone3 = fx.submit_and_schedule(job(4));
    assert_eq!(fx.nodes_of(lone3), "n1");
    let lone4 = fx.submit_and_schedule(job(1));
    assert!(waits(&fx, lone4), "n2's CPUs are all held by sharing jobs");
}

#[test]
fn exclusive_jobs_take_whole_empty_nodes_nobody_joins() {
    for part in ["OverSubscribe=NO", "OverSubscribe=YES"] {
        let mut fx = cluster("n[1-2]", part, CR_CPU);
        let small = fx.submit_and_schedule(job(1).oversubscribe());
        assert_eq!(fx.nodes_of(small), "n1");
        let ex = fx.submit_and_schedule(job(1).exclusive());
        assert_eq!(fx.nodes_of(ex), "n2", "{part}: n1 is not empty");
        assert_eq!(fx.core.job_cpus(ex), [8], "{part}: all of its node's CPUs");
        assert!(fx.core.job_alloc(ex).unwrap().exclusive);
        let asking = fx.submit_and_schedule(job(1).oversubscribe());
        let lone = fx.submit_and_schedule(job(1));
        assert_eq!(
            (fx.nodes_of(asking), fx.nodes_of(lone)),
            ("n1".into(), "n1".into()),
            "{part}: nobody joins an exclusive job"
        );
        let ex2 = fx.submit_and_schedule(job(1).exclusive());
        assert!(waits(&fx, ex2), "{part}: no node is empty");
        fx.exit(ex, 0).unwrap();
        fx.schedule();
        assert_eq!(fx.nodes_of(ex2), "n2");
    }
}

#[test]
fn force_ignores_exclusive_and_no_ignores_oversubscribe() {
    let mut fx = cluster("n1", "OverSubscribe=FORCE:2", CR_CPU);
    let a = fx.submit_and_schedule(job(8));
    let ex = fx.submit_and_schedule(job(2).exclusive());
    assert_eq!(fx.state(ex), JobState::Running, "FORCE shares it anyway");
    assert_eq!(fx.core.job_cpus(ex), [2], "not the whole node");
    assert!(!fx.core.job_alloc(ex).unwrap().exclusive);
    assert_eq!(fx.core.node("n1").unwrap().jobs, [a, ex]);
    let third = fx.submit_and_schedule(job(6));
    assert_eq!(
        fx.state(third),
        JobState::Running,
        "six CPUs held once so far"
    );
    let fourth = fx.submit_and_schedule(job(1));
    assert!(waits(&fx, fourth), "every CPU is held by two jobs");

    for select in [LINEAR, CR_CORE, CR_CPU] {
        let mut fx = cluster("n1", "OverSubscribe=NO", select);
        let a = fx.submit_and_schedule(job(8).oversubscribe());
        let b = fx.submit_and_schedule(job(8).oversubscribe());
        assert_eq!(fx.state(a), JobState::Running);
        assert!(waits(&fx, b), "{select:?}: NO never shares a resource");
    }
}

#[test]
fn a_job_shows_yes_no_or_ok_as_slurm_reports_it() {
    let mut b = ClusterBuilder::new().nodes("n1", "CPUs=8");
    for (name, os) in [
        ("no", "NO"),
        ("yes", "YES:2"),
        ("force", "FORCE"),
        ("force1", "FORCE:1"),
        ("excl", "EXCLUSIVE"),
    ] {
        b = b.partition(name, &format!("Nodes=n1 OverSubscribe={os}"));
    }
    let mut fx = b.build();
    let expect = [
        ("no", ["OK", "YES", "NO"]),
        ("yes", ["OK", "YES", "NO"]),
        ("force", ["YES", "YES", "YES"]),
        ("force1", ["OK", "YES", "NO"]),
        ("excl", ["NO", "NO", "NO"]),
    ];
    for (part, shown) in expect {
        for (share, want) in [
            JobShare::Unset,
            JobShare::OverSubscribe,
            JobShare::Exclusive,
        ]
        .into_iter()
        .zip(shown)
        {
            let mut req = job(1).partition(part);
            req.share = share;
            let id = fx.submit(req).unwrap();
            let j = fx.core.job(id).unwrap();
            assert_eq!(j.req.share, share);
            assert_eq!(fx.core.oversubscribe_shown(j), want, "{part} {share:?}");
        }
    }
}
