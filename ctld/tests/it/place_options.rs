//! The placement and timing options of a submission, on the pure core with simulated time:
//! `--ntasks-per-node`, `--mincpus`, `-w/--nodelist`, `-x/--exclude`, `--begin`, `--nice`,
//! `--signal`, and `EnforcePartLimits`.

use sluice_ctld::core::{
    AcctRecord, JobPart, JobReason, NodeCommand, PlaceOpts, StepRequest, SubmitRequest, WarnSignal,
    on_step_create, on_will_run,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;

/// n1, n2 with 2 CPUs, n3, n4 with 8; one partition `debug` of all four (MaxTime 1 h,
/// MaxNodes 3) and `small` of n1, n2; CPUs are allocated one by one (`CR_CPU`).
fn cluster(extra: &[&str]) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=2 RealMemory=1000")
        .nodes("n[3-4]", "CPUs=8 RealMemory=1000")
        .partition("debug", "Nodes=n[1-4] Default=YES MaxTime=60 MaxNodes=3")
        .partition("small", "Nodes=n[1-2] MaxTime=60")
        .conf("SelectType=select/cons_tres")
        .conf("SelectTypeParameters=CR_CPU")
        .conf("SlurmdTimeout=0");
    for line in extra {
        b = b.conf(line);
    }
    let mut fx = b.build();
    fx.register_all();
    fx
}

fn job(name: &str, place: PlaceOpts) -> SubmitRequest {
    SubmitRequest::new(1000, name).minutes(10).place(place)
}

fn names(list: &str) -> Vec<String> {
    sluice_vocab::hostlist::expand(list).unwrap()
}

fn cpus_of(fx: &CoreFixture, id: sluice_vocab::FedJobId) -> Vec<u32> {
    let j = fx.core.job(id).unwrap();
    fx.core.cpus_held(id, &j.nodes)
}

#[test]
fn ntasks_per_node_with_nodes_sets_the_task_count_and_caps_each_node() {
    let mut fx = cluster(&[]);
    let per_node = |n| PlaceOpts {
        ntasks_per_node: Some(n),
        ..PlaceOpts::default()
    };
    // -N2 --ntasks-per-node=2 and no -n: 4 tasks, 2 on each node.
    let mut two = job("a", per_node(2)).nodes(2).partition("small");
    two.max_nodes = Some(2);
    let a = fx.submit_and_schedule(two);
    let ja = fx.core.job(a).unwrap();
    assert_eq!((ja.req.ntasks, ja.req.min_nodes), (4, 2));
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(fx.nodes_of(a), "n[1-2]");
    assert_eq!(cpus_of(&fx, a), [2, 2]);
    fx.exit(a, 0).unwrap();
    // -n4 --ntasks-per-node=1 and no -N: four nodes, one task each.
    let b = fx.submit(job("b", per_node(1)).ntasks(4).partition("debug"));
    // MaxNodes=3 keeps it from ever running (EnforcePartLimits=NO: it pends).
    let b = b.unwrap();
    fx.schedule();
    assert_eq!(fx.core.job(b).unwrap().req.min_nodes, 4);
    assert_eq!(fx.reason(b), JobReason::PartitionNodeLimit);
    // -n3 --ntasks-per-node=1: three nodes, one task (one CPU) on each.
    let c = fx.submit_and_schedule(job("c", per_node(1)).ntasks(3));
    assert_eq!(fx.core.job(c).unwrap().req.min_nodes, 3);
    assert_eq!(fx.nodes_of(c), "n[1-3]");
    assert_eq!(cpus_of(&fx, c), [1, 1, 1]);
    // A per-node cap the partition's nodes can never satisfy: it pends.
    let d = fx
        .submit(job("d", per_node(2)).ntasks(6).partition("small"))
        .unwrap();
    fx.schedule();
    assert_eq!(fx.reason(d), JobReason::PartitionConfig);
}

#[test]
fn mincpus_skips_nodes_with_fewer_cpus() {
    let mut fx = cluster(&[]);
    let place = PlaceOpts {
        mincpus: Some(4),
        ..PlaceOpts::default()
    };
    let a = fx.submit_and_schedule(job("a", place.clone()));
    assert_eq!(fx.nodes_of(a), "n3");
    assert_eq!(fx.core.job(a).unwrap().req.min_node_cpus(), 4);
    // Only 2-CPU nodes: can never run.
    let mut enforced = cluster(&["EnforcePartLimits=ALL"]);
    assert!(matches!(
        enforced.submit(job("b", place).partition("small")),
        Err(CtldError::NodeConfigUnavailable)
    ));
}

#[test]
fn nodelist_nodes_are_all_taken_first_and_excluded_ones_never() {
    let mut fx = cluster(&[]);
    let w = |list: &str| PlaceOpts {
        nodelist: names(list),
        ..PlaceOpts::default()
    };
    let a = fx.submit_and_schedule(job("a", w("n4")));
    assert_eq!(fx.nodes_of(a), "n4");
    // -w n2 -N2: n2 and one more node, taken in order.
    let b = fx.submit_and_schedule(job("b", w("n2")).nodes(2));
    assert_eq!(fx.nodes_of(b), "n[1-2]");
    // -w names more nodes than -N: as many nodes as named.
    let c = fx.submit(job("c", w("n[3-4]")).nodes(1)).unwrap();
    assert_eq!(fx.core.job(c).unwrap().req.min_nodes, 2);
    // -x: never those nodes, even when they are free.
    let x = PlaceOpts {
        exclude: names("n[1-3]"),
        ..PlaceOpts::default()
    };
    let d = fx.submit_and_schedule(job("d", x));
    assert_eq!(fx.nodes_of(d), "n4");
    // A busy -w node keeps the job waiting even though other nodes are free.
    let mut fx = cluster(&[]);
    let busy = fx.submit_and_schedule(job("busy", w("n3")).ntasks(8));
    assert_eq!(fx.nodes_of(busy), "n3");
    let e = fx.submit_and_schedule(job("e", w("n3")));
    assert_eq!(
        (fx.state(e), fx.reason(e)),
        (JobState::Pending, JobReason::Resources)
    );
    fx.exit(busy, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.nodes_of(e), "n3");
}

#[test]
fn nodelist_and_exclude_errors_use_slurm_texts() {
    let mut fx = cluster(&[]);
    let place = |w: &str, x: &str| PlaceOpts {
        nodelist: if w.is_empty() { Vec::new() } else { names(w) },
        exclude: if x.is_empty() { Vec::new() } else { names(x) },
        ..PlaceOpts::default()
    };
    let cases = [
        (job("a", place("nx9", "")), "Invalid node name specified"),
        (job("a", place("", "nx9")), "Invalid node name specified"),
        (
            job("a", place("n3", "")).partition("small"),
            "Requested node configuration is not available",
        ),
        (
            job("a", place("n3", "n3")),
            "Requested node configuration is not available",
        ),
    ];
    for (req, text) in cases {
        assert_eq!(fx.submit(req).unwrap_err().to_string(), text);
    }
    assert_eq!(fx.core.job_count(), 0);
}

#[test]
fn begin_time_keeps_the_job_pending_with_reason_begintime() {
    let mut fx = cluster(&[]);
    let at = fx.now.secs() + 120;
    let place = PlaceOpts {
        begin: Some(at),
        ..PlaceOpts::default()
    };
    let a = fx.submit_and_schedule(job("a", place));
    assert_eq!(
        (fx.state(a), fx.reason(a)),
        (JobState::Pending, JobReason::BeginTime)
    );
    // Accounting learns when it becomes eligible.
    assert!(fx.out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::JobSubmitted { job, eligible, .. } if *job == a && eligible.secs() == at
    )));
    fx.advance(119);
    fx.tick();
    assert_eq!(fx.reason(a), JobReason::BeginTime);
    fx.advance(1);
    fx.tick();
    assert_eq!(fx.state(a), JobState::Running);
    // A begin time in the past is no wait at all.
    let past = PlaceOpts {
        begin: Some(1),
        ..PlaceOpts::default()
    };
    let b = fx.submit_and_schedule(job("b", past));
    assert_eq!(fx.state(b), JobState::Running);
}

#[test]
fn nice_ranks_a_job_behind_those_with_a_lower_nice() {
    let mut fx = cluster(&[]);
    let nice = |n| PlaceOpts {
        nice: n,
        ..PlaceOpts::default()
    };
    // Fill partition small, then queue a niced job before a plain one.
    let small = |name, n| job(name, nice(n)).ntasks(4).partition("small");
    let fill = fx.submit_and_schedule(small("fill", 0));
    assert_eq!(fx.state(fill), JobState::Running);
    let niced = fx.submit(small("niced", 100)).unwrap();
    fx.advance(1);
    let plain = fx.submit(small("plain", 0)).unwrap();
    let order: Vec<_> = fx.core.pending().collect();
    assert_eq!(order, [plain, niced]);
    fx.schedule();
    assert_eq!(fx.reason(plain), JobReason::Resources);
    assert_eq!(fx.reason(niced), JobReason::Priority);
    // A negative nice is for administrators only.
    assert!(matches!(
        fx.submit(job("neg", nice(-5))),
        Err(CtldError::AccessDenied)
    ));
    let mut admin = small("neg", -5);
    admin.admin = true;
    let first = fx.submit(admin).unwrap();
    assert_eq!(fx.core.pending().next(), Some(first));
}

#[test]
fn signal_goes_to_the_steps_sig_time_before_the_limit() {
    let mut fx = cluster(&[]);
    let place = PlaceOpts {
        signal: Some(WarnSignal {
            signal: 10,
            before_secs: 90,
            batch_only: false,
        }),
        ..PlaceOpts::default()
    };
    let a = fx.submit_and_schedule(job("a", place));
    let (now, admin) = (fx.now, fx.admin());
    let step = on_step_create(&mut fx.core, &mut fx.out, now, admin, StepRequest::new(a))
        .unwrap()
        .step;
    let warned = |fx: &CoreFixture| {
        fx.out
            .node_cmds
            .iter()
            .filter(|c| matches!(c, NodeCommand::SignalPart { signal: 10, .. }))
            .cloned()
            .collect::<Vec<_>>()
    };
    // Limit 600 s: nothing until 510 s, then once.
    fx.advance(509);
    fx.tick();
    assert!(warned(&fx).is_empty());
    fx.advance(1);
    fx.tick();
    let sent = warned(&fx);
    assert_eq!(sent.len(), 1);
    assert!(matches!(
        sent[0],
        NodeCommand::SignalPart { job, part: JobPart::Step(s), .. } if job == a && s == step
    ));
    fx.advance(30);
    fx.tick();
    assert_eq!(warned(&fx).len(), 1, "sent once per run");
    assert!(fx.core.job(a).unwrap().signal_sent);
}

#[test]
fn batch_signal_goes_to_the_batch_shell_with_the_default_sig_time() {
    let mut fx = cluster(&[]);
    let place = PlaceOpts {
        signal: Some(WarnSignal {
            signal: 12,
            before_secs: 60,
            batch_only: true,
        }),
        ..PlaceOpts::default()
    };
    let a = fx.submit_and_schedule(job("a", place));
    fx.advance(539);
    fx.tick();
    let batch = |fx: &CoreFixture| {
        fx.out
            .node_cmds
            .iter()
            .filter(|c| {
                matches!(
                    c,
                    NodeCommand::SignalPart {
                        part: JobPart::Batch,
                        signal: 12,
                        ..
                    }
                )
            })
            .count()
    };
    assert_eq!(batch(&fx), 0);
    fx.advance(1);
    fx.tick();
    assert_eq!(batch(&fx), 1);
    assert_eq!(fx.state(a), JobState::Running);
}

#[test]
fn enforce_part_limits_no_queues_what_the_partition_cannot_run() {
    let mut fx = cluster(&[]);
    let none = PlaceOpts::default;
    let cases = [
        (job("n", none()).nodes(999), JobReason::PartitionNodeLimit),
        (job("t", none()).minutes(61), JobReason::PartitionTimeLimit),
        (
            job("c", none()).partition("small").nodes(3),
            JobReason::PartitionConfig,
        ),
    ];
    for (req, reason) in cases {
        let id = fx.submit(req).unwrap();
        fx.tick();
        assert_eq!((fx.state(id), fx.reason(id)), (JobState::Pending, reason));
    }
    // Memory beyond every node is refused all the same, as Slurm does ("Memory specification
    // can not be satisfied").
    let err = fx.submit(job("m", none()).mem_mb(5000)).unwrap_err();
    assert!(matches!(err, CtldError::MemoryUnsatisfiable), "{err:?}");
    assert_eq!(
        err.note().as_deref(),
        Some("Memory specification can not be satisfied")
    );
}

#[test]
fn enforce_part_limits_all_refuses_at_submission() {
    for value in ["ALL", "ANY", "YES", "all"] {
        let mut fx = cluster(&[&format!("EnforcePartLimits={value}")]);
        let none = PlaceOpts::default;
        assert!(matches!(
            fx.submit(job("n", none()).nodes(999)),
            Err(CtldError::InvalidNodeCount)
        ));
        assert!(matches!(
            fx.submit(job("t", none()).minutes(61)),
            Err(CtldError::InvalidTimeLimit)
        ));
        assert!(matches!(
            fx.submit(job("c", none()).partition("small").nodes(3)),
            Err(CtldError::NodeConfigUnavailable)
        ));
        assert_eq!(fx.core.job_count(), 0);
    }
    let bad = ClusterBuilder::new()
        .nodes("n1", "")
        .partition("p", "Nodes=n1 Default=YES")
        .conf("EnforcePartLimits=maybe")
        .try_build();
    let err = bad.err().expect("a bad value is refused").to_string();
    assert!(err.contains("EnforcePartLimits"), "{err}");
}

#[test]
fn test_only_refuses_what_can_never_run_and_starts_no_earlier_than_begin() {
    let mut fx = cluster(&[]);
    let none = PlaceOpts::default;
    let now = fx.now;
    assert!(matches!(
        on_will_run(&mut fx.core, now, job("big", none()).nodes(999)),
        Err(CtldError::InvalidNodeCount)
    ));
    assert!(matches!(
        on_will_run(&mut fx.core, now, job("long", none()).minutes(61)),
        Err(CtldError::InvalidTimeLimit)
    ));
    assert!(matches!(
        on_will_run(&mut fx.core, now, job("m", none()).mem_mb(5000)),
        Err(CtldError::NodeConfigUnavailable)
    ));
    let later = PlaceOpts {
        begin: Some(now.secs() + 300),
        ..PlaceOpts::default()
    };
    let w = on_will_run(&mut fx.core, now, job("later", later)).unwrap();
    assert_eq!(w.start.map(|t| t.secs()), Some(now.secs() + 300));
    assert_eq!(fx.core.job_count(), 0);
}
