//! A request whose caller gave up (the future dropped, as the server drops the call of a
//! client that timed out or hung up) before the core took it is not applied.

use crate::runtime_support;

use runtime_support::*;
use sluice_ctld::core::{SubmitRequest, on_submit};
use sluice_ctld::runtime::{self, RuntimeConfig};

/// A runtime on one node in a temporary state directory (kept while the guard lives).
fn started() -> (tempfile::TempDir, runtime::Runtime) {
    let (dir, state) = temp();
    let cfg = RuntimeConfig {
        conf: conf(dir.path(), &conf_text(&state, 1, "")),
        key: key(),
        ctld_addr: "127.0.0.1:6817".into(),
    };
    (dir, runtime::start(cfg).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_withdrawn_before_the_core_took_it_is_not_applied() {
    let (_dir, rt) = started();
    let core = rt.handle();
    let submit = |name: &'static str| {
        let core = core.clone();
        async move {
            core.call(move |cx| {
                on_submit(cx.core, cx.out, cx.now, SubmitRequest::new(1000, name))
                    .map(|r| r.job_id.get())
            })
            .await
            .unwrap()
        }
    };
    let first = submit("first").await.unwrap();

    // The core is busy with another request until released.
    let (held_tx, held_rx) = tokio::sync::oneshot::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let busy = tokio::spawn({
        let core = core.clone();
        async move {
            core.call(move |_| {
                let _ = held_tx.send(());
                let _ = release_rx.recv();
            })
            .await
        }
    });
    held_rx.await.unwrap();
    // A submission is queued for the core, then its caller gives up.
    let mut withdrawn = Box::pin(submit("withdrawn"));
    let polled = tokio::time::timeout(std::time::Duration::ZERO, &mut withdrawn).await;
    assert!(polled.is_err(), "the core was busy: the submission waited");
    drop(withdrawn);
    release_tx.send(()).unwrap();
    busy.await.unwrap().unwrap();

    let next = submit("next").await.unwrap();
    assert_eq!(next, first + 1, "the withdrawn submission took no job id");
    let names = core
        .query(|cx| {
            let mut names: Vec<String> = cx.core.jobs().map(|j| j.name.clone()).collect();
            names.sort();
            names
        })
        .await
        .unwrap();
    assert_eq!(names, ["first", "next"]);
    rt.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_the_core_takes_too_close_to_its_clients_deadline_is_not_applied() {
    use sluice_wire::deadline;
    use std::time::{Duration, SystemTime};
    let (_dir, rt) = started();
    let core = rt.handle();
    let submit = |name: &'static str, deadline: Option<SystemTime>| {
        let core = core.clone();
        deadline::scope(deadline, async move {
            core.call(move |cx| {
                on_submit(cx.core, cx.out, cx.now, SubmitRequest::new(1000, name))
                    .map(|r| r.job_id.get())
            })
            .await
        })
    };
    // The client waited 5 s and sent it 4.5 s ago (the controller was stopped meanwhile):
    // half a second is not enough to commit and answer, so it is not applied.
    let late = SystemTime::now() + Duration::from_millis(500);
    assert_eq!(
        submit("late", Some(late)).await.unwrap_err(),
        runtime::CallError::Late
    );
    let early = SystemTime::now() + Duration::from_secs(5);
    submit("in time", Some(early)).await.unwrap().unwrap();
    submit("no deadline", None).await.unwrap().unwrap();
    let names = core
        .query(|cx| {
            let mut names: Vec<String> = cx.core.jobs().map(|j| j.name.clone()).collect();
            names.sort();
            names
        })
        .await
        .unwrap();
    assert_eq!(names, ["in time", "no deadline"]);
    rt.shutdown().await;
}
