//! Job options of issue 10 through the real binaries on a local cluster: `sbatch -W/--wait`,
//! `--deadline`, `--kill-on-invalid-dep`, srun's `--mpi`, and the GRES options Slurm's
//! controller refuses on a cluster without GRES (and the options Sluice refuses by name).

use crate::common;

use common::cluster::Cluster;

/// squeue's `%r` (reason) of `job`, finished jobs included.
fn reason(c: &Cluster, job: u32) -> String {
    c.ok(
        "squeue",
        &["-h", "-t", "all", "-o", "%r", "-j", &job.to_string()],
    )
    .trim()
    .to_string()
}

#[test]
fn sbatch_wait_exits_with_the_jobs_exit_code() {
    let c = Cluster::start(1);
    let out = c.cmd("sbatch", &["--wait", "--wrap", "sleep 1; exit 3"]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stdout.starts_with("Submitted batch job "), "{out:?}");
    let id: u32 = out
        .stdout
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        c.state(&id.to_string()),
        "FAILED",
        "it had ended when sbatch exited"
    );
    let out = c.cmd("sbatch", &["-W", "--parsable", "--wrap", "true"]);
    assert_eq!(out.code, 0, "{out:?}");
    // An array: the highest exit code of its tasks.
    let out = c.cmd(
        "sbatch",
        &["-W", "-a", "1-3", "--wrap", "exit $SLURM_ARRAY_TASK_ID"],
    );
    assert_eq!(out.code, 3, "{out:?}");
}

#[test]
fn gres_options_are_refused_as_slurm_refuses_them_here() {
    let c = Cluster::start(1);
    let gres = "Invalid generic resource (gres) specification";
    for args in [
        &["--gpus-per-node=1", "--wrap", "true"][..],
        &["--gres=gpu:1", "--wrap", "true"],
        &["-G", "2", "--wrap", "true"],
        &["--cpus-per-gpu=4", "--wrap", "true"],
    ] {
        let out = c.cmd("sbatch", args);
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert_eq!(
            out.stderr,
            format!("sbatch: error: Batch job submission failed: {gres}\n"),
            "{args:?}"
        );
    }
    // As a directive and as an input environment variable.
    std::fs::write(c.work.join("gpu.sh"), "#!/bin/sh\n#SBATCH --gpus=1\ntrue\n").unwrap();
    let out = c.cmd("sbatch", &["gpu.sh"]);
    assert!(out.stderr.contains(gres), "{out:?}");
    let out = c
        .command("sbatch", &["--wrap", "true"])
        .env("SBATCH_GRES", "gpu:1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains(gres));
    let out = c.cmd("srun", &["--gres=gpu:1", "true"]);
    assert_eq!(
        out.stderr,
        format!("srun: error: Unable to allocate resources: {gres}\n")
    );
    let out = c.cmd("salloc", &["--gpus=1", "--no-shell"]);
    assert_eq!(
        out.stderr,
        format!("salloc: error: Job submit/allocate failed: {gres}\n")
    );
    // Nothing was queued.
    assert_eq!(c.ok("squeue", &["-h", "-t", "all"]), "");
    // What Slurm ignores here is accepted (its value still checked).
    // -S and --thread-spec: dropped with Slurm's line (AllowSpecResourcesUsage = No).
    let out = c.cmd("sbatch", &["--parsable", "-S", "1", "--wrap", "true"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stderr,
        "sbatch: error: Ignoring -S since it's not allowed by configuration \
         (AllowSpecResourcesUsage = No)\n"
    );
    let spec: u32 = out.stdout.trim().parse().unwrap();
    assert_eq!(c.wait_done(spec), "COMPLETED");
    let out = c.cmd("sbatch", &["--gres-flags=often", "--wrap", "true"]);
    assert!(
        out.stderr
            .contains("Invalid --gres-flags specification: often"),
        "{out:?}"
    );
    let ok = c.sbatch(&["--network=any", "--switches=1", "--wrap", "true"]);
    assert_eq!(c.wait_done(ok), "COMPLETED");
}

/// `scontrol show job`'s record of `job` as `key=value` words.
fn show_job(c: &Cluster, job: u32) -> String {
    c.ok("scontrol", &["show", "job", "-o", &job.to_string()])
}

#[test]
fn burst_buffers_reboot_and_containers_are_kept_as_slurm_without_their_plugins_keeps_them() {
    let c = Cluster::start(1);
    // As a Slurm with no burst buffer plugin, no RebootProgram and no oci.conf: recorded and
    // shown, the script runs on the node directly, with SLURM_CONTAINER set.
    let out = c.work.join("c.out");
    let job = c.sbatch(&[
        "--bb=capacity=1G",
        "--reboot",
        "--container=/bundles/py",
        "--comment=nightly run",
        "-o",
        out.to_str().unwrap(),
        "--wrap",
        "echo container=$SLURM_CONTAINER",
    ]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "container=/bundles/py\n"
    );
    let shown = show_job(&c, job);
    for word in [
        "Reboot=1",
        "BurstBuffer=capacity=1G",
        "Container=/bundles/py",
        "Power=",
    ] {
        assert!(
            shown.trim_end().split(' ').any(|w| w == word),
            "{word} in {shown}"
        );
    }
    assert!(shown.contains(" Comment=nightly run  StdErr="), "{shown}");
    // Without them: Reboot=0, and no BurstBuffer=, Container= or Comment=.
    let plain = c.sbatch(&["--hold", "--wrap", "true"]);
    let shown = show_job(&c, plain);
    assert!(shown.contains(" Reboot=0 "), "{shown}");
    for key in ["BurstBuffer=", "Container=", "Comment="] {
        assert!(!shown.contains(key), "{key} in {shown}");
    }
    c.ok("scancel", &[&plain.to_string()]);
    // srun: the tasks see the container, through the option or srun's input variable.
    let out = c.cmd("srun", &["--container=/b2", "printenv", "SLURM_CONTAINER"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "/b2\n"), "{out:?}");
    let out = c
        .command("srun", &["printenv", "SLURM_CONTAINER"])
        .env("SLURM_CONTAINER", "/b3")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "/b3\n");
    // --bbf: the file must be readable.
    let out = c.cmd("sbatch", &["--bbf=/nonexistent/bb", "--wrap", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "sbatch: error: Invalid --bbf specification\n")
    );
    // salloc refuses a container, in Slurm's words.
    let out = c.cmd("salloc", &["--container=/b", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "salloc: error: --container requires LaunchParameters=use_interactive_step\n"
        )
    );
}

#[test]
fn deadline_ends_a_job_that_can_no_longer_finish_in_time() {
    let c = Cluster::start(1);
    let blocker = c.sbatch(&["--exclusive", "--wrap", "sleep 300"]);
    c.wait_state(blocker, "RUNNING");
    // A 1-minute job that must end within 65 s: it waits behind the blocker, and 5 s later
    // it could no longer finish in time.
    let late = c.sbatch(&["-t", "1", "--deadline=now+65", "--wrap", "true"]);
    let fits = c.sbatch(&["-t", "1", "--deadline=now+1hour", "--wrap", "true"]);
    c.wait_state(late, "DEADLINE");
    assert_eq!(reason(&c, late), "DeadLine");
    assert_eq!(c.state(&fits.to_string()), "PENDING");
    let out = c.cmd("sbatch", &["--deadline=someday", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "sbatch: error: Invalid --deadline specification\n"
    );
    c.ok("scancel", &[&blocker.to_string()]);
    assert_eq!(c.wait_done(fits), "COMPLETED");
}

#[test]
fn kill_on_invalid_dep_cancels_what_can_never_start() {
    let c = Cluster::start(1);
    let failed = c.sbatch(&["--wrap", "exit 1"]);
    assert_eq!(c.wait_done(failed), "FAILED");
    let dep = format!("afterok:{failed}");
    let killed = c.sbatch(&["-d", &dep, "--kill-on-invalid-dep=yes", "--wrap", "true"]);
    let kept = c.sbatch(&["-d", &dep, "--kill-on-invalid-dep=no", "--wrap", "true"]);
    c.wait_state(killed, "CANCELLED");
    assert_eq!(reason(&c, killed), "DependencyNeverSatisfied");
    assert_eq!(c.state(&kept.to_string()), "PENDING");
    assert_eq!(reason(&c, kept), "DependencyNeverSatisfied");
    let out = c.cmd("sbatch", &["--kill-on-invalid-dep=maybe", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "sbatch: error: Invalid --kill-on-invalid-dep specification\n"
    );
    c.ok("scancel", &[&kept.to_string()]);

    // aftercorr: each task waits for the task of the same index.
    let first = c.sbatch(&["-a", "1-2", "--wrap", "exit $((SLURM_ARRAY_TASK_ID - 1))"]);
    let corr = format!("aftercorr:{first}");
    let second = c.sbatch(&["-a", "1-3", "-d", &corr, "--wrap", "true"]);
    assert_eq!(c.wait_done(format!("{second}_1")), "COMPLETED");
    assert_eq!(
        c.wait_done(format!("{second}_3")),
        "COMPLETED",
        "no task 3 to wait for"
    );
    assert_eq!(c.wait_done(format!("{first}_2")), "FAILED");
    c.wait_for("task 2 never satisfied", || {
        c.ok("squeue", &["-h", "-o", "%r", "-j", &format!("{second}_2")])
            .trim()
            == "DependencyNeverSatisfied"
    });
    c.ok("scancel", &[&second.to_string()]);
}

#[test]
fn srun_mpi_none_runs_and_missing_plugins_are_refused() {
    let c = Cluster::start(1);
    assert_eq!(c.ok("srun", &["--mpi=none", "echo", "hi"]), "hi\n");
    let out = c.cmd("srun", &["--mpi=pmi2", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "srun: error: invalid MPI type 'pmi2', --mpi=list for acceptable types\n"
    );
    assert!(c.ok("srun", &["--mpi=list"]).contains("\tnone\n"));
}

/// A `MailProg` that appends its arguments (one per line, then `--`) and its
/// `SLURM_JOB_MAIL_TYPE` to `<dir>/mail.log`.
fn mail_recorder(dir: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("mailprog.sh");
    let log = dir.join("mail.log");
    // One printf, so two mails written at once do not interleave.
    let body = format!(
        "#!/bin/sh\nmsg=''\nfor a in \"$@\"; do msg=\"$msg$a\n\"; done\n\
         printf '%stype=%s\\n--\\n' \"$msg\" \"$SLURM_JOB_MAIL_TYPE\" >> {}\n",
        log.display()
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn mail_prog_runs_with_slurms_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let prog = mail_recorder(dir.path());
    let c = Cluster::start_with(1, &[&format!("MailProg={prog}"), "MailDomain=example.org"]);
    let log = dir.path().join("mail.log");
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let ok = c.sbatch(&[
        "-J",
        "mailed",
        "--mail-type=BEGIN,END",
        "--mail-user=ops@site.net",
        "--wrap",
        "true",
    ]);
    assert_eq!(c.wait_done(ok), "COMPLETED");
    c.wait_for("the end mail", || read().contains("type=Ended"));
    let text = read();
    let began = format!("-s\nSlurm Job_id={ok} Name=mailed Began, Queued time ");
    assert!(text.contains(&began), "{text}");
    let ended = format!("-s\nSlurm Job_id={ok} Name=mailed Ended, Run time 00:00:");
    assert!(text.contains(&ended), "{text}");
    assert!(
        text.contains(", COMPLETED, ExitCode 0\nops@site.net\ntype=Ended\n--\n"),
        "{text}"
    );
    // FAIL without END: a failed job mails Failed, its owner (with MailDomain) by default.
    let failed = c.sbatch(&["-J", "bad", "--mail-type=FAIL", "--wrap", "exit 2"]);
    assert_eq!(c.wait_done(failed), "FAILED");
    c.wait_for("the fail mail", || read().contains("type=Failed"));
    let text = read();
    assert!(
        text.contains(&format!("Slurm Job_id={failed} Name=bad Failed, Run time ")),
        "{text}"
    );
    assert!(text.contains(", FAILED, ExitCode 2\n"), "{text}");
    let owner = c.ok(
        "squeue",
        &["-h", "-t", "all", "-o", "%u", "-j", &failed.to_string()],
    );
    assert!(
        text.contains(&format!("\n{}@example.org\ntype=Failed\n", owner.trim())),
        "{text}"
    );
    // A bad type is refused before anything is sent.
    let out = c.cmd("sbatch", &["--mail-type=SOMETIMES", "--wrap", "true"]);
    assert_eq!(out.stderr, "sbatch: error: --mail-type=SOMETIMES invalid\n");
}
