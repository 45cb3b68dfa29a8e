//! Job manager scenarios: validation, hold/release, cancel, requeue, suspend/resume, time
//! limits, purge.

use crate::core_support;

use core_support::{cluster, job};
use sluice_ctld::core::{
    AcctRecord, Caller, HoldKind, JobReason, JobRef, NodeCommand, on_hold, on_release, on_requeue,
    on_resume, on_suspend,
};
use sluice_ctld::testkit::ClusterBuilder;
use sluice_vocab::JobState;

#[test]
fn submission_errors_use_slurm_texts_and_change_nothing() {
    let mut fx = cluster(4, "");
    let cases = [
        (
            job("a").partition("nope"),
            "Invalid partition name specified",
        ),
        (
            job("a").partition("closed"),
            "User's group not permitted to use this partition",
        ),
        (
            job("a").minutes(121),
            "Requested time limit is invalid (missing or exceeds some limit)",
        ),
        (job("a").nodes(4), "Node count specification invalid"),
        (
            job("a").mem_mb(2000),
            "Requested node configuration is not available",
        ),
        (
            job("a").cpus_per_task(8),
            "Requested node configuration is not available",
        ),
        (job("a").constraint("gpu"), "Invalid feature specification"),
        (job("a").constraint("x&"), "Invalid feature specification"),
        (job("a").dependency("afterok:999"), "Job dependency problem"),
        (job("a").dependency("sometime:1"), "Job dependency problem"),
        (job("a").array("5-1"), "Invalid job array specification"),
        (job("a").ntasks(0), "Task count specification invalid"),
    ];
    for (req, text) in cases {
        assert_eq!(fx.submit(req).unwrap_err().to_string(), text);
    }
    assert_eq!(fx.core.job_count(), 0);
    assert!(fx.out.acct.is_empty());
    let mut member = job("ok").partition("closed");
    member.groups.push(77);
    assert!(fx.submit(member).is_ok());
}

#[test]
fn empty_id_source_and_job_count_limit_fail_with_eagain_text() {
    let mut fx = ClusterBuilder::new()
        .nodes("n1", "")
        .partition("p", "Nodes=n1 Default=YES")
        .job_ids(50, 1)
        .build();
    assert_eq!(fx.submit(job("a")).unwrap().get(), 50);
    assert_eq!(
        fx.submit(job("b")).unwrap_err().to_string(),
        "Resource temporarily unavailable"
    );
    let mut fx = ClusterBuilder::new()
        .nodes("n1", "")
        .partition("p", "Nodes=n1 Default=YES")
        .conf("MaxJobCount=2")
        .build();
    fx.submit(job("a")).unwrap();
    assert!(fx.submit(job("b").array("1-2")).is_err());
    assert_eq!(fx.core.job_count(), 1);
}

#[test]
fn hold_and_release_with_user_and_admin_rules() {
    let mut fx = cluster(2, "");
    let held = fx.submit(job("h").held()).unwrap();
    let other = fx.submit(job("o")).unwrap();
    on_hold(
        &mut fx.core,
        &mut fx.out,
        Caller::admin(),
        JobRef::Job(other),
        HoldKind::Admin,
    )
    .unwrap();
    fx.schedule();
    assert_eq!(fx.reason(held), JobReason::JobHeldUser);
    assert_eq!(fx.reason(other), JobReason::JobHeldAdmin);
    let user = Caller::user(1000);
    let err = on_release(&mut fx.core, &mut fx.out, user, JobRef::Job(other)).unwrap_err();
    assert_eq!(err.to_string(), "Access/permission denied");
    let stranger = on_release(
        &mut fx.core,
        &mut fx.out,
        Caller::user(5),
        JobRef::Job(held),
    )
    .unwrap_err();
    assert_eq!(stranger.to_string(), "Access/permission denied");
    on_release(&mut fx.core, &mut fx.out, user, JobRef::Job(held)).unwrap();
    on_release(
        &mut fx.core,
        &mut fx.out,
        Caller::admin(),
        JobRef::Job(other),
    )
    .unwrap();
    fx.schedule();
    assert_eq!(
        (fx.state(held), fx.state(other)),
        (JobState::Running, JobState::Running)
    );
    let err = on_hold(
        &mut fx.core,
        &mut fx.out,
        user,
        JobRef::Job(held),
        HoldKind::User,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Job is no longer pending execution");
}

#[test]
fn cancel_pending_running_and_with_a_signal() {
    let mut fx = cluster(1, "");
    let run = fx.submit(job("run")).unwrap();
    let pend = fx.submit(job("pend")).unwrap();
    fx.schedule();
    assert_eq!(
        fx.cancel(Caller::user(1), run, None)
            .unwrap_err()
            .to_string(),
        "Access/permission denied"
    );
    fx.cancel(Caller::user(1000), run, Some(10)).unwrap();
    assert!(matches!(
        fx.out.node_cmds.last(),
        Some(NodeCommand::Signal { signal: 10, .. })
    ));
    assert_eq!(fx.state(run), JobState::Running);
    fx.cancel(Caller::user(1000), pend, None).unwrap();
    assert_eq!(fx.state(pend), JobState::Cancelled);
    fx.cancel(Caller::user(1000), run, None).unwrap();
    assert_eq!(fx.state(run), JobState::Cancelled);
    assert!(
        fx.core.job(run).unwrap().completing,
        "nodes stay until it exits"
    );
    assert_eq!(
        fx.cancel(Caller::user(1000), run, None)
            .unwrap_err()
            .to_string(),
        "Job/step already completing or completed"
    );
    let next = fx.submit(job("next")).unwrap();
    fx.schedule();
    assert_eq!(fx.reason(next), JobReason::Resources);
    fx.advance(2);
    fx.exit(run, 0).unwrap();
    assert_eq!(
        fx.state(run),
        JobState::Cancelled,
        "the exit does not change a cancelled job"
    );
    fx.schedule();
    assert_eq!(fx.state(next), JobState::Running);
}

#[test]
fn time_limit_gives_sigterm_then_sigkill_after_killwait_then_timeout() {
    let mut fx = cluster(1, "");
    let id = fx.submit(job("t").minutes(1)).unwrap();
    fx.schedule();
    fx.out.take();
    fx.advance(59);
    fx.tick();
    assert_eq!(fx.state(id), JobState::Running);
    fx.advance(1);
    fx.tick();
    assert_eq!(
        (fx.state(id), fx.reason(id)),
        (JobState::Timeout, JobReason::TimeLimit)
    );
    assert!(matches!(
        fx.out.node_cmds.as_slice(),
        [NodeCommand::Signal { signal: 15, .. }]
    ));
    fx.advance(29);
    fx.tick();
    assert_eq!(fx.out.node_cmds.len(), 1, "no SIGKILL before KillWait");
    fx.advance(1);
    fx.tick();
    assert!(matches!(
        fx.out.node_cmds.last(),
        Some(NodeCommand::Signal { signal: 9, .. })
    ));
    fx.exit(id, 0).unwrap();
    assert_eq!(fx.state(id), JobState::Timeout);
    assert!(fx.out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::JobEnded {
            state: JobState::Timeout,
            ..
        }
    )));
}

#[test]
fn suspended_time_does_not_count_against_the_limit() {
    let mut fx = cluster(1, "");
    let id = fx.submit(job("s").minutes(1)).unwrap();
    fx.schedule();
    let admin = Caller::admin();
    let err = on_suspend(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::user(1000),
        JobRef::Job(id),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Access/permission denied");
    fx.advance(30);
    on_suspend(&mut fx.core, &mut fx.out, fx.now, admin, JobRef::Job(id)).unwrap();
    assert_eq!(fx.state(id), JobState::Suspended);
    assert!(matches!(
        fx.out.node_cmds.last(),
        Some(NodeCommand::Suspend { .. })
    ));
    fx.advance(600);
    fx.tick();
    assert_eq!(fx.state(id), JobState::Suspended);
    on_resume(&mut fx.core, &mut fx.out, fx.now, admin, JobRef::Job(id)).unwrap();
    assert!(matches!(
        fx.out.node_cmds.last(),
        Some(NodeCommand::Resume { .. })
    ));
    fx.advance(29);
    fx.tick();
    assert_eq!(fx.state(id), JobState::Running);
    fx.advance(1);
    fx.tick();
    assert_eq!(fx.state(id), JobState::Timeout);
    let err = on_resume(&mut fx.core, &mut fx.out, fx.now, admin, JobRef::Job(id)).unwrap_err();
    assert_eq!(err.to_string(), "Job is not suspended");
}

#[test]
fn requeue_puts_a_running_job_back_after_it_exits() {
    let mut fx = cluster(1, "");
    let id = fx.submit(job("r")).unwrap();
    fx.schedule();
    fx.advance(10);
    let later = fx.submit(job("later")).unwrap();
    on_requeue(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::user(1000),
        JobRef::Job(id),
    )
    .unwrap();
    let requeued = fx.core.job(id).unwrap();
    assert_eq!(
        (requeued.state, requeued.completing, requeued.restarts),
        (JobState::Pending, true, 1)
    );
    assert!(fx.out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::JobEnded {
            state: JobState::Requeued,
            ..
        }
    )));
    fx.schedule();
    assert_eq!(fx.state(later), JobState::Pending, "node still completing");
    fx.exit(id, 0).unwrap();
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running, "keeps its age priority");
    assert_eq!(fx.state(later), JobState::Pending);
    let no = fx.submit(job("no").no_requeue()).unwrap();
    let err = on_requeue(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(no),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Requested operation is presently disabled");
}

#[test]
fn finished_jobs_are_purged_after_min_job_age() {
    let mut fx = cluster(1, "");
    let id = fx.submit(job("p")).unwrap();
    fx.schedule();
    fx.exit(id, 0).unwrap();
    fx.advance(299);
    fx.tick();
    assert_eq!(fx.state(id), JobState::Completed);
    fx.advance(1);
    fx.tick();
    assert!(fx.core.job(id).is_none());
    assert_eq!(
        fx.cancel(Caller::admin(), id, None)
            .unwrap_err()
            .to_string(),
        "Invalid job id specified"
    );
}
