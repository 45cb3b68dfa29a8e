//! sbatch's placement and timing options on a real local cluster, through sbatch, squeue and
//! scontrol: `--ntasks-per-node`, `--mincpus`, `-w`, `-x`, `--begin`, `--nice`, `--wckey`,
//! `--open-mode`, `--signal`, and `EnforcePartLimits`.

use crate::common;

use common::cluster::Cluster;

/// squeue's `%r` (reason) of `job`.
fn reason(c: &Cluster, job: u32) -> String {
    c.ok("squeue", &["-h", "-o", "%r", "-j", &job.to_string()])
        .trim()
        .to_string()
}

fn show(c: &Cluster, job: u32) -> String {
    c.ok("scontrol", &["show", "job", &job.to_string()])
}

#[test]
fn placement_options_choose_nodes_tasks_and_pending_reasons() {
    let c = Cluster::start(2);
    // --ntasks-per-node with -N and no -n: N*nodes tasks, and the job's environment says so.
    let a = c.sbatch(&[
        "-N2",
        "--ntasks-per-node=1",
        "-o",
        "tpn.out",
        "--wrap",
        "env | grep -E '^SLURM_(NTASKS|NTASKS_PER_NODE)='",
    ]);
    assert_eq!(c.wait_done(a), "COMPLETED");
    let text = c.wait_file("tpn.out", "SLURM_NTASKS_PER_NODE");
    assert!(text.contains("SLURM_NTASKS=2"), "{text}");
    assert!(text.contains("SLURM_NTASKS_PER_NODE=1"), "{text}");

    // -w: that node; -x: never that node.
    let w = c.sbatch(&["-w", "clustern2", "--wrap", "true"]);
    assert_eq!(c.wait_done(w), "COMPLETED");
    let x = c.sbatch(&["-x", "clustern1", "--wrap", "true"]);
    assert_eq!(c.wait_done(x), "COMPLETED");
    for (job, node) in [(w, "clustern2"), (x, "clustern2")] {
        let s = show(&c, job);
        assert!(s.contains(&format!("   NodeList={node}\n")), "{s}");
    }
    assert!(show(&c, w).contains("ReqNodeList=clustern2 ExcNodeList=(null)"));
    assert!(show(&c, x).contains("ReqNodeList=(null) ExcNodeList=clustern1"));

    // srun outside an allocation: -w and -x place the job it allocates.
    let out = c.ok("srun", &["-w", "clustern2", "printenv", "SLURMD_NODENAME"]);
    assert_eq!(out, "clustern2\n");
    let out = c.ok("srun", &["-x", "clustern1", "printenv", "SLURMD_NODENAME"]);
    assert_eq!(out, "clustern2\n");

    // Unknown node names and nodes outside the partition are refused with Slurm's words.
    let out = c.cmd("sbatch", &["-w", "nosuch9", "--wrap", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("sbatch: error: Batch job submission failed: Invalid node name specified"),
        "{out:?}"
    );
    let out = c.cmd("sbatch", &["-x", "nosuch9", "--wrap", "true"]);
    assert!(
        out.stderr.contains("Invalid node name specified"),
        "{out:?}"
    );
    let out = c.cmd(
        "sbatch",
        &["-w", "clustern[1-2]", "-x", "clustern2", "--wrap", "true"],
    );
    assert!(
        out.stderr
            .contains("Batch job submission failed: Requested node configuration is not available"),
        "{out:?}"
    );
    let out = c.cmd("sbatch", &["-w", "[bad", "--wrap", "true"]);
    assert!(
        out.stderr
            .contains("sbatch: error: Invalid --nodelist specification"),
        "{out:?}"
    );

    // EnforcePartLimits=NO (the default): what the partition can never run pends.
    let big = c.sbatch(&["-N", "999", "--wrap", "true"]);
    let cpus = c.sbatch(&["--mincpus=9999", "--wrap", "true"]);
    for job in [big, cpus] {
        c.wait_for(&format!("job {job} pending on PartitionConfig"), || {
            reason(&c, job) == "PartitionConfig"
        });
    }
    assert!(show(&c, cpus).contains("MinCPUsNode=9999"));
    c.ok("scancel", &[&big.to_string(), &cpus.to_string()]);
}

#[test]
fn begin_nice_and_wckey_show_in_squeue_and_scontrol() {
    let c = Cluster::start(1);
    let later = c.sbatch(&[
        "--begin=now+1hour",
        "--nice=50",
        "--wckey=proj7",
        "--wrap",
        "true",
    ]);
    c.wait_for("BeginTime reason", || reason(&c, later) == "BeginTime");
    let s = show(&c, later);
    assert!(s.contains(" Nice=50 "), "{s}");
    let nice = c.ok("squeue", &["-h", "-o", "%y", "-j", &later.to_string()]);
    assert_eq!(nice.trim(), "50");
    let nice = c.ok("squeue", &["-h", "-O", "Nice", "-j", &later.to_string()]);
    assert_eq!(nice.trim(), "50");
    assert!(s.contains(" WCKey=proj7"), "{s}");
    let field = |name: &str| {
        s.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .unwrap_or_default()
            .to_string()
    };
    assert_ne!(field("EligibleTime"), field("SubmitTime"), "{s}");
    assert_ne!(field("EligibleTime"), "Unknown", "{s}");
    // --nice alone is 100; a bad value is refused before anything is sent.
    let plain = c.sbatch(&["--nice", "--begin=now+1hour", "--wrap", "true"]);
    assert!(show(&c, plain).contains(" Nice=100 "));
    let out = c.cmd("sbatch", &["--begin=someday", "--wrap", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("sbatch: error: Invalid --begin specification"),
        "{out:?}"
    );
    // A begin time already passed: it runs at once.
    let now = c.sbatch(&["--begin=now", "--wrap", "true"]);
    assert_eq!(c.wait_done(now), "COMPLETED");
    c.ok("scancel", &[&later.to_string(), &plain.to_string()]);
}

#[test]
fn open_mode_appends_or_truncates_the_output_file() {
    let c = Cluster::start(1);
    std::fs::write(c.work.join("app.out"), "old\n").unwrap();
    std::fs::write(c.work.join("trunc.out"), "old\n").unwrap();
    let a = c.sbatch(&["-o", "app.out", "--open-mode=append", "--wrap", "echo new"]);
    let t = c.sbatch(&["-o", "trunc.out", "--wrap", "echo new"]);
    assert_eq!(c.wait_done(a), "COMPLETED");
    assert_eq!(c.wait_done(t), "COMPLETED");
    assert_eq!(c.wait_file("app.out", "new"), "old\nnew\n");
    assert_eq!(c.wait_file("trunc.out", "new"), "new\n");
    // The directive form, and the input environment variable.
    std::fs::write(
        c.work.join("dir.sh"),
        "#!/bin/sh\n#SBATCH -o app.out\n#SBATCH --open-mode=append\necho third\n",
    )
    .unwrap();
    let d = c.sbatch(&["dir.sh"]);
    assert_eq!(c.wait_done(d), "COMPLETED");
    assert_eq!(c.wait_file("app.out", "third"), "old\nnew\nthird\n");
}

#[test]
fn signal_reaches_the_batch_shell_before_the_time_limit() {
    let c = Cluster::start(1);
    std::fs::write(
        c.work.join("trap.sh"),
        "#!/bin/bash\n#SBATCH -t 1\n#SBATCH --signal=B:USR1@55\n\
         trap 'echo trapped > sig.txt; exit 0' USR1\nwhile true; do sleep 1; done\n",
    )
    .unwrap();
    let id = c.sbatch(&["trap.sh"]);
    // The limit is 60 s: USR1 comes about 5 s after the start, long before the limit.
    assert_eq!(c.wait_file("sig.txt", "trapped"), "trapped\n");
    assert_eq!(c.wait_done(id), "COMPLETED");
}

#[test]
fn signal_without_b_reaches_the_steps_not_the_batch_shell() {
    let c = Cluster::start(1);
    std::fs::write(
        c.work.join("steps.sh"),
        "#!/bin/bash\n#SBATCH -t 1\n#SBATCH --signal=USR1@55\n\
         trap 'echo shell > shell.txt' USR1\n\
         srun bash -c \"trap 'echo step > step.txt; exit 0' USR1; while true; do sleep 1; done\"\n\
         echo done > done.txt\n",
    )
    .unwrap();
    let id = c.sbatch(&["steps.sh"]);
    assert_eq!(c.wait_file("step.txt", "step"), "step\n");
    c.wait_file("done.txt", "done");
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read("shell.txt"), "", "the batch shell got no signal");
}

#[test]
fn enforce_part_limits_all_refuses_what_the_partition_cannot_run() {
    let c = Cluster::start_with(1, &["EnforcePartLimits=ALL"]);
    let out = c.cmd("sbatch", &["-N", "999", "--wrap", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "sbatch: error: Batch job submission failed: Requested node configuration is not available"
        ),
        "{out:?}"
    );
    let conf = c.ok("scontrol", &["show", "config"]);
    assert!(conf.contains("EnforcePartLimits       = ALL"), "{conf}");
    assert_eq!(c.ok("squeue", &["-h"]), "");
}
