//! A federated submission whose answer from the dbd is lost (the dbd recorded it, the origin
//! never heard), in-process against a REAL accounting daemon that drops the answers: the
//! origin asks again and the job is accepted once and runs once; with no answer at all, the
//! submitter is told it failed and the job is withdrawn everywhere, nothing offered or run;
//! while its withdrawal is unanswered, no command lists it or acts on it. A start whose answer
//! is lost (committed at the dbd, never heard of) runs once, on the cluster the dbd names.

use crate::fed_support;
use crate::runtime_support;

use fed_support::lossy::Loss;
use fed_support::{Dbd, Member, next_launch};
use sluice_testkit::eventually_seen;
use sluice_wire::deadline;
use sluice_wire::proto::{CancelRequest, ControlJobRequest, FedPhase, JobAction, ListJobsRequest};
use std::time::Duration;

const SUBMIT: &str = "/sluice.v1.FedArbiter/SubmitFedJob";
const WITHDRAW: &str = "/sluice.v1.FedArbiter/WithdrawFedSubmission";
const START: &str = "/sluice.v1.FedArbiter/StartFedJob";

fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// A dbd that loses what `loss` names, and members `a` and `b` that know each other.
async fn losing_federation(dir: &std::path::Path, loss: &Loss) -> (Dbd, Member, Member) {
    let dbd = Dbd::start_losing(dir, &["a", "b"], loss.clone()).await;
    let a = Member::start(dir, "a", dbd.port, true).await;
    let b = Member::start(dir, "b", dbd.port, true).await;
    a.wait_view("sibling known", |v| v.siblings.len() == 1)
        .await;
    (dbd, a, b)
}

/// Every event of `cluster`'s log at the dbd about `job`.
fn events_about(dbd: &Dbd, cluster: &str, job: u32) -> usize {
    let page = dbd.store.fed_events(cluster, 0, 100_000).unwrap();
    page.events
        .iter()
        .filter(|e| e.kind.job_id() == job)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_answer_is_asked_again_and_the_job_is_accepted_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let loss = Loss::first(SUBMIT, 1);
    let (dbd, mut a, mut b) = losing_federation(dir.path(), &loss).await;

    let id = a.try_submit(runtime_support::job("lost")).await.unwrap();
    assert_eq!(
        (loss.calls(), loss.left()),
        (2, 0),
        "recorded, answer lost, asked again"
    );
    let (who, launched) = next_launch(&mut [&mut a, &mut b]).await;
    assert_eq!(launched, id);
    let winner = ["a", "b"][who];
    let info = dbd
        .wait_job(id, "started", |j| j.phase == i32::from(FedPhase::Started))
        .await;
    assert_eq!((info.origin.as_str(), info.winner.as_str()), ("a", winner));
    assert!(a.launched_now().is_empty() && b.launched_now().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_start_whose_answer_was_lost_runs_once_where_the_dbd_committed_it() {
    let dir = tempfile::tempdir().unwrap();
    let loss = Loss::first(START, 1);
    let (dbd, mut a, mut b) = losing_federation(dir.path(), &loss).await;

    let id = a
        .try_submit(runtime_support::job("lost start"))
        .await
        .unwrap();
    // The first start that reached the dbd was committed; its cluster never heard so.
    let info = dbd
        .wait_job(id, "started", |j| j.phase == i32::from(FedPhase::Started))
        .await;
    assert_eq!(loss.left(), 0, "the committed start's answer was lost");
    // That cluster asks again and is answered `started`: it launches the job, nobody else.
    let (who, launched) = next_launch(&mut [&mut a, &mut b]).await;
    assert_eq!((["a", "b"][who], launched), (info.winner.as_str(), id));
    assert!(loss.calls() >= 2, "asked again: {} calls", loss.calls());
    let again = dbd.job(id).await;
    assert_eq!(
        (again.winner.as_str(), again.start_time),
        (info.winner.as_str(), info.start_time),
        "the repeat committed nothing new"
    );
    assert!(a.launched_now().is_empty() && b.launched_now().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_submission_never_answered_is_withdrawn_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let loss = Loss::first(SUBMIT, usize::MAX);
    let (dbd, mut a, mut b) = losing_federation(dir.path(), &loss).await;

    let refused = a
        .try_submit(runtime_support::job("never"))
        .await
        .unwrap_err();
    assert_eq!(refused.message(), "Unable to connect to database");
    assert!(loss.calls() >= 2, "asked again before giving up");
    // The dbd recorded it (held: the origin never offered it), then the withdrawal ended it.
    // The first id of a's lease (fed id 1): the submission the dbd recorded unanswered.
    let id = (1 << 26) | 1;
    let info = dbd
        .wait_job(id, "withdrawn", |j| {
            j.phase == i32::from(FedPhase::Cancelled)
        })
        .await;
    assert_eq!((info.origin.as_str(), info.winner.as_str()), ("a", ""));
    a.wait_job(id, "dropped at the origin", |j| j.is_none())
        .await;
    assert!(b.jobs(id).await.is_empty(), "b never held a copy");
    assert_eq!(events_about(&dbd, "b", id), 0, "nothing offered to b");
    assert!(a.launched_now().is_empty() && b.launched_now().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_answer_after_the_submitters_deadline_is_withdrawn_not_accepted() {
    let dir = tempfile::tempdir().unwrap();
    // The first two answers are lost: the third comes after two backoffs (0.2 s, then 0.4 s),
    // when less than `ANSWER_MARGIN` (1 s) is left of the 1.3 s the submitter waits.
    let loss = Loss::first(SUBMIT, 2);
    let (dbd, mut a, mut b) = losing_federation(dir.path(), &loss).await;
    let mut c = a.client(uid()).await;
    let answer = eventually_seen("job ids", async || {
        let mut req = tonic::Request::new(runtime_support::job("late"));
        let at = deadline::stamp(Duration::from_millis(1_300));
        req.metadata_mut()
            .insert(deadline::HEADER, at.parse().unwrap());
        match c.submit(req).await {
            Err(s) if s.code() == tonic::Code::ResourceExhausted => Err(s),
            other => Ok(other),
        }
    })
    .await;
    assert!(
        answer.is_err(),
        "accepted after its submitter gave up: {answer:?}"
    );
    assert_eq!(loss.calls(), 3, "recorded at the third try");
    // Recorded held, then withdrawn: offered to nobody, run nowhere.
    let id = (1 << 26) | 1;
    dbd.wait_job(id, "withdrawn", |j| {
        j.phase == i32::from(FedPhase::Cancelled)
    })
    .await;
    a.wait_job(id, "dropped at the origin", |j| j.is_none())
        .await;
    assert_eq!(events_about(&dbd, "b", id), 0, "nothing offered to b");
    assert!(a.launched_now().is_empty() && b.launched_now().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_submission_being_withdrawn_is_unknown_to_every_command() {
    let dir = tempfile::tempdir().unwrap();
    // Neither the submission's answer nor the withdrawal's reaches the origin: the job stays
    // held there, withdrawing, for as long as the test runs.
    let withdraw = Loss::first(WITHDRAW, usize::MAX);
    let loss = Loss::first(SUBMIT, usize::MAX).and(withdraw.clone());
    let dbd = Dbd::start_losing(dir.path(), &["a", "b"], loss).await;
    let a = Member::start(dir.path(), "a", dbd.port, true).await;
    a.wait_view("sibling known", |v| v.siblings.len() == 1)
        .await;

    let refused = a
        .try_submit(runtime_support::job("gone"))
        .await
        .unwrap_err();
    assert_eq!(refused.message(), "Unable to connect to database");
    let id = (1 << 26) | 1;
    sluice_testkit::eventually("a withdrawal sent", async || {
        (withdraw.calls() > 0).then_some(())
    })
    .await;
    // No answer reached the origin, so it still holds the job (dropped only on an answer).
    assert!(withdraw.left() > 0);

    // squeue and scontrol show job list nothing.
    assert!(a.jobs(id).await.is_empty(), "scontrol show job {id}");
    let mut c = a.client(uid()).await;
    let all = c
        .list_jobs(ListJobsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .jobs;
    assert!(all.is_empty(), "squeue: {all:?}");

    // scancel and scontrol by its id: unknown.
    let reply = c
        .cancel(CancelRequest {
            job_ids: vec![id],
            ..CancelRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.cancelled.is_empty());
    let messages: Vec<&str> = reply.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages, ["Invalid job id specified"]);
    let reply = c
        .control_job(ControlJobRequest {
            action: JobAction::Hold.into(),
            jobs: vec![id.to_string()],
        })
        .await
        .unwrap()
        .into_inner();
    let messages: Vec<&str> = reply.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages, ["Invalid job id specified"]);

    // scancel -u: not selected either (nothing cancelled, no error).
    let reply = c
        .cancel(CancelRequest {
            uids: vec![uid()],
            ..CancelRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        reply.cancelled.is_empty() && reply.errors.is_empty(),
        "{reply:?}"
    );
    // The dbd ended what it recorded meanwhile; the origin just never heard.
    let info = dbd.job(id).await;
    assert_eq!(info.phase, i32::from(FedPhase::Cancelled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_submitter_hanging_up_while_the_dbd_is_silent_leaves_nothing_half_done() {
    let dir = tempfile::tempdir().unwrap();
    let loss = Loss::first(SUBMIT, usize::MAX);
    let (dbd, mut a, mut b) = losing_federation(dir.path(), &loss).await;

    // The submitter hangs up once the dbd has recorded the job (its answer lost): the origin
    // goes on without it, asks again, gives up and withdraws the submission.
    let mut c = a.client(uid()).await;
    loop {
        let submit = c.submit(runtime_support::job("hung up"));
        let asked =
            sluice_testkit::eventually("the dbd asked", async || (loss.calls() > 0).then_some(()));
        tokio::select! {
            answer = submit => match answer {
                // No job ids yet (EAGAIN): nothing was created; sent again, as sbatch does.
                Err(s) if s.code() == tonic::Code::ResourceExhausted => {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                answer => panic!("answered although no answer came: {answer:?}"),
            },
            () = asked => break,
        }
    }
    let id = (1 << 26) | 1;
    let info = dbd
        .wait_job(id, "withdrawn", |j| {
            j.phase == i32::from(FedPhase::Cancelled)
        })
        .await;
    assert_eq!((info.origin.as_str(), info.winner.as_str()), ("a", ""));
    a.wait_job(id, "dropped at the origin", |j| j.is_none())
        .await;
    assert!(b.jobs(id).await.is_empty(), "b never held a copy");
    assert_eq!(events_about(&dbd, "b", id), 0, "nothing offered to b");
    assert!(a.launched_now().is_empty() && b.launched_now().is_empty());
}

/// The soak's "refused federated submissions ran": the dbd recorded the submission but its
/// answer was lost, and the repeat was refused. The refusal does not say that nothing was
/// recorded: the origin withdraws the submission (as for no answer) rather than dropping it
/// alone, so the record the submitter was told failed never stays pending, offered or run.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refusal_after_a_lost_answer_withdraws_what_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let loss = Loss::first(SUBMIT, 1).then_refuse(1);
    let (dbd, mut a, mut b) = losing_federation(dir.path(), &loss).await;

    let refused = a
        .try_submit(runtime_support::job("refused"))
        .await
        .unwrap_err();
    assert_eq!(
        loss.calls(),
        2,
        "recorded, answer lost, refused when asked again"
    );
    assert_eq!(refused.message(), "Unable to connect to database");
    let id = (1 << 26) | 1;
    let info = dbd
        .wait_job(id, "withdrawn", |j| {
            j.phase == i32::from(FedPhase::Cancelled)
        })
        .await;
    assert_eq!((info.origin.as_str(), info.winner.as_str()), ("a", ""));
    a.wait_job(id, "dropped at the origin", |j| j.is_none())
        .await;
    assert!(b.jobs(id).await.is_empty(), "b never held a copy");
    assert!(a.launched_now().is_empty() && b.launched_now().is_empty());
}
