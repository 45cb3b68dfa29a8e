//! Batch jobs on a real local cluster, as a user meets them: submitting (script, `--wrap`,
//! stdin), output files and their patterns, the `SLURM_*` environment, exit codes and the
//! states squeue, scontrol and sacct show, and Slurm's messages for bad requests.

use crate::common;

use common::cluster::Cluster;

/// sacct's `JobID|State|ExitCode` line of `job` (allocation only), polled until the record
/// arrived from the controller's outbox.
fn sacct_line(c: &Cluster, job: u32) -> String {
    let id = job.to_string();
    let mut line = String::new();
    c.wait_for(&format!("job {job} in sacct"), || {
        let out = c.cmd(
            "sacct",
            &["-n", "-X", "-P", "-o", "JobID,State,ExitCode", "-j", &id],
        );
        line = out.stdout.trim().to_string();
        !line.is_empty() && !line.contains("RUNNING") && !line.contains("PENDING")
    });
    line
}

#[test]
fn a_batch_script_runs_with_slurms_environment_and_its_output_lands_in_slurm_jobid_out() {
    let c = Cluster::start(1);
    let script = c.work.join("job.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n#SBATCH -J envtest\necho \"args=$*\"\necho \"cwd=$(pwd)\"\nenv | grep '^SLURM_' | sort\n",
    )
    .unwrap();
    let out = c.ok("sbatch", &[script.to_str().unwrap()]);
    let id: u32 = out
        .trim()
        .strip_prefix("Submitted batch job ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("sbatch printed {out:?}"));
    assert_eq!(c.wait_done(id), "COMPLETED");
    let text = c.wait_file(&format!("slurm-{id}.out"), "SLURM_JOB_ID");
    let work = c.work.display().to_string();
    for needle in [
        format!("SLURM_JOB_ID={id}"),
        format!("SLURM_JOBID={id}"),
        "SLURM_JOB_NAME=envtest".to_string(),
        "SLURM_JOB_NODELIST=clustern1".to_string(),
        "SLURM_NNODES=1".to_string(),
        "SLURM_NTASKS=1".to_string(),
        "SLURM_CLUSTER_NAME=cluster".to_string(),
        "SLURM_JOB_PARTITION=debug".to_string(),
        format!("SLURM_SUBMIT_DIR={work}"),
        format!("cwd={work}"),
    ] {
        assert!(text.contains(&needle), "missing {needle:?} in\n{text}");
    }
    assert!(
        !text.contains("SLURM_ARRAY_JOB_ID"),
        "not an array job:\n{text}"
    );
}

#[test]
fn script_arguments_reach_the_script() {
    let c = Cluster::start(1);
    std::fs::write(
        c.work.join("args.sh"),
        "#!/bin/sh\necho \"1=$1 2=$2 n=$#\"\n",
    )
    .unwrap();
    let id = c.sbatch(&["args.sh", "first", "second arg"]);
    c.wait_done(id);
    let text = c.wait_file(&format!("slurm-{id}.out"), "1=");
    assert_eq!(text.trim(), "1=first 2=second arg n=2");
}

#[test]
fn exit_codes_make_completed_and_failed_in_squeue_scontrol_and_sacct() {
    let c = Cluster::start(2);
    let ok = c.sbatch(&["--wrap", "true"]);
    let bad = c.sbatch(&["--wrap", "echo failing; exit 3"]);
    assert_eq!(c.wait_done(ok), "COMPLETED");
    assert_eq!(c.wait_done(bad), "FAILED");

    let line = |id: u32| {
        c.ok(
            "squeue",
            &["-h", "-t", "all", "-j", &id.to_string(), "-o", "%i %T %t"],
        )
    };
    assert_eq!(line(ok).trim(), format!("{ok} COMPLETED CD"));
    assert_eq!(line(bad).trim(), format!("{bad} FAILED F"));

    let show = c.ok("scontrol", &["show", "job", &bad.to_string()]);
    assert!(show.contains(&format!("JobId={bad} ")), "{show}");
    assert!(show.contains("JobState=FAILED"), "{show}");
    assert!(show.contains("ExitCode=3:0"), "{show}");
    let show = c.ok("scontrol", &["show", "job", &ok.to_string()]);
    assert!(show.contains("JobState=COMPLETED"), "{show}");
    assert!(show.contains("ExitCode=0:0"), "{show}");

    assert_eq!(sacct_line(&c, ok), format!("{ok}|COMPLETED|0:0"));
    assert_eq!(sacct_line(&c, bad), format!("{bad}|FAILED|3:0"));
    assert_eq!(c.read(&format!("slurm-{bad}.out")), "failing\n");
}

#[test]
fn output_patterns_name_the_files() {
    let c = Cluster::start(1);
    let id = c.sbatch(&[
        "-J",
        "pat",
        "-o",
        "out-%j-%x-%N.txt",
        "-e",
        "err-%j-%u.txt",
        "--wrap",
        "echo to-stdout; echo to-stderr >&2",
    ]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name;
    assert_eq!(
        c.wait_file(&format!("out-{id}-pat-clustern1.txt"), "\n"),
        "to-stdout\n"
    );
    assert_eq!(
        c.wait_file(&format!("err-{id}-{user}.txt"), "\n"),
        "to-stderr\n"
    );
    assert!(
        !c.work.join(format!("slurm-{id}.out")).exists(),
        "-o replaces the default file"
    );
}

#[test]
fn wrap_stdin_parsable_and_test_only() {
    let c = Cluster::start(1);
    let out = c.cmd("sbatch", &["--parsable", "--wrap", "echo wrapped"]);
    assert_eq!(out.code, 0, "{out:?}");
    let wrapped: u32 = out
        .stdout
        .trim()
        .parse()
        .expect("--parsable prints the id alone");

    let out = c.cmd_stdin(
        "sbatch",
        &[],
        "#!/bin/sh\n#SBATCH --job-name=fromstdin\necho from stdin\n",
    );
    assert_eq!(out.code, 0, "{out:?}");
    let stdin_job: u32 = out
        .stdout
        .trim()
        .strip_prefix("Submitted batch job ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out:?}"));

    assert_eq!(c.wait_done(wrapped), "COMPLETED");
    assert_eq!(c.wait_done(stdin_job), "COMPLETED");
    assert_eq!(c.read(&format!("slurm-{wrapped}.out")), "wrapped\n");
    assert_eq!(c.read(&format!("slurm-{stdin_job}.out")), "from stdin\n");
    let name = c.ok(
        "squeue",
        &["-h", "-t", "all", "-j", &stdin_job.to_string(), "-o", "%j"],
    );
    assert_eq!(name.trim(), "fromstdin");

    let before = c.ok("squeue", &["-h", "-t", "all", "-o", "%i"]);
    let out = c.cmd("sbatch", &["--test-only", "--wrap", "true"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("to start at") && out.stderr.contains("clustern1"),
        "{out:?}"
    );
    assert_eq!(
        c.ok("squeue", &["-h", "-t", "all", "-o", "%i"]),
        before,
        "--test-only queues nothing"
    );
    // It names the id the job would get, and uses none up: the next job gets it.
    let would_get = out
        .stderr
        .strip_prefix("sbatch: Job ")
        .and_then(|r| r.split_once(' '))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("{out:?}"));
    let got = c.ok("sbatch", &["--parsable", "--hold", "--wrap", "true"]);
    assert_eq!(got.trim(), would_get, "{out:?}");
}

#[test]
fn bad_requests_get_slurms_messages_a_failure_exit_and_queue_nothing() {
    let c = Cluster::start(2);
    // Slurm's controller names the partition first (its `err_msg`), then the error.
    let out = c.cmd("sbatch", &["-p", "nosuch", "--wrap", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stderr,
        "sbatch: error: invalid partition specified: nosuch\n\
         sbatch: error: Batch job submission failed: Invalid partition name specified\n",
        "{out:?}"
    );
    let out = c.cmd("srun", &["-p", "debug,nosuch", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stderr,
        "srun: error: invalid partition specified: nosuch\n\
         srun: error: Unable to allocate resources: Invalid partition name specified\n",
        "{out:?}"
    );
    // As Slurm's scancel: an unknown job id is no failure, and is only reported with -v.
    let out = c.cmd("scancel", &["4242"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{out:?}");
    let out = c.cmd("scancel", &["-v", "4242"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Invalid job id specified"), "{out:?}");
    let out = c.cmd("scontrol", &["show", "job", "4242"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Invalid job id specified"), "{out:?}");
    let out = c.cmd("squeue", &["-h", "-t", "all"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "", "nothing was queued");
}

#[test]
fn squeue_sinfo_and_scontrol_follow_a_running_job() {
    let c = Cluster::start(2);
    let node_states = || c.ok("sinfo", &["-h", "-N", "-o", "%N %t"]);
    assert_eq!(node_states(), "clustern1 idle\nclustern2 idle\n");

    let id = c.sbatch(&["-J", "sleeper", "-t", "5", "--wrap", "sleep 300"]);
    c.wait_state(id, "RUNNING");
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name;

    let out = c.ok("squeue", &[]);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
        )
    );
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(row[..5], [&id.to_string(), "debug", "sleeper", &user, "R"]);
    assert_eq!(row[6..], ["1", "clustern1"]);
    assert_eq!(lines.next(), None);

    let out = c.ok(
        "squeue",
        &[
            "-h",
            "-j",
            &id.to_string(),
            "-o",
            "%i|%j|%u|%T|%t|%l|%D|%R|%P|%C",
        ],
    );
    assert_eq!(
        out.trim(),
        format!("{id}|sleeper|{user}|RUNNING|R|5:00|1|clustern1|debug|2")
    );
    let out = c.ok(
        "squeue",
        &[
            "-h",
            "-j",
            &id.to_string(),
            "-O",
            "JobID,Name,State,NodeList",
        ],
    );
    let cols: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(cols, [&id.to_string(), "sleeper", "RUNNING", "clustern1"]);

    assert_eq!(node_states(), "clustern1 alloc\nclustern2 idle\n");
    let show = c.ok("scontrol", &["show", "job", &id.to_string()]);
    for needle in [
        "JobName=sleeper",
        "JobState=RUNNING",
        "NodeList=clustern1",
        "TimeLimit=00:05:00",
        "Partition=debug",
    ] {
        assert!(show.contains(needle), "missing {needle} in\n{show}");
    }
    let node = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert!(node.contains("State=ALLOCATED"), "{node}");
    assert!(node.contains("CPUAlloc=2"), "{node}");

    c.ok("scancel", &[&id.to_string()]);
    assert_eq!(c.wait_done(id), "CANCELLED");
    c.wait_for("the node to be idle again", || {
        node_states() == "clustern1 idle\nclustern2 idle\n"
    });
}
