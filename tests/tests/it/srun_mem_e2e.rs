//! srun's `--mem-bind`, `--cpu-freq` and `--acctg-freq` on a real local cluster: the memory
//! policy each task starts with (its first mapping's policy in `/proc/self/numa_maps`, where
//! the kernel shows the task's own policy), the variables that tell the task, and Slurm's
//! refusals.

use crate::common;

use common::cluster::Cluster;

/// The task's memory policy (`default`, `bind:0`, `prefer:0`) and its `SLURM_MEM_BIND*`.
const POLICY: &str = "head -1 /proc/self/numa_maps | cut -d' ' -f2; \
                      echo $SLURM_MEM_BIND $SLURM_MEM_BIND_TYPE $SLURM_MEM_BIND_LIST";

#[test]
fn mem_bind_sets_each_task_s_policy_before_it_runs() {
    let c = Cluster::start(1);
    let out = c.cmd("srun", &["sh", "-c", POLICY]);
    assert_eq!(out.stdout, "default\n\n", "{out:?}");
    let out = c.cmd("srun", &["--mem-bind=local", "sh", "-c", POLICY]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "bind:0\nquiet,local local\n"),
        "{out:?}"
    );
    let out = c.cmd("srun", &["--mem-bind=prefer,map_mem:0", "sh", "-c", POLICY]);
    assert_eq!(
        out.stdout, "prefer:0\nquiet,prefer,map_mem:0 map_mem: 0\n",
        "{out:?}"
    );
    let out = c.cmd("srun", &["-n2", "--mem-bind=verbose,rank", "true"]);
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stderr.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines.len(), 2, "{out:?}");
    assert!(
        lines[0].starts_with("mem-bind=RANK - clustern1, task  0  0 [")
            && lines[0].ends_with("]: mask 0x1 set"),
        "{out:?}"
    );
    // sbatch carries it to the job's steps.
    let id = c.sbatch(&[
        "--mem-bind=local",
        "--wrap",
        "echo $SLURM_MEM_BIND > env.txt; srun sh -c 'head -1 /proc/self/numa_maps \
         | cut -d\" \" -f2; echo $SLURM_MEM_BIND_TYPE' >> env.txt",
    ]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read("env.txt"), "local\nbind:0\nlocal\n");
}

#[test]
fn mem_bind_refusals() {
    let c = Cluster::start(1);
    let out = c.cmd("srun", &["--mem-bind=bogus", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            255,
            "srun: error: unrecognized --mem-bind argument \"bogus\"\n"
        ),
        "{out:?}"
    );
    let out = c.cmd("srun", &["--mem-bind=help"]);
    assert_eq!(out.code, 255, "as Slurm's srun: {out:?}");
    assert!(out.stdout.starts_with("Memory bind options:\n"), "{out:?}");
    let out = c.cmd("srun", &["--mem-bind=map_mem:7", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("NUMA nodes [7] are not among this node's"),
        "{out:?}"
    );
}

#[test]
fn cpu_freq_and_acctg_freq() {
    let c = Cluster::start(1);
    let out = c.cmd(
        "srun",
        &[
            "--cpu-freq=low-high:UserSpace",
            "printenv",
            "SLURM_CPU_FREQ_REQ",
        ],
    );
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "Low-High:UserSpace\n"),
        "{out:?}"
    );
    let out = c.cmd("srun", &["--cpu-freq=2000-1000", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            255,
            "srun: error: min cpu-frec (2000) must be < max cpu-freq (1000)\n\
             srun: error: Invalid --cpu-freq argument\n"
        ),
        "{out:?}"
    );
    let out = c.cmd("srun", &["--acctg-freq=task=x", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            255,
            "srun: error: Invalid --acctg-freq specification: task=x\n"
        ),
        "{out:?}"
    );
    // srun takes the interval without showing it to its tasks; sbatch shows it to the job.
    let out = c.cmd(
        "srun",
        &[
            "--acctg-freq=task=1",
            "sh",
            "-c",
            "echo ${SLURM_ACCTG_FREQ-unset}",
        ],
    );
    assert_eq!(out.stdout, "unset\n", "{out:?}");
    let id = c.sbatch(&[
        "--acctg-freq=5",
        "--cpu-freq=high",
        "--wrap",
        "echo $SLURM_ACCTG_FREQ $SLURM_CPU_FREQ_REQ > env.txt",
    ]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read("env.txt"), "5 High\n");
}
