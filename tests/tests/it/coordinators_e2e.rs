//! Account coordinators on a real cluster, as real Linux users: root grants a user
//! coordination of an account with `sacctmgr add coordinator`; that user may then add users to
//! the account's tree and cancel the jobs charged to it (and sees them under
//! `PrivateData=jobs`), but not other accounts' jobs or accounts outside the tree.

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

fn submitted(out: &common::CmdOutput) -> u32 {
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().parse().expect("a job id")
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn a_coordinator_manages_its_accounts_users_and_jobs_only() {
    let (coord, member, other) = (
        TestUser::create("ca"),
        TestUser::create("cb"),
        TestUser::create("cc"),
    );
    let c = Cluster::start_with(1, &["PrivateData=jobs"]);
    open_site(&c);
    for args in [
        vec!["add", "account", "chem"],
        vec!["add", "account", "chemsub", "parent=chem"],
        vec!["add", "account", "phys"],
    ] {
        c.ok("sacctmgr", &[&["-i"], &args[..]].concat());
    }
    for (user, account) in [(&coord, "chem"), (&member, "chemsub"), (&other, "phys")] {
        let account = format!("account={account}");
        c.ok("sacctmgr", &["-i", "add", "user", &user.name, &account]);
    }
    let granted = c.ok(
        "sacctmgr",
        &[
            "-i",
            "add",
            "coordinator",
            "account=chem",
            &format!("names={}", coord.name),
        ],
    );
    assert_eq!(
        granted,
        format!(
            " Adding Coordinator User(s)\n  {}\n To Account(s) and all sub-accounts\n  chem\n",
            coord.name
        )
    );
    let shown = c.ok(
        "sacctmgr",
        &[
            "-P",
            "-n",
            "show",
            "user",
            &coord.name,
            "withcoord",
            "format=user,coord",
        ],
    );
    assert_eq!(shown, format!("{}|chem,chemsub\n", coord.name));
    let missing = c.cmd(
        "sacctmgr",
        &["-i", "add", "coordinator", "account=nosuch", "names=root"],
    );
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (1, " You specified a non-existent account 'nosuch'.\n")
    );

    // Within its tree the coordinator adds users; outside it, it is refused.
    let added = as_user(
        &c,
        &coord,
        "sacctmgr",
        &["-i", "add", "user", &other.name, "account=chemsub"],
    );
    assert_eq!(added.code, 0, "{added:?}");
    let refused = as_user(&c, &coord, "sacctmgr", &["-i", "add", "account", "rogue"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("Problem adding accounts: Access/permission denied"),
        "{refused:?}"
    );
    let refused = as_user(
        &c,
        &member,
        "sacctmgr",
        &["-i", "add", "user", &other.name, "account=chem"],
    );
    assert_eq!(refused.code, 1, "{refused:?}");

    // The controller fetches the dbd's users when it starts (and every 30 s after).
    c.kill9_ctld();
    c.up();
    let sleep = ["--parsable", "--wrap", "sleep 300"];
    let theirs = submitted(&as_user(
        &c,
        &member,
        "sbatch",
        &[&["-A", "chemsub"], &sleep[..]].concat(),
    ));
    let elsewhere = submitted(&as_user(
        &c,
        &other,
        "sbatch",
        &[&["-A", "phys"], &sleep[..]].concat(),
    ));
    let seen = as_user(&c, &coord, "squeue", &["-h", "-o", "%i"]);
    assert_eq!(seen.stdout.trim(), theirs.to_string(), "{seen:?}");

    let denied = as_user(&c, &coord, "scancel", &[&elsewhere.to_string()]);
    assert_eq!(
        denied.stderr,
        format!("scancel: error: Kill job error on job id {elsewhere}: Access/permission denied\n"),
        "{denied:?}"
    );
    assert_ne!(c.state(&elsewhere.to_string()), "CANCELLED");
    let cancelled = as_user(&c, &coord, "scancel", &[&theirs.to_string()]);
    assert_eq!(cancelled.code, 0, "{cancelled:?}");
    c.wait_state(theirs, "CANCELLED");

    let revoked = c.ok(
        "sacctmgr",
        &[
            "-i",
            "delete",
            "coordinator",
            &format!("names={}", coord.name),
        ],
    );
    assert_eq!(
        revoked,
        format!(
            " Removing Coordinators with user name\n  {0}\n From all accounts\n Removed Coordinators (sub accounts not listed)...\n  U = {0:<9.9} A = chem      \n",
            coord.name
        )
    );
    let again = c.cmd(
        "sacctmgr",
        &[
            "-i",
            "delete",
            "coordinator",
            &format!("names={}", coord.name),
        ],
    );
    assert_eq!(again.code, 1);
    assert!(again.stdout.ends_with(" Nothing removed\n"), "{again:?}");
    c.ok("scancel", &[&elsewhere.to_string()]);
}
