//! State-store commit throughput: group commits of 100 jobs, as the runtime makes them under a
//! submission burst. Two workloads: submissions only (one job row and one record per job), and
//! whole lifecycles (submit, start, end: three saves and three records per job); and, for
//! comparison, one commit per submission. Run with
//! `cargo bench -p sluice-ctld --bench store_commit`; prints jobs/s, records/s and commits/s.
//! First it times the encoding of one submitted job's records (its snapshot and launch spec)
//! in the store's format and in the JSON it replaced.

use sluice_ctld::core::snapshot::JobSnap;
use sluice_ctld::core::{LaunchSpec, SubmitRequest};
use sluice_ctld::store::{StateStore, codec};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use std::time::Instant;

fn fixture() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-200]", "CPUs=64 RealMemory=256000")
        .partition("batch", "Nodes=ALL Default=YES")
        .conf("MinJobAge=100000")
        .conf("MaxJobCount=100000")
        .build();
    fx.register_all();
    fx
}

fn request(i: u32) -> SubmitRequest {
    let mut req = SubmitRequest::new(1000, &format!("job{i}"));
    req.launch = LaunchSpec {
        script: "#!/bin/sh\nsrun hostname\nsleep 1\n".into(),
        workdir: "/home/alice/project".into(),
        env: (0..20)
            .map(|k| (format!("VAR{k}"), format!("value{k}")))
            .collect(),
        user: "alice".into(),
        ..LaunchSpec::default()
    };
    req
}

fn run(label: &str, lifecycle: bool, jobs: u32, group: u32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = StateStore::open(dir.path()).expect("open");
    let mut fx = fixture();
    let (mut records, mut commits) = (0usize, 0u32);
    let mut busy = std::time::Duration::ZERO;
    for g in 0..jobs / group {
        let mut ids = Vec::new();
        for i in 0..group {
            ids.push(fx.submit(request(g * group + i)).expect("submit"));
        }
        if lifecycle {
            fx.schedule();
            for id in ids {
                fx.exit(id, 0).expect("exit");
            }
        }
        let out = fx.out.take();
        records += out.acct.len();
        let t = Instant::now();
        store
            .commit(&fx.core, &out.saves, &out.acct)
            .expect("commit");
        busy += t.elapsed();
        commits += 1;
    }
    let secs = busy.as_secs_f64();
    println!(
        "{label}: {jobs} jobs in {commits} commits of {group}: {:.0} jobs/s, {:.0} records/s, \
         {:.0} commits/s ({:.2} ms per commit)",
        f64::from(jobs) / secs,
        records as f64 / secs,
        f64::from(commits) / secs,
        secs * 1000.0 / f64::from(commits),
    );
}

/// Encodes every job's snapshot and launch spec `rounds` times with `encode`; prints the time
/// per job and the bytes.
fn encode_cost(label: &str, snaps: &[JobSnap], rounds: u32, encode: impl Fn(&JobSnap) -> usize) {
    let t = Instant::now();
    let mut bytes = 0;
    for _ in 0..rounds {
        bytes = snaps.iter().map(&encode).sum::<usize>();
    }
    let per_job = t.elapsed().as_secs_f64() / f64::from(rounds) / snaps.len() as f64;
    println!(
        "encode {label}: {:.2} us per job (snapshot + launch spec), {} bytes per job",
        per_job * 1e6,
        bytes / snaps.len()
    );
}

fn encodings() {
    let mut fx = fixture();
    let ids: Vec<_> = (0..1000)
        .map(|i| fx.submit(request(i)).expect("submit"))
        .collect();
    let snaps: Vec<JobSnap> = ids
        .iter()
        .filter_map(|&id| fx.core.job(id).map(|j| JobSnap::of(&fx.core, j)))
        .collect();
    let json = |s: &JobSnap| {
        let a = serde_json::to_vec(s).expect("json");
        let b = serde_json::to_vec(s.launch.as_ref()).expect("json");
        a.len() + b.len()
    };
    let packed = |s: &JobSnap| {
        let a = codec::encode(s).expect("encode");
        let b = codec::encode(s.launch.as_ref()).expect("encode");
        a.len() + b.len()
    };
    for _ in 0..2 {
        encode_cost("json   ", &snaps, 20, json);
        encode_cost("msgpack", &snaps, 20, packed);
    }
}

fn main() {
    encodings();
    run("submissions", false, 20_000, 100);
    run("lifecycles ", true, 20_000, 100);
    run("submissions", false, 5_000, 1);
}
