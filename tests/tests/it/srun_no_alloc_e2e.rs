//! `srun -Z` (`--no-allocate`) on a real local cluster: root runs tasks on the named node
//! without a job, which neither squeue nor sacct ever shows; another user is refused with
//! Slurm's words and nothing runs; without `-w` srun says what it needs; a node daemon that
//! registers again while such a step runs does not report it (the controller would have it
//! killed as unknown).

use crate::common;

use common::cluster::Cluster;

/// srun's first line with `-Z` (not with `-Q`).
const NOTE: &str = "srun: do not allocate resources\n";

/// Sorted lines of `text`.
fn sorted(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.sort();
    lines
}

#[test]
fn root_runs_tasks_on_the_named_node_without_a_job() {
    let c = Cluster::start(1);
    let out = c.cmd(
        "srun",
        &[
            "-Z",
            "-w",
            "clustern1",
            "-n2",
            "-l",
            "sh",
            "-c",
            "echo task $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME job=${SLURM_JOB_ID:-none} step=$SLURM_STEP_ID",
        ],
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, NOTE), "{out:?}");
    let lines = sorted(&out.stdout);
    assert_eq!(lines.len(), 2, "{out:?}");
    let step = lines[0].rsplit("step=").next().unwrap().to_string();
    assert!(step.parse::<u32>().is_ok(), "a numeric step id: {out:?}");
    assert_eq!(
        lines,
        vec![
            format!("0: task 0 of 2 on clustern1 job=none step={step}"),
            format!("1: task 1 of 2 on clustern1 job=none step={step}"),
        ]
    );
    // The tasks' exits make srun's, as for any step.
    let out = c.cmd(
        "srun",
        &[
            "-Z",
            "-Q",
            "-w",
            "clustern1",
            "-n2",
            "sh",
            "-c",
            "exit $((SLURM_PROCID + 2))",
        ],
    );
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr
            .contains("srun: error: clustern1: task 1: Exited with exit code 3"),
        "{out:?}"
    );
    assert!(!out.stderr.contains(NOTE.trim_end()), "-Q: {out:?}");
    // A name the cluster lacks: its launch fails, the known node runs its task.
    let out = c.cmd(
        "srun",
        &["-Z", "-Q", "-w", "clustern1,nosuch", "-l", "echo", "hi"],
    );
    assert_eq!((out.code, out.stdout.as_str()), (1, "0: hi\n"), "{out:?}");
    assert!(
        out.stderr
            .contains(" failed on node nosuch: Can't find an address, check slurm.conf"),
        "{out:?}"
    );
    // No job: nothing queued, nothing accounted. A job run afterwards is accounted, so once
    // it shows in sacct, the -Z steps' records would have too.
    assert_eq!(c.ok("squeue", &["-h"]), "");
    let out = c.cmd("srun", &["true"]);
    assert_eq!(out.code, 0, "{out:?}");
    let mut listed = String::new();
    c.wait_for("the control job in sacct", || {
        listed = c.ok("sacct", &["-a", "-n", "-P", "-o", "JobID,State"]);
        listed.contains("COMPLETED")
    });
    let jobs: Vec<&str> = listed
        .lines()
        .map(|l| l.split(['|', '.']).next().unwrap())
        .collect();
    assert!(
        jobs.iter().all(|j| *j == jobs[0]),
        "only the control job is accounted:\n{listed}"
    );
    assert_eq!(c.ok("squeue", &["-h"]), "");
}

#[test]
fn a_node_list_is_required() {
    let c = Cluster::start(1);
    let out = c.cmd("srun", &["-Z", "-n2", "hostname"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!("{NOTE}srun: error: must specify a node list with -Z, --no-allocate.\n")
    );
    let out = c.cmd("srun", &["-Z", "-w", "clustern1", "-N2", "hostname"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "{NOTE}srun: error: Only allocated 1 nodes asked for 2\nsrun: error: Job creation failure.\n"
        )
    );
    assert_eq!(out.stdout, "");
}

#[cfg_attr(not(test_as_root), ignore = "needs root to switch users")]
#[test]
fn another_user_is_refused_and_nothing_runs() {
    use common::users::TestUser;
    use std::os::unix::fs::PermissionsExt;
    let other = TestUser::create("noa");
    let c = Cluster::start(1);
    // The other user reaches the site and runs in the work directory, as on a shared host.
    std::fs::set_permissions(c.dir().parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
    let marker = c.work.join("ran");
    let marker_arg = marker.display().to_string();
    let mut cmd = c.command(
        "srun",
        &["-Z", "-w", "clustern1", "-n2", "touch", &marker_arg],
    );
    let out = common::run(other.apply(&mut cmd), None);
    assert_eq!(out.code, 210, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{out:?}");
    assert_eq!(lines[0], NOTE.trim_end());
    let launch = lines[1]
        .strip_prefix("srun: error: Task launch for StepId=")
        .and_then(|l| l.strip_suffix(" failed on node clustern1: Access/permission denied"))
        .unwrap_or_else(|| panic!("{out:?}"));
    let (job, step) = launch.split_once('.').unwrap();
    let job: u32 = job.parse().unwrap();
    assert!(sluice_vocab::ids::is_no_alloc(job), "{out:?}");
    assert!(step.parse::<u32>().is_ok(), "{out:?}");
    assert_eq!(
        &lines[2..],
        [
            "srun: error: Application launch failed: Access/permission denied",
            "srun: Job step aborted"
        ]
    );
    assert!(!marker.exists(), "nothing ran");
    assert_eq!(c.ok("squeue", &["-h"]), "");
    // Root may.
    let out = c.cmd(
        "srun",
        &["-Z", "-Q", "-w", "clustern1", "touch", &marker_arg],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(marker.exists());
}

#[test]
fn a_running_step_outlives_its_node_daemons_registration() {
    use common::lines::Lines;
    use std::process::Stdio;
    let c = Cluster::start(1);
    let mut srun = Lines::spawn(
        c.command(
            "srun",
            &[
                "-Z",
                "-Q",
                "-w",
                "clustern1",
                "sh",
                "-c",
                "echo ready; while [ ! -e zgate ]; do sleep 0.05; done; echo done",
            ],
        )
        .stdin(Stdio::null()),
    );
    srun.expect("ready", false);
    // The node daemon comes back and registers anew: the controller, which knows no such
    // job, would answer with the runs to kill had the node reported this one.
    c.kill9_noded("clustern1");
    let up = c.up();
    assert_eq!(up.code, 0, "{up:?}");
    std::fs::write(c.work.join("zgate"), "").unwrap();
    srun.expect("done", false);
    let status = srun.child.wait().unwrap();
    assert!(status.success(), "{status:?}\n{}", c.logs());
}
