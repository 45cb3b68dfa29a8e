//! Group commit: many concurrent submissions share commits, every one is answered with its
//! own id, and every answered one is in the store.
//!
//! Also the submission throughput figure: `SLUICE_SUBMITS=20000 cargo test --release -p
//! sluice-ctld --test runtime_load -- --nocapture` prints Submit RPCs/s over 16 streams.

use crate::runtime_support;

use runtime_support::*;
use sluice_ctld::core::{AcctRecord, Core, SaveHint};
use sluice_ctld::runtime::persist::StateSink;
use sluice_ctld::store::StateStore;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting {
    inner: StateStore,
    commits: Arc<AtomicUsize>,
}

impl StateSink for Counting {
    fn commit(
        &mut self,
        core: &Core,
        saves: &[SaveHint],
        acct: &[AcctRecord],
    ) -> Result<(), String> {
        self.commits.fetch_add(1, Ordering::SeqCst);
        StateSink::commit(&mut self.inner, core, saves, acct)
    }

    fn load(&self) -> Result<sluice_ctld::store::Snapshot, String> {
        StateSink::load(&self.inner)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_submissions_share_commits_and_all_are_durable() {
    let total: usize = std::env::var("SLUICE_SUBMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    const STREAMS: usize = 16;
    let (dir, state) = temp();
    let text = conf_text(&state, 1, &format!("MaxJobCount={}\n", total + 10));
    let conf = conf(dir.path(), &text);
    std::fs::create_dir_all(&state).unwrap();
    let commits = Arc::new(AtomicUsize::new(0));
    let sink = Counting {
        inner: StateStore::open(&state).unwrap(),
        commits: commits.clone(),
    };
    let ctld = Ctld::start(conf, Some(Box::new(sink))).await;
    let mut clients = Vec::new();
    for _ in 0..STREAMS {
        clients.push(client(ctld.port, 4242).await);
    }
    let before = commits.load(Ordering::SeqCst);
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for (i, c) in clients.into_iter().enumerate() {
        let n = total / STREAMS + usize::from(i < total % STREAMS);
        tasks.push(tokio::spawn(async move {
            // Each stream keeps many requests in flight, as many sbatch processes would.
            let mut inflight = tokio::task::JoinSet::new();
            for k in 0..n {
                let mut c = c.clone();
                inflight.spawn(async move { c.submit(job(&format!("j{k}"))).await });
            }
            let mut ids = Vec::new();
            while let Some(r) = inflight.join_next().await {
                ids.push(r.unwrap().unwrap().into_inner().job_id);
            }
            ids
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    let secs = started.elapsed().as_secs_f64();
    let used = commits.load(Ordering::SeqCst) - before;
    eprintln!(
        "{total} Submit RPCs over {STREAMS} streams in {secs:.2} s: {:.0}/s, {used} commits",
        total as f64 / secs
    );
    let distinct: HashSet<u32> = ids.iter().copied().collect();
    assert_eq!((ids.len(), distinct.len()), (total, total));
    assert!(
        used < total,
        "{used} commits for {total} submissions: no group commit"
    );
    ctld.stop().await;

    let snap = StateStore::open(&state).unwrap().load().unwrap();
    let saved: HashSet<u32> = snap.jobs.iter().map(|j| j.id).collect();
    assert!(
        distinct.is_subset(&saved),
        "an acknowledged job is not in the store"
    );
}
