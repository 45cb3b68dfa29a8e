//! Job priority on the pure core in simulated time: `priority/basic` keeps submission order,
//! `priority/multifactor` orders by the weighted factors (age growing with time, fair share,
//! job size with and without `PriorityFavorSmall`, partition), `PriorityTier` goes first,
//! `--nice` and administrators' priorities act on the number.

use sluice_ctld::core::priority::{self, Factors};
use sluice_ctld::core::update::{JobChange, on_update_job};
use sluice_ctld::core::{Caller, JobRef, PlaceOpts, SubmitRequest};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::fairshare::{AssocInput, Shares};
use sluice_vocab::{FedJobId, JobState};
use std::collections::HashMap;

/// Four 4-CPU nodes in `debug` (tier 1, job factor 1) and `high` (tier 1, job factor 3);
/// `extra` lines added. Nothing can start: every node is taken by a running job first.
fn cluster(extra: &[&str]) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .nodes("n[1-4]", "CPUs=4 RealMemory=1000")
        .partition("debug", "Nodes=n[1-4] Default=YES")
        .partition("high", "Nodes=n[1-4] PriorityJobFactor=3")
        .conf("SlurmdTimeout=0");
    for line in extra {
        b = b.conf(line);
    }
    let mut fx = b.build();
    fx.register_all();
    // Fill the cluster so submissions stay queued.
    // No time limit: it never ends while simulated time runs days ahead.
    let blocker = SubmitRequest::new(1, "blocker").nodes(4);
    let id = fx.submit_and_schedule(blocker);
    assert_eq!(fx.state(id), JobState::Running);
    fx
}

const MULTI: &[&str] = &[
    "PriorityType=priority/multifactor",
    "PriorityWeightAge=1000",
    "PriorityWeightJobSize=100",
    "PriorityWeightPartition=10000",
    "PriorityWeightFairshare=100000",
    "PriorityMaxAge=1-0",
];

fn submit(fx: &mut CoreFixture, req: SubmitRequest) -> FedJobId {
    fx.submit(req).expect("submit")
}

fn pending(fx: &CoreFixture) -> Vec<FedJobId> {
    fx.core.pending().collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn basic_keeps_submission_order_with_nice_first() {
    let mut fx = cluster(&[]);
    let a = submit(&mut fx, SubmitRequest::new(1000, "a").minutes(5).nodes(4));
    fx.advance(10);
    let b = submit(&mut fx, SubmitRequest::new(1000, "b").minutes(5));
    let nice = PlaceOpts {
        nice: 10,
        ..PlaceOpts::default()
    };
    let c = submit(
        &mut fx,
        SubmitRequest::new(1000, "c").minutes(5).place(nice),
    );
    fx.advance(1000);
    fx.tick();
    assert_eq!(pending(&fx), [a, b, c]);
    assert_eq!(fx.core.job(a).unwrap().priority, priority::BASIC_PRIORITY);
}

#[test]
fn age_grows_until_max_age_and_reorders_the_queue() {
    let mut fx = cluster(MULTI);
    // A small job submitted first, a large one two days later: job size favors the large
    // one (50 against 25), age favors the old one by up to 1000.
    let old = submit(&mut fx, SubmitRequest::new(1000, "old").minutes(5));
    let f = fx.core.priority_factors(fx.core.job(old).unwrap(), fx.now);
    assert!(close(f.age, 0.0));
    fx.advance(6 * 3600);
    let f = fx.core.priority_factors(fx.core.job(old).unwrap(), fx.now);
    assert!(close(f.age, 0.25), "{f:?}");
    fx.advance(2 * 86_400);
    let f = fx.core.priority_factors(fx.core.job(old).unwrap(), fx.now);
    assert!(close(f.age, 1.0), "capped at PriorityMaxAge: {f:?}");
    let big = submit(&mut fx, SubmitRequest::new(1000, "big").nodes(2).minutes(5));
    fx.tick();
    // old: age 1000 + size 100 * 1/4 nodes + partition 10000/3; big: 0 + 50 + the same.
    assert_eq!(pending(&fx), [old, big]);
    assert_eq!(fx.core.job(old).unwrap().priority, 1000 + 25 + 3333);
    assert_eq!(fx.core.job(big).unwrap().priority, 50 + 3333);
}

#[test]
fn priority_is_recomputed_every_calc_period_only() {
    let mut fx = cluster(&[MULTI, &["PriorityCalcPeriod=10"]].concat());
    let a = submit(&mut fx, SubmitRequest::new(1000, "a").minutes(5));
    fx.tick();
    let first = fx.core.job(a).unwrap().priority;
    fx.advance(9 * 60);
    fx.tick();
    assert_eq!(fx.core.job(a).unwrap().priority, first, "within the period");
    fx.advance(3600);
    fx.tick();
    assert!(
        fx.core.job(a).unwrap().priority > first,
        "after it the age counts"
    );
}

#[test]
fn job_size_favors_large_jobs_unless_favor_small() {
    let mut fx = cluster(MULTI);
    let small = submit(&mut fx, SubmitRequest::new(1000, "s").minutes(5));
    let large = submit(&mut fx, SubmitRequest::new(1000, "l").nodes(4).minutes(5));
    let size = |fx: &CoreFixture, id| fx.core.priority_factors(fx.core.job(id).unwrap(), fx.now);
    // The larger of its part of the nodes (1/4) and of the CPUs (1/16).
    assert!(close(size(&fx, small).job_size, 0.25));
    assert!(close(size(&fx, large).job_size, 1.0));
    assert_eq!(pending(&fx), [large, small]);

    let mut fx = cluster(&[MULTI, &["PriorityFavorSmall=YES"]].concat());
    let small = submit(&mut fx, SubmitRequest::new(1000, "s").minutes(5));
    let large = submit(&mut fx, SubmitRequest::new(1000, "l").nodes(4).minutes(5));
    assert!(close(size(&fx, small).job_size, 1.0));
    assert!(close(size(&fx, large).job_size, 1.0 - 3.0 / 4.0));
    assert_eq!(pending(&fx), [small, large]);
}

#[test]
fn partition_factor_and_tier_order_the_queue() {
    let mut fx = cluster(MULTI);
    let low = submit(&mut fx, SubmitRequest::new(1000, "low").minutes(5));
    let high = submit(
        &mut fx,
        SubmitRequest::new(1000, "h").partition("high").minutes(5),
    );
    let f = fx.core.priority_factors(fx.core.job(low).unwrap(), fx.now);
    assert!(close(f.partition, 1.0 / 3.0));
    assert_eq!(pending(&fx), [high, low]);

    // A higher tier goes first whatever the numbers (basic priorities here).
    let mut b = ClusterBuilder::new()
        .nodes("n1", "CPUs=1")
        .partition("debug", "Nodes=n1 Default=YES")
        .partition("urgent", "Nodes=n1 PriorityTier=5");
    b = b.conf("SlurmdTimeout=0");
    let mut fx = b.build();
    fx.register_all();
    fx.submit_and_schedule(SubmitRequest::new(1, "blocker"));
    let first = submit(&mut fx, SubmitRequest::new(1000, "a").minutes(5));
    let urgent = submit(
        &mut fx,
        SubmitRequest::new(1000, "u").partition("urgent").minutes(5),
    );
    assert_eq!(pending(&fx), [urgent, first]);
}

#[test]
fn fair_share_puts_the_heavier_users_job_later() {
    let mut fx = cluster(MULTI);
    let mut heavy = SubmitRequest::new(1001, "h").minutes(5);
    heavy.launch.account = "acct".into();
    heavy.launch.user = "heavy".into();
    let mut light = SubmitRequest::new(1002, "l").minutes(5);
    light.launch.account = "acct".into();
    light.launch.user = "light".into();
    let h = submit(&mut fx, heavy);
    let l = submit(&mut fx, light);
    // No table yet: factor 0 for both, submission order.
    assert_eq!(pending(&fx), [h, l]);
    // Fair Tree (the default): light's LevelFS (1/2 over 1/4) beats heavy's (1/2 over 3/4):
    // ranks 2 and 1 of 2.
    let assocs = vec![
        assoc("root", "", "", 0.0),
        assoc("acct", "", "root", 0.0),
        assoc("acct", "heavy", "", 300.0),
        assoc("acct", "light", "", 100.0),
    ];
    priority::on_assoc_usage(&mut fx.core, fx.now, assocs, HashMap::new());
    assert_eq!(pending(&fx), [l, h]);
    let f: Factors = fx.core.priority_factors(fx.core.job(h).unwrap(), fx.now);
    assert!(close(f.fairshare, 0.5));
}

fn assoc(account: &str, user: &str, parent: &str, usage: f64) -> AssocInput {
    AssocInput {
        account: account.into(),
        user: user.into(),
        parent: parent.into(),
        shares: Shares::Count(1),
        raw_usage: usage,
    }
}

/// Accounts A and B (1 share each); A used 10 (all a1's, one of four users), B used 12
/// (all b2's; b1 nothing). Returns the pending jobs of a1 and b1, submitted in that order
/// after the associations' usage arrived.
fn a1_and_b1(extra: &[&str]) -> (CoreFixture, FedJobId, FedJobId) {
    let conf: Vec<&str> = MULTI.iter().chain(extra).copied().collect();
    let mut fx = cluster(&conf);
    let mut assocs = vec![
        assoc("root", "", "", 0.0),
        assoc("A", "", "root", 0.0),
        assoc("B", "", "root", 0.0),
        assoc("A", "a1", "", 10.0),
        assoc("B", "b1", "", 0.0),
        assoc("B", "b2", "", 12.0),
    ];
    for u in ["a2", "a3", "a4"] {
        assocs.push(assoc("A", u, "", 0.0));
    }
    priority::on_assoc_usage(&mut fx.core, fx.now, assocs, HashMap::new());
    let job = |account: &str, user: &str| {
        let mut r = SubmitRequest::new(1001, user).minutes(5);
        r.launch.account = account.into();
        r.launch.user = user.into();
        r
    };
    let a1 = submit(&mut fx, job("A", "a1"));
    let b1 = submit(&mut fx, job("B", "b1"));
    (fx, a1, b1)
}

#[test]
fn fair_tree_ranks_every_user_of_the_less_used_account_first() {
    // A's level fair share (1/2 over 10/22) beats B's (1/2 over 12/22): a1 ranks 3 of 6,
    // above B's unused b1 (2 of 6).
    let (fx, a1, b1) = a1_and_b1(&[]);
    assert_eq!(pending(&fx), [a1, b1]);
    let f = |id| {
        fx.core
            .priority_factors(fx.core.job(id).unwrap(), fx.now)
            .fairshare
    };
    assert!(close(f(a1), 0.5));
    assert!(close(f(b1), 2.0 / 6.0));
}

#[test]
fn no_fair_tree_uses_the_classic_factor() {
    // Classic: a1 holds a quarter of A's shares and all its usage (factor about 0.055);
    // b1 used nothing (about 0.34): b1 goes first.
    let (fx, a1, b1) = a1_and_b1(&["PriorityFlags=NO_FAIR_TREE"]);
    assert_eq!(pending(&fx), [b1, a1]);
    let f = |id| {
        fx.core
            .priority_factors(fx.core.job(id).unwrap(), fx.now)
            .fairshare
    };
    assert!(f(b1) > 0.3 && f(a1) < 0.1);
}

#[test]
fn nice_and_admin_priority_change_the_number_and_the_order() {
    let mut fx = cluster(MULTI);
    let a = submit(&mut fx, SubmitRequest::new(1000, "a").minutes(5));
    let b = submit(&mut fx, SubmitRequest::new(1000, "b").minutes(5));
    let before = fx.core.job(a).unwrap().priority;
    let user = Caller::user(1000);
    let now = fx.now;
    on_update_job(
        &mut fx.core,
        &mut fx.out,
        now,
        user,
        JobRef::Job(a),
        &[JobChange::Nice(100)],
        &[],
    )
    .unwrap();
    assert_eq!(fx.core.job(a).unwrap().priority, before - 100);
    assert_eq!(pending(&fx), [b, a]);
    // A user may not raise a priority, nor give a negative nice.
    let raise = [JobChange::Priority(before + 5000)];
    let e = on_update_job(
        &mut fx.core,
        &mut fx.out,
        now,
        user,
        JobRef::Job(a),
        &raise,
        &[],
    );
    assert!(matches!(e, Err(CtldError::AccessDenied)), "{e:?}");
    let e = on_update_job(
        &mut fx.core,
        &mut fx.out,
        now,
        user,
        JobRef::Job(b),
        &[JobChange::Nice(-1)],
        &[],
    );
    assert!(matches!(e, Err(CtldError::AccessDenied)), "{e:?}");
    // An administrator sets it outright; it stays through recomputation.
    let admin = Caller::admin();
    on_update_job(
        &mut fx.core,
        &mut fx.out,
        now,
        admin,
        JobRef::Job(a),
        &raise,
        &[],
    )
    .unwrap();
    fx.advance(86_400);
    fx.tick();
    assert_eq!(fx.core.job(a).unwrap().priority, before + 5000);
    assert_eq!(pending(&fx), [a, b]);
    // Priority=0 holds the job.
    on_update_job(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin,
        JobRef::Job(b),
        &[JobChange::Priority(0)],
        &[],
    )
    .unwrap();
    assert!(fx.core.job(b).unwrap().hold.is_some());
}

#[test]
fn submitted_priority_is_for_administrators() {
    let mut fx = cluster(MULTI);
    let set = PlaceOpts {
        priority: Some(42),
        ..PlaceOpts::default()
    };
    let e = fx.submit(SubmitRequest::new(1000, "x").minutes(5).place(set.clone()));
    assert!(matches!(e, Err(CtldError::AccessDenied)), "{e:?}");
    let mut req = SubmitRequest::new(1000, "x").minutes(5).place(set);
    req.admin = true;
    let id = submit(&mut fx, req);
    assert_eq!(fx.core.job(id).unwrap().priority, 42);
}

#[test]
fn nice_and_priority_values_parse_within_slurms_bounds() {
    assert_eq!(priority::parse_nice("-5"), Some(-5));
    assert_eq!(priority::parse_nice("2147483646"), None);
    assert_eq!(priority::parse_nice("x"), None);
    assert_eq!(priority::parse_priority("TOP"), Some(u32::MAX - 1));
    assert_eq!(priority::parse_priority("7"), Some(7));
    assert_eq!(priority::parse_priority("-1"), None);
}
