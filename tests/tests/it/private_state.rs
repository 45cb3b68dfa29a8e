//! What another user of the host can see of a cluster: nothing of its jobs' scripts and
//! environments. The controller's state (database and WAL), the node daemons' spools, the
//! accounting database, the logs and the key are the daemons' own; job output files are the
//! job user's, made with the submitter's umask.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use common::cluster::Cluster;
use common::users::TestUser;

/// A secret only the job's environment and script hold.
const SECRET: &str = "MY_SECRET_TOKEN=s3cr3t-4711";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mode()
        & 0o777
}

/// Every file and directory under `dir` (not following links).
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            all.extend(tree(&path));
        }
        all.push(path);
    }
    all
}

/// Lets others reach the site directory, as a shared host's install would (the temp dir is
/// 0700 by itself, which would hide everything for the wrong reason).
fn open_site(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    let site = c.dir();
    std::fs::set_permissions(
        site.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&c.work, std::fs::Permissions::from_mode(0o1777)).unwrap();
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create a user")]
fn another_user_reads_no_state_spool_script_environment_accounting_or_log() {
    let other = TestUser::create("peek");
    let c = Cluster::start(1);
    open_site(&c);
    let dir = c.dir();
    let secret_script = format!("#!/bin/sh\n# {SECRET}\nsleep 300\n");
    let script = c.work.join("secret.sh");
    std::fs::write(&script, &secret_script).unwrap();
    let mut cmd = c.command("sbatch", &["--parsable", script.to_str().unwrap()]);
    cmd.env("MY_SECRET_TOKEN", "s3cr3t-4711");
    let out = common::run(&mut cmd, None);
    assert_eq!(out.code, 0, "{out:?}");
    let job: u32 = out.stdout.trim().parse().unwrap();
    c.wait_state(job, "RUNNING");
    std::fs::remove_file(&script).unwrap();

    let state = dir.join("cluster/state");
    let spool = dir.join("cluster/spool/clustern1");
    let job_script = spool.join(format!("job{job:05}/slurm_script"));
    // RUNNING is the controller's word; the launch reaches the node a moment later.
    c.wait_for("the node's copy of the script", || job_script.exists());
    // Where the secret is: the controller's state and the node's copy of the script.
    let holders = common::run(
        std::process::Command::new("grep").args(["-rl", "s3cr3t-4711", dir.to_str().unwrap()]),
        None,
    );
    assert!(holders.stdout.contains("/cluster/state/"), "{holders:?}");

    // Modes: directories the daemons' own, files 0600; the spool passable (0711), not listable.
    assert_eq!(mode(&state), 0o700);
    for file in tree(&state) {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    assert_eq!(mode(&spool), 0o711);
    for sub in ["exits", "launches"] {
        assert_eq!(mode(&spool.join(sub)), 0o700, "{sub}");
    }
    assert_eq!(mode(job_script.parent().unwrap()), 0o700);
    for db in ["slurm_acct.db", "slurm_acct.db-wal", "slurm_acct.db-shm"] {
        let path = dir.join(db);
        if db == "slurm_acct.db" || path.exists() {
            assert_eq!(mode(&path), 0o600, "{db}");
        }
    }
    let logs = tree(&dir.join("log"));
    assert!(!logs.is_empty());
    for log in &logs {
        assert_eq!(mode(log), 0o600, "{}", log.display());
    }
    for key in [dir.join("slurm.key"), dir.join("cluster/slurm.key")] {
        assert_eq!(mode(&key), 0o600, "{}", key.display());
    }

    // And as the other user: nothing of it opens, and no file under the site holds the secret.
    let mut private = vec![
        state.clone(),
        spool.clone(),
        job_script.clone(),
        dir.join("slurm_acct.db"),
        dir.join("slurm.key"),
        dir.join("slurmdbd.conf"),
    ];
    private.extend(tree(&state));
    private.extend(logs);
    for path in &private {
        assert!(
            !other.can_read(path),
            "{} can read {}",
            other.name,
            path.display()
        );
    }
    let grep = other.run("grep", &["-r", "s3cr3t-4711", dir.to_str().unwrap()]);
    assert_eq!(grep.stdout, "", "{} found the secret", other.name);
    // What users need stays readable.
    assert!(other.can_read(&c.conf()));
    common::run(&mut c.command("scancel", &[&job.to_string()]), None);
}

#[test]
fn job_output_is_made_with_the_submitters_umask() {
    let c = Cluster::start(1);
    for (umask, want) in [("077", 0o600), ("027", 0o640), ("022", 0o644)] {
        let out = format!("out-{umask}.txt");
        let wrap = format!("echo made; : > made-{umask}");
        let sbatch = c.command("sbatch", &["--parsable", "-o", &out, "--wrap", &wrap]);
        let done = common::run(&mut with_umask(&sbatch, umask), None);
        assert_eq!(done.code, 0, "{done:?}");
        let job: u32 = done.stdout.trim().parse().unwrap();
        assert_eq!(c.wait_done(job), "COMPLETED");
        c.wait_file(&out, "made");
        assert_eq!(mode(&c.work.join(&out)), want, "output under umask {umask}");
        assert_eq!(
            mode(&c.work.join(format!("made-{umask}"))),
            want,
            "a file the job made under umask {umask}"
        );
    }
}

/// `cmd` run under `umask` (through `sh`, which sets it and execs the command).
fn with_umask(cmd: &std::process::Command, umask: &str) -> std::process::Command {
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (name, value) in cmd.get_envs() {
        match value {
            Some(v) => sh.env(name, v),
            None => sh.env_remove(name),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        sh.current_dir(dir);
    }
    sh
}
