//! A hold or a new dependency at the origin, in-process against a REAL accounting daemon: the
//! job is withdrawn at the dbd before `scontrol` is answered, so a sibling's start lock in
//! flight is void (its commit refused) and its copy revoked; a job a sibling started first
//! cannot be held ("Job is no longer pending execution").

use crate::fed_support;
use crate::runtime_support;

use fed_support::{Dbd, Member};
use sluice_vocab::JobState;
use sluice_wire::client::FedArbiterClient;
use sluice_wire::proto::{
    CommitStartRequest, ControlJobRequest, EnvVar, JobAction, StartLockRequest, UpdateJobRequest,
};

fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// Clusters a and b with their nodes down (neither starts anything itself), and a job of a
/// pending with copies on both.
async fn offered(name: &str) -> (tempfile::TempDir, Dbd, Member, Member, u32) {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    let a = Member::start(dir.path(), "a", dbd.port, false).await;
    let b = Member::start(dir.path(), "b", dbd.port, false).await;
    let job = a.submit(runtime_support::job(name)).await;
    dbd.wait_job(job, "offered to both", |j| j.active == ["a", "b"])
        .await;
    b.wait_job(job, "a copy on b", |j| {
        j.is_some_and(|j| j.state == JobState::Pending.stored())
    })
    .await;
    (dir, dbd, a, b, job)
}

/// b's start lock on `job`, taken at the dbd as b's controller would.
async fn lock_as_b(arbiter: &mut FedArbiterClient, job: u32) -> u64 {
    let lock = arbiter
        .acquire_start_lock(StartLockRequest {
            cluster: "b".into(),
            job_id: job,
            lease_secs: 30,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(lock.granted, "{lock:?}");
    lock.token
}

async fn commit_as_b(arbiter: &mut FedArbiterClient, job: u32, token: u64) -> bool {
    arbiter
        .commit_start(CommitStartRequest {
            cluster: "b".into(),
            job_id: job,
            token,
        })
        .await
        .unwrap()
        .into_inner()
        .started
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hold_voids_a_siblings_start_lock_in_flight() {
    let (_dir, dbd, a, b, job) = offered("held").await;
    let mut arbiter = dbd.arbiter().await;
    let token = lock_as_b(&mut arbiter, job).await;
    let mut c = a.client(uid()).await;
    let reply = c
        .control_job(ControlJobRequest {
            action: JobAction::Hold.into(),
            jobs: vec![job.to_string()],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    // Withdrawn before the hold was answered: b's commit is refused, its copy revoked.
    let info = dbd.job(job).await;
    assert_eq!((info.held, info.active), (true, vec!["a".to_string()]));
    assert!(!commit_as_b(&mut arbiter, job, token).await);
    b.wait_job(job, "b's copy revoked", |j| j.is_none()).await;
    a.wait_job(job, "held on a", |j| {
        j.is_some_and(|j| j.state == JobState::Pending.stored() && j.reason.starts_with("JobHeld"))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_dependency_voids_a_siblings_start_lock_in_flight() {
    let (_dir, dbd, a, _b, job) = offered("then").await;
    let first = a.submit(runtime_support::job("first")).await;
    let mut arbiter = dbd.arbiter().await;
    let token = lock_as_b(&mut arbiter, job).await;
    let mut c = a.client(uid()).await;
    let reply = c
        .update_job(UpdateJobRequest {
            jobs: vec![job.to_string()],
            settings: vec![EnvVar {
                name: "Dependency".into(),
                value: format!("afterok:{first}"),
            }],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.errors.is_empty(), "{:?}", reply.errors);
    assert!(dbd.job(job).await.held, "withdrawn before the answer");
    assert!(!commit_as_b(&mut arbiter, job, token).await);
    a.wait_job(job, "dependent on a", |j| {
        j.is_some_and(|j| j.dependency.contains(&first.to_string()))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_a_sibling_started_first_cannot_be_held() {
    let (_dir, dbd, a, _b, job) = offered("gone").await;
    let mut arbiter = dbd.arbiter().await;
    let token = lock_as_b(&mut arbiter, job).await;
    assert!(commit_as_b(&mut arbiter, job, token).await);
    let mut c = a.client(uid()).await;
    let reply = c
        .control_job(ControlJobRequest {
            action: JobAction::Hold.into(),
            jobs: vec![job.to_string()],
        })
        .await
        .unwrap()
        .into_inner();
    let texts: Vec<&str> = reply.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(texts, ["Job is no longer pending execution"]);
    let info = dbd.job(job).await;
    assert!(!info.held && info.winner == "b", "{info:?}");
}
