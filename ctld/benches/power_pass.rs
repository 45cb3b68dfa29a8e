//! Power-save pass benchmark over 100,000 cloud nodes (target: under 20 ms in a release
//! build). Three passes are timed, each on a fresh core:
//! - steady: every node powered down, nothing to do (the pass every tick makes);
//! - suspend: every node registered and idle past SuspendTime, SuspendRate=0: all of them
//!   start powering down in one pass (one SuspendProgram hostlist of 100,000 names);
//! - resume: 1,000 CONFIGURING jobs of 10 nodes each, ResumeRate=0: 10,000 nodes resumed in
//!   one pass with the resume file's 1,000 job entries.
//!
//! Run with `cargo bench -p sluice-ctld --bench power_pass`; prints medians of several runs.

use sluice_ctld::core::{
    NodeRegistration, RecordingOutbox, SubmitRequest, on_node_registered, on_power_tick, on_submit,
    schedule,
};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use std::time::{Duration, Instant};

const NODES: u32 = 100_000;
const RUNS: usize = 5;

fn cluster() -> CoreFixture {
    ClusterBuilder::new()
        .conf("SuspendTime=600")
        .conf("SuspendRate=0")
        .conf("ResumeRate=0")
        .conf("SuspendProgram=/usr/sbin/suspend")
        .conf("ResumeProgram=/usr/sbin/resume")
        .conf("SlurmdTimeout=0")
        .conf("MaxJobCount=100000")
        .nodes(
            &format!("ec[1-{NODES}]"),
            "CPUs=8 RealMemory=1000 State=CLOUD",
        )
        .partition("cloud", "Nodes=ALL Default=YES")
        .build()
}

fn time(fx: &mut CoreFixture) -> (Duration, RecordingOutbox) {
    let mut out = RecordingOutbox::default();
    let t = Instant::now();
    on_power_tick(&mut fx.core, &mut out, fx.now);
    (t.elapsed(), out)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn steady() -> Duration {
    let mut fx = cluster();
    let (d, out) = time(&mut fx);
    assert!(out.power_cmds.is_empty(), "nothing to do");
    d
}

fn suspend_all() -> Duration {
    let mut fx = cluster();
    let names: Vec<String> = fx.core.nodes().iter().map(|n| n.name.clone()).collect();
    let mut sink = RecordingOutbox::default();
    for name in names {
        let reg = NodeRegistration {
            name,
            cpus: 8,
            real_memory_mb: 1000,
            tmp_disk_mb: 0,
            boot_time: fx.now,
            jobs: Vec::new(),
            pid: 0,
            again: false,
        };
        on_node_registered(&mut fx.core, &mut sink, fx.now, reg).expect("registered");
    }
    fx.advance(601);
    let (d, out) = time(&mut fx);
    assert_eq!(out.power_cmds.len(), 1, "one SuspendProgram run");
    d
}

fn resume_burst() -> Duration {
    let mut fx = cluster();
    let mut sink = RecordingOutbox::default();
    for i in 0..1000 {
        let req = SubmitRequest::new(1000 + i % 50, "burst").nodes(10);
        on_submit(&mut fx.core, &mut sink, fx.now, req).expect("submitted");
    }
    let stats = schedule(&mut fx.core, &mut sink, fx.now);
    assert_eq!(stats.started, 1000);
    let (d, out) = time(&mut fx);
    assert_eq!(out.power_cmds.len(), 1, "one ResumeProgram run");
    d
}

fn report(name: &str, f: fn() -> Duration) {
    let runs: Vec<Duration> = (0..RUNS).map(|_| f()).collect();
    println!(
        "power pass, {NODES} cloud nodes, {name}: median {:.2} ms (runs: {:?})",
        median(runs.clone()).as_secs_f64() * 1000.0,
        runs.iter()
            .map(|d| format!("{:.2}", d.as_secs_f64() * 1000.0))
            .collect::<Vec<_>>()
    );
}

fn main() {
    report("steady (all powered down)", steady);
    report("suspend all (SuspendRate=0)", suspend_all);
    report("resume burst (1000 jobs x 10 nodes)", resume_burst);
}
