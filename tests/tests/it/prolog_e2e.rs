//! slurm.conf's prolog and epilog programs on a real local cluster: `Prolog` runs before the
//! batch script (which starts only after it), `TaskProlog` adjusts the script's environment,
//! `Epilog` runs after it, each with Slurm's `SLURM_*` variables; a failing prolog drains the
//! node and requeues the job held, a failing epilog drains the node.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::cluster::Cluster;

/// Writes an executable shell script `name` into `dir`; returns its path.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// A program that saves its environment to `<dir>/<tag>.<job id>.env`, then exits `code`.
fn recorder(dir: &Path, tag: &str, code: i32) -> String {
    let d = dir.display();
    let body = format!(
        "env | sort > {d}/{tag}.$SLURM_JOB_ID.tmp && mv {d}/{tag}.$SLURM_JOB_ID.tmp {d}/{tag}.$SLURM_JOB_ID.env\nexit {code}"
    );
    script(dir, &format!("{tag}.sh"), &body)
}

/// `NAME=value` lines of a saved environment, as a lookup.
fn var<'a>(env: &'a str, name: &str) -> Option<&'a str> {
    env.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
}

fn squeue_reason(c: &Cluster, job: u32) -> String {
    c.ok("squeue", &["-h", "-o", "%r", "-j", &job.to_string()])
        .trim()
        .to_string()
}

#[test]
fn prolog_and_epilog_run_around_the_script_with_slurms_variables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prolog = recorder(d, "prolog", 0);
    let epilog = recorder(d, "epilog", 0);
    let task = script(
        d,
        "task_prolog.sh",
        "echo export FROM_TASK_PROLOG=yes\necho unset DROP_ME\necho print hello",
    );
    let c = Cluster::start_with(
        1,
        &[
            &format!("Prolog={prolog}"),
            &format!("Epilog={epilog}"),
            &format!("TaskProlog={task}"),
            "PrologEpilogTimeout=60",
        ],
    );
    let config = c.ok("scontrol", &["show", "config"]);
    let shown: Vec<(&str, &str)> = config
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (k.trim(), v.trim()))
        .filter(|(k, _)| k.starts_with("Prolog") || k.starts_with("Task"))
        .collect();
    assert_eq!(
        shown,
        [
            ("Prolog", prolog.as_str()),
            ("PrologEpilogTimeout", "60"),
            ("PrologFlags", "(null)"),
            ("PrologSlurmctld", "(null)"),
            ("TaskEpilog", "(null)"),
            ("TaskProlog", task.as_str()),
        ]
    );
    let marker = format!("{}/prolog.$SLURM_JOB_ID.env", d.display());
    let wrap = format!(
        "test -f {marker} && echo prolog-ran-first; echo tp=$FROM_TASK_PROLOG; echo drop=${{DROP_ME:-gone}}; exit 3"
    );
    let job = c.sbatch(&["-J", "pe", "--export=ALL,DROP_ME=here", "--wrap", &wrap]);
    assert_eq!(c.wait_done(job), "FAILED");
    let out = c.wait_file(&format!("slurm-{job}.out"), "drop=");
    assert!(out.contains("prolog-ran-first"), "{out}");
    assert!(out.contains("tp=yes") && out.contains("drop=gone"), "{out}");

    let saved = |tag: &str| {
        let path = d.join(format!("{tag}.{job}.env"));
        c.wait_for(&format!("{}", path.display()), || path.exists());
        std::fs::read_to_string(&path).unwrap()
    };
    let (pro, epi) = (saved("prolog"), saved("epilog"));
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap();
    for env in [&pro, &epi] {
        assert_eq!(var(env, "SLURM_JOB_ID"), Some(job.to_string().as_str()));
        assert_eq!(var(env, "SLURM_JOB_USER"), Some(user.name.as_str()));
        assert_eq!(
            var(env, "SLURM_JOB_UID"),
            Some(user.uid.to_string().as_str())
        );
        assert_eq!(var(env, "SLURM_JOB_NODELIST"), Some("clustern1"));
        assert_eq!(var(env, "SLURMD_NODENAME"), Some("clustern1"));
        assert_eq!(var(env, "SLURM_CLUSTER_NAME"), Some("cluster"));
        assert_eq!(var(env, "SLURM_JOB_PARTITION"), Some("debug"));
        assert_eq!(var(env, "DROP_ME"), None, "not the job's environment");
    }
    assert_eq!(var(&pro, "SLURM_SCRIPT_CONTEXT"), Some("prolog_slurmd"));
    assert_eq!(var(&epi, "SLURM_SCRIPT_CONTEXT"), Some("epilog_slurmd"));
    let node = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert!(!node.contains("DRAIN"), "{node}");
}

#[test]
fn a_failing_prolog_drains_the_node_and_requeues_the_job_held() {
    let dir = tempfile::tempdir().unwrap();
    let prolog = recorder(dir.path(), "prolog", 1);
    let c = Cluster::start_with(1, &[&format!("Prolog={prolog}")]);
    let job = c.sbatch(&["--wrap", "touch ran"]);
    c.wait_for("the job to be requeued held", || {
        squeue_reason(&c, job) == "launch failed requeued held"
    });
    assert_eq!(c.state(&job.to_string()), "PENDING");
    let node = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert!(node.contains("State=IDLE+DRAIN"), "{node}");
    assert!(node.contains("Reason=Prolog error"), "{node}");
    assert!(!c.work.join("ran").exists(), "the script never ran");

    // Released by an administrator onto a node in service again, it runs (and fails again).
    c.ok(
        "scontrol",
        &["update", "nodename=clustern1", "state=resume"],
    );
    c.ok("scontrol", &["release", &job.to_string()]);
    c.wait_for("the job to be held again", || {
        squeue_reason(&c, job) == "launch failed requeued held"
    });
    assert!(!c.work.join("ran").exists(), "the script never ran");
}

#[test]
fn a_hanging_prolog_is_killed_after_the_timeout_and_a_failing_epilog_drains_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prolog = script(
        d,
        "prolog.sh",
        "if [ \"$SLURM_JOB_NAME\" = hang ]; then sleep 300; fi",
    );
    let epilog = recorder(d, "epilog", 2);
    let c = Cluster::start_with(
        2,
        &[
            &format!("Prolog={prolog}"),
            &format!("Epilog={epilog}"),
            "PrologEpilogTimeout=2",
        ],
    );
    let ok = c.sbatch(&["-J", "fine", "-w", "clustern2", "--wrap", "exit 0"]);
    assert_eq!(c.wait_done(ok), "COMPLETED");
    let node2 = || c.ok("scontrol", &["show", "node", "clustern2"]);
    c.wait_for("clustern2 drained by its epilog", || {
        node2().contains("Reason=Epilog error")
    });
    assert!(d.join(format!("epilog.{ok}.env")).exists());

    let hang = c.sbatch(&["-J", "hang", "-w", "clustern1", "--wrap", "exit 0"]);
    c.wait_for("the hanging prolog to fail", || {
        squeue_reason(&c, hang) == "launch failed requeued held"
    });
    let node1 = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert!(node1.contains("Reason=Prolog error"), "{node1}");
}

#[test]
fn controller_prolog_and_epilog_run_around_the_job_and_a_failed_prolog_requeues_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Fails once (leaving a mark), then succeeds: the job is requeued once and runs.
    let prolog = script(
        d,
        "prolog_ctld.sh",
        &format!(
            "env | sort > {0}/prolog_ctld.$SLURM_JOB_ID.env\nif [ ! -e {0}/failed ]; then touch {0}/failed; exit 1; fi",
            d.display()
        ),
    );
    let epilog = recorder(d, "epilog_ctld", 0);
    let c = Cluster::start_with(
        1,
        &[
            &format!("PrologSlurmctld={prolog}"),
            &format!("EpilogSlurmctld={epilog}"),
        ],
    );
    let marker = format!("{}/prolog_ctld.$SLURM_JOB_ID.env", d.display());
    let job = c.sbatch(&[
        "-J",
        "ctl",
        "--wrap",
        &format!("test -f {marker} && exit 3"),
    ]);
    assert_eq!(c.wait_done(job), "FAILED");
    let show = c.ok("scontrol", &["show", "job", &job.to_string()]);
    assert!(show.contains("Restarts=1"), "{show}");
    assert!(show.contains("ExitCode=3:0"), "{show}");

    let path = d.join(format!("epilog_ctld.{job}.env"));
    c.wait_for("the last EpilogSlurmctld", || {
        std::fs::read_to_string(&path).is_ok_and(|t| t.contains("SLURM_JOB_EXIT_CODE2=3:0"))
    });
    let epi = std::fs::read_to_string(&path).unwrap();
    assert_eq!(var(&epi, "SLURM_JOB_EXIT_CODE"), Some("768"));
    assert_eq!(var(&epi, "SLURM_SCRIPT_CONTEXT"), Some("epilog_slurmctld"));
    assert_eq!(var(&epi, "SLURM_JOB_NAME"), Some("ctl"));
    assert_eq!(var(&epi, "SLURM_CLUSTER_NAME"), Some("cluster"));
    let pro = std::fs::read_to_string(d.join(format!("prolog_ctld.{job}.env"))).unwrap();
    assert_eq!(var(&pro, "SLURM_SCRIPT_CONTEXT"), Some("prolog_slurmctld"));
    assert_eq!(var(&pro, "SLURM_JOB_NODELIST"), Some("clustern1"));
}

#[test]
fn a_job_cancelled_while_its_prolog_runs_never_starts_its_script() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let prolog = script(
        dir.path(),
        "prolog.sh",
        &format!("touch {d}/started\nwhile [ ! -e {d}/go ]; do sleep 0.1; done"),
    );
    let c = Cluster::start_with(1, &[&format!("Prolog={prolog}")]);
    let job = c.sbatch(&["--wrap", "touch ran"]);
    let started = dir.path().join("started");
    c.wait_for("the prolog to start", || started.exists());
    c.ok("scancel", &[&job.to_string()]);
    c.wait_for("the cancel to reach the job", || {
        c.state(&job.to_string()) != "RUNNING"
    });
    std::fs::write(dir.path().join("go"), "").unwrap();
    assert_eq!(c.wait_done(job), "CANCELLED");
    c.wait_for("the node to be idle again", || {
        c.ok("sinfo", &["-h", "-o", "%t"]).trim() == "idle"
    });
    assert!(!c.work.join("ran").exists(), "the script never ran");
    let node = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert!(!node.contains("DRAIN"), "{node}");
}

/// A program saving its environment to `<dir>/<tag>.<job id>.<node>.env`, failing on `fail_on`.
fn per_node_recorder(dir: &Path, tag: &str, fail_on: &str) -> String {
    let d = dir.display();
    let file = format!("{d}/{tag}.$SLURM_JOB_ID.$SLURMD_NODENAME");
    let body = format!(
        "env | sort > {file}.tmp && mv {file}.tmp {file}.env\n[ \"$SLURMD_NODENAME\" != \"{fail_on}\" ]"
    );
    script(dir, &format!("{tag}.sh"), &body)
}

#[test]
fn every_node_of_a_job_runs_the_prolog_before_its_first_step_and_the_epilog_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prolog = per_node_recorder(d, "prolog", "none");
    let epilog = per_node_recorder(d, "epilog", "none");
    let c = Cluster::start_with(
        2,
        &[&format!("Prolog={prolog}"), &format!("Epilog={epilog}")],
    );
    let job = c.sbatch(&["-N", "2", "--wrap", "srun -N 2 -n 2 hostname"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    for node in ["clustern1", "clustern2"] {
        for tag in ["prolog", "epilog"] {
            let path = d.join(format!("{tag}.{job}.{node}.env"));
            c.wait_for(&format!("{}", path.display()), || path.exists());
            let env = std::fs::read_to_string(&path).unwrap();
            assert_eq!(var(&env, "SLURM_JOB_ID"), Some(job.to_string().as_str()));
            assert_eq!(var(&env, "SLURMD_NODENAME"), Some(node));
            assert_eq!(var(&env, "SLURM_JOB_NODELIST"), Some("clustern[1-2]"));
            let context = format!("{tag}_slurmd");
            assert_eq!(var(&env, "SLURM_SCRIPT_CONTEXT"), Some(context.as_str()));
        }
    }
    let nodes = c.ok("sinfo", &["-h", "-N", "-o", "%N %t"]);
    assert_eq!(nodes, "clustern1 idle\nclustern2 idle\n");
}

#[test]
fn a_prolog_failing_on_a_node_running_only_steps_refuses_the_step_and_drains_it() {
    let dir = tempfile::tempdir().unwrap();
    let prolog = per_node_recorder(dir.path(), "prolog", "clustern2");
    let c = Cluster::start_with(2, &[&format!("Prolog={prolog}")]);
    let job = c.sbatch(&[
        "-N",
        "2",
        "--wrap",
        "srun -N 2 -n 2 touch ran.$SLURM_NODEID; sleep 30",
    ]);
    c.wait_for("the job to be requeued held", || {
        squeue_reason(&c, job) == "launch failed requeued held"
    });
    let node = c.ok("scontrol", &["show", "node", "clustern2"]);
    assert!(node.contains("Reason=Prolog error"), "{node}");
    let node1 = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert!(!node1.contains("DRAIN"), "{node1}");
}

#[test]
fn task_prolog_and_epilog_run_as_the_user_around_each_srun_task() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let task_prolog = script(
        d,
        "task_prolog.sh",
        "echo export FOO=bar\necho \"print hello from rank $SLURM_PROCID\"",
    );
    let task_epilog = script(
        d,
        "task_epilog.sh",
        &format!(
            "env | sort > {0}/te.$SLURM_PROCID.tmp && mv {0}/te.$SLURM_PROCID.tmp {0}/te.$SLURM_PROCID.env",
            d.display()
        ),
    );
    let c = Cluster::start_with(
        1,
        &[
            &format!("TaskProlog={task_prolog}"),
            &format!("TaskEpilog={task_epilog}"),
        ],
    );
    let job = c.sbatch(&["-n", "2", "--wrap", "srun -n 2 sh -c 'echo foo=$FOO'"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    let out = c.wait_file(&format!("slurm-{job}.out"), "foo=");
    for needle in ["hello from rank 0", "hello from rank 1", "foo=bar"] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    for rank in ["0", "1"] {
        let path = d.join(format!("te.{rank}.env"));
        c.wait_for(&format!("{}", path.display()), || path.exists());
        let env = std::fs::read_to_string(&path).unwrap();
        assert_eq!(var(&env, "SLURM_SCRIPT_CONTEXT"), Some("epilog_task"));
        assert_eq!(var(&env, "FOO"), Some("bar"), "the task's environment");
        assert_eq!(var(&env, "SLURM_JOB_ID"), Some(job.to_string().as_str()));
    }
}

#[test]
fn with_prolog_flags_alloc_every_node_runs_the_prolog_at_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prolog = per_node_recorder(d, "prolog", "none");
    let epilog = per_node_recorder(d, "epilog", "none");
    let c = Cluster::start_with(
        2,
        &[
            &format!("Prolog={prolog}"),
            &format!("Epilog={epilog}"),
            "PrologFlags=Alloc",
        ],
    );
    // No step runs on the second node: only the allocation runs its prolog there.
    let marker = format!("{}/prolog.$SLURM_JOB_ID.clustern2.env", d.display());
    let job = c.sbatch(&[
        "-N",
        "2",
        "--wrap",
        &format!("while [ ! -e {marker} ]; do sleep 0.1; done"),
    ]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    for node in ["clustern1", "clustern2"] {
        for tag in ["prolog", "epilog"] {
            let path = d.join(format!("{tag}.{job}.{node}.env"));
            c.wait_for(&format!("{}", path.display()), || path.exists());
            let env = std::fs::read_to_string(&path).unwrap();
            assert_eq!(var(&env, "SLURM_JOB_ID"), Some(job.to_string().as_str()));
            assert_eq!(var(&env, "SLURM_JOB_NODELIST"), Some("clustern[1-2]"));
        }
    }
    // An srun allocation runs it on every node at allocation too, before its step.
    let out = c.ok("srun", &["-N", "2", "-n", "1", "true"]);
    assert_eq!(out, "");
    let alloc = c.ok("sacct", &["-n", "-X", "-P", "-o", "JobID"]);
    let last = alloc
        .lines()
        .filter_map(|l| l.trim().parse::<u32>().ok())
        .max()
        .unwrap();
    assert!(last > job, "{alloc}");
    for node in ["clustern1", "clustern2"] {
        let path = d.join(format!("prolog.{last}.{node}.env"));
        c.wait_for(&format!("{}", path.display()), || path.exists());
    }
}
