//! `AccountingStorageEnforce=associations,limits` in simulated time: a job needs an
//! association; per-job limits and submit counts refuse at submission with Slurm's
//! accounting-policy error; running counts and group resources keep jobs pending with Slurm's
//! `Assoc*` reasons until usage drops or the limit is raised; group limits apply to
//! everything below the account that sets them.

use sluice_ctld::conf::TimeLimit;
use sluice_ctld::core::assoc::{self, AssocReason, AssocRecord, AssocTable};
use sluice_ctld::core::{Caller, JobReason, JobRef, SubmitRequest, on_release};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;
use sluice_vocab::assoc_limits::{AssocLimits, Tres};

const INVALID_ACCOUNT: &str = "Invalid account or account/partition combination specified";
const POLICY: &str =
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";

/// Four 4-CPU nodes with `AccountingStorageEnforce=<enforce>`.
fn fixture(enforce: &str) -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .conf("SlurmdTimeout=0")
        .conf(&format!("AccountingStorageEnforce={enforce}"))
        .nodes("n[1-4]", "CPUs=4 RealMemory=4000")
        .partition("p", "Nodes=n[1-4] Default=YES")
        .build();
    fx.register_all();
    fx
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

/// root > phys > {alice, bob}; root > chem > carol. `phys` and `alice` get the limits given.
fn tree(fx: &mut CoreFixture, phys: AssocLimits, alice: AssocLimits) {
    let table = AssocTable::new([
        rec("root", "", "", AssocLimits::default()),
        rec("phys", "", "root", phys),
        rec("chem", "", "root", AssocLimits::default()),
        rec("phys", "alice", "", alice),
        rec("phys", "bob", "", AssocLimits::default()),
        rec("chem", "carol", "", AssocLimits::default()),
    ]);
    assoc::set(&mut fx.core, table);
}

/// A one-task job of `user` (uid from the name) charged to `account`.
fn job(user: &str, account: &str) -> SubmitRequest {
    let uid = 1000 + user.len() as u32;
    let mut r = SubmitRequest::new(uid, "j");
    r.launch.user = user.into();
    r.launch.account = account.into();
    r
}

fn release(fx: &mut CoreFixture, id: sluice_vocab::FedJobId) {
    on_release(&mut fx.core, &mut fx.out, Caller::admin(), JobRef::Job(id)).unwrap();
}

fn no_limits() -> AssocLimits {
    AssocLimits::default()
}

#[test]
fn a_job_needs_an_association() {
    let mut fx = fixture("associations");
    let before = fx.submit(job("alice", "phys")).unwrap_err().to_string();
    assert_eq!(before, INVALID_ACCOUNT, "nothing listed yet: refused");
    tree(&mut fx, no_limits(), no_limits());
    assert!(fx.submit(job("alice", "phys")).is_ok());
    for (user, account) in [
        ("alice", "chem"),
        ("dave", "phys"),
        ("alice", ""),
        ("alice", "nope"),
    ] {
        let e = fx.submit(job(user, account)).unwrap_err().to_string();
        assert_eq!(e, INVALID_ACCOUNT, "{user} in {account:?}");
    }
}

#[test]
fn without_enforcement_nothing_is_checked() {
    let mut fx = fixture("none");
    let id = fx.submit_and_schedule(job("dave", "nope"));
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn a_deleted_association_keeps_its_pending_jobs_waiting() {
    let mut fx = fixture("associations");
    tree(&mut fx, no_limits(), no_limits());
    let mut held = job("bob", "phys");
    held.hold = true;
    let id = fx.submit(held).unwrap();
    assoc::set(
        &mut fx.core,
        AssocTable::new([rec("root", "", "", no_limits())]),
    );
    release(&mut fx, id);
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Pending);
    assert_eq!(fx.reason(id), JobReason::InvalidAccount);
}

#[test]
fn max_jobs_keeps_the_next_job_pending_until_one_ends() {
    let mut fx = fixture("limits");
    let alice = AssocLimits {
        max_jobs: Some(1),
        ..no_limits()
    };
    tree(&mut fx, no_limits(), alice);
    let first = fx.submit_and_schedule(job("alice", "phys"));
    let second = fx.submit_and_schedule(job("alice", "phys"));
    let other = fx.submit_and_schedule(job("bob", "phys"));
    assert_eq!(fx.state(first), JobState::Running);
    assert_eq!(fx.state(second), JobState::Pending);
    assert_eq!(fx.reason(second), JobReason::Assoc(AssocReason::MaxJobs));
    assert_eq!(fx.reason(second).to_string(), "AssocMaxJobsLimit");
    assert_eq!(fx.state(other), JobState::Running, "bob has no limit");
    fx.exit(first, 0).unwrap();
    fx.advance(1);
    fx.schedule();
    assert_eq!(fx.state(second), JobState::Running);
}

#[test]
fn max_limits_set_on_the_account_apply_to_its_users() {
    // The dbd lists Max* limits as in force (inherited): the account's MaxJobs reaches bob
    // only through the list, so here bob's own record carries it, as the dbd sends it.
    let mut fx = fixture("limits");
    let inherited = AssocLimits {
        max_jobs: Some(1),
        ..no_limits()
    };
    tree(&mut fx, inherited.clone(), inherited);
    let a = fx.submit_and_schedule(job("alice", "phys"));
    let b = fx.submit_and_schedule(job("alice", "phys"));
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(fx.reason(b), JobReason::Assoc(AssocReason::MaxJobs));
}

#[test]
fn grp_jobs_counts_every_user_below_the_account() {
    let mut fx = fixture("limits");
    let phys = AssocLimits {
        grp_jobs: Some(2),
        ..no_limits()
    };
    tree(&mut fx, phys, no_limits());
    let a = fx.submit_and_schedule(job("alice", "phys"));
    let b = fx.submit_and_schedule(job("bob", "phys"));
    let c = fx.submit_and_schedule(job("bob", "phys"));
    let d = fx.submit_and_schedule(job("carol", "chem"));
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(fx.state(b), JobState::Running);
    assert_eq!(fx.reason(c), JobReason::Assoc(AssocReason::GrpJobs));
    assert_eq!(fx.reason(c).to_string(), "AssocGrpJobsLimit");
    assert_eq!(fx.state(d), JobState::Running, "another account");
    // Raising the limit (a later list from the dbd) lets it start at the next pass.
    tree(
        &mut fx,
        AssocLimits {
            grp_jobs: Some(3),
            ..no_limits()
        },
        no_limits(),
    );
    fx.schedule();
    assert_eq!(fx.state(c), JobState::Running);
}

#[test]
fn grp_tres_cpu_mem_and_node_pend_with_their_reasons() {
    let cases = [
        (
            Tres {
                cpu: Some(6),
                ..Tres::default()
            },
            AssocReason::GrpCpu,
            "AssocGrpCpuLimit",
        ),
        (
            Tres {
                mem_mb: Some(2500),
                ..Tres::default()
            },
            AssocReason::GrpMem,
            "AssocGrpMemLimit",
        ),
        (
            Tres {
                node: Some(2),
                ..Tres::default()
            },
            AssocReason::GrpNode,
            "AssocGrpNodeLimit",
        ),
    ];
    for (grp, want, name) in cases {
        let mut fx = fixture("limits");
        let phys = AssocLimits {
            grp_tres: grp,
            ..no_limits()
        };
        tree(&mut fx, phys, no_limits());
        // Each job: one whole node, 4 CPUs asked, 1500 MB.
        let ask = |user: &str| {
            let mut r = job(user, "phys").ntasks(4);
            r.mem_per_node_mb = Some(1500);
            r
        };
        let a = fx.submit_and_schedule(ask("alice"));
        assert_eq!(fx.state(a), JobState::Running, "{name}");
        let b = fx.submit_and_schedule(ask("bob"));
        if want == AssocReason::GrpNode {
            assert_eq!(fx.state(b), JobState::Running, "{name}: 2 nodes allowed");
            let c = fx.submit_and_schedule(ask("bob"));
            assert_eq!(fx.reason(c), JobReason::Assoc(want), "{name}");
        } else {
            assert_eq!(fx.state(b), JobState::Pending, "{name}");
            assert_eq!(fx.reason(b), JobReason::Assoc(want));
            assert_eq!(fx.reason(b).to_string(), name);
        }
        let c = fx.submit_and_schedule(job("carol", "chem"));
        assert_eq!(
            fx.state(c),
            JobState::Running,
            "{name}: chem is not limited"
        );
    }
}

#[test]
fn per_job_limits_refuse_at_submission() {
    let mut fx = fixture("limits");
    let alice = AssocLimits {
        max_wall_minutes: Some(60),
        max_tres_per_job: Tres {
            cpu: Some(4),
            node: Some(1),
            ..Tres::default()
        },
        ..no_limits()
    };
    tree(&mut fx, no_limits(), alice);
    let mut long = job("alice", "phys");
    long.time_limit = Some(TimeLimit::Minutes(61));
    assert_eq!(fx.submit(long).unwrap_err().to_string(), POLICY);
    assert_eq!(
        fx.submit(job("alice", "phys").ntasks(5))
            .unwrap_err()
            .to_string(),
        POLICY
    );
    assert_eq!(
        fx.submit(job("alice", "phys").nodes(2))
            .unwrap_err()
            .to_string(),
        POLICY
    );
    let mut ok = job("alice", "phys").ntasks(4);
    ok.time_limit = Some(TimeLimit::Minutes(60));
    assert!(fx.submit(ok).is_ok());
    // No time asked: the job gets MaxWall, as Slurm's controller sets it.
    let id = fx.submit(job("alice", "phys")).unwrap();
    let limit = fx.core.job(id).unwrap().req.time_limit;
    assert_eq!(limit, TimeLimit::Minutes(60));
}

#[test]
fn a_job_larger_than_a_group_limit_is_refused() {
    let mut fx = fixture("limits");
    let phys = AssocLimits {
        grp_tres: Tres {
            cpu: Some(4),
            ..Tres::default()
        },
        ..no_limits()
    };
    tree(&mut fx, phys, no_limits());
    let e = fx.submit(job("bob", "phys").ntasks(8)).unwrap_err();
    assert_eq!(e.to_string(), POLICY);
}

#[test]
fn submit_counts_refuse_the_job_over_the_limit() {
    let mut fx = fixture("limits");
    let phys = AssocLimits {
        grp_submit_jobs: Some(3),
        ..no_limits()
    };
    let alice = AssocLimits {
        max_submit_jobs: Some(2),
        ..no_limits()
    };
    tree(&mut fx, phys, alice);
    fx.submit(job("alice", "phys")).unwrap();
    fx.submit(job("alice", "phys")).unwrap();
    let e = fx.submit(job("alice", "phys")).unwrap_err();
    assert_eq!(e.to_string(), POLICY, "alice's MaxSubmitJobs");
    fx.submit(job("bob", "phys")).unwrap();
    let e = fx.submit(job("bob", "phys")).unwrap_err();
    assert_eq!(e.to_string(), POLICY, "phys's GrpSubmitJobs");
    let mut array = job("carol", "chem");
    array.array = Some("1-5".into());
    assert!(fx.submit(array).is_ok(), "chem is not limited");
}

#[test]
fn limits_lowered_after_submission_keep_jobs_pending() {
    let mut fx = fixture("limits");
    tree(&mut fx, no_limits(), no_limits());
    let mut long = job("alice", "phys").ntasks(4);
    long.time_limit = Some(TimeLimit::Minutes(120));
    long.hold = true;
    let id = fx.submit(long).unwrap();
    let cases = [
        (
            AssocLimits {
                max_wall_minutes: Some(60),
                ..no_limits()
            },
            "AssocMaxWallDurationPerJobLimit",
        ),
        (
            AssocLimits {
                max_tres_per_job: Tres {
                    cpu: Some(2),
                    ..Tres::default()
                },
                ..no_limits()
            },
            "AssocMaxCpuPerJobLimit",
        ),
    ];
    release(&mut fx, id);
    for (alice, name) in cases {
        tree(&mut fx, no_limits(), alice);
        fx.schedule();
        assert_eq!(fx.state(id), JobState::Pending);
        assert_eq!(fx.reason(id).to_string(), name);
    }
    tree(&mut fx, no_limits(), no_limits());
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn saved_association_reasons_read_back() {
    for r in AssocReason::ALL {
        assert_eq!(AssocReason::parse(r.as_str()), Some(r));
    }
}
