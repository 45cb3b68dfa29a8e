//! `--deadline`, `--kill-on-invalid-dep`, `--priority` and `--mail-type` on the pure core in
//! simulated time: a pending job that can no longer finish by its deadline ends DEADLINE, a job
//! whose dependency can never be met is cancelled when it asked, only administrators set a
//! priority, and `MailProg` is asked for with Slurm's arguments.

use sluice_ctld::core::{
    JobReason, PlaceOpts, RecordingOutbox, ScriptContext, ScriptRun, SimTime, SubmitRequest,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;
use sluice_vocab::mail_type::MailTypes;

/// One node of 2 CPUs, whole nodes per job, clock at t=1000.
fn cluster(extra: &str) -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n1", "CPUs=2 RealMemory=1000")
        .partition("debug", "Nodes=ALL Default=YES")
        .conf("SlurmdTimeout=0")
        .conf(extra)
        .build();
    fx.register_all();
    fx.now = SimTime::from_secs(1_000);
    fx
}

fn job(name: &str, place: PlaceOpts) -> SubmitRequest {
    SubmitRequest::new(1000, name).minutes(1).place(place)
}

fn mails(out: &RecordingOutbox) -> Vec<ScriptRun> {
    out.scripts
        .iter()
        .filter(|s| s.context == ScriptContext::MailProg)
        .cloned()
        .collect()
}

#[test]
fn a_pending_job_past_its_deadline_ends_deadline() {
    let mut fx = cluster("");
    let blocker = fx.submit_and_schedule(SubmitRequest::new(1000, "block").minutes(60));
    assert_eq!(fx.state(blocker), JobState::Running);
    // A one-minute job that must end by t=1065: it waits; at t=1006 it could not finish.
    let late = fx
        .submit(job(
            "late",
            PlaceOpts {
                deadline: Some(1_065),
                ..PlaceOpts::default()
            },
        ))
        .unwrap();
    let fits = fx
        .submit(job(
            "fits",
            PlaceOpts {
                deadline: Some(1_000 + 3_600 * 2),
                ..PlaceOpts::default()
            },
        ))
        .unwrap();
    fx.advance(5);
    fx.tick();
    assert_eq!(fx.state(late), JobState::Pending);
    fx.advance(1);
    fx.tick();
    assert_eq!(fx.state(late), JobState::Deadline);
    assert_eq!(fx.reason(late), JobReason::DeadLine);
    assert_eq!(fx.state(fits), JobState::Pending);
    fx.exit(blocker, 0).unwrap();
    fx.tick();
    assert_eq!(fx.state(fits), JobState::Running);
}

#[test]
fn kill_on_invalid_dep_cancels_and_mails_only_when_asked() {
    let mut fx = cluster("MailProg=/usr/bin/mailx");
    let failed = fx.submit_and_schedule(SubmitRequest::new(1000, "a"));
    fx.exit(failed, 1).unwrap();
    assert_eq!(fx.state(failed), JobState::Failed);
    let dep = format!("afterok:{failed}");
    let kill = PlaceOpts {
        kill_invalid_dep: Some(true),
        mail_type: MailTypes::INVALID_DEPEND,
        ..PlaceOpts::default()
    };
    let killed = fx.submit(job("k", kill).dependency(&dep)).unwrap();
    let kept = fx
        .submit(job("kept", PlaceOpts::default()).dependency(&dep))
        .unwrap();
    fx.out.take();
    fx.tick();
    assert_eq!(fx.state(killed), JobState::Cancelled);
    assert_eq!(fx.reason(killed), JobReason::DependencyNeverSatisfied);
    assert_eq!(fx.state(kept), JobState::Pending);
    assert_eq!(fx.reason(kept), JobReason::DependencyNeverSatisfied);
    let sent = mails(&fx.out.take());
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].args[1],
        format!("Slurm Job_id={killed} Name=k Invalid dependency")
    );
}

#[test]
fn only_administrators_set_a_priority() {
    let mut fx = cluster("");
    let asked = PlaceOpts {
        priority: Some(10),
        ..PlaceOpts::default()
    };
    assert!(matches!(
        fx.submit(job("p", asked.clone())),
        Err(CtldError::AccessDenied)
    ));
    let mut admin = job("p", asked);
    admin.admin = true;
    let id = fx.submit(admin).unwrap();
    assert_eq!(fx.core.job(id).unwrap().req.place.priority, Some(10));
}

#[test]
fn mail_prog_is_asked_for_begin_end_fail_and_time_shares() {
    let mut fx = cluster("MailProg=/usr/bin/mailx\nMailDomain=example.org");
    let place = PlaceOpts {
        mail_type: MailTypes::BEGIN | MailTypes::END | MailTypes::TIME_LIMIT_50,
        mail_user: Some("ops@site.net".into()),
        ..PlaceOpts::default()
    };
    fx.out.take();
    let a = fx.submit_and_schedule(SubmitRequest::new(1000, "a").minutes(2).place(place));
    let began = mails(&fx.out.take());
    assert_eq!(began.len(), 1);
    assert_eq!(began[0].program.to_str(), Some("/usr/bin/mailx"));
    assert_eq!(
        began[0].args,
        [
            "-s".to_string(),
            format!("Slurm Job_id={a} Name=a Began, Queued time 00:00:00"),
            "ops@site.net".to_string()
        ]
    );
    let var =
        |run: &ScriptRun, k: &str| run.env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(
        var(&began[0], "SLURM_JOB_MAIL_TYPE").as_deref(),
        Some("Began")
    );
    fx.advance(59);
    fx.tick();
    assert!(mails(&fx.out.take()).is_empty());
    fx.advance(1);
    fx.tick();
    let half = mails(&fx.out.take());
    assert_eq!(half.len(), 1);
    assert_eq!(
        half[0].args[1],
        format!("Slurm Job_id={a} Name=a Reached 50% of time limit, Run time 00:01:00")
    );
    fx.advance(10);
    fx.tick();
    assert!(mails(&fx.out.take()).is_empty(), "once per run");
    fx.exit(a, 0).unwrap();
    let ended = mails(&fx.out.take());
    assert_eq!(
        ended[0].args[1],
        format!("Slurm Job_id={a} Name=a Ended, Run time 00:01:10, COMPLETED, ExitCode 0")
    );
    // FAIL without END, to the owner with MailDomain.
    let fail = PlaceOpts {
        mail_type: MailTypes::FAIL,
        ..PlaceOpts::default()
    };
    let b = fx.submit_and_schedule(SubmitRequest::new(1000, "b").place(fail));
    assert!(mails(&fx.out.take()).is_empty(), "no begin mail asked");
    fx.exit(b, 2).unwrap();
    let failed = mails(&fx.out.take());
    assert_eq!(failed.len(), 1);
    assert_eq!(
        failed[0].args[1],
        format!("Slurm Job_id={b} Name=b Failed, Run time 00:00:00, FAILED, ExitCode 2")
    );
    let owner = &fx.core.job(b).unwrap().launch.user;
    assert_eq!(failed[0].args[2], format!("{owner}@example.org"));
}
