//! `scancel`'s policy in the core, in simulated time: which jobs the filters select (owner,
//! name, state, partition), the own-uid rule (a user's filters reach only the user's jobs, an
//! administrator's reach all), ids narrowed by filters, per-job answers, and the pending-first
//! order of a federation-wide cancel.

use sluice_ctld::core::cancel::{CancelFilter, cancel_order, cancellable};
use sluice_ctld::core::{Caller, JobRef, Scancel, ScancelOutcome, SubmitRequest, on_scancel};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

/// Two one-node partitions; `a` is the default.
fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=1 RealMemory=1000")
        .partition("a", "Nodes=n1 Default=YES")
        .partition("b", "Nodes=n2")
        .build();
    fx.register_all();
    fx
}

fn scancel(fx: &mut CoreFixture, caller: Caller, req: Scancel) -> ScancelOutcome {
    on_scancel(&mut fx.core, &mut fx.out, fx.now, caller, req)
}

fn by_filter(filter: CancelFilter) -> Scancel {
    Scancel {
        filter,
        by_filter: true,
        ..Scancel::default()
    }
}

fn ids(done: &ScancelOutcome) -> Vec<FedJobId> {
    done.cancelled
        .iter()
        .map(|r| match r {
            JobRef::Job(id) => *id,
            JobRef::Task(array, _) | JobRef::Het(array, _) => *array,
        })
        .collect()
}

#[test]
fn a_users_filters_reach_only_the_users_own_jobs_an_admins_reach_all() {
    let mut fx = cluster();
    let mine = fx.submit(SubmitRequest::new(1, "x")).unwrap();
    let theirs = fx.submit(SubmitRequest::new(2, "x")).unwrap();
    let named = CancelFilter {
        names: vec!["x".into()],
        ..CancelFilter::default()
    };
    let done = scancel(&mut fx, Caller::user(1), by_filter(named.clone()));
    assert_eq!(ids(&done), vec![mine]);
    assert!(done.errors.is_empty());
    assert_eq!(fx.state(mine), JobState::Cancelled);
    assert_eq!(fx.state(theirs), JobState::Pending);

    // `-u 2` from uid 1 selects uid 2's job, which uid 1 may not cancel.
    let others = CancelFilter {
        uids: vec![2],
        ..CancelFilter::default()
    };
    let done = scancel(&mut fx, Caller::user(1), by_filter(others.clone()));
    assert!(done.cancelled.is_empty());
    assert_eq!(done.errors.len(), 1);
    assert!(matches!(done.errors[0].2, CtldError::AccessDenied));
    assert_eq!(fx.state(theirs), JobState::Pending);

    let admin = fx.admin();
    let done = scancel(&mut fx, admin, by_filter(named));
    assert_eq!(ids(&done), vec![theirs]);
    assert_eq!(fx.state(theirs), JobState::Cancelled);
}

#[test]
fn the_own_uid_rule_applies_only_without_owners_and_to_users() {
    let user = Caller::user(7);
    let empty = CancelFilter::default();
    assert_eq!(empty.clone().for_caller(user).uids, vec![7]);
    assert!(empty.clone().for_caller(Caller::admin()).uids.is_empty());
    let asked = CancelFilter {
        uids: vec![8],
        ..CancelFilter::default()
    };
    assert_eq!(asked.for_caller(user).uids, vec![8]);
}

#[test]
fn filters_select_by_state_partition_and_name_in_id_order_and_skip_finished_jobs() {
    let mut fx = cluster();
    let run_a = fx.submit(SubmitRequest::new(1, "r")).unwrap();
    let run_b = fx
        .submit(SubmitRequest::new(1, "r").partition("b"))
        .unwrap();
    fx.schedule();
    let wait_a = fx.submit(SubmitRequest::new(1, "w")).unwrap();
    let wait_b = fx
        .submit(SubmitRequest::new(1, "w").partition("b"))
        .unwrap();
    let done_a = fx.submit(SubmitRequest::new(1, "w")).unwrap();
    fx.cancel(Caller::user(1), done_a, None).unwrap();
    assert_eq!(fx.state(run_a), JobState::Running);
    assert_eq!(fx.state(run_b), JobState::Running);

    let pending_in_b = CancelFilter {
        states: vec![JobState::Pending.stored()],
        partitions: vec!["b".into()],
        ..CancelFilter::default()
    };
    let done = scancel(&mut fx, Caller::user(1), by_filter(pending_in_b));
    assert_eq!(ids(&done), vec![wait_b]);

    // Every live job of the user, by id; the one already cancelled is not selected again.
    let done = scancel(&mut fx, Caller::user(1), by_filter(CancelFilter::default()));
    assert_eq!(ids(&done), vec![run_a, run_b, wait_a]);
    assert!(done.errors.is_empty());
}

#[test]
fn ids_with_filters_act_only_on_the_ids_that_match() {
    let mut fx = cluster();
    let x = fx.submit(SubmitRequest::new(1, "x")).unwrap();
    let y = fx.submit(SubmitRequest::new(1, "y")).unwrap();
    let req = Scancel {
        targets: [x, y]
            .iter()
            .map(|id| (id.to_string(), Some(JobRef::Job(*id))))
            .chain([("bogus".to_string(), None)])
            .collect(),
        filter: CancelFilter {
            names: vec!["y".into()],
            ..CancelFilter::default()
        },
        ..Scancel::default()
    };
    let done = scancel(&mut fx, Caller::user(1), req);
    assert_eq!(ids(&done), vec![y]);
    assert_eq!(fx.state(x), JobState::Pending);
    assert_eq!(done.errors.len(), 1);
    assert_eq!(done.errors[0].0, "bogus");
    assert!(matches!(done.errors[0].2, CtldError::InvalidJobId));
}

#[test]
fn a_signal_to_a_pending_job_and_a_bad_step_are_answered_per_job() {
    let mut fx = cluster();
    let job = fx.submit(SubmitRequest::new(1, "x")).unwrap();
    let req = Scancel {
        targets: vec![(job.to_string(), Some(JobRef::Job(job)))],
        steps: vec![("1.x".to_string(), Err(CtldError::InvalidJobId))],
        signal: Some(10),
        ..Scancel::default()
    };
    let done = scancel(&mut fx, Caller::user(1), req);
    assert!(done.cancelled.is_empty());
    let texts: Vec<&str> = done.errors.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(texts, vec![job.to_string().as_str(), "1.x"]);
    assert!(matches!(done.errors[0].2, CtldError::JobPending));
    assert_eq!(fx.state(job), JobState::Pending);
}

#[test]
fn a_federation_wide_cancel_goes_pending_first_each_group_by_id() {
    let found = [(9, true), (3, false), (5, true), (7, false)];
    assert_eq!(cancel_order(found), vec![3, 7, 5, 9]);
    let tasks = [
        ((4, "4_1".to_string()), true),
        ((2, "2_3".to_string()), false),
    ];
    let order: Vec<String> = cancel_order(tasks).into_iter().map(|t| t.1).collect();
    assert_eq!(order, vec!["2_3", "4_1"]);
}

#[test]
fn only_pending_running_and_suspended_jobs_can_be_cancelled() {
    for s in [JobState::Pending, JobState::Running, JobState::Suspended] {
        assert!(cancellable(s.stored()), "{s:?}");
    }
    for s in [JobState::Completed, JobState::Cancelled, JobState::Failed] {
        assert!(!cancellable(s.stored()), "{s:?}");
    }
}
