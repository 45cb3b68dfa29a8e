//! The controller over a store that fails to commit (disk full, read-only, I/O error): writes
//! are refused at once with Slurm's error, reads answer, nothing refused is ever applied, and
//! the next write after the fault clears just works.

use crate::runtime_support;

use runtime_support::*;
use sluice_ctld::core::{AcctRecord, Core, SaveHint};
use sluice_ctld::runtime::STORE_FAILED;
use sluice_ctld::runtime::persist::StateSink;
use sluice_ctld::store::{Snapshot, StateStore};
use sluice_wire::proto::ListJobsRequest;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The real store, whose commits fail while `fail` is set (and whose reads fail too while
/// `unreadable` is), logging each job of a successful commit.
struct Gate {
    inner: StateStore,
    fail: Arc<AtomicBool>,
    unreadable: Arc<AtomicBool>,
    failed: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<String>>>,
}

impl StateSink for Gate {
    fn commit(
        &mut self,
        core: &Core,
        saves: &[SaveHint],
        acct: &[AcctRecord],
    ) -> Result<(), String> {
        if self.fail.load(Ordering::SeqCst) {
            self.failed.fetch_add(1, Ordering::SeqCst);
            return Err("database or disk is full (test)".into());
        }
        StateSink::commit(&mut self.inner, core, saves, acct)?;
        let mut log = self.log.lock().unwrap();
        for s in saves {
            if let SaveHint::Job(id) = s {
                log.push(format!("commit {}", core.job(*id).map_or("?", |j| &j.name)));
            }
        }
        Ok(())
    }

    fn load(&self) -> Result<Snapshot, String> {
        if self.unreadable.load(Ordering::SeqCst) {
            return Err("disk I/O error (test)".into());
        }
        StateSink::load(&self.inner)
    }
}

struct Faulty {
    ctld: Ctld,
    fail: Arc<AtomicBool>,
    unreadable: Arc<AtomicBool>,
    failed: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<String>>>,
    events: tokio::sync::mpsc::UnboundedReceiver<NodeEvent>,
}

async fn faulty_ctld() -> (tempfile::TempDir, Faulty) {
    let (dir, state) = temp();
    let (ports, events) = fake_nodes(&["n1"]).await;
    let conf = conf(dir.path(), &conf_text(&state, 1, ""));
    std::fs::create_dir_all(&state).unwrap();
    let fail = Arc::new(AtomicBool::new(false));
    let unreadable = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(AtomicUsize::new(0));
    let log = Arc::new(Mutex::new(Vec::new()));
    let gate = Gate {
        inner: StateStore::open(&state).unwrap(),
        fail: fail.clone(),
        unreadable: unreadable.clone(),
        failed: failed.clone(),
        log: log.clone(),
    };
    let ctld = Ctld::start(conf, Some(Box::new(gate))).await;
    let mut admin = client(ctld.port, 0).await;
    register(&mut admin, "n1", ports[0], vec![]).await;
    let f = Faulty {
        ctld,
        fail,
        unreadable,
        failed,
        log,
        events,
    };
    (dir, f)
}

/// The next batch launch a node was sent (signals skipped); its job id.
async fn next_launch(events: &mut tokio::sync::mpsc::UnboundedReceiver<NodeEvent>) -> u32 {
    loop {
        if let NodeEvent::Launch { req, .. } = next_event(events).await {
            return req.job_id;
        }
    }
}

async fn job_names(c: &mut sluice_wire::client::CtldClient) -> Result<Vec<String>, tonic::Status> {
    let jobs = c
        .list_jobs(ListJobsRequest {
            include_finished: true,
            ..Default::default()
        })
        .await?
        .into_inner()
        .jobs;
    Ok(jobs.into_iter().map(|j| j.name).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_the_store_cannot_commit_is_refused_at_once_and_never_runs() {
    let (_dir, mut f) = faulty_ctld().await;
    let mut user = client(f.ctld.port, 4242).await;
    let first = user
        .submit(job("before"))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    assert_eq!(next_launch(&mut f.events).await, first);
    // It ends, so the node is free for what comes after the fault.
    let mut admin = client(f.ctld.port, 0).await;
    exited(&mut admin, "n1", first, 0).await;

    f.fail.store(true, Ordering::SeqCst);
    // Refused in bounded time (well within any MessageTimeout), with Slurm's words.
    let refused = tokio::time::timeout(WAIT, user.submit(job("refused")))
        .await
        .expect("answered while the store fails")
        .expect_err("the store could not commit it");
    assert_eq!(refused.message(), STORE_FAILED);
    assert_eq!(refused.code(), tonic::Code::Internal);
    assert!(f.failed.load(Ordering::SeqCst) >= 1);
    // Reads answer during the fault, from durable state only.
    assert_eq!(job_names(&mut user).await.unwrap(), ["before"]);
    // More refusals, still prompt.
    for _ in 0..3 {
        let e = user.submit(job("refused")).await.unwrap_err();
        assert_eq!(e.message(), STORE_FAILED);
    }

    f.fail.store(false, Ordering::SeqCst);
    let after = user.submit(job("after")).await.unwrap().into_inner().job_id;
    assert_eq!(
        next_launch(&mut f.events).await,
        after,
        "only the job accepted after the fault runs"
    );
    assert_eq!(job_names(&mut user).await.unwrap(), ["before", "after"]);
    let log = f.log.lock().unwrap().clone();
    assert!(
        !log.iter().any(|l| l.contains("refused")),
        "a refused job was committed: {log:?}"
    );
    let more = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        next_launch(&mut f.events),
    );
    assert!(more.await.is_err(), "nothing else was launched");
    f.ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_cannot_be_read_back_refuses_everything_until_it_can() {
    let (_dir, mut f) = faulty_ctld().await;
    let mut user = client(f.ctld.port, 4242).await;
    f.fail.store(true, Ordering::SeqCst);
    f.unreadable.store(true, Ordering::SeqCst);
    let e = user.submit(job("refused")).await.unwrap_err();
    assert_eq!(e.message(), STORE_FAILED);
    // The core may hold what the store does not: even reads are refused, not answered from it.
    let e = job_names(&mut user).await.unwrap_err();
    assert_eq!(e.message(), STORE_FAILED);

    f.unreadable.store(false, Ordering::SeqCst);
    f.fail.store(false, Ordering::SeqCst);
    assert_eq!(job_names(&mut user).await.unwrap(), Vec::<String>::new());
    let id = user.submit(job("after")).await.unwrap().into_inner().job_id;
    assert_eq!(next_launch(&mut f.events).await, id);
    let log = f.log.lock().unwrap().clone();
    assert!(
        !log.is_empty() && log.iter().all(|l| l == "commit after"),
        "{log:?}"
    );
    f.ctld.stop().await;
}
