//! Hand-computed hours and properties of the hourly rollup.

use proptest::prelude::*;

use super::*;

const H0: i64 = 100 * 3_600;

fn hour() -> Span {
    Span::new(H0, H0 + 3_600)
}

fn job(
    key: &'static str,
    eligible: i64,
    start: i64,
    end: i64,
    alloc: TresCounts,
) -> JobUse<&'static str> {
    JobUse {
        key,
        eligible,
        start,
        end,
        alloc,
        req: alloc,
        suspended: Vec::new(),
    }
}

fn down(node: &str, start: i64, end: i64, planned: bool) -> NodeDown {
    NodeDown {
        node: node.into(),
        start,
        end,
        cpus: 4,
        planned,
    }
}

#[test]
fn a_hand_computed_hour() {
    let capacity = [
        Capacity {
            start: H0 - 7_200,
            end: H0 + 1_800,
            counts: TresCounts::new(8, 800, 2),
        },
        Capacity {
            start: H0 + 1_800,
            end: 0,
            counts: TresCounts::new(12, 1_200, 3),
        },
    ];
    let events = [
        down("n1", H0 + 600, H0 + 1_200, false),
        down("n1", H0 + 900, H0 + 1_500, false), // drain overlapping the down: counted once
        down("n2", H0 - 100, 0, true),           // powered down all hour
        down("n2", H0, H0 + 900, false),         // drained while powered down: planned wins
        down("n3", H0 - 500, H0, false),         // over before the hour
    ];
    let mut a = job(
        "a",
        H0 - 1_000,
        H0 + 300,
        H0 + 2_100,
        TresCounts::new(2, 100, 1),
    );
    a.suspended = vec![(H0 + 1_000, H0 + 1_300)];
    let mut b = job("b", H0 + 1_200, 0, 0, TresCounts::default());
    b.req = TresCounts::new(4, 400, 1);
    let c = job("a", H0 - 5_000, H0 - 4_000, 0, TresCounts::new(1, 50, 1));
    let mut d = job("b", H0 + 3_000, 0, H0 + 3_300, TresCounts::default());
    d.req = TresCounts::new(1, 10, 1);
    let e = job(
        "c",
        H0 - 9_000,
        H0 - 8_000,
        H0 - 10,
        TresCounts::new(64, 1, 1),
    );
    let r = roll_hour(hour(), &capacity, &events, &[a, b, c, d, e]);

    // cpu: total 8×1800 + 12×1800; alloc a 2×(1800−300 suspended) + c 1×3600;
    // down n1 4×900; planned down n2 4×3600; planned a 2×300 + b 4×2400 + d 1×300.
    assert_eq!(
        *r.tres(Tres::Cpu),
        UsageSecs {
            count: 12,
            total: 36_000,
            alloc: 6_600,
            down: 3_600,
            pdown: 14_400,
            idle: 900,
            plan: 10_500,
            over: 0,
        }
    );
    // mem: down is the down CPU share (10%, 40%) of 3,600,000 MB-seconds.
    assert_eq!(
        *r.tres(Tres::Mem),
        UsageSecs {
            count: 1_200,
            total: 3_600_000,
            alloc: 360_000,
            down: 360_000,
            pdown: 1_440_000,
            idle: 447_000,
            plan: 993_000,
            over: 0,
        }
    );
    // node: 5400 + 900 + 3600 > 9000, so planned down is clipped to 2700 and the
    // 3000 planned node-seconds do not fit: overcommitted.
    assert_eq!(
        *r.tres(Tres::Node),
        UsageSecs {
            count: 3,
            total: 9_000,
            alloc: 5_400,
            down: 900,
            pdown: 2_700,
            idle: 0,
            plan: 0,
            over: 3_000,
        }
    );
    assert_eq!(r.clipped, vec![Tres::Node]);
    let assoc: Vec<_> = r.assoc.into_iter().collect();
    assert_eq!(
        assoc,
        vec![
            (("a", Tres::Cpu), 6_600),
            (("a", Tres::Mem), 360_000),
            (("a", Tres::Node), 5_400)
        ],
        "only running jobs allocate; b and d only waited"
    );
}

#[test]
fn planned_absorbs_a_negative_idle_and_the_rest_is_overcommitted() {
    let capacity = [Capacity {
        start: H0,
        end: 0,
        counts: TresCounts::new(1, 0, 1),
    }];
    let running = job("a", H0, H0 + 1_800, 0, TresCounts::new(1, 0, 1));
    let mut waiting = job("b", H0, 0, 0, TresCounts::default());
    waiting.req = TresCounts::new(1, 0, 1);
    let r = roll_hour(hour(), &capacity, &[], &[running, waiting]);
    let cpu = r.tres(Tres::Cpu);
    // alloc 1800; planned: a waited 1800, b 3600 → 5400 of which 1800 fit.
    assert_eq!(
        (cpu.alloc, cpu.plan, cpu.idle, cpu.over),
        (1_800, 1_800, 0, 3_600)
    );
    assert!(
        r.clipped.is_empty(),
        "planned time overflowing is not clipping"
    );
}

#[test]
fn an_hour_without_capacity_clips_everything() {
    let running = job("a", H0, H0, 0, TresCounts::new(4, 4, 1));
    let r = roll_hour(hour(), &[], &[], &[running]);
    assert_eq!(*r.tres(Tres::Cpu), UsageSecs::default());
    assert_eq!(r.clipped, Tres::ALL.to_vec());
    assert_eq!(
        r.assoc.get(&("a", Tres::Cpu)),
        Some(&14_400),
        "associations are not clipped"
    );
}

fn arb_job() -> impl Strategy<Value = JobUse<u8>> {
    (
        0u8..4,
        0i64..20_000,
        0i64..5_000,
        0i64..20_000,
        0u64..64,
        0u64..64,
        prop::collection::vec((0i64..20_000, 0i64..3_000), 0..3),
    )
        .prop_map(|(key, eligible, wait, run, cpus, req, susp)| {
            let eligible = H0 - 8_000 + eligible;
            let start = if run % 3 == 0 { 0 } else { eligible + wait };
            let end = if run % 5 == 0 {
                0
            } else {
                eligible + wait + run
            };
            JobUse {
                key,
                eligible,
                start,
                end,
                alloc: TresCounts::new(cpus, cpus * 100, 1),
                req: TresCounts::new(req, req * 10, 1),
                suspended: susp
                    .into_iter()
                    .map(|(s, l)| (H0 - 8_000 + s, H0 - 8_000 + s + l))
                    .collect(),
            }
        })
}

proptest! {
    #[test]
    fn the_kinds_add_up_to_the_total(
        jobs in prop::collection::vec(arb_job(), 0..20),
        cpus in 0u64..200,
        events in prop::collection::vec((0u8..5, 0i64..10_000, 0i64..5_000, any::<bool>()), 0..8),
    ) {
        let capacity = [Capacity { start: H0 - 1, end: 0, counts: TresCounts::new(cpus, cpus * 50, 8) }];
        let events: Vec<NodeDown> = events
            .into_iter()
            .map(|(n, s, l, planned)| NodeDown {
                node: format!("n{n}"),
                start: H0 - 3_000 + s,
                end: H0 - 3_000 + s + l,
                cpus: 8,
                planned,
            })
            .collect();
        let r = roll_hour(hour(), &capacity, &events, &jobs);
        for t in Tres::ALL {
            let u = r.tres(t);
            prop_assert_eq!(u.alloc + u.down + u.pdown + u.idle + u.plan, u.total);
            let raw_alloc: u64 = jobs.iter().map(|j| j.alloc_in(hour()).get(t)).sum();
            let raw_plan: u64 = jobs.iter().map(|j| j.planned_in(hour()).get(t)).sum();
            prop_assert_eq!(u.alloc, raw_alloc.min(u.total));
            if !r.clipped.contains(&t) {
                prop_assert_eq!(u.plan + u.over, raw_plan);
            }
        }
    }

    #[test]
    fn hours_add_up_to_longer_windows(job in arb_job()) {
        let day = Span::new(H0 - 10_800, H0 + 18_000);
        let hours = (0..8).map(|i| Span::new(day.start + i * 3_600, day.start + (i + 1) * 3_600));
        let (mut alloc, mut plan) = (TresCounts::default(), TresCounts::default());
        for h in hours {
            let (a, p) = (job.alloc_in(h), job.planned_in(h));
            alloc = TresCounts::new(alloc.cpu + a.cpu, alloc.mem + a.mem, alloc.node + a.node);
            plan = TresCounts::new(plan.cpu + p.cpu, plan.mem + p.mem, plan.node + p.node);
        }
        prop_assert_eq!(alloc, job.alloc_in(day));
        prop_assert_eq!(plan, job.planned_in(day));
    }
}
