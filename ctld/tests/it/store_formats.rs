//! A state directory written by an older controller still loads. `tests/fixtures/state-json`
//! was written by the controller of before MessagePack records (every job, node and launch
//! spec as JSON, schema version 2) with the [`store_util::every_state`] workload;
//! `expected.json` beside it holds what that controller's core had.

use crate::store_util::{self, commit, jobs_of, restore};
use rusqlite::Connection;
use sluice_ctld::core::snapshot::{JobSnap, NodeSnap};
use sluice_ctld::core::{Caller, CancelRequest, JobRef, LaunchSpec, SimTime, on_cancel};
use sluice_ctld::store::{StateStore, codec};
use sluice_vocab::FedJobId;
use std::path::Path;

#[derive(serde::Deserialize)]
struct Expected {
    now: u64,
    jobs: Vec<JobSnap>,
    launches: Vec<(u32, LaunchSpec)>,
    nodes: Vec<NodeSnap>,
}

/// A copy of the fixture's state directory, and what it holds.
fn old_state() -> (tempfile::TempDir, Expected) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/state-json");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        std::fs::copy(&path, dir.path().join(name)).unwrap();
    }
    let text = std::fs::read_to_string(fixture.join("expected.json")).unwrap();
    (dir, serde_json::from_str(&text).unwrap())
}

/// The distinct record formats of `table`.
fn formats(dir: &Path, table: &str) -> Vec<u32> {
    let conn = Connection::open(StateStore::file(dir)).unwrap();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT DISTINCT format FROM {table} ORDER BY format"
        ))
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn without_launch(mut jobs: Vec<JobSnap>) -> Vec<JobSnap> {
    for j in &mut jobs {
        j.launch = Default::default();
    }
    jobs
}

#[test]
fn a_json_state_directory_loads_and_goes_on_in_the_new_format() {
    let (dir, expect) = old_state();
    assert_eq!(formats(dir.path(), "jobs"), [codec::JSON]);
    let mut fx = restore(dir.path(), SimTime::from_secs(expect.now));
    let jobs = jobs_of(&fx.core);
    assert_eq!(without_launch(jobs.clone()), expect.jobs);
    let launches: Vec<(u32, LaunchSpec)> = jobs
        .iter()
        .map(|j| (j.id, j.launch.as_ref().clone()))
        .collect();
    assert_eq!(launches, expect.launches);
    let nodes: Vec<NodeSnap> = fx.core.nodes().iter().map(NodeSnap::of).collect();
    assert_eq!(nodes, expect.nodes);
    // The migrated store says its old launch specs are JSON.
    assert_eq!(formats(dir.path(), "launch"), [codec::JSON]);

    // Work goes on: a new job, and an old one cancelled, are saved in the new format.
    let mut store = StateStore::open(dir.path()).unwrap();
    fx.submit(store_util::job("new")).unwrap();
    let held = expect
        .jobs
        .iter()
        .find(|j| j.name == "hu")
        .expect("held job");
    let req = CancelRequest {
        job: JobRef::Job(FedJobId::from_raw(held.id).unwrap()),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, Caller::admin(), req).unwrap();
    commit(&mut store, &mut fx);
    drop(store);
    assert_eq!(formats(dir.path(), "jobs"), [codec::JSON, codec::MSGPACK]);
    assert_eq!(formats(dir.path(), "launch"), [codec::JSON, codec::MSGPACK]);
    // Both formats side by side load back to the same core.
    let again = restore(dir.path(), fx.now);
    assert_eq!(jobs_of(&again.core), jobs_of(&fx.core));
}

#[test]
fn a_record_in_an_unknown_format_is_reported_not_guessed() {
    let (dir, _) = old_state();
    let conn = Connection::open(StateStore::file(dir.path())).unwrap();
    conn.execute(
        "UPDATE jobs SET format = 7 WHERE id = (SELECT MIN(id) FROM jobs)",
        [],
    )
    .unwrap();
    drop(conn);
    let store = StateStore::open(dir.path()).unwrap();
    let err = store.load().unwrap_err().to_string();
    assert!(err.contains("unknown record format 7"), "{err}");
}
