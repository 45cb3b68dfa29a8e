//! Acting on federated jobs from any cluster, in-process against a REAL accounting daemon:
//! cancel from a sibling cancels every pending copy; `scancel --sibling` withdraws one copy
//! (refused once started); `scontrol update clusters=` drops a sibling; a requeue asked on the
//! origin is done by the cluster running the job, which runs it again.

use crate::fed_support;
use crate::runtime_support;

use fed_support::{Dbd, Member, next_launch};
use sluice_vocab::JobState;
use sluice_wire::proto::{
    CancelRequest, ControlJobRequest, EnvVar, FedPhase, JobAction, UpdateJobRequest,
};

fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

fn pending(j: Option<&sluice_wire::proto::JobInfo>) -> bool {
    j.is_some_and(|j| j.state == JobState::Pending.stored())
}

/// Clusters a and b, nodes down, and a job submitted to a with copies on both.
async fn two_pending() -> (tempfile::TempDir, Dbd, Member, Member, u32) {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    let a = Member::start(dir.path(), "a", dbd.port, false).await;
    let b = Member::start(dir.path(), "b", dbd.port, false).await;
    let job = a.submit(runtime_support::job("twin")).await;
    b.wait_job(job, "copy on b", pending).await;
    a.wait_job(job, "pending on a", |j| {
        j.is_some_and(|j| j.state == JobState::Pending.stored() && j.fed_active == ["a", "b"])
    })
    .await;
    (dir, dbd, a, b, job)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_from_a_sibling_cancels_every_pending_copy() {
    let (_dir, dbd, a, b, job) = two_pending().await;
    let mut c = b.client(uid()).await;
    let reply = c
        .cancel(CancelRequest {
            job_ids: vec![job],
            ..CancelRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((reply.cancelled, reply.errors), (vec![job], vec![]));
    let cancelled = |j: Option<&sluice_wire::proto::JobInfo>| {
        j.is_some_and(|j| j.state == JobState::Cancelled.stored())
    };
    b.wait_job(job, "cancelled on b", cancelled).await;
    a.wait_job(job, "cancelled on the origin", cancelled).await;
    let info = dbd.job(job).await;
    assert_eq!(info.phase, i32::from(FedPhase::Cancelled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scancel_sibling_withdraws_one_copy_and_is_refused_once_started() {
    let (_dir, dbd, mut a, b, job) = two_pending().await;
    let mut c = a.client(uid()).await;
    let reply = c
        .cancel(CancelRequest {
            job_ids: vec![job],
            sibling: "b".into(),
            ..CancelRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    b.wait_job(job, "b's copy withdrawn", |j| j.is_none()).await;
    let info = dbd.job(job).await;
    assert_eq!(info.active, ["a"]);
    assert_eq!(info.viable, ["a", "b"], "viable unchanged");
    a.wait_job(job, "still pending on a", pending).await;

    a.node_up().await;
    let (_, launched) = next_launch(&mut [&mut a]).await;
    assert_eq!(launched, job);
    dbd.wait_job(job, "started", |j| j.winner == "a").await;
    let reply = c
        .cancel(CancelRequest {
            job_ids: vec![job],
            sibling: "a".into(),
            ..CancelRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    let texts: Vec<&str> = reply.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(texts, ["Job is no longer pending execution"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn updating_the_clusters_of_a_pending_job_revokes_the_dropped_sibling() {
    let (_dir, dbd, a, b, job) = two_pending().await;
    let mut c = b.client(uid()).await;
    // Asked on b (not the origin): the dbd records it and b's own copy goes.
    let reply = c
        .update_job(UpdateJobRequest {
            jobs: vec![job.to_string()],
            settings: vec![EnvVar {
                name: "Clusters".into(),
                value: "a".into(),
            }],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    b.wait_job(job, "b's copy revoked", |j| j.is_none()).await;
    let info = dbd.job(job).await;
    assert_eq!(
        (info.viable, info.active),
        (vec!["a".into()], vec!["a".into()])
    );
    a.wait_job(job, "origin still pending", pending).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_requeue_asked_on_the_origin_is_done_where_the_job_runs() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    let a = Member::start(dir.path(), "a", dbd.port, false).await;
    let mut b = Member::start(dir.path(), "b", dbd.port, true).await;
    let job = a.submit(runtime_support::job("moving")).await;
    let (_, launched) = next_launch(&mut [&mut b]).await;
    assert_eq!(launched, job);
    a.wait_job(job, "tracked on a", |j| {
        j.is_some_and(|j| j.state == JobState::Revoked.stored() && j.fed_running_on == "b")
    })
    .await;
    let mut c = a.client(uid()).await;
    let reply = c
        .control_job(ControlJobRequest {
            action: JobAction::Requeue.into(),
            jobs: vec![job.to_string()],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    // b kills the run; its node reports the end; the job is offered again and runs again.
    b.wait_job(job, "killed on b", |j| {
        j.is_some_and(|j| j.state == JobState::Completing.stored())
    })
    .await;
    let mut cb = b.client(0).await;
    runtime_support::exited(&mut cb, "n1", job, 0).await;
    let (_, again) = next_launch(&mut [&mut b]).await;
    assert_eq!(again, job);
    dbd.wait_job(job, "started again", |j| {
        j.phase == i32::from(FedPhase::Started) && j.winner == "b"
    })
    .await;
    // A pending job cannot be requeued.
    let pending_job = a.submit(runtime_support::job("waiting")).await;
    let reply = c
        .control_job(ControlJobRequest {
            action: JobAction::Requeue.into(),
            jobs: vec![pending_job.to_string()],
        })
        .await
        .unwrap()
        .into_inner();
    let texts: Vec<&str> = reply.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(texts, ["Job is pending execution"]);
}
