//! `AccountingStorageEnforce=associations,limits` on a real cluster, as real Linux users:
//! root sets association limits with `sacctmgr modify user ... set`, `sacctmgr show assoc`
//! shows them; a user without an association is refused, a job over `MaxWall` is refused with
//! Slurm's accounting-policy error, `MaxJobs` keeps the second job pending with reason
//! `AssocMaxJobsLimit`, and `MaxSubmitJobs` refuses the job past it.

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

const POLICY: &str = "sbatch: error: Batch job submission failed: Job violates accounting/QOS \
policy (job submit limit, user's size and/or time limits)\n";

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn association_limits_refuse_and_hold_jobs_with_slurms_reasons() {
    let (member, stranger) = (TestUser::create("la"), TestUser::create("lb"));
    let c = Cluster::start_with(1, &["AccountingStorageEnforce=associations,limits"]);
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "phys"]);
    c.ok(
        "sacctmgr",
        &["-i", "add", "user", &member.name, "account=phys"],
    );
    let modified = c.ok(
        "sacctmgr",
        &[
            "-i",
            "modify",
            "user",
            &member.name,
            "set",
            "MaxJobs=1",
            "MaxSubmitJobs=2",
            "MaxWall=60",
            "GrpTRES=cpu=64",
        ],
    );
    let cluster = &c.names[0];
    assert_eq!(
        modified,
        format!(
            " Modified user associations...\n  C = {cluster:<10} A = phys       U = {:<9}\n",
            member.name
        )
    );
    let shown = c.ok(
        "sacctmgr",
        &[
            "-P",
            "-n",
            "show",
            "assoc",
            &format!("users={}", member.name),
            "format=account,user,maxjobs,maxsubmit,maxwall,grptres",
        ],
    );
    assert_eq!(shown, format!("phys|{}|1|2|01:00:00|cpu=64\n", member.name));
    let bad = c.cmd(
        "sacctmgr",
        &["-i", "modify", "user", &member.name, "set", "MaxJobs=lots"],
    );
    assert_eq!(bad.code, 1, "{bad:?}");
    assert_eq!(bad.stderr, " Invalid limit MaxJobs=lots\n");

    // The controller fetches the dbd's associations when it starts (and every 30 s after).
    c.kill9_ctld();
    c.up();
    // Until its first list arrives every submission is refused: wait for a test submission.
    c.wait_for("the controller's association list", || {
        as_user(&c, &member, "sbatch", &["--test-only", "--wrap", "true"]).code == 0
    });
    let sleep = ["--parsable", "--wrap", "sleep 300"];
    let refused = as_user(&c, &stranger, "sbatch", &sleep);
    assert_eq!(
        refused.stderr,
        "sbatch: error: Batch job submission failed: Invalid account or account/partition \
         combination specified\n",
        "{refused:?}"
    );
    let long = as_user(
        &c,
        &member,
        "sbatch",
        &[&["-t", "2:00:00"], &sleep[..]].concat(),
    );
    assert_eq!(long.stderr, POLICY, "{long:?}");

    let first = as_user(&c, &member, "sbatch", &sleep);
    assert_eq!(first.code, 0, "{first:?}");
    let second = as_user(&c, &member, "sbatch", &sleep);
    assert_eq!(second.code, 0, "{second:?}");
    let (first, second) = (first.stdout.trim(), second.stdout.trim());
    c.wait_state(first, "RUNNING");
    c.wait_for("AssocMaxJobsLimit reason", || {
        c.ok("squeue", &["-h", "-o", "%r", "-j", second]).trim() == "AssocMaxJobsLimit"
    });
    let third = as_user(&c, &member, "sbatch", &sleep);
    assert_eq!(third.stderr, POLICY, "MaxSubmitJobs=2: {third:?}");
    c.ok("scancel", &[first, second]);
}
