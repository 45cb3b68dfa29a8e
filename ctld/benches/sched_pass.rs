//! Scheduling-pass benchmark: one pass over 10,000 nodes and 100,000 pending jobs (target:
//! under 100 ms in a release build), and the memory of a core with 16,384 nodes and 100,000
//! jobs. Run with `cargo bench -p sluice-ctld`; prints medians of several runs.

use sluice_ctld::core::{AcctRecord, NodeCommand, Outbox, SaveHint, SubmitRequest, on_submit};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use std::time::{Duration, Instant};

const RUNS: usize = 5;

/// Drops everything, so the memory figure counts the core only.
struct NullOutbox;

impl Outbox for NullOutbox {
    fn node(&mut self, _: NodeCommand) {}
    fn accounting(&mut self, _: AcctRecord) {}
    fn save(&mut self, _: SaveHint) {}
}

/// A cluster of `nodes` nodes in two weight classes, one with a feature, holding `jobs`
/// pending jobs of mixed sizes and time limits.
fn loaded(nodes: u32, jobs: u32) -> CoreFixture {
    let mut fx = cluster(nodes, jobs);
    for i in 0..jobs {
        if let Err(e) = on_submit(&mut fx.core, &mut NullOutbox, fx.now, request(i)) {
            panic!("bench submit failed: {e}");
        }
    }
    fx
}

fn request(i: u32) -> SubmitRequest {
    let mut req = SubmitRequest::new(1000 + i % 50, "bench")
        .nodes(1 + u32::from(i.is_multiple_of(7)) * 3)
        .minutes(10 + i % 600);
    if i.is_multiple_of(5) {
        req = req.partition("bigmem").mem_mb(200_000);
    }
    if i.is_multiple_of(11) {
        req = req.constraint("big");
    }
    req
}

fn cluster(nodes: u32, jobs: u32) -> CoreFixture {
    let half = nodes / 2;
    let mut fx = ClusterBuilder::new()
        .nodes(
            &format!("a[1-{half}]"),
            "CPUs=32 RealMemory=128000 Weight=1",
        )
        .nodes(
            &format!("b[1-{}]", nodes - half),
            "CPUs=64 RealMemory=256000 Weight=10 Feature=big",
        )
        .partition("batch", "Nodes=ALL Default=YES MaxTime=UNLIMITED")
        .partition(
            "bigmem",
            &format!("Nodes=b[1-{}] MaxTime=2-00:00:00", nodes - half),
        )
        .conf(&format!("MaxJobCount={}", jobs + 1000))
        .conf("SlurmdTimeout=0")
        .job_ids(1, jobs + 1000)
        .build();
    fx.register_all();
    fx
}

/// Half the cluster busy with short jobs, then a job wider than what is free heads the
/// queue: the FIFO pass blocks at once and backfill plans around it for 500 candidates.
fn backfill_heavy(nodes: u32, jobs: u32) -> CoreFixture {
    let mut fx = cluster(nodes, jobs + nodes);
    for i in 0..nodes / 2 {
        let req = SubmitRequest::new(1, "busy")
            .partition("batch")
            .minutes(30 + i % 60);
        if let Err(e) = on_submit(&mut fx.core, &mut NullOutbox, fx.now, req) {
            panic!("bench submit failed: {e}");
        }
    }
    fx.schedule();
    fx.out.take();
    fx.advance(1);
    let wide = SubmitRequest::new(2, "wide")
        .nodes(nodes * 3 / 4)
        .minutes(60);
    if let Err(e) = on_submit(&mut fx.core, &mut NullOutbox, fx.now, wide) {
        panic!("bench submit failed: {e}");
    }
    for i in 0..jobs {
        if let Err(e) = on_submit(
            &mut fx.core,
            &mut NullOutbox,
            fx.now,
            request(i).partition("batch").mem_mb(0),
        ) {
            panic!("bench submit failed: {e}");
        }
    }
    fx
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let (mut first, mut steady, mut later, mut heavy) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut stats = Vec::new();
    for _ in 0..RUNS {
        let mut fx = loaded(10_000, 100_000);
        let t = Instant::now();
        let s1 = fx.schedule();
        first.push(t.elapsed());
        fx.out.take();
        let t = Instant::now();
        let s2 = fx.schedule();
        steady.push(t.elapsed());
        // Some jobs end; the next pass refills the freed nodes.
        let done: Vec<_> = fx
            .core
            .jobs()
            .filter(|j| j.state == sluice_vocab::JobState::Running)
            .map(|j| j.id)
            .take(500)
            .collect();
        fx.advance(60);
        for id in done {
            let _ = fx.exit(id, 0);
        }
        let t = Instant::now();
        let s3 = fx.schedule();
        later.push(t.elapsed());
        let mut fx = backfill_heavy(10_000, 100_000);
        let t = Instant::now();
        let s4 = fx.schedule();
        heavy.push(t.elapsed());
        stats.push((s1, s2, s3, s4));
    }
    let (s1, s2, s3, s4) = stats[0];
    println!("sched_pass: 10000 nodes, 100000 pending jobs, median of {RUNS} runs");
    println!(
        "  first pass (empty cluster):    {:>8.2?}  started {} backfilled {} considered {}",
        median(first),
        s1.started,
        s1.backfilled,
        s1.considered
    );
    println!(
        "  next pass (cluster full):      {:>8.2?}  started {} backfilled {} considered {}",
        median(steady),
        s2.started,
        s2.backfilled,
        s2.considered
    );
    println!(
        "  pass after 500 jobs ended:     {:>8.2?}  started {} backfilled {} considered {}",
        median(later),
        s3.started,
        s3.backfilled,
        s3.considered
    );
    println!(
        "  wide job blocks, backfill:     {:>8.2?}  started {} backfilled {} considered {}",
        median(heavy),
        s4.started,
        s4.backfilled,
        s4.considered
    );

    let before = rss_kb();
    let fx = loaded(16_384, 100_000);
    let after = rss_kb();
    match (before, after) {
        (Some(b), Some(a)) => println!(
            "memory: core with {} nodes and {} jobs: {:.1} MB resident (process {:.1} MB)",
            fx.core.nodes().len(),
            fx.core.job_count(),
            a.saturating_sub(b) as f64 / 1024.0,
            a as f64 / 1024.0
        ),
        _ => println!("memory: /proc/self/status not readable"),
    }
}
