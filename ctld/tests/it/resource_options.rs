//! The resource options of a submission on the pure core: `--mem-per-cpu` (memory held per
//! CPU, so it limits the tasks a node takes), `--tmp` (nodes without that much `TmpDisk` are
//! never chosen) and `--contiguous` (consecutive nodes only).

use sluice_ctld::core::{JobReason, PlaceOpts, SubmitRequest, TopoAsk};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;

fn cluster(nodes: &[(&str, &str)], conf: &[&str]) -> CoreFixture {
    let mut b = ClusterBuilder::new();
    for (names, spec) in nodes {
        b = b.nodes(names, spec);
    }
    b = b.partition("p", "Nodes=ALL Default=YES MaxTime=UNLIMITED");
    for line in conf {
        b = b.conf(line);
    }
    let mut fx = b.build();
    fx.register_all();
    fx
}

fn job(place: PlaceOpts) -> SubmitRequest {
    SubmitRequest::new(1000, "j").minutes(10).place(place)
}

const CR_CPU_MEMORY: &[&str] = &[
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_CPU_Memory",
];

#[test]
fn memory_per_cpu_is_held_per_cpu_and_limits_the_tasks_a_node_takes() {
    let mut fx = cluster(&[("n[1-2]", "CPUs=8 RealMemory=1000")], CR_CPU_MEMORY);
    let per_cpu = |mb| PlaceOpts {
        mem_per_cpu_mb: Some(mb),
        ..PlaceOpts::default()
    };
    // 250 MB a CPU: four tasks fill a node's 1000 MB, so eight tasks need both nodes.
    let a = fx.submit_and_schedule(job(per_cpu(250)).ntasks(8));
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(fx.core.job_cpus(a), [4, 4]);
    assert_eq!(fx.core.job_alloc(a).unwrap().mem_mb, [1000, 1000]);
    // Nothing is left for another job, however small its memory per CPU.
    let b = fx.submit_and_schedule(job(per_cpu(10)).ntasks(1));
    assert_eq!(
        (fx.state(b), fx.reason(b)),
        (JobState::Pending, JobReason::Resources)
    );
    fx.exit(a, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.core.job_alloc(b).unwrap().mem_mb, [10]);
    // Two CPUs a task at 600 MB each: 1200 MB on one node, more than any node has.
    let c = fx
        .submit(job(per_cpu(600)).ntasks(1).cpus_per_task(2))
        .unwrap();
    fx.schedule();
    assert_eq!(fx.reason(c), JobReason::PartitionConfig);
}

#[test]
fn memory_per_cpu_with_whole_nodes_is_a_node_filter() {
    // select/linear without memory as a resource: a node must have the memory of the CPUs a
    // task uses there.
    let mut fx = cluster(
        &[
            ("n1", "CPUs=4 RealMemory=1000"),
            ("n2", "CPUs=4 RealMemory=4000"),
        ],
        &[],
    );
    let a = fx.submit_and_schedule(
        job(PlaceOpts {
            mem_per_cpu_mb: Some(1500),
            ..PlaceOpts::default()
        })
        .cpus_per_task(2),
    );
    assert_eq!(fx.nodes_of(a), "n2", "n1 lacks 2 x 1500 MB");
}

#[test]
fn tmp_picks_nodes_with_enough_temporary_disk() {
    let mut fx = cluster(
        &[
            ("n1", "CPUs=2 RealMemory=1000"),
            ("n2", "CPUs=2 RealMemory=1000 TmpDisk=500"),
            ("n3", "CPUs=2 RealMemory=1000 TmpDisk=2048"),
        ],
        &[],
    );
    let tmp = |mb| PlaceOpts {
        tmp_mb: Some(mb),
        ..PlaceOpts::default()
    };
    let a = fx.submit_and_schedule(job(tmp(400)));
    assert_eq!(fx.nodes_of(a), "n2");
    let b = fx.submit_and_schedule(job(tmp(1024)).nodes(1));
    assert_eq!(fx.nodes_of(b), "n3");
    // Only n3 ever could: it waits for n3, not for any node.
    let c = fx.submit_and_schedule(job(tmp(2000)));
    assert_eq!(
        (fx.state(c), fx.reason(c)),
        (JobState::Pending, JobReason::Resources)
    );
    let idle = fx.submit_and_schedule(job(PlaceOpts::default()));
    assert_eq!(fx.nodes_of(idle), "n1");
    // No node has 3 GB of temporary disk: refused, whatever EnforcePartLimits (as Slurm).
    let err = fx.submit(job(tmp(3072))).unwrap_err();
    assert!(matches!(err, CtldError::TmpDiskUnsatisfiable), "{err:?}");
    fx.exit(b, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(c), "n3");
}

#[test]
fn tmp_beyond_every_node_is_refused_with_enforced_partition_limits() {
    let mut fx = cluster(
        &[("n1", "CPUs=2 RealMemory=1000 TmpDisk=100")],
        &["EnforcePartLimits=ALL"],
    );
    let err = fx
        .submit(job(PlaceOpts {
            tmp_mb: Some(101),
            ..PlaceOpts::default()
        }))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Requested node configuration is not available"
    );
}

#[test]
fn contiguous_takes_only_consecutive_nodes() {
    let mut fx = cluster(&[("n[1-5]", "CPUs=2 RealMemory=1000")], &[]);
    let on = |node: &str| PlaceOpts {
        nodelist: vec![node.to_string()],
        ..PlaceOpts::default()
    };
    let busy2 = fx.submit_and_schedule(job(on("n2")));
    let busy4 = fx.submit_and_schedule(job(on("n4")));
    assert_eq!(
        (fx.nodes_of(busy2), fx.nodes_of(busy4)),
        ("n2".into(), "n4".into())
    );
    let contiguous = PlaceOpts {
        contiguous: true,
        ..PlaceOpts::default()
    };
    // Free: n1, n3, n5: any two of them will do without --contiguous.
    let spread = fx.submit_and_schedule(job(PlaceOpts::default()).nodes(2));
    assert_eq!(fx.nodes_of(spread), "n[1,3]");
    fx.exit(spread, 0).unwrap();
    // No two of them are neighbours.
    let a = fx.submit_and_schedule(job(contiguous.clone()).nodes(2));
    assert_eq!(
        (fx.state(a), fx.reason(a)),
        (JobState::Pending, JobReason::Resources)
    );
    fx.exit(busy4, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(a), "n[3-4]", "the first run of two free nodes");
    fx.exit(a, 0).unwrap();
    fx.exit(busy2, 0).unwrap();
    fx.schedule();
    let b = fx.submit_and_schedule(job(contiguous).nodes(3));
    assert_eq!(fx.nodes_of(b), "n[1-3]");
}

#[test]
fn time_min_lets_backfill_start_a_job_with_a_shorter_limit() {
    let mut fx = cluster(&[("n[1-4]", "CPUs=4 RealMemory=1000")], &[]);
    let long = fx
        .submit(SubmitRequest::new(1000, "long").nodes(3).minutes(60))
        .unwrap();
    fx.schedule();
    let top = fx
        .submit(SubmitRequest::new(1000, "top").nodes(4).minutes(10))
        .unwrap();
    fx.advance(5 * 60);
    // 90 minutes would delay `top` (it starts when `long` ends, 55 minutes from now); with
    // --time-min=30 backfill starts it now with a limit of 55 minutes.
    let min = |m| PlaceOpts {
        time_min: Some(m),
        ..PlaceOpts::default()
    };
    let flexible = fx.submit(job(min(30)).nodes(1).minutes(90)).unwrap();
    // A minimum of more than the 55 minutes left does not help.
    let rigid = fx.submit(job(min(56)).nodes(1).minutes(90)).unwrap();
    fx.schedule();
    assert_eq!(fx.state(long), JobState::Running);
    assert_eq!(fx.reason(top), JobReason::Resources);
    assert_eq!(fx.state(flexible), JobState::Running);
    assert_eq!(
        fx.core.job(flexible).unwrap().req.time_limit,
        sluice_vocab::cluster_conf::TimeLimit::Minutes(55)
    );
    assert_eq!(fx.state(rigid), JobState::Pending);
    assert_eq!(
        fx.core.job(rigid).unwrap().req.time_limit,
        sluice_vocab::cluster_conf::TimeLimit::Minutes(90),
        "a job that did not start keeps its limit"
    );
    // A minimum above the limit is refused, as Slurm's controller does.
    let err = fx.submit(job(min(20)).minutes(10)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid time-min specification (exceeds job's time or other limits)"
    );
}

#[test]
fn socket_core_and_thread_options_pick_nodes_and_cap_their_tasks() {
    // small: 1 socket of 2 single-thread cores (2 CPUs); big: 2 sockets of 2 cores of 2
    // threads (8 CPUs).
    let mut fx = cluster(
        &[
            (
                "small",
                "Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000",
            ),
            (
                "big",
                "Sockets=2 CoresPerSocket=2 ThreadsPerCore=2 RealMemory=1000",
            ),
        ],
        &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"],
    );
    assert_eq!(fx.core.node("big").unwrap().topo.cpus, 8);
    let ask = |topo: TopoAsk| PlaceOpts {
        topo,
        ..PlaceOpts::default()
    };
    let one_node = |req: SubmitRequest| {
        let mut req = req.nodes(1);
        req.max_nodes = Some(1);
        req
    };
    // -B 2 (two sockets): only big.
    let a = fx.submit_and_schedule(job(ask(TopoAsk {
        sockets_per_node: Some(2),
        ..TopoAsk::default()
    })));
    assert_eq!(fx.nodes_of(a), "big");
    fx.exit(a, 0).unwrap();
    // --ntasks-per-core=1: big takes four tasks (four cores), small two; each task holds its
    // whole core, so big's eight CPUs are the job's.
    let per_core = TopoAsk {
        ntasks_per_core: Some(1),
        ..TopoAsk::default()
    };
    let b = fx.submit_and_schedule(job(ask(per_core)).ntasks(6));
    assert_eq!(fx.core.job_cpus(b), [2, 8]);
    fx.exit(b, 0).unwrap();
    let c = fx.submit(one_node(job(ask(per_core)).ntasks(5))).unwrap();
    fx.schedule();
    assert_eq!(
        fx.reason(c),
        JobReason::PartitionConfig,
        "no node has 5 cores"
    );
    // --threads-per-core=1: one thread of each of big's cores, so four CPUs there.
    let one_thread = TopoAsk {
        threads_per_core: Some(1),
        ..TopoAsk::default()
    };
    let d = fx.submit_and_schedule(one_node(job(ask(one_thread)).ntasks(4)));
    assert_eq!(fx.nodes_of(d), "big");
    assert_eq!(fx.core.job_cpus(d), [8], "whole cores");
    fx.exit(d, 0).unwrap();
    let e = fx.submit(one_node(job(ask(one_thread)).ntasks(5))).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(e), JobReason::PartitionConfig);
    // --ntasks-per-socket=1: one task per socket, so two on big at most.
    let per_socket = TopoAsk {
        ntasks_per_socket: Some(1),
        ..TopoAsk::default()
    };
    let f = fx.submit(one_node(job(ask(per_socket)).ntasks(3))).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(f), JobReason::PartitionConfig);
    // Threads-per-core 4: no node has that many.
    let g = fx
        .submit(job(ask(TopoAsk {
            threads_per_core: Some(4),
            ..TopoAsk::default()
        })))
        .unwrap();
    fx.schedule();
    assert_eq!(fx.reason(g), JobReason::PartitionConfig);
}

#[test]
fn whole_cores_leave_no_thread_of_a_core_to_another_job() {
    // One node of 2 cores of 2 threads.
    let mut fx = cluster(
        &[(
            "n1",
            "Sockets=1 CoresPerSocket=2 ThreadsPerCore=2 RealMemory=1000",
        )],
        &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"],
    );
    let one_thread = PlaceOpts {
        topo: TopoAsk {
            threads_per_core: Some(1),
            ..TopoAsk::default()
        },
        ..PlaceOpts::default()
    };
    // One task on one thread holds its whole core: two CPUs.
    let a = fx.submit_and_schedule(job(one_thread.clone()));
    assert_eq!(fx.core.job_cpus(a), [2]);
    // The other core is free for a job of two CPUs; a third CPU is not there.
    let b = fx.submit_and_schedule(job(PlaceOpts::default()).ntasks(2));
    assert_eq!(fx.core.job_cpus(b), [2]);
    let c = fx.submit(job(PlaceOpts::default())).unwrap();
    fx.schedule();
    assert_eq!(fx.state(c), JobState::Pending);
}
