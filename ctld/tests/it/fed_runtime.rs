//! The federation client in-process against a REAL accounting daemon: controllers register
//! and learn their federation; a federated job starts on exactly one cluster and is revoked on
//! the others; a start lock held by a dead controller lapses and another cluster starts the
//! job; a restarted controller resumes its event log (nothing lost, nothing twice); fedstates
//! INACTIVE and DRAIN.

use crate::fed_support;
use crate::runtime_support;

use fed_support::{Dbd, Member, desc, next_launch};
use sluice_vocab::{FedState, JobState};
use sluice_wire::proto::{FedSubmitRequest, StartLockRequest};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_federated_job_runs_on_exactly_one_cluster_and_is_revoked_on_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b", "c"]).await;
    let mut a = Member::start(dir.path(), "a", dbd.port, true).await;
    let mut b = Member::start(dir.path(), "b", dbd.port, true).await;
    let mut c = Member::start(dir.path(), "c", dbd.port, true).await;
    let view = a
        .wait_view("all siblings known", |v| v.siblings.len() == 2)
        .await;
    assert_eq!(view.self_.as_ref().map(|s| s.fed_id), Some(1));

    // Three jobs for three one-node clusters whose jobs never end: each starts once.
    let mut ids = Vec::new();
    for n in 0..3 {
        let id = a
            .try_submit(runtime_support::job(&format!("f{n}")))
            .await
            .unwrap();
        assert_eq!(id >> 26, 1, "a federated id with a's fed id");
        ids.push(id);
    }
    let mut launches = Vec::new();
    for _ in 0..3 {
        launches.push(next_launch(&mut [&mut a, &mut b, &mut c]).await);
    }
    let mut launched: Vec<u32> = launches.iter().map(|l| l.1).collect();
    launched.sort_unstable();
    assert_eq!(launched, ids, "each job launched once: {launches:?}");
    let names = ["a", "b", "c"];
    for &(who, id) in &launches {
        let info = dbd
            .wait_job(id, "started", |j| j.winner == names[who])
            .await;
        assert_eq!(info.active, [names[who].to_string()]);
    }
    // Every other copy is revoked: gone from the siblings, the origin's a REVOKED tracker.
    for &(who, id) in &launches {
        for (i, m) in [&a, &b, &c].into_iter().enumerate() {
            if i == who {
                m.wait_job(id, "running here", |j| {
                    j.is_some_and(|j| j.state == JobState::Running.stored())
                })
                .await;
            } else if i == 0 {
                m.wait_job(id, "origin tracker", |j| {
                    j.is_some_and(|j| {
                        j.state == JobState::Revoked.stored() && j.fed_running_on == names[who]
                    })
                })
                .await;
            } else {
                m.wait_job(id, "revoked copy gone", |j| j.is_none()).await;
            }
        }
    }
    // Nothing else was launched anywhere.
    for m in [&mut a, &mut b, &mut c] {
        assert!(m.launched_now().is_empty(), "{} launched again", m.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lock_held_by_a_dead_controller_lapses_and_another_cluster_starts_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    // Cluster a's controller submits the job and takes the start lock, then is gone.
    let job = (1 << 26) | 5;
    let mut arbiter = dbd.arbiter().await;
    arbiter
        .submit_fed_job(FedSubmitRequest {
            cluster: "a".into(),
            job_id: job,
            desc: desc("orphan"),
            ..FedSubmitRequest::default()
        })
        .await
        .unwrap();
    let lock = arbiter
        .acquire_start_lock(StartLockRequest {
            cluster: "a".into(),
            job_id: job,
            lease_secs: 2,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(lock.granted);
    let mut b = Member::start(dir.path(), "b", dbd.port, true).await;
    let (_, launched) = next_launch(&mut [&mut b]).await;
    assert_eq!(launched, job);
    let info = dbd.wait_job(job, "started on b", |j| j.winner == "b").await;
    assert_eq!(info.lock_cluster, "b");
    // The dead holder's token is void: its commit is refused.
    let late = arbiter
        .commit_start(sluice_wire::proto::CommitStartRequest {
            cluster: "a".into(),
            job_id: job,
            token: lock.token,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!late.started);
    assert!(b.launched_now().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restarted_controller_resumes_its_event_log_without_loss_or_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    // b's node never registers: its copies stay pending.
    let mut b = Member::start(dir.path(), "b", dbd.port, false).await;
    let mut arbiter = dbd.arbiter().await;
    let id = |local: u32| (1 << 26) | local;
    let offer = |local: u32| FedSubmitRequest {
        cluster: "a".into(),
        job_id: id(local),
        desc: desc(&format!("j{local}")),
        clusters: "b".into(),
        ..FedSubmitRequest::default()
    };
    for local in 1..=3 {
        arbiter.submit_fed_job(offer(local)).await.unwrap();
    }
    for local in 1..=3 {
        b.wait_job(id(local), "copy offered", |j| {
            j.is_some_and(|j| j.state == JobState::Pending.stored() && j.fed_origin == "a")
        })
        .await;
    }
    b.stop().await;
    // While b is down: two more offers and a cancel.
    for local in 4..=5 {
        arbiter.submit_fed_job(offer(local)).await.unwrap();
    }
    arbiter
        .cancel_fed_job(sluice_wire::proto::FedCancelRequest {
            cluster: "a".into(),
            job_id: id(2),
            requester_uid: None,
        })
        .await
        .unwrap();
    let cdir = dir.path().join("b");
    b.restart(&cdir, false).await;
    for local in [1, 3, 4, 5] {
        b.wait_job(id(local), "pending copy", |j| {
            j.is_some_and(|j| j.state == JobState::Pending.stored())
        })
        .await;
    }
    b.wait_job(id(2), "cancelled", |j| {
        j.is_some_and(|j| j.state == JobState::Cancelled.stored())
    })
    .await;
    // Exactly one copy of each (nothing replayed twice).
    let mut c = b.client(0).await;
    let all = c
        .list_jobs(sluice_wire::proto::ListJobsRequest {
            include_finished: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .jobs;
    let mut seen: Vec<u32> = all.iter().map(|j| j.job_id).collect();
    seen.sort_unstable();
    assert_eq!(seen, (1..=5).map(id).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn inactive_and_drain_refuse_submissions_and_drain_runs_what_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    let mut a = Member::start(dir.path(), "a", dbd.port, false).await;
    // A job for a only, waiting for a's node.
    let mut req = runtime_support::job("mine");
    req.clusters = vec!["a".into()];
    let job = a.try_submit(req).await.unwrap();
    a.wait_job(job, "pending", |j| {
        j.is_some_and(|j| j.state == JobState::Pending.stored() && j.fed_viable == ["a"])
    })
    .await;

    dbd.set_fed_state("a", FedState::Inactive.stored());
    a.wait_view("INACTIVE", |v| {
        v.self_
            .as_ref()
            .is_some_and(|s| s.fed_state_name == "INACTIVE")
    })
    .await;
    let refused = a
        .try_submit(runtime_support::job("late"))
        .await
        .unwrap_err();
    assert_eq!(refused.message(), "System submissions disabled");
    a.node_up().await;

    dbd.set_fed_state("a", FedState::Drain.stored());
    a.wait_view("DRAIN", |v| {
        v.self_
            .as_ref()
            .is_some_and(|s| s.fed_state_name == "DRAIN")
    })
    .await;
    let refused = a
        .try_submit(runtime_support::job("late"))
        .await
        .unwrap_err();
    assert_eq!(refused.message(), "System submissions disabled");
    // DRAIN runs what it has.
    let (_, launched) = next_launch(&mut [&mut a]).await;
    assert_eq!(launched, job);
    let mut c = a.client(0).await;
    runtime_support::exited(&mut c, "n1", job, 0).await;
    dbd.wait_job(job, "ended", |j| {
        j.phase == i32::from(sluice_wire::proto::FedPhase::Ended)
    })
    .await;
    // Nothing federated left: the dbd settles it DRAINED.
    a.wait_view("DRAINED", |v| {
        v.self_
            .as_ref()
            .is_some_and(|s| s.fed_state_name == "DRAINED")
    })
    .await;
}
