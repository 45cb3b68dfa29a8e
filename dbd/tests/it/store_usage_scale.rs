//! Scale of the usage rollups. `rolling_an_hour_of_ten_thousand_jobs` runs on every backend
//! and prints how long rolling one hour of 10,000 jobs takes (tests never assert on wall
//! time; the figure goes in the notes). `a_year_of_history` is a benchmark (ignored by
//! default): `SLUICE_USAGE_JOBS` jobs (default 1,000,000) over a year on SQLite, then the
//! month reports, with the database's size per job:
//! `cargo test --release -p sluice-dbd --test store_usage_scale -- --ignored --nocapture`.

use crate::common;
use crate::usage_support;

per_backend!(rolling_an_hour_of_ten_thousand_jobs);

use std::time::Instant;

use sluice_dbd::store::usage::UsageQuery;
use sluice_reports::Tres;

use common::jobs::with_clusters;
use common::{Kind, TestDb};
use usage_support::*;

/// A small deterministic generator (the benchmark needs no statistics, only variety).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

const ACCOUNTS: [&str; 4] = ["a0", "a1", "a2", "a3"];

/// Sends `count` jobs eligible from `from` spaced `spacing` seconds apart, in batches of
/// 999 records; returns their total allocated CPU-seconds inside `[window.0, window.1)`.
fn feed_jobs(
    feed: &mut Feed,
    first_id: u32,
    count: u32,
    from: i64,
    spacing: f64,
    window: (i64, i64),
    users: u64,
) -> u64 {
    let mut rng = Lcg(u64::from(first_id));
    let mut batch = Vec::with_capacity(999);
    let mut in_window = 0;
    for i in 0..count {
        let id = first_id + i;
        let eligible = from + (f64::from(i) * spacing) as i64;
        let start = eligible + rng.next(600) as i64;
        let end = start + 60 + rng.next(3_600) as i64;
        let cpus = 1 + rng.next(16) as u32;
        let user = rng.next(users);
        let name = format!("u{user}");
        let job = Job::new(id, "", ACCOUNTS[(user % 4) as usize], eligible, cpus, 1);
        let mut records = job.ran(start, end);
        // Users by number: the builder's names are static.
        if let sluice_dbd::store::RecordKind::JobSubmitted(s) = &mut records[0] {
            s.user = name;
        }
        let lo = start.max(window.0);
        let hi = end.min(window.1);
        if hi > lo {
            in_window += u64::from(cpus) * (hi - lo) as u64;
        }
        batch.extend(records);
        if batch.len() >= 999 {
            feed.send(std::mem::take(&mut batch));
        }
    }
    if !batch.is_empty() {
        feed.send(batch);
    }
    in_window
}

mod cases {
    use super::*;

    pub fn rolling_an_hour_of_ten_thousand_jobs(db: &TestDb) {
        let store = with_clusters(db, &["c1"]);
        let mut feed = Feed::new(&store, "c1");
        feed.send(vec![capacity(DAY0, 200_000, 1_000)]);
        // 10,000 jobs eligible during hour 5, each running up to an hour.
        let hour = (at(5, 0), at(6, 0));
        let alloc = feed_jobs(&mut feed, 1, 10_000, hour.0, 0.36, hour, 8);
        // Everything before hour 5 first (nothing but capacity), then the hour on its own.
        roll(&store, hour.0);
        let started = Instant::now();
        assert_eq!(roll(&store, hour.1), 1);
        let took = started.elapsed();
        eprintln!("{:?}: rolled one hour of 10,000 jobs in {took:?}", db.kind);
        let u = usage(&store, "c1", Tres::Cpu, hour, hour.1, "hour");
        assert_eq!(u.alloc, alloc);
        assert_eq!(u.total, 200_000 * 3_600);
    }
}

#[test]
#[ignore = "benchmark: a year of history; run with --ignored --nocapture"]
fn a_year_of_history() {
    let jobs: u32 = std::env::var("SLUICE_USAGE_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let db = TestDb::new(Kind::Sqlite);
    let store = with_clusters(&db, &["c1"]);
    let mut feed = Feed::new(&store, "c1");
    let year = 365 * DAY;
    let from = DAY0 - year;
    feed.send(vec![capacity(from, 20_000, 500)]);
    let started = Instant::now();
    feed_jobs(
        &mut feed,
        1,
        jobs,
        from,
        year as f64 / f64::from(jobs),
        (0, 1),
        2_000,
    );
    let ingest = started.elapsed();
    eprintln!(
        "ingested {jobs} jobs ({} records) in {ingest:?}: {:.0} records/s",
        3 * u64::from(jobs),
        3.0 * f64::from(jobs) / ingest.as_secs_f64()
    );
    let started = Instant::now();
    let hours = roll(&store, DAY0 + 60);
    eprintln!("rolled {hours} hours (a year) in {:?}", started.elapsed());
    let october = (DAY0 - 31 * DAY, DAY0);
    let now = DAY0 + 60;
    for _ in 0..2 {
        let t = Instant::now();
        let u = usage(&store, "c1", Tres::Cpu, october, now, "month");
        eprintln!(
            "cluster utilization for a month: {:?} (alloc {} of {})",
            t.elapsed(),
            u.alloc,
            u.total
        );
        let t = Instant::now();
        let q = UsageQuery {
            start: october.0,
            end: october.1,
            ..Default::default()
        };
        let r = store.assoc_utilization(&utc(), &q, now).unwrap();
        eprintln!(
            "association usage for a month (TopUsage's data): {:?}, {} rows",
            t.elapsed(),
            r.rows.len()
        );
    }
    drop(feed);
    drop(store);
    let dir = db.url.trim_start_matches("sqlite://");
    let bytes: u64 = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(format!("{dir}{suffix}")).ok())
        .map(|m| m.len())
        .sum();
    eprintln!(
        "database: {bytes} bytes, {:.0} bytes per job",
        bytes as f64 / f64::from(jobs)
    );
}
