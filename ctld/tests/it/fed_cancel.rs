//! `scancel` by filters and of arrays in a federation, in-process against a REAL accounting
//! daemon: filters select the matching federated jobs of every member — pending copies, a job
//! of another origin running on a third cluster, another member's array tasks — and each is
//! cancelled by id (an array task on its origin); a job the filters do not match is left alone. An array cancelled at its origin leaves
//! nothing pending at the dbd.

use crate::fed_support;
use crate::runtime_support;

use fed_support::{Dbd, Member, next_launch};
use sluice_vocab::JobState;
use sluice_wire::proto::{CancelRequest, FedPhase, JobInfo, SubmitJobRequest};

fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

fn in_state(state: JobState) -> impl Fn(Option<&JobInfo>) -> bool {
    move |j| j.is_some_and(|j| j.state == state.stored())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn filters_cancel_matching_federated_jobs_on_every_member() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b", "c"]).await;
    let a = Member::start(dir.path(), "a", dbd.port, false).await;
    let b = Member::start(dir.path(), "b", dbd.port, false).await;
    let mut c = Member::start(dir.path(), "c", dbd.port, true).await;
    a.wait_view("all siblings known", |v| v.siblings.len() == 2)
        .await;
    // b's job runs on c only: a never holds a copy of it.
    let far = b
        .submit(SubmitJobRequest {
            clusters: vec!["c".into()],
            ..runtime_support::job("far")
        })
        .await;
    let (_, launched) = next_launch(&mut [&mut c]).await;
    assert_eq!(launched, far);
    // b's array waits on b (its origin; b's node is down).
    let arr = b
        .submit(SubmitJobRequest {
            array: Some("1-2".into()),
            ..runtime_support::job("arr")
        })
        .await;
    // a's jobs wait everywhere (c's node is busy).
    let twin = a.submit(runtime_support::job("twin")).await;
    let keep = a.submit(runtime_support::job("keep")).await;
    for m in [&b, &c] {
        m.wait_job(twin, "a copy", in_state(JobState::Pending))
            .await;
        m.wait_job(keep, "a copy", in_state(JobState::Pending))
            .await;
    }

    // scancel -u <me> -n far,twin,arr on a.
    let mut ca = a.client(uid()).await;
    let reply = ca
        .cancel(CancelRequest {
            uids: vec![uid()],
            names: vec!["far".into(), "twin".into(), "arr".into()],
            ..CancelRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    let tasks: Vec<u32> = b.jobs(arr).await.iter().map(|j| j.job_id).collect();
    assert_eq!(tasks.len(), 2);
    let mut cancelled = reply.cancelled.clone();
    cancelled.sort_unstable();
    let mut want = vec![far, twin];
    want.extend(&tasks);
    want.sort_unstable();
    assert_eq!(cancelled, want);
    // The array's tasks are cancelled on b, its origin, and its record ends at the dbd.
    for t in &tasks {
        b.wait_job(*t, "task cancelled", in_state(JobState::Cancelled))
            .await;
    }
    dbd.wait_job(arr, "the array's record ended", |j| {
        j.phase == i32::from(FedPhase::Ended) && j.final_state == JobState::Cancelled.stored()
    })
    .await;

    // The pending job is cancelled on every copy and at the dbd.
    for m in [&a, &b, &c] {
        m.wait_job(twin, "cancelled", in_state(JobState::Cancelled))
            .await;
    }
    assert_eq!(dbd.job(twin).await.phase, i32::from(FedPhase::Cancelled));
    // Not matched: left alone everywhere (still waiting for c's node).
    for m in [&a, &b, &c] {
        m.wait_job(keep, "still pending", in_state(JobState::Pending))
            .await;
    }
    assert_eq!(dbd.job(keep).await.phase, i32::from(FedPhase::Pending));
    // The far job is killed where it runs; its end reaches the dbd and its origin.
    c.wait_job(far, "killed", in_state(JobState::Completing))
        .await;
    let mut cc = c.client(0).await;
    runtime_support::exited(&mut cc, "n1", far, 0).await;
    dbd.wait_job(far, "ended cancelled", |j| {
        j.phase == i32::from(FedPhase::Ended) && j.final_state == JobState::Cancelled.stored()
    })
    .await;
    b.wait_job(
        far,
        "the origin's tracker ends",
        in_state(JobState::Cancelled),
    )
    .await;
    // c's node is free again: the job left alone starts there.
    c.wait_job(keep, "runs on c", in_state(JobState::Running))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_array_cancelled_at_its_origin_leaves_nothing_pending_at_the_dbd() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    let mut a = Member::start(dir.path(), "a", dbd.port, true).await;
    let b = Member::start(dir.path(), "b", dbd.port, false).await;
    b.wait_view("a known", |v| v.siblings.len() == 1).await;
    let array = a
        .submit(SubmitJobRequest {
            array: Some("1-3".into()),
            ..runtime_support::job("arr")
        })
        .await;
    let (_, first) = next_launch(&mut [&mut a]).await;
    assert_eq!(first, array, "the first task runs");
    assert_eq!(dbd.job(array).await.phase, i32::from(FedPhase::Pending));
    // scancel <array> on the origin: every task ends; once the running one's processes are
    // gone, the array's record ends at the dbd.
    let mut ca = a.client(uid()).await;
    let reply = ca
        .cancel(CancelRequest {
            job_ids: vec![array],
            ..CancelRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    a.wait_job(array, "killed", in_state(JobState::Completing))
        .await;
    let killed: Vec<u32> = a
        .jobs(array)
        .await
        .iter()
        .filter(|j| j.state == JobState::Completing.stored())
        .map(|j| j.job_id)
        .collect();
    assert!(dbd.job(array).await.phase == i32::from(FedPhase::Pending));
    let mut admin = a.client(0).await;
    for task in killed {
        runtime_support::exited(&mut admin, "n1", task, 0).await;
    }
    let info = dbd
        .wait_job(array, "the array's record ended", |j| {
            j.phase == i32::from(FedPhase::Ended)
        })
        .await;
    assert_eq!(info.final_state, JobState::Cancelled.stored());
    // b never held a copy.
    b.wait_job(array, "no copy on b", |j| j.is_none()).await;
}
