//! Job priority on a real cluster through the real commands, as real Linux users: with
//! `priority/multifactor` and a fair-share weight, the user whose jobs used the cluster has
//! the lower fair-share factor (`sshare`), so when both wait, `sprio` shows the lighter
//! user's job higher and the scheduler starts it first. `sacctmgr` stores `Fairshare=` and
//! lists the users' associations (`-s`, `withassoc`).

use crate::common;

use common::cluster::Cluster;
use common::users::TestUser;

fn as_user(c: &Cluster, user: &TestUser, program: &str, args: &[&str]) -> common::CmdOutput {
    let mut cmd = c.command(program, args);
    common::run(user.apply(&mut cmd), None)
}

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

/// The `-P` line of sshare for `user`, split.
fn share_of(c: &Cluster, user: &str) -> Vec<String> {
    let out = c.ok(
        "sshare",
        &[
            "-a",
            "-P",
            "-n",
            "-o",
            "Account,User,RawShares,RawUsage,FairShare",
        ],
    );
    out.lines()
        .find(|l| l.split('|').nth(1) == Some(user))
        .map(|l| l.split('|').map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn the_heavier_users_pending_job_sorts_later() {
    let (heavy, light) = (TestUser::create("fh"), TestUser::create("fl"));
    let c = Cluster::start_with(
        1,
        &[
            "PriorityType=priority/multifactor",
            "PriorityWeightFairshare=100000",
            "PriorityWeightAge=10",
            "PriorityDecayHalfLife=0",
            "PriorityCalcPeriod=0:1",
        ],
    );
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "lab"]);
    for (user, shares) in [(&heavy, "2"), (&light, "1")] {
        let fairshare = format!("fairshare={shares}");
        c.ok(
            "sacctmgr",
            &["-i", "add", "user", &user.name, "account=lab", &fairshare],
        );
    }
    // The stored shares, through -s (the example) and withassoc.
    let listed = c.ok(
        "sacctmgr",
        &[
            "-n",
            "-s",
            "list",
            "user",
            &heavy.name,
            "format=account%256",
        ],
    );
    assert_eq!(listed.trim(), "lab", "{listed:?}");
    let listed = c.ok(
        "sacctmgr",
        &[
            "-n",
            "-P",
            "list",
            "user",
            &light.name,
            "withassoc",
            "format=user,account,share",
        ],
    );
    assert_eq!(listed, format!("{}|lab|1\n", light.name));
    let accounts = c.ok(
        "sacctmgr",
        &[
            "-n",
            "-P",
            "list",
            "account",
            "lab",
            "withassoc",
            "format=account,user,share",
        ],
    );
    assert!(accounts.starts_with("lab||1\n"), "{accounts}");
    assert!(
        accounts.contains(&format!("lab|{}|2\n", heavy.name)),
        "{accounts}"
    );

    // The heavy user uses the node for a few seconds.
    let used = submitted(&as_user(
        &c,
        &heavy,
        "sbatch",
        &[
            "--parsable",
            "-A",
            "lab",
            "--exclusive",
            "--wrap",
            "sleep 3",
        ],
    ));
    assert_eq!(c.wait_done(used), "COMPLETED");
    c.wait_for("the heavy user's usage in sshare", || {
        share_of(&c, &heavy.name)
            .get(3)
            .is_some_and(|u| u.parse::<u64>().is_ok_and(|n| n > 0))
    });
    let (h, l) = (share_of(&c, &heavy.name), share_of(&c, &light.name));
    assert_eq!((h[2].as_str(), l[2].as_str()), ("2", "1"));
    assert_eq!(l[3], "0", "{l:?}");
    let (hf, lf): (f64, f64) = (h[4].parse().unwrap(), l[4].parse().unwrap());
    assert!(hf < lf, "heavy {h:?} light {l:?}");

    // Both wait behind a job holding the node; the heavy user submitted first.
    let blocker = submitted(&c.cmd(
        "sbatch",
        &["--parsable", "--exclusive", "--wrap", "sleep 300"],
    ));
    c.wait_state(blocker, "RUNNING");
    let sleep = [
        "--parsable",
        "-A",
        "lab",
        "--exclusive",
        "--wrap",
        "sleep 30",
    ];
    let hj = submitted(&as_user(&c, &heavy, "sbatch", &sleep));
    let lj = submitted(&as_user(&c, &light, "sbatch", &sleep));
    let prio = |job: u32| -> u64 {
        let out = c.ok("sprio", &["-h", &format!("--jobs={job}"), "-o", "%Y"]);
        out.trim().parse().unwrap_or(0)
    };
    c.wait_for("the lighter user's job ahead in sprio", || {
        prio(lj) > prio(hj)
    });
    let shown = c.ok("sprio", &["-l"]);
    assert!(
        shown.contains(&heavy.name) && shown.contains("FAIRSHARE"),
        "{shown}"
    );
    let queue = c.ok("squeue", &["-h", "-t", "PD", "-o", "%i %Q", "--sort=-p"]);
    let first = queue.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("{lj} ")), "{queue}");

    c.ok("scancel", &[&blocker.to_string()]);
    c.wait_state(lj, "RUNNING");
    assert_eq!(c.state(&hj.to_string()), "PENDING");
    c.ok("scancel", &[&lj.to_string(), &hj.to_string()]);
}

#[test]
fn sprio_under_basic_says_it_needs_multifactor() {
    let c = Cluster::start(1);
    let out = c.cmd("sprio", &[]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "You are not running a supported priority plugin\n(priority/basic).\nOnly 'priority/multifactor' is supported.\n"
    );
}
