//! `sluice gen swf`: deterministic for a seed, a valid header, every line read back by the
//! parser, and workload distributions that look like a real cluster's.

use std::collections::HashMap;

use sluice_tool::swf::generate::{GenConfig, GenStats, write_trace};
use sluice_tool::swf::{Event, Reader, Status, SwfJob};

/// 2026-11-02T00:00:00Z, a Monday.
const START: i64 = 1_793_577_600;

fn config(jobs: u64, seed: u64) -> GenConfig {
    GenConfig {
        jobs,
        users: 100,
        accounts: 20,
        partitions: 3,
        procs: None,
        start: START,
        days: 28,
        seed,
    }
}

fn generate(cfg: &GenConfig) -> (Vec<u8>, GenStats) {
    let mut out = Vec::new();
    let stats = write_trace(cfg, &mut out).expect("writing to memory");
    (out, stats)
}

/// Reads a trace back: its header and jobs; fails on any malformed line.
fn read_back(text: &[u8]) -> (sluice_tool::swf::Header, Vec<SwfJob>) {
    let mut reader = Reader::new(text);
    let mut jobs = Vec::new();
    while let Some(event) = reader.next_event() {
        match event.expect("reading from memory") {
            Event::Job { job, .. } => jobs.push(*job),
            Event::Malformed(e) => panic!("generated a malformed line: {e}"),
        }
    }
    (reader.header().clone(), jobs)
}

#[test]
fn the_same_seed_writes_the_same_trace() {
    let (a, _) = generate(&config(2_000, 42));
    let (b, _) = generate(&config(2_000, 42));
    let (c, _) = generate(&config(2_000, 43));
    assert!(a == b, "same seed, same bytes");
    assert!(a != c, "another seed, another trace");
    assert!(a.len() > 2_000 * 30, "{} bytes", a.len());
}

#[test]
fn the_header_is_valid_and_every_line_reads_back() {
    let cfg = config(5_000, 7);
    let (text, stats) = generate(&cfg);
    let (header, jobs) = read_back(&text);
    assert_eq!(header.version.as_deref(), Some("2.2"));
    assert_eq!(header.unix_start_time, Some(START));
    assert_eq!(header.time_zone.as_deref(), Some("UTC"));
    assert_eq!(header.max_jobs, Some(5_000));
    assert_eq!(header.max_procs, Some(stats.procs));
    assert_eq!(header.max_nodes, Some(stats.nodes));
    assert!(stats.procs >= 32 && stats.nodes * 32 >= stats.procs);
    assert!(header.problems.is_empty(), "{:?}", header.problems);
    let keys: Vec<&str> = header.pairs.iter().map(|(k, _)| k.as_str()).collect();
    for key in [
        "StartTime",
        "EndTime",
        "MaxRuntime",
        "MaxPartitions",
        "Preemption",
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    assert_eq!(jobs.len(), 5_000);
    assert_eq!(stats.jobs, 5_000);
    let numbers: Vec<u32> = jobs.iter().map(|j| j.job).collect();
    assert_eq!(numbers, (1..=5_000).collect::<Vec<u32>>());
    let span = 28 * 86_400;
    assert!(
        jobs.windows(2).all(|w| w[0].submit <= w[1].submit),
        "sorted by submit"
    );
    assert!(jobs.iter().all(|j| (0..span).contains(&j.submit)));
    for j in &jobs {
        let max = stats.procs as u32;
        assert!(j.req_procs.is_some_and(|p| (1..=max).contains(&p)), "{j:?}");
        assert!(
            j.alloc_procs.is_none_or(|p| p == j.req_procs.unwrap_or(0)),
            "{j:?}"
        );
        let (run, limit) = (j.run.unwrap_or(-1), j.req_time.unwrap_or(-1));
        assert!(run >= 0 && limit >= 60 && run <= limit + 60, "{j:?}");
        assert!(j.wait.is_some_and(|w| w >= 0), "{j:?}");
        assert!(j.user.is_some_and(|u| (1..=100).contains(&u)), "{j:?}");
        assert!(j.group.is_some_and(|g| (1..=20).contains(&g)), "{j:?}");
        assert!(j.partition.is_some_and(|p| (1..=3).contains(&p)), "{j:?}");
        assert!(
            matches!(
                j.status,
                Status::Completed | Status::Failed | Status::Cancelled
            ),
            "{j:?}"
        );
        // A job cancelled while queued ran nowhere.
        if j.status == Status::Cancelled && run == 0 {
            assert_eq!(
                (j.alloc_procs, j.avg_cpu, j.used_mem_kb),
                (None, None, None)
            );
        }
    }
}

fn share(n: usize, of: usize) -> f64 {
    n as f64 / of as f64
}

#[test]
fn the_workload_looks_like_a_real_clusters() {
    let cfg = config(40_000, 11);
    let (text, stats) = generate(&cfg);
    let (_, jobs) = read_back(&text);
    let n = jobs.len();
    // States: mostly completed, some failed, some cancelled (a few while queued).
    let count = |s: Status| jobs.iter().filter(|j| j.status == s).count();
    let completed = share(count(Status::Completed), n);
    let failed = share(count(Status::Failed), n);
    let cancelled = share(count(Status::Cancelled), n);
    assert!((0.7..0.9).contains(&completed), "completed {completed}");
    assert!((0.06..0.16).contains(&failed), "failed {failed}");
    assert!((0.05..0.12).contains(&cancelled), "cancelled {cancelled}");
    let queued_cancels = jobs.iter().filter(|j| j.alloc_procs.is_none()).count();
    assert!((0.02..0.06).contains(&share(queued_cancels, n)));
    assert_eq!(
        (stats.completed + stats.failed + stats.cancelled) as usize,
        n
    );

    // Sizes: heavy-tailed, powers of two favoured, serial jobs common, big ones present.
    let sizes: Vec<u32> = jobs.iter().filter_map(|j| j.req_procs).collect();
    let pow2 = sizes.iter().filter(|s| s.is_power_of_two()).count();
    assert!(share(pow2, n) > 0.75, "powers of two {}", share(pow2, n));
    let serial = sizes.iter().filter(|&&s| s == 1).count();
    assert!(share(serial, n) > 0.1, "serial {}", share(serial, n));
    let big = sizes.iter().filter(|&&s| s >= 256).count();
    assert!(big > 0 && share(big, n) < 0.1, "big {big}");

    // Users: Zipf-like, user 1 busiest, a long tail.
    let mut per_user: HashMap<u32, usize> = HashMap::new();
    for j in &jobs {
        *per_user.entry(j.user.unwrap_or(0)).or_default() += 1;
    }
    let mut counts: Vec<usize> = per_user.values().copied().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(
        per_user.get(&1).copied(),
        Some(counts[0]),
        "user 1 is the busiest"
    );
    assert!(
        share(counts[0], n) > 0.1,
        "top user {}",
        share(counts[0], n)
    );
    assert!(counts[0] > 20 * counts[counts.len() / 2], "{counts:?}");
    assert!(per_user.len() > 80, "most users submit something");

    // Submissions: busy working hours, quiet nights and weekends.
    let hour = |j: &SwfJob| ((START + j.submit) / 3600 % 24) as usize;
    let day = |j: &SwfJob| ((START + j.submit) / 86_400 + 4) % 7;
    let in_hours = |from: usize, to: usize| {
        jobs.iter()
            .filter(|j| (from..to).contains(&hour(j)))
            .count()
    };
    assert!(in_hours(10, 16) > 3 * in_hours(1, 7), "diurnal");
    let weekend = jobs.iter().filter(|j| matches!(day(j), 0 | 6)).count();
    let weekday_rate = share(n - weekend, 5);
    let weekend_rate = share(weekend, 2);
    assert!(
        weekday_rate > 1.5 * weekend_rate,
        "{weekday_rate} vs {weekend_rate}"
    );

    // Run times: log-normal fractions of the limits; a few hit the limit.
    let ran: Vec<&SwfJob> = jobs
        .iter()
        .filter(|j| j.status == Status::Completed)
        .collect();
    let mut fractions: Vec<f64> = ran
        .iter()
        .map(|j| j.run.unwrap_or(0) as f64 / j.req_time.unwrap_or(1) as f64)
        .collect();
    fractions.sort_by(f64::total_cmp);
    let median = fractions[fractions.len() / 2];
    assert!((0.15..0.5).contains(&median), "median fraction {median}");
    assert!(
        fractions[fractions.len() / 20] < 0.1,
        "a tail of short runs"
    );
    let at_limit = jobs
        .iter()
        .filter(|j| j.run.unwrap_or(0) >= j.req_time.unwrap_or(i64::MAX))
        .count();
    assert!((0.03..0.08).contains(&share(at_limit, n)), "{at_limit}");
    let distinct_limits: std::collections::BTreeSet<i64> =
        jobs.iter().filter_map(|j| j.req_time).collect();
    assert!(distinct_limits.len() >= 6, "{distinct_limits:?}");

    // The machine is sized for the workload: busy on average, not over-full.
    let cpu_secs: f64 = jobs
        .iter()
        .map(|j| j.alloc_procs.unwrap_or(0) as f64 * j.run.unwrap_or(0) as f64)
        .sum();
    assert_eq!(cpu_secs, stats.cpu_secs);
    let utilization = stats.utilization(cfg.days);
    assert!(
        (0.3..0.9).contains(&utilization),
        "utilization {utilization}"
    );
}

#[test]
fn a_small_machine_gets_shorter_jobs_not_an_overfull_trace() {
    let cfg = GenConfig {
        procs: Some(64),
        ..config(20_000, 5)
    };
    let (text, stats) = generate(&cfg);
    let (header, jobs) = read_back(&text);
    assert_eq!((header.max_procs, header.max_nodes), (Some(64), Some(2)));
    assert!(stats.scale < 1.0, "scale {}", stats.scale);
    assert!(jobs.iter().all(|j| j.req_procs.is_some_and(|p| p <= 64)));
    let utilization = stats.utilization(cfg.days);
    assert!(
        (0.3..0.9).contains(&utilization),
        "utilization {utilization}"
    );
}
