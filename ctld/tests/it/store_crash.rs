//! Crashes: a controller process killed with SIGKILL in the middle of a workload, and a store
//! dropped without being closed, lose no committed change, and the state and the accounting
//! outbox stay consistent with each other.

use crate::store_util;

use prost::Message;
use rusqlite::Connection;
use sluice_ctld::store::StateStore;
use sluice_vocab::JobState;
use sluice_wire::proto::AcctRecord;
use sluice_wire::proto::acct_record::Kind;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use store_util::{cluster, commit, job, restore};

const CHILD_DIR: &str = "SLUICE_STORE_CRASH_DIR";

/// Not a test on its own: the workload of the child process [`killed_mid_workload`] kills.
/// Prints `committed <n>` after each durable commit.
#[test]
#[ignore = "run as a child process by killed_mid_workload"]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let mut store = StateStore::open(std::path::Path::new(&dir)).unwrap();
    let mut fx = cluster();
    let mut running = std::collections::VecDeque::new();
    for n in 0..1_000_000u32 {
        let id = fx.submit(job("w")).unwrap();
        fx.schedule();
        if fx.state(id) == JobState::Running {
            running.push_back(id);
        }
        if running.len() > 4 {
            let done = running.pop_front().unwrap();
            fx.exit(done, (n % 2) as i32).unwrap();
        }
        commit(&mut store, &mut fx);
        println!("committed {n}");
    }
}

#[test]
fn killed_mid_workload() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store_crash::crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut committed = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("committed ") {
            committed = n.trim().parse::<u32>().ok();
            if committed >= Some(300) {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let committed = committed.expect("the child committed");

    let store = StateStore::open(dir.path()).unwrap();
    let snap = store.load().unwrap();
    // Every commit reported before the kill is there (and maybe a few after).
    assert!(
        snap.jobs.len() as u32 > committed,
        "{} jobs",
        snap.jobs.len()
    );
    let records = outbox(&StateStore::file(dir.path()));
    let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    // State and outbox come from the same transactions: they tell the same story.
    let submitted: BTreeSet<u32> = ids(&records, |k| match k {
        Kind::JobSubmitted(s) => Some(s.job_id),
        _ => None,
    });
    let started = ids(&records, |k| match k {
        Kind::JobStarted(s) => Some(s.job_id),
        _ => None,
    });
    let ended = ids(&records, |k| match k {
        Kind::JobEnded(s) => Some(s.job_id),
        _ => None,
    });
    let saved: BTreeSet<u32> = snap.jobs.iter().map(|j| j.id).collect();
    assert_eq!(submitted, saved);
    for j in &snap.jobs {
        let st = JobState::from_stored(j.state).unwrap();
        assert_eq!(
            started.contains(&j.id),
            st != JobState::Pending,
            "job {}",
            j.id
        );
        assert_eq!(ended.contains(&j.id), st.is_finished(), "job {}", j.id);
    }
    // The restored controller carries on without reissuing an id or rerunning a job.
    drop(store);
    let mut back = restore(dir.path(), store_util::cluster().now);
    let running_before: Vec<_> = running(&back);
    assert_eq!(running_before.len(), 4, "{running_before:?}");
    let fresh = back.submit(job("after")).unwrap();
    assert!(saved.iter().all(|id| fresh.get() > *id));
    back.schedule();
    assert!(back.out.launched().iter().all(|id| *id == fresh));
}

#[test]
fn a_store_dropped_without_closing_keeps_its_commits() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    let mut ids = Vec::new();
    for _ in 0..20 {
        ids.push(fx.submit(job("x")).unwrap());
        fx.schedule();
        commit(&mut store, &mut fx);
    }
    // No close, no checkpoint: the connection is leaked as a killed process would leave it.
    std::mem::forget(store);
    let back = restore(dir.path(), fx.now);
    for id in ids {
        assert_eq!(back.state(id), fx.state(id), "job {id}");
    }
    assert_eq!(running(&back).len(), 8);
}

fn running(fx: &sluice_ctld::testkit::CoreFixture) -> Vec<u32> {
    fx.core
        .jobs()
        .filter(|j| j.state == JobState::Running)
        .map(|j| j.id.get())
        .collect()
}

fn outbox(path: &std::path::Path) -> Vec<AcctRecord> {
    let db = Connection::open(path).unwrap();
    let mut stmt = db
        .prepare("SELECT record FROM acct_outbox ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|b| AcctRecord::decode(b.unwrap().as_slice()).unwrap())
        .collect()
}

fn ids(records: &[AcctRecord], pick: impl Fn(&Kind) -> Option<u32>) -> BTreeSet<u32> {
    records
        .iter()
        .filter_map(|r| r.kind.as_ref().and_then(&pick))
        .collect()
}
