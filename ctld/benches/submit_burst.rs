//! Submission-burst benchmark: the core's work for `sluice bench ctld --only rate` (5,000 held
//! jobs arriving in batches of 64, a scheduling pass after each batch), once with the whole
//! pass after every batch and once with the pass over each batch's new jobs
//! (`schedule_fresh`, what the runtime runs after submissions). Run with
//! `cargo bench -p sluice-ctld --bench submit_burst [-- whole|fresh]`; prints medians. Under
//! `valgrind --tool=callgrind` give one mode to count its instructions.

use sluice_ctld::core::{
    AcctRecord, NodeCommand, Outbox, SaveHint, SubmitRequest, on_submit, schedule, schedule_fresh,
};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use std::time::{Duration, Instant};

const JOBS: u32 = 5_000;
const BATCH: u32 = 64;
const RUNS: usize = 5;

struct NullOutbox;

impl Outbox for NullOutbox {
    fn node(&mut self, _: NodeCommand) {}
    fn accounting(&mut self, _: AcctRecord) {}
    fn save(&mut self, _: SaveHint) {}
}

/// The bench's cluster: 4 nodes of 64 CPUs, CPUs allocated one by one.
fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=64")
        .partition("debug", "Nodes=ALL Default=YES")
        .conf("SelectType=select/cons_tres")
        .conf("SelectTypeParameters=CR_CPU")
        .conf("MaxJobCount=1000000")
        .conf("SlurmdTimeout=0")
        .build();
    fx.register_all();
    fx
}

/// Submits the burst, a pass after each batch; returns the time taken.
fn burst(fresh: bool) -> Duration {
    let mut fx = cluster();
    let started = Instant::now();
    let mut sent = 0;
    while sent < JOBS {
        for _ in 0..BATCH.min(JOBS - sent) {
            let req = SubmitRequest::new(1000, "held").held();
            if let Err(e) = on_submit(&mut fx.core, &mut NullOutbox, fx.now, req) {
                panic!("bench submit failed: {e}");
            }
            sent += 1;
        }
        if fresh {
            schedule_fresh(&mut fx.core, &mut NullOutbox, fx.now);
        } else {
            schedule(&mut fx.core, &mut NullOutbox, fx.now);
        }
    }
    started.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mode = std::env::args()
        .skip(1)
        .find(|a| a == "whole" || a == "fresh");
    for (name, fresh) in [("whole", false), ("fresh", true)] {
        if mode.as_deref().is_some_and(|m| m != name) {
            continue;
        }
        let runs = if mode.is_some() { 1 } else { RUNS };
        let took = median((0..runs).map(|_| burst(fresh)).collect());
        println!(
            "{JOBS} held jobs in batches of {BATCH}, {name} pass after each: {:.1} ms ({:.0} jobs/s of core time)",
            took.as_secs_f64() * 1000.0,
            f64::from(JOBS) / took.as_secs_f64()
        );
    }
}
