//! Issue 10 on a real cluster through the real commands: Fair Tree ranks every user of the
//! less-used account above the other account's users (`sshare -l` shows LevelFS, `sprio`
//! the factors and `PriorityWeightTRES`'s TRES column), `PrivateData=usage` narrows what a
//! user's sshare shows, and a job's `--wckey` reaches the accounting history (`sacct -o
//! wckey`, `--wckeys`).

use crate::common;

use common::cluster::Cluster;
use common::users::TestUser;

fn as_user(c: &Cluster, user: &TestUser, program: &str, args: &[&str]) -> common::CmdOutput {
    let mut cmd = c.command(program, args);
    common::run(user.apply(&mut cmd), None)
}

/// Lets the users reach the site and write in the work directory.
fn open_site(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    let dir = c.dir();
    std::fs::set_permissions(dir.parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
}

fn submitted(out: &common::CmdOutput) -> u32 {
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().parse().expect("a job id")
}

/// sshare's `-a -P -n` lines, each split, for the fields `format`.
fn shares(c: &Cluster, format: &str) -> Vec<Vec<String>> {
    c.ok("sshare", &["-a", "-P", "-n", "-o", format])
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

/// The `Account|User|...` line of `user` (trimmed account) among `lines`.
fn line_of<'a>(lines: &'a [Vec<String>], user: &str) -> &'a [String] {
    lines
        .iter()
        .find(|l| l.get(1).map(String::as_str) == Some(user))
        .unwrap_or_else(|| panic!("no line of {user} in {lines:?}"))
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn fair_tree_puts_the_less_used_accounts_users_first() {
    let (a1, b1, b2) = (
        TestUser::create("fa1"),
        TestUser::create("fb1"),
        TestUser::create("fb2"),
    );
    let c = Cluster::start_with(
        1,
        &[
            "PriorityType=priority/multifactor",
            "PriorityWeightFairshare=100000",
            "PriorityWeightTRES=CPU=1000",
            "PriorityDecayHalfLife=0",
            "PriorityCalcPeriod=0:1",
        ],
    );
    open_site(&c);
    for account in ["ta", "tb"] {
        c.ok("sacctmgr", &["-i", "add", "account", account]);
    }
    for (user, account) in [(&a1, "ta"), (&b1, "tb"), (&b2, "tb")] {
        let acct = format!("account={account}");
        c.ok("sacctmgr", &["-i", "add", "user", &user.name, &acct]);
    }
    // Both accounts use the node, tb's b2 for longer: ta's level fair share is higher, so
    // a1 (who used ta's all) ranks above tb's b1 (who used nothing).
    for (user, account, secs) in [(&a1, "ta", "1"), (&b2, "tb", "4")] {
        let wrap = format!("sleep {secs}");
        let id = submitted(&as_user(
            &c,
            user,
            "sbatch",
            &["--parsable", "-A", account, "--exclusive", "--wrap", &wrap],
        ));
        assert_eq!(c.wait_done(id), "COMPLETED");
    }
    let format = "Account,User,RawUsage,EffectvUsage,FairShare,LevelFS";
    c.wait_for("both accounts' usage in sshare", || {
        let lines = shares(&c, format);
        let used = |user: &str| {
            lines
                .iter()
                .find(|l| l.get(1).map(String::as_str) == Some(user))
                .and_then(|l| l[2].parse::<u64>().ok())
                .is_some_and(|u| u > 0)
        };
        used(&a1.name) && used(&b2.name)
    });
    let lines = shares(&c, format);
    let factor = |user: &TestUser| -> f64 { line_of(&lines, &user.name)[4].parse().unwrap() };
    assert!(factor(&a1) > factor(&b1), "{lines:?}");
    assert!(factor(&b1) > factor(&b2), "{lines:?}");
    // b1 never ran: infinite level fair share.
    assert_eq!(line_of(&lines, &b1.name)[5], "inf", "{lines:?}");
    let ta = lines
        .iter()
        .find(|l| l[0].trim() == "ta" && l[1].is_empty())
        .expect("ta's account line");
    let tb = lines
        .iter()
        .find(|l| l[0].trim() == "tb" && l[1].is_empty())
        .expect("tb's account line");
    let lfs = |l: &[String]| l[5].parse::<f64>().unwrap();
    assert!(lfs(ta) > lfs(tb), "{lines:?}");
    // The long listing has Slurm's 22.05 columns.
    let long = c.ok("sshare", &["-l", "-n", "-P", "-u", &a1.name]);
    assert_eq!(
        long.lines().last().unwrap().split('|').count(),
        11,
        "{long}"
    );

    // Pending jobs of a1 and b1 behind a blocker: sprio shows a1's higher, with the TRES
    // column PriorityWeightTRES adds.
    let blocker = c.sbatch(&["--exclusive", "--wrap", "sleep 300"]);
    c.wait_state(blocker, "RUNNING");
    let sleep = ["--parsable", "--exclusive", "--wrap", "sleep 1"];
    let mut args = vec!["-A", "ta"];
    args.extend(sleep);
    let ja = submitted(&as_user(&c, &a1, "sbatch", &args));
    args[1] = "tb";
    let jb = submitted(&as_user(&c, &b1, "sbatch", &args));
    let prio = |job: u32| -> u64 {
        let out = c.ok("sprio", &["-h", &format!("--jobs={job}"), "-o", "%Y"]);
        out.trim().parse().unwrap_or(0)
    };
    c.wait_for("a1's job ahead of b1's in sprio", || prio(ja) > prio(jb));
    let shown = c.ok("sprio", &["-w"]);
    let head = shown.lines().next().unwrap_or_default();
    assert!(head.ends_with("TRES"), "{shown}");
    assert!(
        shown
            .lines()
            .nth(1)
            .unwrap_or_default()
            .ends_with("CPU=1000"),
        "{shown}"
    );
    let tres = c.ok("sprio", &["-h", &format!("--jobs={ja}"), "-o", "%T"]);
    assert!(tres.trim().starts_with("cpu="), "{tres}");
    c.ok(
        "scancel",
        &[&blocker.to_string(), &ja.to_string(), &jb.to_string()],
    );
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn private_usage_shows_a_user_only_their_own_shares() {
    let (me, other) = (TestUser::create("pu"), TestUser::create("po"));
    let c = Cluster::start_with(
        1,
        &[
            "PriorityType=priority/multifactor",
            "PriorityWeightFairshare=1000",
            "PriorityCalcPeriod=0:1",
            "PrivateData=usage",
        ],
    );
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "lab"]);
    for user in [&me, &other] {
        c.ok(
            "sacctmgr",
            &["-i", "add", "user", &user.name, "account=lab"],
        );
    }
    c.wait_for("both users in root's sshare", || {
        let all = c.ok("sshare", &["-a", "-P", "-n", "-o", "Account,User"]);
        all.contains(&me.name) && all.contains(&other.name)
    });
    let mine = as_user(&c, &me, "sshare", &["-a", "-P", "-n", "-o", "Account,User"]);
    assert_eq!(mine.code, 0, "{mine:?}");
    assert_eq!(mine.stdout, format!("  lab|{}\n", me.name), "{mine:?}");
    // sprio is not usage: the user still sees every pending job's factors.
    let blocker = c.sbatch(&["--exclusive", "--wrap", "sleep 300"]);
    c.wait_state(blocker, "RUNNING");
    let theirs = submitted(&as_user(
        &c,
        &other,
        "sbatch",
        &["--parsable", "--exclusive", "--wrap", "sleep 1"],
    ));
    let seen = as_user(&c, &me, "sprio", &["-h", "-o", "%i %u"]);
    assert_eq!(seen.code, 0, "{seen:?}");
    assert!(
        seen.stdout.contains(&format!("{theirs} {}", other.name)),
        "{seen:?}"
    );
    c.ok("scancel", &[&blocker.to_string(), &theirs.to_string()]);
}

#[test]
fn a_jobs_wckey_is_in_sacct() {
    let c = Cluster::start(1);
    let with = c.sbatch(&["--wckey=proj7", "--wrap", "true"]);
    let without = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(with), "COMPLETED");
    assert_eq!(c.wait_done(without), "COMPLETED");
    let jobs = format!("{with},{without}");
    let mut shown = String::new();
    c.wait_for("both jobs in sacct", || {
        shown = c.ok(
            "sacct",
            &["-X", "-n", "-P", "-j", &jobs, "-o", "jobid,wckey,state"],
        );
        shown.lines().filter(|l| l.ends_with("|COMPLETED")).count() == 2
    });
    assert_eq!(
        shown,
        format!("{with}|proj7|COMPLETED\n{without}||COMPLETED\n")
    );
    let picked = c.ok(
        "sacct",
        &[
            "-X",
            "-n",
            "-P",
            "-a",
            "-S",
            "now-1hour",
            "--wckeys=proj7",
            "-o",
            "jobid",
        ],
    );
    assert_eq!(picked, format!("{with}\n"));
    let none = c.ok(
        "sacct",
        &[
            "-X",
            "-n",
            "-P",
            "-a",
            "-S",
            "now-1hour",
            "-W",
            "other",
            "-o",
            "jobid",
        ],
    );
    assert_eq!(none, "");
}
