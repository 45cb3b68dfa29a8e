//! QOS on the pure core in simulated time: which QOS a job gets (`--qos`, the association's
//! default, `normal`), the refusals (an unknown QOS, one the association may not use under
//! `AccountingStorageEnforce=qos`, partition `AllowQos`/`DenyQos` for non-administrators,
//! submit counts), the limits that keep jobs pending with Slurm's `QOS*` reasons until they
//! free, and the QOS priority in the multifactor QOS factor.

use sluice_ctld::conf::TimeLimit;
use sluice_ctld::core::assoc::{self, AssocRecord, AssocTable, TresSecs};
use sluice_ctld::core::qos::{self, QosReason, QosTable};
use sluice_ctld::core::{JobReason, SubmitRequest};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;
use sluice_vocab::assoc_limits::{AssocLimits, Tres};
use sluice_vocab::qos::{Qos, QosFlags, QosLimits};

const INVALID_QOS: &str = "Invalid qos specification";
const POLICY: &str =
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";

/// Four 4-CPU nodes in `p` (default) and `only_high` (`AllowQos=high`), with
/// `AccountingStorageEnforce=<enforce>` and `extra` lines.
fn fixture(enforce: &str, extra: &[&str]) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .conf("SlurmdTimeout=0")
        .conf(&format!("AccountingStorageEnforce={enforce}"))
        .nodes("n[1-4]", "CPUs=4 RealMemory=4000")
        .partition("p", "Nodes=n[1-4] Default=YES")
        .partition("only_high", "Nodes=n[1-4] AllowQos=high")
        .partition("no_low", "Nodes=n[1-4] DenyQos=low");
    for line in extra {
        b = b.conf(line);
    }
    let mut fx = b.build();
    fx.register_all();
    fx
}

fn rec(account: &str, user: &str, parent: &str, qos: &[&str], default: &str) -> AssocRecord {
    AssocRecord {
        account: account.into(),
        user: user.into(),
        parent_account: parent.into(),
        limits: AssocLimits::default(),
        qos: qos.iter().map(|q| q.to_string()).collect(),
        default_qos: default.into(),
    }
}

/// root > phys > {alice (normal, high; default high), bob (normal)}.
fn tree(fx: &mut CoreFixture) {
    let table = AssocTable::new([
        rec("root", "", "", &["normal"], ""),
        rec("phys", "", "root", &["normal"], ""),
        rec("phys", "alice", "", &["high", "normal"], "high"),
        rec("phys", "bob", "", &["normal"], ""),
    ]);
    assoc::set(&mut fx.core, table);
}

fn named(name: &str, priority: u32, limits: QosLimits) -> Qos {
    Qos {
        name: name.into(),
        description: name.into(),
        priority,
        flags: QosFlags::default(),
        limits,
        ..Qos::default()
    }
}

fn set_qos(fx: &mut CoreFixture, list: Vec<Qos>) {
    qos::set(&mut fx.core, QosTable::new(list));
}

fn plain(fx: &mut CoreFixture) {
    set_qos(
        fx,
        vec![
            named("normal", 0, QosLimits::default()),
            named("high", 10, QosLimits::default()),
            named("low", 0, QosLimits::default()),
        ],
    );
}

/// A one-task job of `user` charged to `phys`, asking for QOS `qos` (`""`: none).
fn job(user: &str, qos: &str) -> SubmitRequest {
    let uid = 1000 + user.len() as u32;
    let mut r = SubmitRequest::new(uid, "j");
    r.launch.user = user.into();
    r.launch.account = "phys".into();
    r.launch.qos = qos.into();
    r
}

fn qos_of(fx: &CoreFixture, id: sluice_vocab::FedJobId) -> String {
    fx.core.job(id).unwrap().launch.qos.clone()
}

#[test]
fn a_job_gets_its_qos_the_association_default_or_normal() {
    let mut fx = fixture("associations", &[]);
    tree(&mut fx);
    plain(&mut fx);
    let asked = fx.submit(job("bob", "LOW")).unwrap();
    let by_default = fx.submit(job("alice", "")).unwrap();
    let normal = fx.submit(job("bob", "")).unwrap();
    assert_eq!(qos_of(&fx, asked), "low");
    assert_eq!(qos_of(&fx, by_default), "high");
    assert_eq!(qos_of(&fx, normal), "normal");
    let e = fx.submit(job("bob", "bogus")).unwrap_err().to_string();
    assert_eq!(e, INVALID_QOS, "an unknown QOS");
}

#[test]
fn enforce_qos_refuses_a_qos_the_association_may_not_use() {
    let mut fx = fixture("qos", &[]);
    tree(&mut fx);
    plain(&mut fx);
    assert!(fx.submit(job("alice", "high")).is_ok());
    let e = fx.submit(job("bob", "high")).unwrap_err().to_string();
    assert_eq!(e, INVALID_QOS);
    // Without `qos` in AccountingStorageEnforce the list is not checked.
    let mut open = fixture("associations", &[]);
    tree(&mut open);
    plain(&mut open);
    assert!(open.submit(job("bob", "high")).is_ok());
}

#[test]
fn allow_qos_and_deny_qos_refuse_non_administrators() {
    let mut fx = fixture("associations", &[]);
    tree(&mut fx);
    plain(&mut fx);
    let mut to = |user: &str, qos: &str, part: &str, admin: bool| {
        let mut r = job(user, qos);
        r.partition = Some(part.into());
        r.admin = admin;
        fx.submit(r).map(|_| ()).map_err(|e| e.to_string())
    };
    assert_eq!(to("alice", "", "only_high", false), Ok(()));
    assert_eq!(
        to("bob", "", "only_high", false),
        Err(INVALID_QOS.to_string())
    );
    assert_eq!(
        to("bob", "low", "no_low", false),
        Err(INVALID_QOS.to_string())
    );
    assert_eq!(to("bob", "normal", "no_low", false), Ok(()));
    assert_eq!(to("bob", "low", "no_low", true), Ok(()), "an administrator");
}

#[test]
fn max_jobs_per_user_pends_until_the_first_ends() {
    let mut fx = fixture("limits", &[]);
    tree(&mut fx);
    let limits = QosLimits {
        max_jobs_per_user: Some(1),
        ..QosLimits::default()
    };
    set_qos(&mut fx, vec![named("normal", 0, limits)]);
    let first = fx.submit_and_schedule(job("bob", ""));
    let second = fx.submit_and_schedule(job("bob", ""));
    let other = fx.submit_and_schedule(job("alice", "normal"));
    assert_eq!(fx.state(first), JobState::Running);
    assert_eq!(fx.state(second), JobState::Pending);
    assert_eq!(fx.reason(second), JobReason::Qos(QosReason::MaxJobsPerUser));
    assert_eq!(fx.reason(second).to_string(), "QOSMaxJobsPerUserLimit");
    assert_eq!(fx.state(other), JobState::Running, "another user");
    fx.exit(first, 0).unwrap();
    fx.advance(1);
    fx.schedule();
    assert_eq!(fx.state(second), JobState::Running);
}

#[test]
fn group_and_per_user_resources_pend_with_their_reasons() {
    let cases = [
        (
            QosLimits {
                grp_tres: Tres {
                    cpu: Some(6),
                    ..Tres::default()
                },
                ..QosLimits::default()
            },
            "QOSGrpCpuLimit",
        ),
        (
            QosLimits {
                max_tres_per_user: Tres {
                    cpu: Some(6),
                    ..Tres::default()
                },
                ..QosLimits::default()
            },
            "QOSMaxCpuPerUserLimit",
        ),
        (
            QosLimits {
                grp_jobs: Some(1),
                ..QosLimits::default()
            },
            "QOSGrpJobsLimit",
        ),
        (
            QosLimits {
                grp_tres: Tres {
                    node: Some(1),
                    ..Tres::default()
                },
                ..QosLimits::default()
            },
            "QOSGrpNodeLimit",
        ),
    ];
    for (limits, reason) in cases {
        let mut fx = fixture("limits", &[]);
        tree(&mut fx);
        set_qos(&mut fx, vec![named("normal", 0, limits)]);
        let a = fx.submit_and_schedule(job("bob", "").ntasks(4));
        let b = fx.submit_and_schedule(job("bob", "").ntasks(4));
        assert_eq!(fx.state(a), JobState::Running, "{reason}");
        assert_eq!(fx.state(b), JobState::Pending, "{reason}");
        assert_eq!(fx.reason(b).to_string(), reason);
        fx.exit(a, 0).unwrap();
        fx.advance(1);
        fx.schedule();
        assert_eq!(fx.state(b), JobState::Running, "{reason} freed");
    }
}

#[test]
fn per_job_limits_pend_or_refuse_with_deny_on_limit() {
    let mut fx = fixture("limits", &[]);
    tree(&mut fx);
    let limits = QosLimits {
        max_wall_minutes: Some(30),
        max_tres_per_job: Tres {
            cpu: Some(2),
            ..Tres::default()
        },
        ..QosLimits::default()
    };
    set_qos(&mut fx, vec![named("normal", 0, limits.clone())]);
    let long = fx.submit_and_schedule(job("bob", "").minutes(60));
    assert_eq!(fx.reason(long), JobReason::Qos(QosReason::MaxWall));
    assert_eq!(fx.reason(long).to_string(), "QOSMaxWallDurationPerJobLimit");
    let wide = fx.submit_and_schedule(job("bob", "").ntasks(4));
    assert_eq!(fx.reason(wide).to_string(), "QOSMaxCpuPerJobLimit");
    // Without -t the job gets the QOS's MaxWall and runs.
    let untimed = fx.submit_and_schedule(job("bob", ""));
    assert_eq!(fx.state(untimed), JobState::Running);
    assert_eq!(
        fx.core.job(untimed).unwrap().req.time_limit,
        TimeLimit::Minutes(30)
    );
    let mut deny = named("normal", 0, limits);
    deny.flags.deny_on_limit = true;
    set_qos(&mut fx, vec![deny]);
    let e = fx
        .submit(job("bob", "").minutes(60))
        .unwrap_err()
        .to_string();
    assert_eq!(e, POLICY);
    let e = fx.submit(job("bob", "").ntasks(4)).unwrap_err().to_string();
    assert_eq!(e, POLICY);
}

#[test]
fn submit_counts_refuse_with_the_policy_error() {
    let mut fx = fixture("limits", &[]);
    tree(&mut fx);
    let limits = QosLimits {
        max_submit_jobs_per_user: Some(2),
        grp_submit_jobs: Some(3),
        ..QosLimits::default()
    };
    set_qos(&mut fx, vec![named("normal", 0, limits)]);
    fx.submit(job("bob", "")).unwrap();
    fx.submit(job("bob", "")).unwrap();
    let e = fx.submit(job("bob", "")).unwrap_err().to_string();
    assert_eq!(e, POLICY, "MaxSubmitJobsPerUser");
    fx.submit(job("alice", "normal")).unwrap();
    let e = fx.submit(job("alice", "normal")).unwrap_err().to_string();
    assert_eq!(e, POLICY, "GrpSubmitJobs");
}

/// `tree`, plus account `chem` (under root) with user carol.
fn two_accounts(fx: &mut CoreFixture) {
    let table = AssocTable::new([
        rec("root", "", "", &["normal"], ""),
        rec("phys", "", "root", &["normal"], ""),
        rec("phys", "alice", "", &["normal"], ""),
        rec("phys", "bob", "", &["normal"], ""),
        rec("chem", "", "root", &["normal"], ""),
        rec("chem", "carol", "", &["normal"], ""),
    ]);
    assoc::set(&mut fx.core, table);
}

/// [`job`] charged to `account`.
fn job_in(user: &str, account: &str) -> SubmitRequest {
    let mut r = job(user, "");
    r.launch.account = account.into();
    r
}

#[test]
fn per_account_limits_count_every_user_of_the_account() {
    let cases = [
        (
            QosLimits {
                max_jobs_per_account: Some(1),
                ..QosLimits::default()
            },
            "MaxJobsPerAccount",
        ),
        (
            QosLimits {
                max_tres_per_account: Tres {
                    cpu: Some(6),
                    ..Tres::default()
                },
                ..QosLimits::default()
            },
            "MaxCpuPerAccount",
        ),
        (
            QosLimits {
                max_tres_per_account: Tres {
                    node: Some(1),
                    ..Tres::default()
                },
                ..QosLimits::default()
            },
            "MaxNodePerAccount",
        ),
    ];
    for (limits, reason) in cases {
        let mut fx = fixture("limits", &[]);
        two_accounts(&mut fx);
        set_qos(&mut fx, vec![named("normal", 0, limits)]);
        let bob = fx.submit_and_schedule(job_in("bob", "phys").ntasks(4));
        let alice = fx.submit_and_schedule(job_in("alice", "phys").ntasks(4));
        let carol = fx.submit_and_schedule(job_in("carol", "chem").ntasks(4));
        assert_eq!(fx.state(bob), JobState::Running, "{reason}");
        assert_eq!(fx.state(alice), JobState::Pending, "{reason}: same account");
        assert_eq!(fx.reason(alice).to_string(), reason);
        assert_eq!(
            fx.state(carol),
            JobState::Running,
            "{reason}: other account"
        );
        fx.exit(bob, 0).unwrap();
        fx.advance(1);
        fx.schedule();
        assert_eq!(fx.state(alice), JobState::Running, "{reason} freed");
    }
}

#[test]
fn max_submit_jobs_per_account_refuses_with_the_policy_error() {
    let mut fx = fixture("limits", &[]);
    two_accounts(&mut fx);
    let limits = QosLimits {
        max_submit_jobs_per_account: Some(2),
        ..QosLimits::default()
    };
    set_qos(&mut fx, vec![named("normal", 0, limits)]);
    fx.submit(job_in("bob", "phys")).unwrap();
    fx.submit(job_in("alice", "phys")).unwrap();
    let e = fx.submit(job_in("alice", "phys")).unwrap_err().to_string();
    assert_eq!(e, POLICY, "a third job of phys");
    fx.submit(job_in("carol", "chem")).unwrap();
}

#[test]
fn a_job_below_the_minimum_is_refused_or_pends_once_the_minimum_rises() {
    let mut fx = fixture("limits", &[]);
    tree(&mut fx);
    let min = |cpu| QosLimits {
        min_tres_per_job: Tres {
            cpu: Some(cpu),
            ..Tres::default()
        },
        ..QosLimits::default()
    };
    set_qos(&mut fx, vec![named("normal", 0, min(2))]);
    let e = fx.submit(job("bob", "")).unwrap_err().to_string();
    assert_eq!(e, POLICY, "one CPU under a minimum of two");
    // A job queued before the minimum rose waits with Slurm's reason.
    let first = fx.submit_and_schedule(job("bob", "").ntasks(2));
    let after = job("bob", "")
        .ntasks(2)
        .dependency(&format!("afterok:{first}"));
    let queued = fx.submit_and_schedule(after);
    assert_eq!(fx.state(queued), JobState::Pending);
    set_qos(&mut fx, vec![named("normal", 0, min(4))]);
    fx.exit(first, 0).unwrap();
    fx.advance(1);
    fx.schedule();
    assert_eq!(fx.state(queued), JobState::Pending);
    assert_eq!(fx.reason(queued), JobReason::Qos(QosReason::MinCpu));
    assert_eq!(fx.reason(queued).to_string(), "QOSMinCpuNotSatisfied");
    let wide = fx.submit_and_schedule(job("bob", "").ntasks(4));
    assert_eq!(fx.state(wide), JobState::Running);
}

#[test]
fn max_tres_per_node_judges_the_ask_spread_over_its_nodes() {
    let mut fx = fixture("limits", &[]);
    tree(&mut fx);
    let limits = QosLimits {
        max_tres_per_node: Tres {
            cpu: Some(2),
            ..Tres::default()
        },
        ..QosLimits::default()
    };
    set_qos(&mut fx, vec![named("normal", 0, limits.clone())]);
    let one_node = fx.submit_and_schedule(job("bob", "").ntasks(4));
    assert_eq!(fx.state(one_node), JobState::Pending);
    assert_eq!(fx.reason(one_node).to_string(), "QOSMaxCpuPerNode");
    let spread = fx.submit_and_schedule(job("bob", "").ntasks(4).nodes(2));
    assert_eq!(
        fx.state(spread),
        JobState::Running,
        "two CPUs on each of two nodes"
    );
    let mut deny = named("normal", 0, limits);
    deny.flags.deny_on_limit = true;
    set_qos(&mut fx, vec![deny]);
    let e = fx.submit(job("bob", "").ntasks(4)).unwrap_err().to_string();
    assert_eq!(e, POLICY);
}

fn cpu_mins(n: u64) -> QosLimits {
    QosLimits {
        grp_tres_mins: Tres {
            cpu: Some(n),
            ..Tres::default()
        },
        ..QosLimits::default()
    }
}

/// Sets the CPU-seconds each QOS has used, as the dbd's refresh does.
fn qos_used(fx: &mut CoreFixture, rows: &[(&str, u64)]) {
    let map = rows
        .iter()
        .map(|(q, secs)| {
            let t = TresSecs {
                cpu: *secs,
                ..TresSecs::default()
            };
            (q.to_string(), t)
        })
        .collect();
    qos::set_used(&mut fx.core, map);
}

#[test]
fn grp_tres_mins_used_up_holds_new_jobs_and_ends_running_ones() {
    let mut fx = fixture("limits", &[]);
    tree(&mut fx);
    set_qos(
        &mut fx,
        vec![
            named("normal", 0, QosLimits::default()),
            named("high", 10, cpu_mins(100)),
        ],
    );
    let running = fx.submit_and_schedule(job("alice", "high"));
    let other = fx.submit_and_schedule(job("bob", "normal"));
    // Below the limit: new jobs start, the tick leaves the running ones alone.
    qos_used(&mut fx, &[("high", 99 * 60)]);
    fx.advance(30);
    fx.tick();
    assert_eq!(fx.state(running), JobState::Running);
    // A refresh shows high at its 100 CPU-minutes: its running job ends TIMEOUT at the next
    // tick and a new one waits with Slurm's reason; normal's jobs are not held.
    qos_used(&mut fx, &[("high", 100 * 60)]);
    fx.advance(30);
    fx.tick();
    assert_eq!(fx.state(running), JobState::Timeout);
    assert_eq!(fx.reason(running), JobReason::TimeLimit);
    assert_eq!(fx.state(other), JobState::Running);
    let held = fx.submit_and_schedule(job("alice", "high"));
    assert_eq!(fx.state(held), JobState::Pending);
    assert_eq!(fx.reason(held), JobReason::Qos(QosReason::GrpCpuMins));
    assert_eq!(fx.reason(held).to_string(), "QOSGrpCPUMinutesLimit");
    // Usage decays below the limit: the job starts.
    qos_used(&mut fx, &[("high", 50 * 60)]);
    fx.schedule();
    assert_eq!(fx.state(held), JobState::Running);
}

#[test]
fn the_qos_priority_feeds_the_qos_factor() {
    let mut fx = fixture(
        "associations",
        &[
            "PriorityType=priority/multifactor",
            "PriorityWeightQOS=1000",
        ],
    );
    tree(&mut fx);
    plain(&mut fx);
    // Fill the cluster so both stay queued.
    let blocker = fx.submit_and_schedule(job("bob", "").nodes(4).ntasks(16));
    assert_eq!(fx.state(blocker), JobState::Running);
    let normal = fx.submit(job("bob", "normal")).unwrap();
    let high = fx.submit(job("alice", "high")).unwrap();
    fx.advance(1);
    fx.tick();
    let (n, h) = (
        fx.core.job(normal).unwrap().priority,
        fx.core.job(high).unwrap().priority,
    );
    assert!(h >= n + 999, "high {h} normal {n}");
    let pending: Vec<_> = fx.core.pending().collect();
    assert_eq!(pending, [high, normal]);
}

/// A user limit of `cpus` CPUs.
fn per_user_cpus(cpus: u64) -> QosLimits {
    QosLimits {
        max_tres_per_user: Tres {
            cpu: Some(cpus),
            ..Tres::default()
        },
        ..QosLimits::default()
    }
}

#[test]
fn a_partitions_qos_holds_its_jobs_first_unless_the_jobs_qos_is_over_it() {
    // `p` has QOS=part (at most 4 CPUs per user); the job's own QOS allows 8.
    let mut fx = fixture("limits", &["PartitionName=pq Nodes=n[1-4] QOS=Part"]);
    tree(&mut fx);
    set_qos(
        &mut fx,
        vec![
            named("normal", 0, per_user_cpus(8)),
            named("part", 0, per_user_cpus(4)),
        ],
    );
    let a = fx.submit_and_schedule(job("bob", "").ntasks(4).partition("pq"));
    let b = fx.submit_and_schedule(job("bob", "").ntasks(4).partition("pq"));
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(
        (fx.state(b), fx.reason(b).to_string().as_str()),
        (JobState::Pending, "QOSMaxCpuPerUserLimit"),
        "the partition's limit decides"
    );
    // Elsewhere only the job's QOS holds it.
    let c = fx.submit_and_schedule(job("bob", "").ntasks(4).partition("p"));
    assert_eq!(fx.state(c), JobState::Running);

    // With OverPartQOS the job's own QOS decides the limits both set.
    let mut fx = fixture("limits", &["PartitionName=pq Nodes=n[1-4] QOS=part"]);
    tree(&mut fx);
    let mut over = named("normal", 0, per_user_cpus(8));
    over.flags.over_part_qos = true;
    set_qos(&mut fx, vec![over, named("part", 0, per_user_cpus(4))]);
    let a = fx.submit_and_schedule(job("bob", "").ntasks(4).partition("pq"));
    let b = fx.submit_and_schedule(job("bob", "").ntasks(4).partition("pq"));
    assert_eq!(
        (fx.state(a), fx.state(b)),
        (JobState::Running, JobState::Running)
    );
    let c = fx.submit_and_schedule(job("bob", "").ntasks(4).partition("pq"));
    assert_eq!(
        fx.reason(c).to_string(),
        "QOSMaxCpuPerUserLimit",
        "8 is the limit"
    );
}

#[test]
fn a_partitions_qos_counts_every_job_in_the_partition_whatever_its_qos() {
    // GrpJobs=1 on the partition's QOS: a job of `high` and a job of `normal` in the same
    // partition share it; limits the partition's QOS does not set come from the job's.
    let mut fx = fixture("limits", &["PartitionName=pq Nodes=n[1-4] QOS=part"]);
    tree(&mut fx);
    set_qos(
        &mut fx,
        vec![
            named(
                "normal",
                0,
                QosLimits {
                    grp_tres: Tres {
                        cpu: Some(2),
                        ..Tres::default()
                    },
                    ..QosLimits::default()
                },
            ),
            named("high", 0, QosLimits::default()),
            named(
                "part",
                0,
                QosLimits {
                    grp_jobs: Some(1),
                    ..QosLimits::default()
                },
            ),
        ],
    );
    let a = fx.submit_and_schedule(job("alice", "high").partition("pq"));
    let b = fx.submit_and_schedule(job("bob", "normal").partition("pq"));
    assert_eq!(fx.state(a), JobState::Running);
    assert_eq!(fx.reason(b).to_string(), "QOSGrpJobsLimit");
    fx.exit(a, 0).unwrap();
    fx.advance(1);
    fx.schedule();
    assert_eq!(fx.state(b), JobState::Running);
    let c = fx.submit_and_schedule(job("bob", "normal").ntasks(4).partition("p"));
    assert_eq!(
        fx.reason(c).to_string(),
        "QOSGrpCpuLimit",
        "the job's own QOS still holds where the partition's sets nothing"
    );
}

#[test]
fn max_tres_mins_per_job_holds_a_job_whose_ask_times_its_time_limit_is_over() {
    // 60 CPU-minutes and 2 node-minutes per job.
    let limits = QosLimits {
        max_tres_mins_per_job: Tres {
            cpu: Some(60),
            node: Some(60),
            ..Tres::default()
        },
        ..QosLimits::default()
    };
    let mut fx = fixture("limits", &[]);
    tree(&mut fx);
    set_qos(&mut fx, vec![named("normal", 0, limits.clone())]);
    let big = fx.submit_and_schedule(job("bob", "").ntasks(4).minutes(20));
    assert_eq!(
        fx.reason(big).to_string(),
        "QOSMaxCpuMinutesPerJobLimit",
        "4 CPUs for 20 minutes is 80"
    );
    let fits = fx.submit_and_schedule(job("bob", "").ntasks(2).minutes(30));
    assert_eq!(
        fx.state(fits),
        JobState::Running,
        "2 CPUs for 30 minutes is 60"
    );
    // Without a time limit (the partition's is unlimited) no amount of minutes fits.
    let endless = fx.submit_and_schedule(job("bob", ""));
    assert_eq!(
        fx.reason(endless).to_string(),
        "QOSMaxCpuMinutesPerJobLimit"
    );
    let mut deny = named("normal", 0, limits);
    deny.flags.deny_on_limit = true;
    set_qos(&mut fx, vec![deny]);
    let e = fx.submit(job("bob", "").ntasks(4).minutes(20)).unwrap_err();
    assert_eq!(e.to_string(), POLICY);
    fx.submit(job("bob", "").minutes(60)).unwrap();
}
