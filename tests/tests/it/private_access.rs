//! Many users on one cluster: a partition's `AllowGroups` (supplementary groups count, as the
//! controller looks them up on its host) and `AllowAccounts`, and `PrivateData=jobs` in
//! slurm.conf and slurmdbd.conf hiding one user's jobs from another in squeue, scontrol and
//! sacct (`nodes`: node state for root only).

use crate::common;

use std::process::Command;

use common::cluster::Cluster;
use common::users::TestUser;

/// Lets the users reach the site (the temp dir is 0700 by itself) and write in the work
/// directory, as on a shared host.
fn open_site(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    let dir = c.dir();
    std::fs::set_permissions(dir.parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
}

/// `program args…` as `user` on the cluster.
fn as_user(c: &Cluster, user: &TestUser, program: &str, args: &[&str]) -> common::CmdOutput {
    let mut cmd = c.command(program, args);
    common::run(user.apply(&mut cmd), None)
}

fn submitted(out: &common::CmdOutput) -> u32 {
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().parse().expect("a job id")
}

/// Makes `group` one of `user`'s supplementary groups.
fn join_group(user: &TestUser, group: &str) {
    let out = common::run(
        Command::new("flock").args([
            "/tmp/sluice-test-users.lock",
            "usermod",
            "-aG",
            group,
            &user.name,
        ]),
        None,
    );
    assert_eq!(out.code, 0, "usermod: {out:?}");
}

/// Adds `PrivateData=jobs` to slurmdbd.conf and restarts the accounting daemon.
fn private_dbd_jobs(c: &Cluster) {
    c.stop_dbd();
    let path = c.dir().join("slurmdbd.conf");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("PrivateData=jobs\n");
    std::fs::write(&path, text).unwrap();
    c.up();
}

fn job_ids(text: &str) -> Vec<u32> {
    let mut ids: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    ids.sort();
    ids
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn allow_groups_admits_members_and_private_jobs_hide_other_users_jobs() {
    let (alice, bob, carol) = (
        TestUser::create("pa"),
        TestUser::create("pb"),
        TestUser::create("pc"),
    );
    join_group(&bob, &alice.name);
    let team = format!("PartitionName=team Nodes=ALL AllowGroups={}", alice.name);
    let c = Cluster::start_with(
        1,
        &[
            "PrivateData=jobs,nodes",
            "EnforcePartLimits=ALL",
            &team,
            "PartitionName=phys Nodes=ALL AllowAccounts=phys",
        ],
    );
    open_site(&c);
    private_dbd_jobs(&c);

    let refused = as_user(&c, &carol, "sbatch", &["-p", "team", "--wrap", "true"]);
    assert_eq!(
        (refused.code, refused.stderr.as_str()),
        (
            1,
            "sbatch: error: Batch job submission failed: User's group not permitted to use this partition\n"
        ),
        "{refused:?}"
    );
    let bio = as_user(
        &c,
        &carol,
        "sbatch",
        &["-A", "bio", "-p", "phys", "--wrap", "true"],
    );
    assert_eq!(
        (bio.code, bio.stderr.as_str()),
        (
            1,
            "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"
        ),
        "{bio:?}"
    );
    let phys = c.ok("scontrol", &["show", "partition", "phys"]);
    assert!(phys.contains(" AllowAccounts=phys "), "{phys}");
    let sleep = ["--parsable", "--wrap", "sleep 300"];
    let a = submitted(&as_user(
        &c,
        &alice,
        "sbatch",
        &[&["-p", "team"], &sleep[..]].concat(),
    ));
    let b = submitted(&as_user(
        &c,
        &bob,
        "sbatch",
        &[&["-p", "team"], &sleep[..]].concat(),
    ));
    let k = submitted(&as_user(&c, &carol, "sbatch", &sleep));
    let shown = c.ok("scontrol", &["show", "partition", "team"]);
    assert!(
        shown.contains(&format!("AllowGroups={} ", alice.name)),
        "{shown}"
    );
    let config = c.ok("scontrol", &["show", "config"]);
    assert!(
        config.contains("PrivateData             = jobs,nodes\n"),
        "{config}"
    );

    // squeue and scontrol: each user their own jobs, root every job.
    let queue = |u: &TestUser| job_ids(&as_user(&c, u, "squeue", &["-h", "-o", "%i"]).stdout);
    assert_eq!(queue(&alice), [a]);
    assert_eq!(queue(&carol), [k]);
    assert_eq!(job_ids(&c.ok("squeue", &["-h", "-o", "%i"])), [a, b, k]);
    let other = as_user(&c, &alice, "scontrol", &["show", "job", &k.to_string()]);
    assert_eq!(
        (other.code, other.stderr.as_str()),
        (1, "slurm_load_jobs error: Invalid job id specified\n"),
        "{other:?}"
    );

    // Nodes: root only.
    let nodes = as_user(&c, &carol, "scontrol", &["show", "node"]);
    assert_eq!(
        (nodes.code, nodes.stderr.as_str()),
        (1, "slurm_load_node error: Access/permission denied\n"),
        "{nodes:?}"
    );
    assert!(c.ok("scontrol", &["show", "node"]).contains("NodeName="));

    // sacct -a: the dbd shows each user their own jobs only.
    let everyone = ["-a", "-X", "-n", "-P", "-o", "JobID"];
    c.wait_for("the three jobs in sacct", || {
        job_ids(&c.cmd("sacct", &everyone).stdout) == [a, b, k]
    });
    assert_eq!(
        job_ids(&as_user(&c, &carol, "sacct", &everyone).stdout),
        [k]
    );
    assert_eq!(
        job_ids(&as_user(&c, &alice, "sacct", &everyone).stdout),
        [a]
    );
    let theirs = as_user(
        &c,
        &alice,
        "sacct",
        &["-X", "-n", "-P", "-o", "JobID", "-u", &carol.name],
    );
    assert_eq!(
        (theirs.code, job_ids(&theirs.stdout)),
        (0, vec![]),
        "{theirs:?}"
    );
    c.ok("scancel", &[&a.to_string(), &b.to_string(), &k.to_string()]);
}
