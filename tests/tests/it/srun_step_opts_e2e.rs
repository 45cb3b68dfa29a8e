//! srun's own step options on a real local cluster, driven through the real `srun` alone,
//! inside `sbatch` scripts and inside `salloc`: `--multi-prog`, `-K`/`KillOnBadExit`, `-W`,
//! `--whole`/`--exact`, `-r`, `-I`, `-E`, `--prolog`/`--epilog`, `--task-prolog`/
//! `--task-epilog` (as a real user), `--test-only`, `-T` and `--launch-cmd`.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::cluster::Cluster;
use common::users::TestUser;

/// Writes an executable script into the cluster's work directory.
fn script(c: &Cluster, name: &str, body: &str) {
    let path = c.work.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn sorted(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[test]
fn multi_prog_gives_each_task_its_own_command_line() {
    let c = Cluster::start(2);
    std::fs::write(
        c.work.join("tasks.conf"),
        "# rank  program and arguments\n\
         0       echo zero %t\n\
         1-2     sh -c 'echo \"range $0 $1\"' %t %o\n\
         *       echo rest %t\n",
    )
    .unwrap();
    let out = c.cmd(
        "srun",
        &["-N2", "-n4", "-T1", "-l", "--multi-prog", "tasks.conf"],
    );
    assert_eq!(out.code, 0, "{out:?}\n{}", c.logs());
    assert_eq!(
        sorted(&out.stdout),
        ["0: zero 0", "1: range 1 0", "2: range 2 1", "3: rest 3"],
        "{out:?}"
    );
    // Without -n the step has as many tasks as the highest rank named plus one.
    std::fs::write(c.work.join("three.conf"), "0-2 echo task %t\n").unwrap();
    let out = c.cmd("srun", &["--multi-prog", "three.conf"]);
    assert_eq!(
        sorted(&out.stdout),
        ["task 0", "task 1", "task 2"],
        "{out:?}"
    );
    // A task without a command line: refused before anything runs, the job ended.
    let out = c.cmd("srun", &["-n4", "--multi-prog", "three.conf"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "srun: error: Configuration file three.conf invalid: no program for task 3\n"
    );
    assert_eq!(out.stdout, "");
    let out = c.cmd("srun", &["--multi-prog", "nothere.conf"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "srun: error: Unable to open configuration file nothere.conf: No such file or directory\n"
        )
    );
    c.wait_for("no job left in the queue", || {
        c.ok("squeue", &["-h"]).trim().is_empty()
    });
}

#[test]
fn kill_on_bad_exit_and_wait_end_the_step() {
    let c = Cluster::start_with(1, &["KillOnBadExit=1", "KillWait=2"]);
    let fails = "if [ $SLURM_PROCID = 1 ]; then exit 3; fi; exec sleep 600";
    // KillOnBadExit=1: task 1's exit code ends task 0 at once.
    let out = c.cmd("srun", &["-n2", "sh", "-c", fails]);
    let err = &out.stderr;
    assert!(
        err.contains("srun: error: clustern1: task 1: Exited with exit code 3\n"),
        "{out:?}"
    );
    assert!(
        err.contains("srun: launch/slurm: _step_signal: Terminating StepId="),
        "{out:?}"
    );
    assert!(
        err.contains("srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n"),
        "KillWait + 2: {out:?}"
    );
    assert!(err.contains("task 0: Terminated"), "{out:?}");
    assert_eq!(out.code, 128 + 15, "a signal beats an exit code: {out:?}");
    // -K0 overrides slurm.conf: task 0 runs to its end.
    let out = c.cmd(
        "srun",
        &[
            "-K0",
            "-n2",
            "sh",
            "-c",
            "if [ $SLURM_PROCID = 1 ]; then exit 3; fi; echo survived",
        ],
    );
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (3, "survived\n"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("Terminating"), "{out:?}");
    // -W 1: once task 1 ended, task 0 has a second left.
    let out = c.cmd(
        "srun",
        &[
            "-W",
            "1",
            "-n2",
            "sh",
            "-c",
            "if [ $SLURM_PROCID = 1 ]; then exit 0; fi; exec sleep 600",
        ],
    );
    let err = &out.stderr;
    assert!(err.contains("srun: First task exited 1s ago\n"), "{out:?}");
    assert!(err.contains(".0 task 0: running\n"), "{out:?}");
    assert!(err.contains(".0 task 1: exited\n"), "{out:?}");
    assert!(err.contains("Terminating StepId="), "{out:?}");
    assert_eq!(out.code, 128 + 15, "{out:?}");
}

#[test]
fn whole_relative_and_immediate_steps_in_a_batch_job() {
    let c = Cluster::start_with(
        2,
        &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"],
    );
    let body = r#"srun --whole -n1 -w clustern1 sh -c 'touch whole.held; until [ -e release ]; do sleep 0.1; done' &
until [ -e whole.held ]; do sleep 0.1; done
srun -n1 -w clustern1 -I true; echo immediate=$?
srun -n1 -r1 sh -c 'echo relative on $SLURMD_NODENAME'
touch outside.go
wait
srun -n1 -w clustern1 --exact echo exact after
"#;
    let id = c.sbatch(&["--exclusive", "-N2", "--wrap", body]);
    // The job holds both nodes: srun -I outside it cannot have one at once.
    c.wait_file("outside.go", "");
    let out = c.cmd("srun", &["-I", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("srun: error: Unable to allocate resources: Requested nodes are busy\n"),
        "{out:?}"
    );
    std::fs::write(c.work.join("release"), "").unwrap();
    assert_eq!(c.wait_done(id), "COMPLETED");
    let log = c.read(&format!("slurm-{id}.out"));
    assert!(
        log.contains(&format!(
            "srun: error: Unable to create step for job {id}: Requested nodes are busy\nimmediate=1\n"
        )),
        "the whole step holds clustern1's CPUs:\n{log}"
    );
    assert!(log.contains("relative on clustern2\n"), "{log}");
    assert!(log.contains("exact after\n"), "{log}");
    // -r names a node of an allocation: outside one srun refuses it.
    let out = c.cmd("srun", &["-r1", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "srun: fatal: --relative option invalid for job allocation request\n"
        )
    );
}

#[test]
fn srun_prolog_epilog_preserve_env_and_test_only() {
    let c = Cluster::start(1);
    script(
        &c,
        "prolog.sh",
        "echo \"$SLURM_SCRIPT_CONTEXT $SLURM_JOB_ID.$SLURM_STEP_ID $*\" >> scripts.log",
    );
    script(&c, "fail.sh", "exit 1");
    let out = c.cmd(
        "srun",
        &[
            "--prolog",
            "./prolog.sh",
            "--epilog",
            "./prolog.sh",
            "echo",
            "hi",
        ],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "hi\n"), "{out:?}");
    let log = c.read("scripts.log");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(
        lines[0].starts_with("prolog_srun ") && lines[0].ends_with(".0 echo hi"),
        "{log}"
    );
    assert!(lines[1].starts_with("epilog_srun "), "{log}");
    let out = c.cmd("srun", &["--prolog", "./fail.sh", "echo", "hi"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            1,
            "",
            "srun: error: srun prolog failed rc = 256. Aborting step.\n"
        )
    );
    // SLURM_PROLOG stands for --prolog; `none` runs nothing.
    let out = c
        .command("srun", &["--prolog", "none", "true"])
        .env("SLURM_PROLOG", "./fail.sh")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // -E inside salloc: the task sees the allocation's task count, not the step's.
    let out = c.cmd(
        "salloc",
        &[
            "-n2",
            "sh",
            "-c",
            "srun -n1 -E printenv SLURM_NTASKS; srun -n1 printenv SLURM_NTASKS",
        ],
    );
    assert_eq!(out.stdout, "2\n1\n", "{out:?}");

    let out = c.cmd("srun", &["--test-only", "-n1", "echo", "ran"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "", "nothing runs: {out:?}");
    let line = out.stderr.trim_end();
    assert!(
        line.starts_with("srun: Job ")
            && line.contains(" to start at ")
            && line.contains(" processors on nodes clustern1 in partition debug"),
        "{out:?}"
    );
    let out = c.cmd("srun", &["--launch-cmd", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "srun: error: --launch-cmd option is invalid with launch/slurm\n"
        )
    );
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create a user")]
fn task_prolog_and_epilog_run_as_the_user_around_each_task() {
    let user = TestUser::create("tprolog");
    let c = Cluster::start(1);
    let open =
        |p: &Path, m| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    open(c.dir().parent().unwrap(), 0o755);
    open(&c.work, 0o1777);
    script(
        &c,
        "tp.sh",
        "echo \"export FROM_PROLOG=uid$(id -u)\"\necho \"unset DROPPED\"\necho \"print prolog of task $SLURM_PROCID\"",
    );
    script(&c, "te.sh", "id -u > epilog.$SLURM_PROCID");
    let mut cmd = c.command(
        "srun",
        &[
            "-n2",
            "-l",
            "--task-prolog",
            "./tp.sh",
            "--task-epilog",
            "./te.sh",
            "sh",
            "-c",
            "echo ${FROM_PROLOG}:${DROPPED:-unset}",
        ],
    );
    cmd.env("DROPPED", "still here");
    let out = common::run(user.apply(&mut cmd), None);
    assert_eq!(out.code, 0, "{out:?}\n{}", c.logs());
    let uid = user.uid;
    assert_eq!(
        sorted(&out.stdout),
        [
            "0: prolog of task 0".to_string(),
            format!("0: uid{uid}:unset"),
            "1: prolog of task 1".to_string(),
            format!("1: uid{uid}:unset"),
        ],
        "{out:?}"
    );
    for task in 0..2 {
        assert_eq!(c.read(&format!("epilog.{task}")), format!("{uid}\n"));
    }
}
