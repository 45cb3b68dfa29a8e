//! `salloc` on a real local cluster, checked against what Slurm 22.05's salloc prints and
//! records: the command runs in the allocation with its `SLURM_*` variables (srun inside runs
//! a step there), its exit code becomes the job's and salloc's; `--no-shell` leaves the
//! allocation running; a revoked allocation is announced and, with `-K`, its command
//! signalled; `-I` and Ctrl-C withdraw a request that waits; bad options exit 255.

use crate::common;

use std::io::Read;
use std::process::Stdio;

use common::cluster::Cluster;
use sluice_testkit::site::procs::interrupt;

/// The job id in salloc's `Granted job allocation N` line.
fn granted(stderr: &str) -> u32 {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("salloc: Granted job allocation "))
        .and_then(|id| id.trim().parse().ok())
        .unwrap_or_else(|| panic!("no grant in {stderr:?}"))
}

fn sacct(c: &Cluster, job: u32) -> String {
    c.ok(
        "sacct",
        &[
            "-n",
            "-X",
            "-P",
            "-o",
            "JobName,State,ExitCode",
            "-j",
            &job.to_string(),
        ],
    )
    .trim()
    .to_string()
}

#[test]
fn the_command_runs_in_the_allocation_and_its_exit_code_is_the_jobs() {
    let c = Cluster::start(2);
    let script = "echo $SLURM_JOB_ID $SLURM_NNODES $SLURM_JOB_NAME $SLURM_NTASKS > env.txt; \
                  srun -l hostname | sort > hosts.txt; exit 3";
    let out = c.cmd("salloc", &["-N2", "-n2", "sh", "-c", script]);
    assert_eq!(out.code, 3, "{out:?}");
    let job = granted(&out.stderr);
    assert_eq!(
        out.stderr,
        format!(
            "salloc: Granted job allocation {job}\nsalloc: Relinquishing job allocation {job}\n"
        )
    );
    assert_eq!(c.read("env.txt"), format!("{job} 2 interactive 2\n"));
    let hosts = c.read("hosts.txt");
    assert_eq!(hosts.lines().count(), 2, "a step on both nodes: {hosts}");
    assert!(
        hosts.starts_with("0: ") && hosts.contains("\n1: "),
        "{hosts}"
    );
    c.wait_for("the job in sacct", || {
        sacct(&c, job) == "interactive|FAILED|3:0"
    });
    // Without a command, the user's shell runs (here reading its commands from stdin).
    let mut shell = c.command("salloc", &["-J", "shell"]);
    shell.env("SHELL", "/bin/sh");
    let out = sluice_testkit::cmd::run(&mut shell, Some("echo in $SLURM_JOB_NAME\nexit 0\n"));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "in shell\n"),
        "{out:?}"
    );
    let job = granted(&out.stderr);
    c.wait_for("the shell's job in sacct", || {
        sacct(&c, job) == "shell|COMPLETED|0:0"
    });
}

#[test]
fn no_shell_leaves_the_allocation_running() {
    let c = Cluster::start(1);
    let out = c.cmd("salloc", &["--no-shell", "-N1"]);
    assert_eq!(out.code, 0, "{out:?}");
    let job = granted(&out.stderr);
    assert_eq!(c.state(&job.to_string()), "RUNNING");
    let name = c.ok("squeue", &["-h", "-j", &job.to_string(), "-o", "%j"]);
    assert_eq!(name.trim(), "no-shell");
    // srun runs steps in it from anywhere.
    let out = c.cmd("srun", &["--jobid", &job.to_string(), "echo", "hi"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "hi\n"), "{out:?}");
    c.ok("scancel", &[&job.to_string()]);
    assert_eq!(c.wait_done(job), "CANCELLED");
}

#[test]
fn a_revoked_allocation_is_announced_and_with_k_its_command_is_signalled() {
    let c = Cluster::start(1);
    let mut child = c
        .command(
            "salloc",
            &[
                "-K",
                "sh",
                "-c",
                "echo $SLURM_JOB_ID > id.txt; while :; do sleep 0.1; done",
            ],
        )
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let job = c.wait_file("id.txt", "\n").trim().to_string();
    c.ok("scancel", &[&job]);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "salloc: Granted job allocation {job}\nsalloc: Job allocation {job} has been revoked.\n"
        )
    );
    assert_eq!(c.wait_done(&job), "CANCELLED");
}

#[test]
fn a_request_that_waits_is_withdrawn_by_immediate_or_ctrl_c() {
    let c = Cluster::start(1);
    let busy = c.sbatch(&["--exclusive", "--wrap", "sleep 300"]);
    c.wait_state(busy, "RUNNING");
    let out = c.cmd("salloc", &["-I", "--exclusive", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("salloc: error: Unable to allocate resources: Requested nodes are busy"),
        "{out:?}"
    );
    assert!(
        lines
            .get(1)
            .is_some_and(|l| l.ends_with("has been revoked.")),
        "{out:?}"
    );

    let mut child = c
        .command("salloc", &["--exclusive", "true"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut first = [0u8; 1];
    // Its first line means the request is queued.
    stderr.read_exact(&mut first).unwrap();
    let status = interrupt(&mut child);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let text = format!("{}{rest}", first[0] as char);
    assert_eq!(status.code(), Some(1), "{text}");
    let job: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("salloc: Pending job allocation "))
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        text.ends_with(&format!(
            "salloc: Job allocation {job} has been revoked.\nsalloc: Job aborted due to signal\n"
        )),
        "{text}"
    );
    assert_eq!(c.wait_done(job), "CANCELLED");
}

#[test]
fn bad_options_exit_255_and_name_the_option() {
    let c = Cluster::start(1);
    let out = c.cmd("salloc", &["--bogus"]);
    assert_eq!(out.code, 255, "{out:?}");
    assert_eq!(
        out.stderr,
        "salloc: unrecognized option '--bogus'\nTry \"salloc --help\" for more information\n"
    );
    let out = c.cmd("salloc", &["-N", "0x", "true"]);
    assert_eq!(out.code, 255, "{out:?}");
    assert_eq!(
        out.stderr,
        "salloc: error: \"0x\" is not a valid node count\n"
    );
    let out = c.cmd("salloc", &["-p", "nopart", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "salloc: error: Job submit/allocate failed: Invalid partition name specified"
        ),
        "{out:?}"
    );
}
