//! srun's task placement options on a real local cluster: `--cpu-bind` binds each task to its
//! CPUs before it runs (checked in the task's own `/proc/self/status`), `--ntasks-per-node`
//! sets the tasks of each node inside and outside an allocation.

use crate::common;

use common::cluster::Cluster;

const ALLOWED: &str = "grep Cpus_allowed_list /proc/self/status | cut -f2";

#[test]
fn cpu_bind_binds_each_task_before_it_runs() {
    let c = Cluster::start(1);
    let out = c.cmd(
        "srun",
        &["--cpu-bind=verbose,map_cpu:1", "sh", "-c", ALLOWED],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "1\n"), "{out:?}");
    let line = out.stderr.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("cpu-bind=MAP - clustern1, task  0  0 [")
            && line.ends_with("]: mask 0x2 set"),
        "{out:?}"
    );
    let out = c.cmd(
        "srun",
        &["-n2", "-l", "--cpu-bind=rank", "sh", "-c", ALLOWED],
    );
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["0: 0", "1: 1"], "{out:?}");
    let env = "echo $SLURM_CPU_BIND $SLURM_CPU_BIND_TYPE $SLURM_CPU_BIND_LIST";
    let out = c.cmd("srun", &["--cpu-bind=q,mask_cpu:0x1", "sh", "-c", env]);
    assert_eq!(out.stdout, "quiet,mask_cpu:0x1 mask_cpu: 0x1\n", "{out:?}");
    let out = c.cmd("srun", &["--cpu-bind=none", "sh", "-c", ALLOWED]);
    assert_eq!(out.stdout, "0-1\n", "{out:?}");
}

#[test]
fn cpu_bind_refusals() {
    let c = Cluster::start(1);
    let out = c.cmd("srun", &["--cpu-bind=bogus", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "srun: error: unrecognized --cpu-bind argument \"bogus\"\n\
         srun: fatal: Failed to parse --cpu-bind= values.\n"
    );
    let out = c.cmd("srun", &["--cpu-bind=map_cpu:4000", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("failed on node clustern1")
            && out
                .stderr
                .contains("CPUs [4000] are not among this node's CPUs"),
        "{out:?}"
    );
}

#[test]
fn ntasks_per_node_outside_and_inside_an_allocation() {
    let c = Cluster::start(2);
    let task = "echo $SLURMD_NODENAME $SLURM_NTASKS_PER_NODE";
    let out = c.cmd("srun", &["-N2", "--ntasks-per-node=2", "sh", "-c", task]);
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["clustern1 2", "clustern1 2", "clustern2 2", "clustern2 2"],
        "{out:?}"
    );
    let wrap = "srun --ntasks-per-node=1 printenv SLURMD_NODENAME > one.txt; \
                SLURM_NTASKS_PER_NODE=1 srun -n2 printenv SLURMD_NODENAME > env.txt";
    let id = c.sbatch(&["-N2", "-n4", "--wrap", wrap]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(
        c.read("one.txt").lines().count(),
        2,
        "{}",
        c.read("one.txt")
    );
    let spread: Vec<String> = c.read("env.txt").lines().map(String::from).collect();
    assert_eq!(spread.len(), 2);
    assert_ne!(spread[0], spread[1], "one task per node: {spread:?}");
}
