//! Association enforcement beyond the basic limits, on a real cluster as real Linux users:
//! limits given with `sacctmgr add`, `Fairshare=` and limits in one `modify`, changes that reach
//! the controller at once (not at its 30 s refresh), `GrpTRESMins` (pending, and running jobs
//! ended once it is reached) and
//! `AccountingStorageEnforce=safe`, group limits counted on whole-node allocations, the
//! associations a controller restarted during a dbd outage keeps enforcing, a coordinator's
//! plain `sacct` under the dbd's `PrivateData=jobs`, and `PrivateData=cloud`.

use std::time::Duration;

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

fn submitted(out: &common::CmdOutput) -> String {
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().to_string()
}

/// The pending reason of `job` as squeue shows it.
fn reason(c: &Cluster, job: &str) -> String {
    c.ok("squeue", &["-h", "-o", "%r", "-j", job])
        .trim()
        .to_string()
}

/// Well under the controller's periodic refresh (30 s): a change seen within it was pushed.
const PUSHED: Duration = Duration::from_secs(15);

const SLEEP: [&str; 3] = ["--parsable", "--wrap", "sleep 300"];

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn limits_given_at_add_and_with_fairshare_reach_the_controller_at_once() {
    let member = TestUser::create("ea");
    // Two nodes: once MaxJobs allows it, the second job has a node to start on.
    let c = Cluster::start_with(2, &["AccountingStorageEnforce=associations,limits"]);
    open_site(&c);
    let cluster = &c.names[0];
    let added = c.ok(
        "sacctmgr",
        &[
            "-i",
            "add",
            "account",
            "phys",
            "GrpTRES=cpu=64",
            "MaxJobs=5",
        ],
    );
    assert_eq!(
        added,
        format!(
            " Adding Account(s)\n  phys\n Settings\n  Description     = Account Name\n  \
             Organization    = Parent/Account Name\n Associations\n  A = phys       C = \
             {cluster:<10}\n Settings\n  Parent        = root\n  GrpTRES       = cpu=64\n  \
             MaxJobs       = 5\n"
        )
    );
    let added = c.ok(
        "sacctmgr",
        &[
            "-i",
            "add",
            "user",
            &member.name,
            "account=phys",
            "MaxJobs=1",
        ],
    );
    assert_eq!(
        added,
        format!(
            " Adding User(s)\n  {0}\n Associations =\n  U = {0:<9.9} A = phys       C = \
             {cluster:<10}\n Non Default Settings\n  MaxJobs       = 1\n",
            member.name
        )
    );
    let show = |user: &str| {
        c.ok(
            "sacctmgr",
            &[
                "-P",
                "-n",
                "show",
                "assoc",
                &format!("users={user}"),
                "format=account,user,share,maxjobs,grptres",
            ],
        )
    };
    assert_eq!(show(&member.name), format!("phys|{}|1|1|\n", member.name));
    let account = c.ok(
        "sacctmgr",
        &[
            "-P",
            "-n",
            "show",
            "assoc",
            "accounts=phys",
            "format=account,user,maxjobs,grptres",
        ],
    );
    assert!(account.contains("phys||5|cpu=64\n"), "{account}");

    c.wait_for("the controller's association list", || {
        as_user(&c, &member, "sbatch", &["--test-only", "--wrap", "true"]).code == 0
    });
    let first = submitted(&as_user(&c, &member, "sbatch", &SLEEP));
    let second = submitted(&as_user(&c, &member, "sbatch", &SLEEP));
    c.wait_state(&first, "RUNNING");
    c.wait_for("AssocMaxJobsLimit", || {
        reason(&c, &second) == "AssocMaxJobsLimit"
    });

    // Fair share and a limit in one change, reported as Slurm reports association changes.
    let modified = c.ok(
        "sacctmgr",
        &[
            "-i",
            "modify",
            "user",
            &member.name,
            "set",
            "fairshare=10",
            "MaxJobs=2",
        ],
    );
    assert_eq!(
        modified,
        format!(
            " Modified user associations...\n  C = {cluster:<10} A = phys       U = {:<9}\n",
            member.name
        )
    );
    assert_eq!(show(&member.name), format!("phys|{}|10|2|\n", member.name));
    // The dbd tells the controller: the second job starts well before the next refresh.
    c.wait_within(PUSHED, "the raised MaxJobs to start the second job", || {
        c.state(&second) == "RUNNING"
    });
    c.ok("scancel", &[&first, &second]);
}

/// The CPUs of each node (`sinfo %c`).
fn node_cpus(c: &Cluster) -> u64 {
    let out = c.ok("sinfo", &["-h", "-N", "-o", "%c"]);
    out.lines().next().unwrap().trim().parse().unwrap()
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn grp_tres_mins_and_safe_hold_jobs_with_slurms_reasons() {
    let member = TestUser::create("eb");
    let c = Cluster::start_with(
        2,
        &[
            "AccountingStorageEnforce=associations,limits,safe",
            "SelectType=select/linear",
        ],
    );
    open_site(&c);
    let config = c.ok("scontrol", &["show", "config"]);
    assert!(
        config.contains("AccountingStorageEnforce = associations,limits,safe\n"),
        "{config}"
    );
    let cpus = node_cpus(&c);
    // Whole nodes: a job of T minutes needs cpus * T CPU-minutes.
    let limit = format!("GrpTRESMins=cpu={}", 3 * cpus);
    c.ok("sacctmgr", &["-i", "add", "account", "phys", &limit]);
    c.ok(
        "sacctmgr",
        &["-i", "add", "account", "spent", "GrpCPUMins=0"],
    );
    // One CPU for the group: a one-CPU job fits what it asks, not the whole node it holds.
    c.ok(
        "sacctmgr",
        &["-i", "add", "account", "wide", "GrpTRES=cpu=1"],
    );
    let accounts = "account=phys,spent,wide".to_string();
    c.ok(
        "sacctmgr",
        &[
            "-i",
            "add",
            "user",
            &member.name,
            &accounts,
            "DefaultAccount=phys",
        ],
    );
    let shown = c.ok(
        "sacctmgr",
        &[
            "-P",
            "-n",
            "show",
            "assoc",
            "accounts=phys,spent",
            "users=",
            "format=account,grptresmins",
        ],
    );
    assert!(
        shown.contains(&format!("phys|cpu={}\n", 3 * cpus)),
        "{shown}"
    );
    assert!(shown.contains("spent|cpu=0\n"), "{shown}");
    c.wait_for("the controller's association list", || {
        as_user(&c, &member, "sbatch", &["--test-only", "--wrap", "true"]).code == 0
    });

    // safe: 5 minutes of a whole node do not fit in 3 node-minutes; 2 minutes do.
    let long = submitted(&as_user(
        &c,
        &member,
        "sbatch",
        &[&["-t", "5"], &SLEEP[..]].concat(),
    ));
    let short = submitted(&as_user(
        &c,
        &member,
        "sbatch",
        &[&["-t", "2"], &SLEEP[..]].concat(),
    ));
    c.wait_state(&short, "RUNNING");
    c.wait_for("AssocGrpCPUMinutesLimit (safe)", || {
        reason(&c, &long) == "AssocGrpCPUMinutesLimit"
    });
    // Used up (a limit of 0): pending from the start, whatever the job's size.
    let spent = submitted(&as_user(
        &c,
        &member,
        "sbatch",
        &[&["-A", "spent", "-t", "1"], &SLEEP[..]].concat(),
    ));
    c.wait_for("AssocGrpCPUMinutesLimit (used up)", || {
        reason(&c, &spent) == "AssocGrpCPUMinutesLimit"
    });
    // Group CPU limits count what a job holds: a one-CPU job on whole nodes holds them all.
    let wide = submitted(&as_user(
        &c,
        &member,
        "sbatch",
        &[&["-A", "wide", "-n", "1", "-t", "1"], &SLEEP[..]].concat(),
    ));
    if cpus >= 2 {
        c.wait_for("AssocGrpCpuLimit on the whole node", || {
            reason(&c, &wide) == "AssocGrpCpuLimit"
        });
    } else {
        println!("SKIP whole-node GrpTRES check: nodes of one CPU");
    }
    c.ok("scancel", &[&wide]);
    // Clearing the limit lets the long job start.
    c.ok(
        "sacctmgr",
        &[
            "-i",
            "modify",
            "account",
            "phys",
            "set",
            "GrpTRESMins=cpu=-1",
        ],
    );
    c.wait_within(PUSHED, "the long job to start", || {
        c.state(&long) == "RUNNING"
    });
    // A limit reached while jobs run ends them (TIMEOUT), as slurmctld does; a limit of 0 is
    // reached from the start.
    c.ok(
        "sacctmgr",
        &[
            "-i",
            "modify",
            "account",
            "phys",
            "set",
            "GrpTRESMins=cpu=0",
        ],
    );
    for job in [&long, &short] {
        c.wait_within(PUSHED, "the running phys jobs to time out", || {
            c.state(job) == "TIMEOUT"
        });
    }
    c.ok("scancel", &[&spent]);
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn a_controller_restarted_while_the_dbd_is_down_enforces_the_saved_associations() {
    let (member, stranger) = (TestUser::create("ec"), TestUser::create("ed"));
    let c = Cluster::start_with(1, &["AccountingStorageEnforce=associations"]);
    open_site(&c);
    c.ok("sacctmgr", &["-i", "add", "account", "phys"]);
    c.ok(
        "sacctmgr",
        &["-i", "add", "user", &member.name, "account=phys"],
    );
    c.wait_for("the controller's association list", || {
        as_user(&c, &member, "sbatch", &["--test-only", "--wrap", "true"]).code == 0
    });
    // The accounting daemon stops answering (stopped, not gone: `up` would start a new one),
    // and the controller is killed and started again by hand.
    let dbd = nix::unistd::Pid::from_raw(c.pid("dbd").expect("dbd pid"));
    nix::sys::signal::kill(dbd, nix::sys::signal::Signal::SIGSTOP).unwrap();
    c.kill9_ctld();
    let log = std::fs::File::create(c.dir().join("log").join("ctld-restarted.log")).unwrap();
    let mut ctld = std::process::Command::new(common::bin("sluice-ctld"))
        .args(["-D", "-f"])
        .arg(c.conf())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("sluice-ctld");
    let refused = "sbatch: error: Batch job submission failed: Invalid account or \
                   account/partition combination specified\n";
    let mut accepted = None;
    c.wait_for("the restarted controller to take a submission", || {
        let out = as_user(&c, &member, "sbatch", &SLEEP);
        if out.code == 0 {
            accepted = Some(out.stdout.trim().to_string());
        }
        out.code == 0 || out.stderr == refused
    });
    let stranger_out = as_user(&c, &stranger, "sbatch", &SLEEP);
    nix::sys::signal::kill(dbd, nix::sys::signal::Signal::SIGCONT).unwrap();
    let _ = ctld.kill();
    let _ = ctld.wait();
    c.up();
    assert!(
        accepted.is_some(),
        "a valid user was refused during the outage"
    );
    assert_eq!(stranger_out.code, 1, "{stranger_out:?}");
    assert_eq!(stranger_out.stderr, refused);
    c.ok("scancel", &[accepted.as_deref().unwrap()]);
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

fn job_ids(text: &str) -> Vec<String> {
    let mut ids: Vec<String> = text
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    ids.sort();
    ids
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn a_coordinators_plain_sacct_shows_its_own_and_its_accounts_jobs() {
    let (coord, member, other) = (
        TestUser::create("ee"),
        TestUser::create("ef"),
        TestUser::create("eg"),
    );
    let c = Cluster::start(1);
    open_site(&c);
    private_dbd_jobs(&c);
    for args in [["add", "account", "chem"], ["add", "account", "phys"]] {
        c.ok("sacctmgr", &[&["-i"], &args[..]].concat());
    }
    for (user, account) in [(&coord, "phys"), (&member, "chem"), (&other, "phys")] {
        let account = format!("account={account}");
        c.ok("sacctmgr", &["-i", "add", "user", &user.name, &account]);
    }
    let names = format!("names={}", coord.name);
    c.ok(
        "sacctmgr",
        &["-i", "add", "coordinator", "account=chem", &names],
    );
    let quick = ["--parsable", "--wrap", "true"];
    let own = submitted(&as_user(&c, &coord, "sbatch", &quick));
    let theirs = submitted(&as_user(&c, &member, "sbatch", &quick));
    let elsewhere = submitted(&as_user(&c, &other, "sbatch", &quick));
    for id in [&own, &theirs, &elsewhere] {
        c.wait_done(id);
    }
    let plain = ["-X", "-n", "-o", "JobID"];
    let mut want = vec![own.clone(), theirs.clone()];
    want.sort();
    c.wait_for("the jobs in the accounting history", || {
        job_ids(&as_user(&c, &coord, "sacct", &plain).stdout) == want
    });
    // An ordinary user's plain sacct: their own only.
    assert_eq!(
        job_ids(&as_user(&c, &member, "sacct", &plain).stdout),
        std::slice::from_ref(&theirs)
    );
    // Asking for another user's jobs outside its accounts: nothing of theirs.
    let asked = format!("--user={}", other.name);
    let out = as_user(
        &c,
        &coord,
        "sacct",
        &[&plain[..], &[asked.as_str()]].concat(),
    );
    assert!(!out.stdout.contains(&elsewhere), "{out:?}");
}

#[test]
fn powered_down_cloud_nodes_are_listed_only_with_private_data_cloud() {
    // `sluice up --cloud-nodes` writes PrivateData=cloud; a later line takes it back.
    let c = Cluster::start_args(&["PrivateData=jobs"], |args| {
        args.nodes = Some(1);
        args.cloud_nodes = Some(1);
    });
    let nodes = c.ok("sinfo", &["-h", "-N", "-o", "%N"]);
    assert!(nodes.contains("clustern1"), "{nodes}");
    assert!(!nodes.contains("cloud1"), "{nodes}");
    let shown = c.cmd("scontrol", &["show", "node", "cloud1"]);
    assert!(!shown.stdout.contains("NodeName=cloud1"), "{shown:?}");
    let config = c.ok("scontrol", &["show", "config"]);
    assert!(
        config.contains("PrivateData             = jobs\n"),
        "{config}"
    );

    // With cloud in PrivateData (as `up` writes it), the powered-down node is listed.
    let conf = c.conf();
    let text = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(
        &conf,
        text.replace("PrivateData=jobs\n", "PrivateData=jobs,cloud\n"),
    )
    .unwrap();
    c.kill9_ctld();
    c.up();
    c.wait_for("cloud1 listed as idle~", || {
        c.ok("sinfo", &["-h", "-N", "-o", "%N %t"])
            .contains("cloud1 idle~")
    });
}
