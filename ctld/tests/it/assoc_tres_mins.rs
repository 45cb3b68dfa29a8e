//! `GrpTRESMins` and `AccountingStorageEnforce=safe` in simulated time, and group limits
//! counted on what a job is allocated: usage (TRES-seconds per user association, the dbd's
//! decayed usage) is handed to the core as the fair-share refresh does; a job pends with
//! Slurm's `AssocGrp*Minutes*` reason once the usage under an association reaches its limit,
//! and its running jobs end (TIMEOUT) at the next tick; with `safe` a job starts only when its
//! whole time limit fits.

use std::collections::HashMap;

use sluice_ctld::conf::TimeLimit;
use sluice_ctld::core::JobReason;
use sluice_ctld::core::SubmitRequest;
use sluice_ctld::core::assoc::{self, AssocReason, AssocRecord, AssocTable, TresSecs};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;
use sluice_vocab::assoc_limits::{AssocLimits, Tres};

/// Four 4-CPU nodes (whole nodes per job unless `select` says otherwise) with
/// `AccountingStorageEnforce=<enforce>`.
fn fixture_with(enforce: &str, select: &[&str]) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .conf("SlurmdTimeout=0")
        .conf(&format!("AccountingStorageEnforce={enforce}"));
    for line in select {
        b = b.conf(line);
    }
    let mut fx = b
        .nodes("n[1-4]", "CPUs=4 RealMemory=4000")
        .partition("p", "Nodes=n[1-4] Default=YES")
        .build();
    fx.register_all();
    fx
}

fn fixture(enforce: &str) -> CoreFixture {
    fixture_with(enforce, &[])
}

fn rec(account: &str, user: &str, parent: &str, limits: AssocLimits) -> AssocRecord {
    AssocRecord {
        account: account.into(),
        user: user.into(),
        parent_account: parent.into(),
        limits,
        qos: Vec::new(),
        default_qos: String::new(),
    }
}

/// root > phys > {alice, bob}; root > chem > carol. `root` and `phys` get the limits given.
fn tree(fx: &mut CoreFixture, root: AssocLimits, phys: AssocLimits) {
    assoc::set(
        &mut fx.core,
        AssocTable::new([
            rec("root", "", "", root),
            rec("phys", "", "root", phys),
            rec("chem", "", "root", AssocLimits::default()),
            rec("phys", "alice", "", AssocLimits::default()),
            rec("phys", "bob", "", AssocLimits::default()),
            rec("chem", "carol", "", AssocLimits::default()),
        ]),
    );
}

fn mins(tres: Tres) -> AssocLimits {
    AssocLimits {
        grp_tres_mins: tres,
        ..AssocLimits::default()
    }
}

fn cpu_mins(n: u64) -> AssocLimits {
    mins(Tres {
        cpu: Some(n),
        ..Tres::default()
    })
}

/// Sets the TRES-seconds each (account, user) has used.
fn used(fx: &mut CoreFixture, rows: &[(&str, &str, TresSecs)]) {
    let map: HashMap<(String, String), TresSecs> = rows
        .iter()
        .map(|(a, u, t)| ((a.to_string(), u.to_string()), *t))
        .collect();
    assoc::set_used(&mut fx.core, map);
}

fn cpu_secs(secs: u64) -> TresSecs {
    TresSecs {
        cpu: secs,
        ..TresSecs::default()
    }
}

/// A one-task job of `user` charged to `account`, with `minutes` of time limit.
fn job(user: &str, account: &str, minutes: u32) -> SubmitRequest {
    let uid = 1000 + user.len() as u32;
    let mut r = SubmitRequest::new(uid, "j");
    r.launch.user = user.into();
    r.launch.account = account.into();
    r.time_limit = Some(TimeLimit::Minutes(minutes));
    r
}

const CPU_MINS: JobReason = JobReason::Assoc(AssocReason::GrpCpuMins);

#[test]
fn used_up_cpu_minutes_keep_the_group_pending_and_running_jobs_run_on() {
    let mut fx = fixture("limits");
    tree(&mut fx, AssocLimits::default(), cpu_mins(100));
    let early = fx.submit_and_schedule(job("alice", "phys", 60));
    assert_eq!(fx.state(early), JobState::Running);
    // 60 CPU-minutes by alice and 40 by bob: phys has used its 100.
    used(
        &mut fx,
        &[
            ("phys", "alice", cpu_secs(60 * 60)),
            ("phys", "bob", cpu_secs(40 * 60)),
        ],
    );
    let a = fx.submit_and_schedule(job("alice", "phys", 1));
    let b = fx.submit_and_schedule(job("bob", "phys", 1));
    let c = fx.submit_and_schedule(job("carol", "chem", 1));
    assert_eq!(fx.reason(a), CPU_MINS);
    assert_eq!(fx.reason(a).to_string(), "AssocGrpCPUMinutesLimit");
    assert_eq!(fx.reason(b), CPU_MINS, "the limit covers phys's users");
    assert_eq!(fx.state(c), JobState::Running, "chem is not limited");
    assert_eq!(
        fx.state(early),
        JobState::Running,
        "a pass does not end running jobs (the tick does)"
    );
    // The usage decays below the limit: the jobs start at the next pass.
    used(&mut fx, &[("phys", "alice", cpu_secs(99 * 60))]);
    fx.schedule();
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(fx.state(b), JobState::Running);
}

#[test]
fn running_jobs_end_as_timeout_once_their_association_used_up_its_minutes() {
    let mut fx = fixture("limits");
    tree(&mut fx, AssocLimits::default(), cpu_mins(100));
    let alice = fx.submit_and_schedule(job("alice", "phys", 60));
    let bob = fx.submit_and_schedule(job("bob", "phys", 60));
    let carol = fx.submit_and_schedule(job("carol", "chem", 60));
    // Below the limit: the tick leaves them running.
    used(&mut fx, &[("phys", "alice", cpu_secs(99 * 60))]);
    fx.advance(30);
    fx.tick();
    assert_eq!(fx.state(alice), JobState::Running);
    // A refresh shows phys at its 100 CPU-minutes (alice's usage): phys's running jobs, bob's
    // too, end at the next tick; chem's run on.
    used(&mut fx, &[("phys", "alice", cpu_secs(100 * 60))]);
    fx.advance(30);
    fx.tick();
    for id in [alice, bob] {
        assert_eq!(fx.state(id), JobState::Timeout);
        assert_eq!(fx.reason(id), JobReason::TimeLimit);
    }
    assert_eq!(fx.state(carol), JobState::Running);
}

#[test]
fn a_limit_of_zero_ends_running_jobs_before_any_usage_is_listed() {
    let mut fx = fixture("limits");
    tree(&mut fx, AssocLimits::default(), AssocLimits::default());
    let alice = fx.submit_and_schedule(job("alice", "phys", 60));
    assert_eq!(fx.state(alice), JobState::Running);
    tree(&mut fx, AssocLimits::default(), cpu_mins(0));
    fx.advance(1);
    fx.tick();
    assert_eq!(fx.state(alice), JobState::Timeout);
}

#[test]
fn without_limits_enforced_used_up_minutes_end_no_job() {
    let mut fx = fixture("associations");
    tree(&mut fx, AssocLimits::default(), cpu_mins(100));
    let alice = fx.submit_and_schedule(job("alice", "phys", 60));
    used(&mut fx, &[("phys", "alice", cpu_secs(200 * 60))]);
    fx.advance(30);
    fx.tick();
    assert_eq!(fx.state(alice), JobState::Running);
}

#[test]
fn memory_and_node_minutes_have_their_own_reasons() {
    let cases = [
        (
            Tres {
                mem_mb: Some(1000),
                ..Tres::default()
            },
            TresSecs {
                mem: 1000 * 60,
                ..TresSecs::default()
            },
            "AssocGrpMemMinutes",
        ),
        (
            Tres {
                node: Some(5),
                ..Tres::default()
            },
            TresSecs {
                node: 5 * 60,
                ..TresSecs::default()
            },
            "AssocGrpNodeMinutes",
        ),
    ];
    for (limit, usage, name) in cases {
        let mut fx = fixture("limits");
        tree(&mut fx, AssocLimits::default(), mins(limit));
        used(&mut fx, &[("phys", "bob", usage)]);
        let id = fx.submit_and_schedule(job("alice", "phys", 1));
        assert_eq!(fx.state(id), JobState::Pending, "{name}");
        assert_eq!(fx.reason(id).to_string(), name);
    }
}

#[test]
fn a_limit_on_the_root_association_is_not_enforced() {
    let mut fx = fixture("limits");
    tree(&mut fx, cpu_mins(1), AssocLimits::default());
    used(&mut fx, &[("phys", "alice", cpu_secs(3600))]);
    let id = fx.submit_and_schedule(job("alice", "phys", 1));
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn safe_starts_a_job_only_when_its_whole_time_limit_fits() {
    let mut fx = fixture("safe");
    // Whole nodes: each job holds 4 CPUs, so a job of T minutes needs 4*T CPU-minutes.
    tree(&mut fx, AssocLimits::default(), cpu_mins(100));
    let long = fx.submit_and_schedule(job("alice", "phys", 30));
    assert_eq!(fx.state(long), JobState::Pending, "120 CPU-minutes > 100");
    assert_eq!(fx.reason(long), CPU_MINS);
    let first = fx.submit_and_schedule(job("alice", "phys", 20));
    assert_eq!(fx.state(first), JobState::Running, "80 CPU-minutes fit");
    // What the running job still has to run counts: 80 + 20 = 100 fits, 4 more does not.
    let second = fx.submit_and_schedule(job("bob", "phys", 5));
    assert_eq!(fx.state(second), JobState::Running);
    let third = fx.submit_and_schedule(job("bob", "phys", 1));
    assert_eq!(fx.reason(third), CPU_MINS);
    let mut unlimited = job("carol", "chem", 1);
    unlimited.time_limit = Some(TimeLimit::Unlimited);
    let other = fx.submit_and_schedule(unlimited);
    assert_eq!(fx.state(other), JobState::Running, "chem has no limit");
    // Ten minutes on (and the dbd's usage with them: 40 + 20 CPU-minutes used), the running
    // jobs have 40 left: 60 + 40 + 4 > 100 still; once they end, 60 + 4 fits.
    fx.advance(600);
    used(&mut fx, &[("phys", "alice", cpu_secs(60 * 60))]);
    fx.schedule();
    assert_eq!(fx.reason(third), CPU_MINS);
    fx.exit(first, 0).unwrap();
    fx.exit(second, 0).unwrap();
    fx.advance(1);
    fx.schedule();
    assert_eq!(fx.state(third), JobState::Running);
    assert_eq!(fx.state(long), JobState::Pending, "60 + 120 > 100");
}

#[test]
fn without_safe_a_job_starts_while_usage_is_below_the_limit() {
    let mut fx = fixture("limits");
    tree(&mut fx, AssocLimits::default(), cpu_mins(100));
    let long = fx.submit_and_schedule(job("alice", "phys", 600));
    assert_eq!(fx.state(long), JobState::Running);
}

#[test]
fn safe_never_starts_an_unlimited_job_under_a_minutes_limit() {
    let mut fx = fixture("safe");
    tree(&mut fx, AssocLimits::default(), cpu_mins(1_000_000));
    let mut r = job("alice", "phys", 1);
    r.time_limit = Some(TimeLimit::Unlimited);
    let id = fx.submit_and_schedule(r);
    assert_eq!(fx.reason(id), CPU_MINS);
}

#[test]
fn group_cpu_limits_count_whole_node_allocations() {
    // select/linear: a one-CPU job holds a whole node (4 CPUs), as Slurm counts it.
    let mut fx = fixture("limits");
    let phys = AssocLimits {
        grp_tres: Tres {
            cpu: Some(6),
            ..Tres::default()
        },
        ..AssocLimits::default()
    };
    tree(&mut fx, AssocLimits::default(), phys);
    let a = fx.submit_and_schedule(job("alice", "phys", 10));
    assert_eq!(fx.state(a), JobState::Running);
    // It asks 1 CPU (4 + 1 <= 6) but would hold 4 (4 + 4 > 6).
    let b = fx.submit_and_schedule(job("bob", "phys", 10));
    assert_eq!(fx.state(b), JobState::Pending);
    assert_eq!(fx.reason(b), JobReason::Assoc(AssocReason::GrpCpu));
    // A job held by its limit does not hold back others of the partition.
    let c = fx.submit_and_schedule(job("carol", "chem", 10));
    assert_eq!(fx.state(c), JobState::Running);

    // select/cons_tres: one CPU per one-task job, but --exclusive takes the whole node.
    let mut fx = fixture_with(
        "limits",
        &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"],
    );
    let phys = AssocLimits {
        grp_tres: Tres {
            cpu: Some(5),
            ..Tres::default()
        },
        ..AssocLimits::default()
    };
    tree(&mut fx, AssocLimits::default(), phys);
    let small = fx.submit_and_schedule(job("alice", "phys", 10));
    let small2 = fx.submit_and_schedule(job("bob", "phys", 10));
    assert_eq!(fx.state(small), JobState::Running);
    assert_eq!(fx.state(small2), JobState::Running, "1 + 1 CPUs");
    let whole = fx.submit_and_schedule(job("bob", "phys", 10).exclusive());
    assert_eq!(
        fx.state(whole),
        JobState::Pending,
        "it asks 1 CPU, would hold 4: 2 + 4 > 5"
    );
    assert_eq!(fx.reason(whole), JobReason::Assoc(AssocReason::GrpCpu));
}

#[test]
fn a_qos_usage_factor_weighs_what_a_job_will_use() {
    use sluice_ctld::core::qos::{self, QosTable};
    use sluice_vocab::qos::{Qos, UsageFactor};
    let mut fx = fixture("safe");
    tree(&mut fx, AssocLimits::default(), cpu_mins(100));
    let factor = |name: &str, f: f64| Qos {
        name: name.into(),
        usage_factor: UsageFactor::from_f64(f).unwrap(),
        ..Qos::default()
    };
    qos::set(
        &mut fx.core,
        QosTable::new(vec![
            factor("normal", 1.0),
            factor("double", 2.0),
            factor("half", 0.5),
        ]),
    );
    let with_qos = |user: &str, minutes: u32, q: &str| {
        let mut r = job(user, "phys", minutes);
        r.launch.qos = q.into();
        r
    };
    // Whole nodes: 20 minutes hold 80 CPU-minutes, counted twice under `double`.
    let doubled = fx.submit_and_schedule(with_qos("alice", 20, "double"));
    assert_eq!(fx.reason(doubled), CPU_MINS, "160 CPU-minutes > 100");
    // Under `half`, 40 minutes count as 80, and while it runs its 80 left count against the
    // limit: a normal job of 5 minutes (20) fits beside it, one more of 1 minute (4) does not.
    let halved = fx.submit_and_schedule(with_qos("alice", 40, "half"));
    assert_eq!(fx.state(halved), JobState::Running);
    let normal = fx.submit_and_schedule(with_qos("bob", 5, "normal"));
    assert_eq!(fx.state(normal), JobState::Running);
    let third = fx.submit_and_schedule(with_qos("bob", 1, "normal"));
    assert_eq!(fx.reason(third), CPU_MINS);
}
