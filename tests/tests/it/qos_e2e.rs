//! QOS on a real cluster, as real Linux users: root adds a QOS with `sacctmgr add qos`, gives
//! one user access with `modify user ... set QOS+=`; `show qos` and `show assoc` show them.
//! Under `AccountingStorageEnforce=associations,limits,qos` a job without `--qos` gets
//! `normal`, an unknown QOS and one the user may not use are refused with "Invalid qos
//! specification", `MaxJobsPerUser` keeps the second job pending with
//! `QOSMaxJobsPerUserLimit` until the first ends, a partition with `AllowQos=high` refuses
//! other QOS, and sacct shows each job's QOS; QOS added, given and deleted reach the running
//! controller at once. Per-account limits (`MaxJobsPerAccount`, `MaxSubmitJobsPerAccount`)
//! hold every user of the account and no other account. A QOS's `GrpTRESMins` used up ends
//! its running jobs (TIMEOUT) and holds new ones (`QOSGrpCPUMinutesLimit`).

use crate::common;

use common::cluster::Cluster;
use common::users::TestUser;

fn as_user(c: &Cluster, user: &TestUser, program: &str, args: &[&str]) -> common::CmdOutput {
    let mut cmd = c.command(program, args);
    common::run(user.apply(&mut cmd), None)
}

/// Lets the users reach the site and write in its work directory, as on a shared host.
fn open_site(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    let dir = c.dir();
    std::fs::set_permissions(dir.parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
}

/// Waits until the controller knows `user`'s association (the dbd pushes it within a second
/// of `sacctmgr add user`; a submission before that is refused).
fn wait_known(c: &Cluster, user: &TestUser) {
    c.wait_for("the controller's association list", || {
        as_user(c, user, "sbatch", &["--test-only", "--wrap", "true"]).code == 0
    });
}

const INVALID_QOS: &str = "sbatch: error: Batch job submission failed: Invalid qos specification\n";

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn qos_are_chosen_refused_limited_and_shown() {
    let (member, other) = (TestUser::create("qa"), TestUser::create("qb"));
    let c = Cluster::start_with(
        1,
        &[
            "AccountingStorageEnforce=associations,limits,qos",
            "PartitionName=hi Nodes=ALL MaxTime=INFINITE State=UP AllowQos=high",
        ],
    );
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "phys"]);
    for u in [&member, &other] {
        c.ok("sacctmgr", &["-i", "add", "user", &u.name, "account=phys"]);
    }
    let added = c.ok(
        "sacctmgr",
        &[
            "-i",
            "add",
            "qos",
            "high",
            "Priority=10",
            "MaxJobsPerUser=1",
        ],
    );
    assert_eq!(
        added,
        " Adding QOS(s)\n  high\n Settings\n  Description    = high\n  Priority       = 10\n  \
         MaxJobsPU      = 1\n"
    );
    let shown = c.ok(
        "sacctmgr",
        &["-P", "-n", "show", "qos", "format=name,priority,maxjobspu"],
    );
    assert_eq!(shown, "normal|0|\nhigh|10|1\n");
    let header = c.ok(
        "sacctmgr",
        &["show", "qos", "format=name,priority,maxjobspu"],
    );
    assert_eq!(
        header.lines().next(),
        Some("      Name   Priority MaxJobsPU ")
    );
    let cluster = &c.names[0];
    let modified = c.ok(
        "sacctmgr",
        &["-i", "modify", "user", &member.name, "set", "QOS+=high"],
    );
    assert_eq!(
        modified,
        format!(
            " Modified user associations...\n  C = {cluster:<10} A = phys       U = {:<9}\n",
            member.name
        )
    );
    let bad = c.cmd(
        "sacctmgr",
        &[
            "-i",
            "modify",
            "user",
            &member.name,
            "set",
            "DefaultQOS=nope",
        ],
    );
    assert_eq!(bad.code, 1, "{bad:?}");
    assert_eq!(bad.stderr, " Error with request: Unknown QOS name: nope\n");
    let assocs = c.ok(
        "sacctmgr",
        &[
            "-P",
            "-n",
            "show",
            "assoc",
            "account=phys",
            "format=account,user,qos,defaultqos",
        ],
    );
    assert_eq!(
        assocs,
        format!(
            "phys||normal|\nphys|{}|high,normal|\nphys|{}|normal|\n",
            member.name, other.name
        )
    );

    // The controller fetches the dbd's associations and QOS when it starts (and every 30 s).
    c.kill9_ctld();
    c.up();
    wait_known(&c, &member);
    let sleep = ["--parsable", "--wrap", "sleep 300"];
    let plain = as_user(&c, &member, "sbatch", &sleep);
    assert_eq!(plain.code, 0, "{plain:?}");
    let plain = plain.stdout.trim().to_string();
    assert_eq!(
        c.ok("squeue", &["-h", "-o", "%q", "-j", &plain]),
        "normal\n"
    );
    let unknown = as_user(
        &c,
        &member,
        "sbatch",
        &[&["--qos=bogus"], &sleep[..]].concat(),
    );
    assert_eq!(unknown.stderr, INVALID_QOS, "{unknown:?}");
    let not_theirs = as_user(
        &c,
        &other,
        "sbatch",
        &[&["-q", "high"], &sleep[..]].concat(),
    );
    assert_eq!(not_theirs.stderr, INVALID_QOS, "{not_theirs:?}");
    let wrong_part = as_user(&c, &member, "sbatch", &[&["-p", "hi"], &sleep[..]].concat());
    assert_eq!(
        wrong_part.stderr, INVALID_QOS,
        "AllowQos=high: {wrong_part:?}"
    );

    let high = |extra: &[&str]| {
        let out = as_user(
            &c,
            &member,
            "sbatch",
            &[extra, &["--qos=high"], &sleep[..]].concat(),
        );
        assert_eq!(out.code, 0, "{out:?}");
        out.stdout.trim().to_string()
    };
    // The node to the QOS jobs alone.
    c.ok("scancel", &[&plain]);
    c.wait_done(&plain);
    let first = high(&["-p", "hi"]);
    let second = high(&[]);
    c.wait_state(&first, "RUNNING");
    c.wait_for("QOSMaxJobsPerUserLimit reason", || {
        c.ok("squeue", &["-h", "-o", "%r", "-j", &second]).trim() == "QOSMaxJobsPerUserLimit"
    });
    let shown = c.ok("scontrol", &["show", "job", &second]);
    assert!(shown.contains(" QOS=high"), "{shown}");
    c.ok("scancel", &[&first]);
    c.wait_state(&second, "RUNNING");
    c.wait_for("the QOS in the history", || {
        c.ok(
            "sacct",
            &["-n", "-P", "-X", "-o", "jobid,qos", "-j", &first],
        ) == format!("{first}|high\n")
    });
    c.ok("scancel", &[&second, &plain]);

    // QOS changes reach the running controller at once (the dbd's WatchAssociations push),
    // well before its 30 s refresh: a new QOS given to the account, then taken away.
    c.ok("sacctmgr", &["-i", "add", "qos", "low"]);
    c.ok(
        "sacctmgr",
        &["-i", "modify", "account", "phys", "set", "QOS+=low"],
    );
    let low = ["--test-only", "--qos=low", "--wrap", "true"];
    let pushed = std::time::Duration::from_secs(10);
    c.wait_within(pushed, "the new QOS pushed to the controller", || {
        as_user(&c, &other, "sbatch", &low).code == 0
    });
    c.ok("sacctmgr", &["-i", "delete", "qos", "low"]);
    c.wait_within(pushed, "the deleted QOS pushed to the controller", || {
        as_user(&c, &other, "sbatch", &low)
            .stderr
            .contains("Invalid qos specification")
    });
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn a_partitions_qos_limits_its_jobs_unless_the_jobs_qos_is_over_it() {
    let user = TestUser::create("qp");
    let c = Cluster::start_with(
        1,
        &[
            "AccountingStorageEnforce=associations,limits",
            // One CPU per job, so two jobs share the node and the limits decide.
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "PartitionName=pq Nodes=ALL MaxTime=INFINITE State=UP QOS=part",
        ],
    );
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "phys"]);
    c.ok(
        "sacctmgr",
        &["-i", "add", "user", &user.name, "account=phys"],
    );
    wait_known(&c, &user);
    c.ok(
        "sacctmgr",
        &["-i", "add", "qos", "part", "MaxTRESPerUser=cpu=1"],
    );
    let shown = c.ok("scontrol", &["show", "partition", "pq"]);
    assert!(shown.contains(" QoS=part\n"), "{shown}");
    // The QOS reach the controller at once (WatchAssociations).
    let sleep = |part: &str| {
        let out = as_user(
            &c,
            &user,
            "sbatch",
            &["--parsable", "-p", part, "--wrap", "sleep 300"],
        );
        assert_eq!(out.code, 0, "{out:?}");
        out.stdout.trim().to_string()
    };
    c.wait_for("the partition's QOS at the controller", || {
        let id = sleep("pq");
        c.wait_state(&id, "RUNNING");
        let second = sleep("pq");
        let mut held = false;
        c.wait_for("the second job judged", || {
            let s = c.ok("squeue", &["-h", "-o", "%T %r", "-j", &second]);
            held = s.contains("QOSMaxCpuPerUserLimit");
            held || s.starts_with("RUNNING")
        });
        c.ok("scancel", &[&id, &second]);
        c.wait_done(&id);
        c.wait_done(&second);
        held
    });
    // With OverPartQOS on the job's QOS, its own limits come first: normal's MaxTRESPerUser
    // of 2 CPUs decides, not the partition's 1.
    c.ok(
        "sacctmgr",
        &[
            "-i",
            "modify",
            "qos",
            "normal",
            "set",
            "Flags=OverPartQOS",
            "MaxTRESPerUser=cpu=2",
        ],
    );
    let shown = c.ok(
        "sacctmgr",
        &["-P", "-n", "show", "qos", "format=name,flags,maxtrespu"],
    );
    assert_eq!(shown, "normal|OverPartQOS|cpu=2\npart||cpu=1\n");
    c.wait_for("the job's QOS deciding", || {
        let (a, b) = (sleep("pq"), sleep("pq"));
        c.wait_state(&a, "RUNNING");
        let mut running = false;
        c.wait_for(
            "the second job started or held by the partition's QOS",
            || {
                let s = c.ok("squeue", &["-h", "-o", "%T %r", "-j", &b]);
                running = s.starts_with("RUNNING");
                running || s.contains("QOSMaxCpuPerUserLimit")
            },
        );
        c.ok("scancel", &[&a, &b]);
        c.wait_done(&a);
        c.wait_done(&b);
        running
    });
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn per_account_limits_hold_every_user_of_the_account() {
    let (a, b, other) = (
        TestUser::create("qx"),
        TestUser::create("qy"),
        TestUser::create("qz"),
    );
    let c = Cluster::start_with(
        1,
        &[
            "AccountingStorageEnforce=associations,limits",
            // One CPU per job, so the jobs share the node and the limits decide.
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
        ],
    );
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "phys,chem"]);
    for (u, account) in [(&a, "phys"), (&b, "phys"), (&other, "chem")] {
        let acct = format!("account={account}");
        c.ok("sacctmgr", &["-i", "add", "user", &u.name, &acct]);
    }
    for u in [&a, &b, &other] {
        wait_known(&c, u);
    }
    c.ok(
        "sacctmgr",
        &[
            "-i",
            "modify",
            "qos",
            "normal",
            "set",
            "MaxJobsPerAccount=1",
            "MaxSubmitJobsPerAccount=2",
            "MinTRESPerJob=cpu=1",
        ],
    );
    let shown = c.ok(
        "sacctmgr",
        &[
            "-P",
            "-n",
            "show",
            "qos",
            "format=name,maxjobspa,maxsubmitpa,mintres",
        ],
    );
    assert_eq!(shown, "normal|1|2|cpu=1\n");
    let sleep = |u: &TestUser| {
        let out = as_user(&c, u, "sbatch", &["--parsable", "--wrap", "sleep 300"]);
        (out.code == 0).then(|| out.stdout.trim().to_string())
    };
    // The change reaches the controller by the dbd's push: the first pair of phys jobs may
    // come before it, so try until the second one is held by the account's limit.
    c.wait_for("phys's second job held by MaxJobsPerAccount", || {
        let first = sleep(&a).unwrap();
        c.wait_state(&first, "RUNNING");
        let second = sleep(&b).unwrap();
        let mut held = false;
        c.wait_for("the second job judged", || {
            let s = c.ok("squeue", &["-h", "-o", "%T %r", "-j", &second]);
            held = s == "PENDING MaxJobsPerAccount\n";
            held || s.starts_with("RUNNING")
        });
        if !held {
            c.ok("scancel", &[&first, &second]);
            c.wait_done(&first);
            c.wait_done(&second);
        }
        held
    });
    // chem is another account: its job runs beside phys's.
    let chem = sleep(&other).unwrap();
    c.wait_state(&chem, "RUNNING");
    // phys has two jobs in the queue: a third is refused, whoever of phys submits it.
    let refused = as_user(&c, &a, "sbatch", &["--wrap", "true"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert_eq!(
        refused.stderr,
        "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy \
         (job submit limit, user's size and/or time limits)\n"
    );
    c.ok("scancel", &["-u", &a.name]);
    c.ok("scancel", &["-u", &b.name]);
    c.ok("scancel", &["-u", &other.name]);
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn grp_tres_mins_used_up_ends_the_qos_running_jobs_and_holds_new_ones() {
    let user = TestUser::create("qm");
    let c = Cluster::start_with(
        1,
        &[
            "AccountingStorageEnforce=associations,limits",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
        ],
    );
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "phys"]);
    c.ok(
        "sacctmgr",
        &["-i", "add", "user", &user.name, "account=phys"],
    );
    wait_known(&c, &user);
    let sleep = || {
        let out = as_user(&c, &user, "sbatch", &["--parsable", "--wrap", "sleep 300"]);
        assert_eq!(out.code, 0, "{out:?}");
        out.stdout.trim().to_string()
    };
    let (a, b) = (sleep(), sleep());
    c.wait_state(&a, "RUNNING");
    c.wait_state(&b, "RUNNING");
    // A limit of 0 minutes is used up at once: the QOS's running jobs end TIMEOUT.
    c.ok(
        "sacctmgr",
        &["-i", "modify", "qos", "normal", "set", "GrpTRESMins=cpu=0"],
    );
    let shown = c.ok(
        "sacctmgr",
        &["-P", "-n", "show", "qos", "format=name,grptresmins"],
    );
    assert_eq!(shown, "normal|cpu=0\n");
    for id in [&a, &b] {
        assert_eq!(c.wait_done(id), "TIMEOUT", "job {id}");
    }
    let held = sleep();
    c.wait_for("the new job held by the QOS's minutes", || {
        c.ok("squeue", &["-h", "-o", "%T %r", "-j", &held]) == "PENDING QOSGrpCPUMinutesLimit\n"
    });
    c.ok("scancel", &[&held]);
}

#[test]
fn a_usage_factor_is_set_shown_and_reset_by_sacctmgr() {
    let c = Cluster::start(1);
    let show = |c: &Cluster| {
        c.ok(
            "sacctmgr",
            &["-P", "-n", "show", "qos", "format=name,usagefactor"],
        )
    };
    assert_eq!(show(&c), "normal|1.000000\n", "Slurm's default");
    c.ok(
        "sacctmgr",
        &["-i", "add", "qos", "scav", "UsageFactor=0.25"],
    );
    c.ok(
        "sacctmgr",
        &["-i", "modify", "qos", "normal", "set", "UsageFactor=2"],
    );
    assert_eq!(show(&c), "normal|2.000000\nscav|0.250000\n");
    let out = c.cmd(
        "sacctmgr",
        &["-i", "modify", "qos", "scav", "set", "UsageFactor=-3"],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("Invalid limit UsageFactor=-3"),
        "{out:?}"
    );
    c.ok(
        "sacctmgr",
        &["-i", "modify", "qos", "normal", "set", "UsageFactor=-1"],
    );
    assert_eq!(show(&c), "normal|1.000000\nscav|0.250000\n");
}
