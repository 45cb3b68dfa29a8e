//! Interactive steps on a real local cluster: `srun` streams its tasks' output while they run,
//! labels lines with `-l`, spreads tasks over nodes with `-N -n`, and exits with the task's code.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::cluster::{Cluster, STATE_TIMEOUT};

#[test]
fn srun_streams_output_while_the_task_runs() {
    let c = Cluster::start(1);
    // The task prints, then waits for a file the test writes only after reading that line.
    let mut child = c
        .command(
            "srun",
            &[
                "sh",
                "-c",
                "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second",
            ],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(STATE_TIMEOUT);
    if first.is_err() {
        let _ = child.kill();
    }
    assert_eq!(
        first.unwrap(),
        "first",
        "the first line arrives while the task runs"
    );
    std::fs::write(c.work.join("go"), "").unwrap();
    assert_eq!(rx.recv_timeout(STATE_TIMEOUT).unwrap(), "second");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn srun_exits_with_the_tasks_exit_code() {
    let c = Cluster::start(1);
    let out = c.cmd("srun", &["sh", "-c", "echo out; echo err >&2; exit 7"]);
    assert_eq!(out.code, 7, "{out:?}");
    assert_eq!(out.stdout, "out\n");
    assert!(out.stderr.contains("err\n"), "{out:?}");
    assert!(
        out.stderr
            .contains("srun: error: clustern1: task 0: Exited with exit code 7"),
        "{out:?}"
    );
    let out = c.cmd("srun", &["true"]);
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn srun_spreads_labelled_tasks_over_nodes() {
    let c = Cluster::start(2);
    let out = c.cmd(
        "srun",
        &[
            "-N2",
            "-n4",
            "-l",
            "sh",
            "-c",
            "echo $SLURM_PROCID $SLURM_NODEID $SLURMD_NODENAME $SLURM_NTASKS",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    for (task, line) in lines.iter().enumerate() {
        let (label, rest) = line.split_once(": ").expect("-l labels every line");
        assert_eq!(label.trim(), task.to_string(), "{line}");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        assert_eq!(fields[0], task.to_string(), "{line}");
        assert_eq!(fields[3], "4", "{line}");
        let node = if fields[1] == "0" {
            "clustern1"
        } else {
            "clustern2"
        };
        assert_eq!(fields[2], node, "SLURM_NODEID matches the node: {line}");
    }
    let nodes: std::collections::BTreeSet<&str> = lines
        .iter()
        .map(|l| l.split_whitespace().nth(3).unwrap_or_default())
        .collect();
    assert_eq!(nodes.len(), 2, "tasks ran on both nodes: {}", out.stdout);
    // The allocation ends with the command: the nodes are free again.
    c.wait_for("the nodes to be idle", || {
        c.ok("sinfo", &["-h", "-o", "%t"]).trim() == "idle"
    });
}

#[test]
fn srun_inside_a_batch_job_runs_a_step_of_it() {
    let c = Cluster::start(2);
    let id = c.sbatch(&["-N2", "--wrap", "srun -l hostname | sort > steps.txt"]);
    assert_eq!(c.wait_done(id), "COMPLETED");
    let text = c.read("steps.txt");
    let labels: Vec<&str> = text
        .lines()
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(labels, ["0", "1"], "one task per node:\n{text}");
}
