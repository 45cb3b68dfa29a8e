//! TEMPORARY (helper E): controller-like ingest timing; deleted before hand-back.

mod common;

use std::time::Instant;

use common::jobs::*;
use common::{Kind, TestDb};
use sluice_dbd::store::*;
use sluice_schema::states::JobState;

fn stream(n: u32, lag: u32) -> Vec<RecordKind> {
    let mut kinds = Vec::new();
    for i in 1..=n + 2 * lag {
        if i <= n {
            kinds.push(submitted(i, 1_000 + i64::from(i)));
        }
        if i > lag && i - lag <= n {
            let j = i - lag;
            kinds.push(started(j, 0, 1_000 + i64::from(i)));
            kinds.push(step(j, -4, 1_000 + i64::from(i), 0, JobState::Running));
        }
        if i > 2 * lag {
            let j = i - 2 * lag;
            kinds.push(step(j, -4, 0, 1_000 + i64::from(i), JobState::Completed));
            kinds.push(ended(j, 0, 1_000 + i64::from(i), JobState::Completed, 0));
        }
    }
    kinds
}

fn bench(kind: Kind) {
    let n: u32 = std::env::var("E_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let db = TestDb::new(kind);
    let store = with_clusters(&db, &["c1"]);
    let records = numbered(1, stream(n, 250));
    let begin = Instant::now();
    for chunk in records.chunks(1_000) {
        store.record_batch("c1", 1, chunk).unwrap();
    }
    let secs = begin.elapsed().as_secs_f64();
    eprintln!(
        "{kind:?}: {n} jobs, {} records in {secs:.2} s: {:.0} jobs/s, {:.0} records/s",
        records.len(),
        f64::from(n) / secs,
        records.len() as f64 / secs
    );
}

#[test]
#[ignore]
fn e_sqlite() {
    bench(Kind::Sqlite);
}

#[test]
#[ignore]
fn e_mysql() {
    bench(Kind::Mysql);
}

#[test]
#[ignore]
fn e_postgres() {
    bench(Kind::Postgres);
}
