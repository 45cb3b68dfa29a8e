//! Issue 10's node-count and overcommit options through the real binaries on a local cluster:
//! `-N min-max` (as many free nodes as the range allows), `--use-min-nodes`, `--spread-job`,
//! and `-O/--overcommit` (`NumCPUs=1` for eight tasks, `SLURM_OVERCOMMIT=1` in the batch
//! script and in the tasks of its srun, which runs eight tasks on that one CPU).

use crate::common;

use common::cluster::Cluster;

const CONS_TRES: &[&str] = &["SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU"];

/// The value of `key` (`NumCPUs=`) in `scontrol show` text.
fn field(text: &str, key: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .unwrap_or_else(|| panic!("{key} in {text}"))
        .to_string()
}

/// Submits `args` with a script writing its node count to `file`, waits for the job's end
/// and returns that count.
fn nodes_given(c: &Cluster, args: &[&str], file: &str) -> String {
    let script = format!("echo $SLURM_JOB_NUM_NODES > {file}");
    let mut all = args.to_vec();
    all.extend(["--wrap", &script]);
    let id = c.sbatch(&all);
    assert_eq!(c.wait_done(id), "COMPLETED");
    c.read(file).trim().to_string()
}

#[test]
fn node_ranges_use_min_nodes_and_spread_job_choose_the_node_count() {
    let c = Cluster::start_with(2, CONS_TRES);
    // Both nodes are free: -N 1-2 gets two (Slurm gives as many as it can within the range).
    assert_eq!(nodes_given(&c, &["-N", "1-2"], "range.txt"), "2");
    assert_eq!(
        nodes_given(&c, &["-N", "1-2", "--use-min-nodes"], "min.txt"),
        "1"
    );
    // Two tasks fit one node's CPUs; spread, they get a node each.
    assert_eq!(nodes_given(&c, &["-n", "1"], "packed.txt"), "1");
    assert_eq!(
        nodes_given(&c, &["-n", "2", "--spread-job"], "spread.txt"),
        "2"
    );
    // Through the input environment variable too.
    let out = c
        .command(
            "sbatch",
            &[
                "--parsable",
                "-N",
                "1-2",
                "--wrap",
                "echo $SLURM_JOB_NUM_NODES > env.txt",
            ],
        )
        .env("SBATCH_USE_MIN_NODES", "1")
        .output()
        .unwrap();
    let id: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read("env.txt").trim(), "1");
}

#[test]
fn overcommit_runs_eight_tasks_on_one_cpu() {
    let c = Cluster::start_with(1, CONS_TRES);
    let id = c.sbatch(&[
        "-O",
        "-n",
        "8",
        "--wrap",
        "echo $SLURM_OVERCOMMIT > batch.txt; \
         srun sh -c 'echo $SLURM_OVERCOMMIT' > tasks.txt; sleep 30",
    ]);
    c.wait_state(id, "RUNNING");
    let show = c.ok("scontrol", &["show", "job", &id.to_string()]);
    assert_eq!(field(&show, "NumCPUs="), "1", "{show}");
    assert_eq!(field(&show, "NumTasks="), "8", "{show}");
    c.wait_for("the eight tasks' lines", || {
        c.read("tasks.txt").lines().count() == 8
    });
    assert_eq!(c.read("batch.txt"), "1\n");
    assert_eq!(c.read("tasks.txt"), "1\n".repeat(8));
    c.ok("scancel", &[&id.to_string()]);
    // srun alone: its own allocation and step, eight tasks on one CPU.
    let out = c.cmd(
        "srun",
        &["-O", "-n", "8", "sh", "-c", "echo $SLURM_OVERCOMMIT"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "1\n".repeat(8), "{out:?}");
}
