//! `--get-user-env` through the real binaries (root, as Slurm requires): for sbatch the batch
//! host loads the `--uid` user's login environment (`su -`) under the job's own variables; for
//! salloc the command gets it, and runs as the `--uid` user.

use crate::common;

use common::cluster::Cluster;
use common::users::TestUser;

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users and run su")]
fn the_login_environment_joins_the_jobs_own() {
    use std::os::unix::fs::PermissionsExt;
    let user = TestUser::create("ge");
    let c = Cluster::start(1);
    std::fs::set_permissions(c.dir().parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
    let show = "echo ${MAIL-unset} ${LOGNAME-unset} $SLURM_GET_USER_ENV";
    // --export=NONE: only what the login shell sets (su sets MAIL and LOGNAME).
    let uid = format!("--uid={}", user.name);
    let job = c.sbatch(&[&uid, "--export=NONE", "--get-user-env", "--wrap", show]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(
        c.read(&format!("slurm-{job}.out")),
        format!("/var/mail/{0} {0} 1\n", user.name)
    );
    // Without it, nothing of the login environment.
    let job = c.sbatch(&[&uid, "--export=NONE", "--wrap", show]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(c.read(&format!("slurm-{job}.out")), "unset unset\n");
    // sbatch's own variables win over the login ones (a timeout and mode are read too).
    let out = c
        .command(
            "sbatch",
            &["--parsable", &uid, "--get-user-env=10L", "--wrap", show],
        )
        .env("MAIL", "/from/sbatch")
        .output()
        .unwrap();
    let job: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(c.wait_done(job), "COMPLETED");
    let text = c.read(&format!("slurm-{job}.out"));
    assert!(text.starts_with("/from/sbatch "), "{text}");
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users and run su")]
fn salloc_runs_its_command_as_the_uid_user_with_their_login_environment() {
    use std::os::unix::fs::PermissionsExt;
    let user = TestUser::create("sa");
    let c = Cluster::start(1);
    std::fs::set_permissions(c.dir().parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
    let uid = format!("--uid={}", user.name);
    let show = "echo $(id -un) ${MAIL-unset} ${LOGNAME-unset}";
    // The login environment (su sets MAIL and LOGNAME) replaces salloc's own variables.
    let out = c
        .command("salloc", &[&uid, "--get-user-env", "sh", "-c", show])
        .env("LOGNAME", "root")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{0} /var/mail/{0} {0}\n", user.name)
    );
    // Without it: the command still runs as the --uid user, in salloc's environment.
    let out = c
        .command("salloc", &[&uid, "sh", "-c", show])
        .env_remove("MAIL")
        .env("LOGNAME", "root")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{} unset root\n", user.name)
    );
    // Only root may load a login environment, in Slurm's words.
    let mut cmd = c.command("salloc", &["--get-user-env", "true"]);
    let out = user.apply(&mut cmd).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "salloc: error: SlurmdUser must be root to use --get-user-env\n"
    );
}
