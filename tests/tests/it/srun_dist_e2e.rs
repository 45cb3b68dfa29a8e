//! srun's `-m/--distribution` and `--hint` on a real local cluster: which node runs which
//! rank (what each task sees in its `SLURM_*` variables), the variables that carry the
//! options from sbatch to the job's steps, and the binding a hint stands for (checked in the
//! task's own `/proc/self/status`).

use crate::common;

use common::cluster::Cluster;

const PLACE: &str = "echo $SLURMD_NODENAME $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID \
                     $SLURM_GTIDS $SLURM_DISTRIBUTION $SLURM_TASKS_PER_NODE";

fn sorted(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.sort();
    lines
}

#[test]
fn cyclic_and_block_place_ranks_over_the_nodes() {
    let c = Cluster::start(2);
    let out = c.cmd("srun", &["-N2", "-n4", "-m", "cyclic", "sh", "-c", PLACE]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        sorted(&out.stdout),
        [
            "clustern1 0 0 0 0,2 cyclic 2(x2)",
            "clustern1 2 1 0 0,2 cyclic 2(x2)",
            "clustern2 1 0 1 1,3 cyclic 2(x2)",
            "clustern2 3 1 1 1,3 cyclic 2(x2)",
        ],
        "{out:?}"
    );
    let out = c.cmd(
        "srun",
        &[
            "-N2",
            "-n4",
            "--distribution=block:cyclic",
            "sh",
            "-c",
            PLACE,
        ],
    );
    assert_eq!(
        sorted(&out.stdout),
        [
            "clustern1 0 0 0 0,1 block:cyclic 2(x2)",
            "clustern1 1 1 0 0,1 block:cyclic 2(x2)",
            "clustern2 2 0 1 2,3 block:cyclic 2(x2)",
            "clustern2 3 1 1 2,3 block:cyclic 2(x2)",
        ],
        "{out:?}"
    );
    // Inside a batch job the option comes back from SLURM_DISTRIBUTION.
    let id = c.sbatch(&[
        "-N2",
        "-n4",
        "-m",
        "cyclic",
        "--wrap",
        &format!("echo $SLURM_DISTRIBUTION > env.txt; srun sh -c '{PLACE}' > tasks.txt"),
    ]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read("env.txt"), "cyclic\n");
    let tasks = sorted(&c.read("tasks.txt"));
    assert_eq!(tasks.len(), 4, "{tasks:?}");
    assert!(
        tasks[1].starts_with("clustern1 2 1 0 0,2 cyclic"),
        "{tasks:?}"
    );
}

#[test]
fn bad_distributions_are_refused_as_slurm_refuses_them() {
    let c = Cluster::start(1);
    let out = c.cmd("srun", &["-m", "bogus", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (255, "srun: error: Invalid --distribution specification\n"),
        "{out:?}"
    );
    let out = c.cmd("srun", &["-m", "plane", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            255,
            "srun: error: Invalid plane size or size not specified\n\
             srun: error: Invalid --distribution specification\n"
        ),
        "{out:?}"
    );
    let out = c.cmd("srun", &["-m", "arbitrary", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "srun: error: With Arbitrary distribution you need to specify a nodelist or \
         hostfile with the -w option\n"
    );
    let out = c.cmd("srun", &["--hint=bogus", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "srun: error: unrecognized --hint argument \"bogus\", see --hint=help\n"
        ),
        "{out:?}"
    );
}

#[test]
fn hints_bind_tasks_and_give_way_to_explicit_options() {
    let c = Cluster::start(1);
    let show = "echo $SLURM_CPU_BIND $SLURM_THREADS_PER_CORE $SLURM_HINT; \
                grep Cpus_allowed_list /proc/self/status | cut -f2";
    let out = c.cmd(
        "srun",
        &["-n2", "-l", "--hint=nomultithread", "sh", "-c", show],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        sorted(&out.stdout),
        ["0: 0", "0: quiet,threads 1", "1: 1", "1: quiet,threads 1",],
        "{out:?}"
    );
    let out = c.cmd("srun", &["--hint=compute_bound", "sh", "-c", show]);
    assert_eq!(out.stdout, "quiet,cores 1\n0\n", "{out:?}");
    // An explicit binding takes the hint's place, as in Slurm.
    let out = c.cmd(
        "srun",
        &["--hint=nomultithread", "--cpu-bind=none", "sh", "-c", show],
    );
    assert_eq!(out.stdout, "quiet,none\n0-1\n", "{out:?}");
    let out = c.cmd("srun", &["--hint=help"]);
    assert!(out.stdout.contains("compute_bound"), "{out:?}");
    // sbatch carries the hint to the job's steps.
    let id = c.sbatch(&[
        "--hint=nomultithread",
        "--wrap",
        "echo $SLURM_HINT $SLURM_THREADS_PER_CORE > env.txt; srun printenv SLURM_CPU_BIND >> env.txt",
    ]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read("env.txt"), "nomultithread 1\nquiet,threads\n");
}

#[test]
fn slurmd_debug_reports_the_step_on_srun_s_stderr() {
    let c = Cluster::start(1);
    let out = c.cmd("srun", &["--slurmd-debug=3", "sh", "-c", "exit 3"]);
    assert_eq!(out.code, 3, "{out:?}");
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("slurmstepd-clustern1: "))
        .collect();
    assert_eq!(lines.len(), 3, "{out:?}");
    assert_eq!(lines[0], "slurmstepd-clustern1: starting 1 tasks");
    assert!(
        lines[1].starts_with("slurmstepd-clustern1: task 0 ("),
        "{out:?}"
    );
    assert!(lines[1].contains(") started 20"), "{out:?}");
    assert!(lines[2].ends_with(") exited with exit code 3."), "{out:?}");
    let out = c.cmd("srun", &["true"]);
    assert_eq!(out.stderr, "", "nothing unless asked: {out:?}");
    let out = c.cmd("srun", &["--slurmd-debug=bogus", "true"]);
    assert!(
        out.stderr
            .starts_with("srun: Using srun's max debug increment of 4\n"),
        "{out:?}"
    );
}

/// Without `MpiParams=ports`, as Slurm: no port is reserved, and a count cannot be.
#[test]
fn resv_ports_without_a_port_range() {
    let c = Cluster::start(1);
    let out = c.cmd(
        "srun",
        &[
            "--resv-ports",
            "sh",
            "-c",
            "echo ${SLURM_STEP_RESV_PORTS-unset}",
        ],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "unset\n"), "{out:?}");
    let out = c.cmd("srun", &["--resv-ports=2", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.lines().any(
            |l| l.starts_with("srun: error: Unable to create step for job ")
                && l.ends_with(": Requires more ports than can be reserved")
        ),
        "{out:?}"
    );
}
