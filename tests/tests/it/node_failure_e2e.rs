//! What is left of node-side failure handling, on a real local cluster: a restarted controller
//! asks its nodes to register at once (and an administrator's DOWN survives that), srun stops
//! waiting for a node daemon the controller set DOWN, the epilog runs on a steps-only node
//! whose daemon restarted, and with `PrologFlags=Alloc` the batch script waits for every
//! node's prolog; a node daemon back with an older run kills that run only.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use common::cluster::Cluster;

/// Writes an executable shell script `name` into `dir`; returns its path.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// The node daemon log of `node`.
fn noded_log(c: &Cluster, node: &str) -> String {
    let path = c
        .dir()
        .join("log")
        .join(format!("noded-cluster-{node}.log"));
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `sinfo`'s state and reason of `node`.
fn node_state(c: &Cluster, node: &str) -> String {
    c.ok("sinfo", &["-h", "-N", "-n", node, "-o", "%T %E"])
        .trim()
        .to_string()
}

/// Whether process `pid` exists.
fn alive(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

#[test]
fn a_restarted_controller_asks_its_nodes_to_register_and_an_admin_down_stays_down() {
    // Heartbeats every 30 s: a controller that only waited for them would take that long.
    let c = Cluster::start_with(2, &["SlurmdTimeout=300"]);
    c.ok(
        "scontrol",
        &["update", "nodename=clustern2", "state=down", "reason=maint"],
    );
    let asked = |c: &Cluster| {
        noded_log(c, "clustern1")
            .matches("the controller asks for a registration")
            .count()
    };
    let before = (asked(&c), noded_log(&c, "clustern2").len());
    c.kill9_ctld();
    c.up();
    c.wait_within(
        Duration::from_secs(10),
        "the nodes to register anew",
        || {
            asked(&c) > before.0
                && noded_log(&c, "clustern2")[before.1..]
                    .contains("the controller asks for a registration")
        },
    );
    c.wait_within(Duration::from_secs(10), "clustern1 to be idle", || {
        node_state(&c, "clustern1") == "idle none"
    });
    // ReturnToService=2 (sluice up's) returns a node whose daemon restarts; a node that
    // registers again because the controller restarted stays as the administrator left it.
    c.wait_for("clustern2's registration", || {
        noded_log(&c, "clustern2")[before.1..].contains("registered with the controller")
    });
    assert_eq!(node_state(&c, "clustern2"), "down maint");
    let job = c.sbatch(&["-N", "2", "--wrap", "true"]);
    c.wait_for("the job to wait for the DOWN node", || {
        c.ok("squeue", &["-h", "-o", "%T", "-j", &job.to_string()])
            .trim()
            == "PENDING"
    });
    c.ok("scancel", &[&job.to_string()]);
}

#[test]
fn srun_ends_with_a_node_failure_once_the_controller_sets_its_node_down() {
    let c = Cluster::start_with(2, &["SlurmdTimeout=3"]);
    let mut srun: Child = c
        .command(
            "srun",
            &[
                "-N",
                "1",
                "-w",
                "clustern2",
                "sh",
                "-c",
                "echo $$ > task.pid; exec sleep 600",
            ],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("srun");
    c.wait_for("the task to run", || !c.read("task.pid").trim().is_empty());
    let task: i32 = c.read("task.pid").trim().parse().unwrap();
    // srun's allocation is never requeued (Slurm's words when asked to).
    let alloc = c.ok("squeue", &["-h", "-o", "%i", "-w", "clustern2"]);
    let refused = c.cmd("scontrol", &["requeue", alloc.trim()]);
    assert!(
        refused.stderr.contains(&format!(
            "Only batch jobs are accepted or processed for job {}",
            alloc.trim()
        )),
        "{refused:?}"
    );
    c.kill9_noded("clustern2");
    // Not the 300 s srun waits for a daemon that may come back: the node is DOWN.
    let mut status = None;
    c.wait_within(Duration::from_secs(40), "srun to end", || {
        status = srun.try_wait().expect("srun wait");
        status.is_some()
    });
    let out = srun.wait_with_output().expect("srun output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{stderr}");
    assert!(
        stderr.contains("srun: error: Node failure on clustern2"),
        "{stderr}"
    );
    assert!(
        node_state(&c, "clustern2").starts_with("down"),
        "{}",
        node_state(&c, "clustern2")
    );
    // The task runs on under its supervisor; the node daemon back is told to kill that run
    // (the controller ended it), and the node returns (ReturnToService=2).
    assert!(alive(task), "the task outlived its node daemon");
    c.up();
    c.wait_for("the orphaned task to be killed", || !alive(task));
    c.wait_for("clustern2 back", || {
        node_state(&c, "clustern2") == "idle none"
    });
    let acct = c.ok(
        "sacct",
        &["-n", "-X", "-D", "-P", "-o", "State", "-j", alloc.trim()],
    );
    assert_eq!(
        acct.trim(),
        "NODE_FAIL",
        "one run, ended by the node failure"
    );
}

#[test]
fn the_epilog_runs_on_a_steps_only_node_whose_daemon_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let epilog = script(
        dir.path(),
        "epilog.sh",
        &format!("touch {d}/epilog.$SLURM_JOB_ID.$SLURMD_NODENAME"),
    );
    let c = Cluster::start_with(2, &[&format!("Epilog={epilog}")]);
    let step = "touch started.$SLURM_NODEID; while [ ! -e go ]; do sleep 0.1; done";
    let job = c.sbatch(&[
        "-N",
        "2",
        "-o",
        "job.out",
        "--wrap",
        &format!("srun -N 2 -n 2 sh -c '{step}'"),
    ]);
    c.wait_for("the step's tasks to run", || {
        c.work.join("started.0").exists() && c.work.join("started.1").exists()
    });
    let batch_host = c.ok("squeue", &["-h", "-o", "%B", "-j", &job.to_string()]);
    assert_eq!(batch_host.trim(), "clustern1");
    c.kill9_noded("clustern2");
    c.up();
    std::fs::write(c.work.join("go"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED", "{}", c.read("job.out"));
    for node in ["clustern1", "clustern2"] {
        let path = dir.path().join(format!("epilog.{job}.{node}"));
        c.wait_for(&format!("the epilog on {node}"), || path.exists());
    }
    let here = c.dir().join("cluster/spool/clustern2/here");
    c.wait_for("the due epilog's record to go", || {
        std::fs::read_dir(&here).is_ok_and(|mut d| d.next().is_none())
    });
}

#[test]
fn with_prolog_flags_alloc_the_script_waits_for_every_nodes_prolog() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // Slow on the second node: it waits for a marker file the test writes.
    let prolog = script(
        dir.path(),
        "prolog.sh",
        &format!(
            "if [ \"$SLURMD_NODENAME\" = clustern2 ]; then touch {d}/waiting.$SLURM_JOB_ID; \
             while [ ! -e {d}/release ]; do sleep 0.1; done; fi\n\
             touch {d}/prolog.$SLURM_JOB_ID.$SLURMD_NODENAME"
        ),
    );
    let c = Cluster::start_with(2, &[&format!("Prolog={prolog}"), "PrologFlags=Alloc"]);
    let job = c.sbatch(&[
        "-N",
        "2",
        "-o",
        "job.out",
        "--wrap",
        &format!("ls {d}; test -e {d}/prolog.$SLURM_JOB_ID.clustern2"),
    ]);
    let waiting = dir.path().join(format!("waiting.{job}"));
    c.wait_for("the second node's prolog to run", || waiting.exists());
    // The batch host neither ran its prolog nor the script: the job is CONFIGURING.
    assert_eq!(c.state(&job.to_string()), "CONFIGURING");
    assert!(!dir.path().join(format!("prolog.{job}.clustern1")).exists());
    std::fs::write(dir.path().join("release"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED", "{}", c.read("job.out"));
    assert!(dir.path().join(format!("prolog.{job}.clustern1")).exists());
}

#[test]
fn srun_gets_every_byte_its_task_printed_while_the_node_daemon_was_away() {
    let c = Cluster::start(1);
    let task = "i=0; while [ ! -e stop ]; do i=$((i+1)); echo $i; sleep 0.01; done; echo last=$i";
    let job = c.sbatch(&["-o", "job.out", "--wrap", &format!("srun sh -c '{task}'")]);
    c.wait_file("job.out", "\n20\n");
    c.kill9_noded("clustern1");
    // The supervisor keeps what the task prints meanwhile.
    let kept = c.dir().join(format!(
        "cluster/spool/clustern1/launches/step.{job}.0.0.out"
    ));
    c.wait_for("the task's output to be kept", || {
        std::fs::metadata(&kept).is_ok_and(|m| m.len() > 200)
    });
    c.up();
    c.wait_file("job.out", "node daemon back");
    std::fs::write(c.work.join("stop"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED", "{}", c.read("job.out"));
    let out = c.read("job.out");
    let numbers: Vec<u64> = out.lines().filter_map(|l| l.parse().ok()).collect();
    let last: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("last="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no last line: {out}"));
    assert!(last > 20, "{out}");
    assert_eq!(
        numbers,
        (1..=last).collect::<Vec<_>>(),
        "every number once, in order"
    );
    assert!(!kept.exists(), "the kept output goes once delivered");
}
