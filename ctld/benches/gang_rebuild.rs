//! Gang timeslice benchmark: one timeslice (every partition's active row rebuilt, running
//! jobs suspended and suspended ones resumed) for a partition of 10,000 nodes holding 1,000
//! gang jobs, four jobs on every resource. Target: under 20 ms in a release build. Run with
//! `cargo bench -p sluice-ctld --bench gang_rebuild`; prints the median of several runs for
//! whole nodes (`select/linear`), counted CPUs (`CR_CPU_Memory`) and cores (`CR_Core`).

use sluice_ctld::core::gang::timeslice;
use sluice_ctld::core::{AcctRecord, NodeCommand, Outbox, SaveHint, SubmitRequest, on_submit};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use std::time::{Duration, Instant};

const NODES: u32 = 10_000;
const JOBS: u32 = 1_000;
/// Nodes per job: 1,000 jobs of 40 nodes put 4 jobs on each node.
const JOB_NODES: u32 = 40;
const RUNS: usize = 21;

/// Drops everything: the figure is the core's work, not the recording of commands.
struct NullOutbox;

impl Outbox for NullOutbox {
    fn node(&mut self, _: NodeCommand) {}
    fn accounting(&mut self, _: AcctRecord) {}
    fn save(&mut self, _: SaveHint) {}
}

/// The partition with every job started (each past the first on a resource suspended).
fn loaded(select: &[&str], tasks_per_node: Option<u32>) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .nodes(&format!("n[1-{NODES}]"), "CPUs=32 RealMemory=128000")
        .partition(
            "gang",
            "Nodes=ALL Default=YES MaxTime=UNLIMITED OverSubscribe=FORCE:4",
        )
        .conf("PreemptMode=GANG")
        .conf("SlurmdTimeout=0")
        .conf(&format!("MaxJobCount={}", JOBS + 10))
        .job_ids(1, JOBS + 10);
    for line in select {
        b = b.conf(line);
    }
    let mut fx = b.build();
    fx.register_all();
    for i in 0..JOBS {
        let mut req = SubmitRequest::new(1000 + i % 50, "gang").nodes(JOB_NODES);
        req.ntasks = tasks_per_node.map(|t| t * JOB_NODES);
        if let Err(e) = on_submit(&mut fx.core, &mut NullOutbox, fx.now, req) {
            panic!("bench submit failed: {e}");
        }
    }
    let stats = sluice_ctld::core::schedule(&mut fx.core, &mut NullOutbox, fx.now);
    assert_eq!(stats.started, JOBS, "every job is co-allocated");
    fx
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn bench(label: &str, select: &[&str], tasks_per_node: Option<u32>) {
    let mut fx = loaded(select, tasks_per_node);
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        fx.advance(30);
        let t = Instant::now();
        let rotated = timeslice(&mut fx.core, &mut NullOutbox, fx.now);
        times.push(t.elapsed());
        assert_eq!(rotated, 1, "the partition has suspended jobs to rotate");
    }
    let running = fx
        .core
        .jobs()
        .filter(|j| j.state == sluice_vocab::JobState::Running)
        .count();
    println!(
        "gang timeslice, {NODES} nodes, {JOBS} jobs, {label}: median {:.2} ms over {RUNS} runs \
         ({running} running after the last)",
        median(times).as_secs_f64() * 1e3
    );
}

fn main() {
    bench("select/linear", &[], None);
    bench(
        "CR_CPU_Memory",
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "DefMemPerCPU=1000",
        ],
        Some(16),
    );
    bench(
        "CR_Core",
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
        ],
        Some(16),
    );
}
