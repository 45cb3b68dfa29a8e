//! Dependency and job-array scenarios.

use crate::core_support;

use core_support::{cluster, job};
use sluice_ctld::core::{Caller, JobReason, SubmitRequest};
use sluice_vocab::{FedJobId, JobState};

#[test]
fn afterok_afternotok_afterany_follow_the_exit() {
    let mut fx = cluster(4, "");
    let ok = fx.submit(job("ok").minutes(10)).unwrap();
    let bad = fx.submit(job("bad").minutes(10)).unwrap();
    let on_ok = fx
        .submit(job("1").dependency(&format!("afterok:{ok}")))
        .unwrap();
    let on_bad_ok = fx
        .submit(job("2").dependency(&format!("afterok:{bad}")))
        .unwrap();
    let on_bad_notok = fx
        .submit(job("3").dependency(&format!("afternotok:{bad}")))
        .unwrap();
    let on_any = fx
        .submit(job("4").dependency(&format!("afterany:{ok}:{bad}")))
        .unwrap();
    fx.schedule();
    for id in [on_ok, on_bad_ok, on_bad_notok, on_any] {
        assert_eq!(
            (fx.state(id), fx.reason(id)),
            (JobState::Pending, JobReason::Dependency)
        );
    }
    fx.advance(60);
    fx.exit(ok, 0).unwrap();
    fx.exit(bad, 3).unwrap();
    assert_eq!(
        (fx.state(bad), fx.reason(bad)),
        (JobState::Failed, JobReason::NonZeroExitCode)
    );
    fx.schedule();
    assert_eq!(fx.state(on_ok), JobState::Running);
    assert_eq!(
        (fx.state(on_bad_ok), fx.reason(on_bad_ok)),
        (JobState::Pending, JobReason::DependencyNeverSatisfied)
    );
    assert_eq!(fx.state(on_bad_notok), JobState::Running);
    assert_eq!(fx.state(on_any), JobState::Running);
}

#[test]
fn after_waits_for_the_start_plus_delay_and_any_of_question_mark() {
    let mut fx = cluster(3, "");
    let blocker = fx.submit(job("blocker").nodes(3).minutes(30)).unwrap();
    let first = fx.submit(job("first").nodes(1)).unwrap();
    let after = fx
        .submit(job("after").dependency(&format!("after:{first}+5")))
        .unwrap();
    let either = fx
        .submit(job("either").dependency(&format!("afterok:{first}?afterany:{blocker}")))
        .unwrap();
    fx.schedule();
    assert_eq!(fx.reason(after), JobReason::Dependency);
    fx.advance(10);
    fx.exit(blocker, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.state(first), JobState::Running);
    assert_eq!(
        fx.state(either),
        JobState::Running,
        "afterany of blocker suffices"
    );
    assert_eq!(
        fx.reason(after),
        JobReason::Dependency,
        "5 minutes after first started"
    );
    assert!(
        fx.core.nodes().iter().any(|n| n.job.is_none()),
        "a node is free, yet it waits"
    );
    fx.advance(5 * 60);
    fx.schedule();
    assert_eq!(fx.state(after), JobState::Running);
}

#[test]
fn singleton_runs_one_job_per_user_and_name() {
    let mut fx = cluster(4, "");
    let a = fx.submit(job("same").dependency("singleton")).unwrap();
    let b = fx.submit(job("same").dependency("singleton")).unwrap();
    let other_user = fx
        .submit(SubmitRequest::new(2000, "same").dependency("singleton"))
        .unwrap();
    fx.schedule();
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(
        (fx.state(b), fx.reason(b)),
        (JobState::Pending, JobReason::Dependency)
    );
    assert_eq!(fx.state(other_user), JobState::Running);
    fx.exit(a, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.state(b), JobState::Running);
}

#[test]
fn dependency_on_an_array_waits_for_every_task() {
    let mut fx = cluster(4, "");
    let arr = fx.submit(job("arr").array("1-2")).unwrap();
    let tasks: Vec<FedJobId> = fx
        .core
        .jobs()
        .filter(|j| j.array.is_some_and(|a| a.job == arr))
        .map(|j| j.id)
        .collect();
    let dep = fx
        .submit(job("dep").dependency(&format!("afterok:{arr}")))
        .unwrap();
    fx.schedule();
    fx.exit(tasks[0], 0).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(dep), JobReason::Dependency);
    fx.exit(tasks[1], 0).unwrap();
    fx.schedule();
    assert_eq!(fx.state(dep), JobState::Running);
}

#[test]
fn arrays_expand_and_respect_the_throttle() {
    let mut fx = cluster(8, "");
    let reply = sluice_ctld::core::on_submit(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        job("arr").array("0-15:4%2"),
    )
    .unwrap();
    assert_eq!(reply.jobs.len(), 4);
    let ids: Vec<String> = reply
        .jobs
        .iter()
        .map(|id| fx.core.job(*id).unwrap().display_id())
        .collect();
    let a = reply.job_id;
    assert_eq!(
        ids,
        [
            format!("{a}_0"),
            format!("{a}_4"),
            format!("{a}_8"),
            format!("{a}_12")
        ]
    );
    fx.schedule();
    let states: Vec<JobState> = reply.jobs.iter().map(|id| fx.state(*id)).collect();
    assert_eq!(
        states,
        [
            JobState::Running,
            JobState::Running,
            JobState::Pending,
            JobState::Pending
        ]
    );
    assert_eq!(fx.reason(reply.jobs[2]), JobReason::JobArrayTaskLimit);
    fx.exit(reply.jobs[0], 0).unwrap();
    fx.schedule();
    assert_eq!(fx.state(reply.jobs[2]), JobState::Running);
    assert_eq!(fx.state(reply.jobs[3]), JobState::Pending);
    // Cancelling the array job id cancels every task still there.
    fx.cancel(Caller::user(1000), a, None).unwrap();
    assert_eq!(fx.state(reply.jobs[3]), JobState::Cancelled);
    assert_eq!(fx.state(reply.jobs[2]), JobState::Cancelled);
}
