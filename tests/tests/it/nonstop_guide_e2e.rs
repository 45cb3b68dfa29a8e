//! The failure management guide's three scenarios on a real cluster, run as its `steps.sh`
//! runs them: a `--no-kill` batch job runs its steps in a loop, calls `nonstop.sh` (installed by
//! `sluice up`) after each one and sources the node file `smd` writes. No failure: two steps,
//! "has no FAILED nodes" after each. A node set DOWN during a step with
//! `SMD_NONSTOP_FAILED=REPLACE`: replaced by the hot spare, the next step runs on the new node
//! list, sinfo shows the old node down. No spare with
//! `REPLACE:TIME_LIMIT_DELAY=1:DROP:TIME_LIMIT_DROP=30`: the node is dropped after the delay and
//! the time limit grows by the delay and the 30 minutes.

use crate::common;
use crate::nonstop_e2e::enable_nonstop;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::cluster::Cluster;

/// The guide's `steps.sh`: `$1` steps of `srun` on all the job's nodes, `nonstop.sh` after each
/// (exit 1 when it says so), the node file sourced when `smd` wrote one. Each step's tasks
/// write `step <i>` to `<dir>/progress` as they start, so the test knows the step runs. (The
/// script itself once wrote it just before `srun`: under load the test set a node DOWN before
/// the step existed, and `srun -N2` then waited for two usable nodes until the test gave up,
/// the flake of both failure scenarios.)
fn steps_script(c: &Cluster, dir: &Path) -> PathBuf {
    let nonstop = c.dir().join("bin/nonstop.sh");
    let progress = dir.join("progress");
    let body = format!(
        "#!/bin/sh\n\
         num=$1\n\
         i=1\n\
         while [ $i -le $num ]; do\n\
         \x20 srun -N$SLURM_NNODES sh -c \"echo step $i > {progress}.\\$SLURMD_NODENAME \
         && mv {progress}.\\$SLURMD_NODENAME {progress}; sleep $STEP_SECS\" > /dev/null\n\
         \x20 {nonstop}\n\
         \x20 if [ $? -ne 0 ]; then\n\
         \x20   exit 1\n\
         \x20 fi\n\
         \x20 nodes=/tmp/smd_job_${{SLURM_JOB_ID}}_nodes.sh\n\
         \x20 [ -f $nodes ] && . $nodes\n\
         \x20 echo \"start: step $i nodes $SLURM_JOB_NODELIST\"\n\
         \x20 i=$((i + 1))\n\
         done\n",
        progress = progress.display(),
        nonstop = nonstop.display(),
    );
    let path = dir.join("steps.sh");
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Submits `steps.sh <steps>` with `--no-kill` on `nodes` nodes, with `env` set; its job id.
fn submit(c: &Cluster, dir: &Path, nodes: u32, steps: u32, env: &[(&str, &str)]) -> u32 {
    let script = steps_script(c, dir);
    let out_file = dir.join("job.out");
    let mut cmd = c.command(
        "sbatch",
        &[
            "--parsable",
            "--no-kill",
            &format!("-N{nodes}"),
            "-t",
            "10",
            "-o",
            &out_file.display().to_string(),
            &script.display().to_string(),
            &steps.to_string(),
        ],
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::run(&mut cmd, None);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().parse().expect("a job id")
}

fn output(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("job.out")).unwrap_or_default()
}

/// Waits until step `i` of the script runs.
fn wait_step(c: &Cluster, dir: &Path, i: u32) {
    let want = format!("step {i}\n");
    c.wait_for(&format!("step {i} to start"), || {
        std::fs::read_to_string(dir.join("progress")).is_ok_and(|p| p == want)
    });
}

/// The guide's node files are `/tmp/smd_job_<id>_nodes.sh` and every test cluster numbers its
/// jobs from 1, so the tests that let `smd` write them take turns (a lock held while the value
/// lives) and each starts without files left by an earlier one.
struct NodeFiles(#[allow(dead_code)] nix::fcntl::Flock<std::fs::File>);

fn node_files() -> NodeFiles {
    let file = std::fs::File::create("/tmp/sluice-test-smd-nodefiles.lock").unwrap();
    let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .unwrap();
    for id in 1..=10 {
        remove_node_file(id);
    }
    NodeFiles(lock)
}

fn remove_node_file(job: u32) {
    let _ = std::fs::remove_file(format!("/tmp/smd_job_{job}_nodes.sh"));
}

/// Waits (up to 3 minutes: the no-spare scenario waits a minute for a spare) for `job` to end;
/// its state.
fn wait_end(c: &Cluster, job: u32) -> String {
    c.wait_within(
        Duration::from_secs(180),
        &format!("job {job} to end"),
        || {
            !matches!(
                c.state(&job.to_string()).as_str(),
                "" | "PENDING" | "RUNNING" | "SUSPENDED" | "COMPLETING" | "CONFIGURING"
            )
        },
    );
    c.state(&job.to_string())
}

/// A cluster of `nodes` nodes with failure management (`nonstop` as nonstop.conf), a work
/// directory for the job, and this test's turn at the node files.
fn site(nodes: u32, nonstop: &str) -> (NodeFiles, Cluster, tempfile::TempDir) {
    let turn = node_files();
    let c = Cluster::start(nodes);
    enable_nonstop(&c, nonstop);
    let dir = tempfile::tempdir_in(&c.work).unwrap();
    (turn, c, dir)
}

/// Sets clustern2 DOWN while step 1 runs, then waits for the job to end; the job's output.
fn fail_node_in_step_one(c: &Cluster, dir: &Path, job: u32) -> String {
    wait_step(c, dir, 1);
    c.ok(
        "scontrol",
        &["update", "NodeName=clustern2", "State=DOWN", "Reason=guide"],
    );
    assert_eq!(wait_end(c, job), "COMPLETED");
    remove_node_file(job);
    output(dir)
}

#[test]
fn without_a_failure_each_step_finds_no_failed_nodes() {
    let (_turn, c, dir) = site(2, "HotSpareCount=debug:1\n");
    let job = submit(
        &c,
        dir.path(),
        1,
        2,
        &[("SMD_NONSTOP_FAILED", "REPLACE"), ("STEP_SECS", "0")],
    );
    assert_eq!(wait_end(&c, job), "COMPLETED");
    let text = output(dir.path());
    let found = format!(
        "is_failed: job {job} searching for FAILED hosts\nis_failed: job {job} has no FAILED nodes\n"
    );
    assert_eq!(text.matches(&found).count(), 2, "{text}");
    assert!(text.contains("start: step 2 nodes clustern1\n"), "{text}");
}

#[test]
fn a_node_set_down_during_a_step_is_replaced_by_the_spare_for_the_next_step() {
    let (_turn, c, dir) = site(3, "HotSpareCount=debug:1\nMaxSpareNodeCount=1\n");
    let job = submit(
        &c,
        dir.path(),
        2,
        2,
        &[("SMD_NONSTOP_FAILED", "REPLACE"), ("STEP_SECS", "3")],
    );
    let text = fail_node_in_step_one(&c, dir.path(), job);
    let cpus = c.ok(
        "squeue",
        &["-h", "-t", "all", "-j", &job.to_string(), "-o", "%C"],
    );
    let cpus_per_node = cpus.trim().parse::<u32>().unwrap() / 2;
    let expected = format!(
        "is_failed: job {job} searching for FAILED hosts\n\
         is_failed: job {job} has 1 FAILED nodes\n\
         is_failed: job {job} FAILED node clustern2 cpu_count {cpus_per_node}\n\
         _handle_fault: job {job} handle failed_hosts\n\
         _try_replace: job {job} trying to replace 1 nodes\n\
         _try_replace: job {job} node clustern2 replaced by clustern3\n\
         _generate_node_file: job {job} all nodes replaced\n"
    );
    assert!(text.contains(&expected), "{text}");
    assert!(
        text.contains("start: step 2 nodes clustern[1,3]\n"),
        "the next step runs on the new node list: {text}"
    );
    assert_eq!(
        c.ok("sinfo", &["-h", "-n", "clustern2", "-o", "%T"]).trim(),
        "down"
    );
    // Accounting ended the first allocation's record at the replacement (Slurm's RESIZING
    // record) and the job's record goes on with the new one.
    let records = c.ok(
        "sacct",
        &[
            "-n",
            "-P",
            "-X",
            "-j",
            &job.to_string(),
            "-o",
            "State,NodeList",
        ],
    );
    let records: Vec<&str> = records.lines().collect();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0], "RESIZING|clustern[1-2]");
    assert!(records[1].ends_with("|clustern[1,3]"), "{records:?}");
}

#[test]
fn without_a_spare_the_node_is_dropped_after_the_delay_and_the_limit_extended() {
    let (_turn, c, dir) = site(2, "TimeLimitDelay=10\nTimeLimitDrop=30\n");
    let job = submit(
        &c,
        dir.path(),
        2,
        1,
        &[
            (
                "SMD_NONSTOP_FAILED",
                "REPLACE:TIME_LIMIT_DELAY=1:DROP:TIME_LIMIT_DROP=30",
            ),
            ("SMD_RETRY_INTERVAL", "20"),
            ("STEP_SECS", "3"),
        ],
    );
    let text = fail_node_in_step_one(&c, dir.path(), job);
    for line in [
        format!("is_failed: job {job} has 1 FAILED nodes\n"),
        format!(
            "_try_replace: smd_replace_node() error job_id {job}: Failed to replace the node\n"
        ),
        format!("_time_limit_extend: job {job} extending job time limit by 1 minutes\n"),
        format!("_increase_job_runtime: job {job} run time limit extended by 1min successfully\n"),
        format!("_try_replace: job {job} failed to replace down or failing nodes:\n   clustern2\n"),
        format!("_drop_nodes: job {job} node clustern2 dropped all right\n"),
        format!("_time_limit_extend: job {job} extending job time limit by 30 minutes\n"),
        format!("_increase_job_runtime: job {job} run time limit extended by 30min successfully\n"),
        "start: step 1 nodes clustern1\n".to_string(),
    ] {
        assert!(text.contains(&line), "missing {line:?} in:\n{text}");
    }
    let limit = c.ok(
        "sacct",
        &[
            "-n",
            "-X",
            "-j",
            &job.to_string(),
            "-o",
            "Timelimit,NodeList",
        ],
    );
    assert_eq!(
        limit.split_whitespace().collect::<Vec<_>>(),
        ["00:11:00", "clustern[1-2]", "00:41:00", "clustern1"],
        "10 minutes, 1 for the delay before the drop (its RESIZING record), 30 for the drop"
    );
}
