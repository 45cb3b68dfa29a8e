//! A node daemon restart around slurm.conf's `Prolog` and `Epilog`: killed with `kill -9` while
//! a job's prolog runs, the restarted daemon kills the interrupted prolog and launches the job
//! again (prolog first), so the launch is not lost; a job adopted after a restart runs its
//! epilog when it ends, as one the daemon started does; a controller restarted while a job
//! waits for its nodes' `PrologFlags=Alloc` prologs keeps waiting and launches it once.

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

#[test]
fn a_node_daemon_killed_while_the_prolog_runs_launches_the_job_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // Each run appends its pid, then waits for the gate of its run (`go.<n>`: the n-th run).
    let prolog = script(
        dir.path(),
        "prolog.sh",
        &format!(
            "echo $$ >> {d}/runs\nn=$(wc -l < {d}/runs)\nwhile [ ! -e {d}/go.$n ]; do sleep 0.1; done"
        ),
    );
    let c = Cluster::start_with(1, &[&format!("Prolog={prolog}")]);
    let job = c.sbatch(&["--wrap", "echo ran > ran.out"]);
    let runs = dir.path().join("runs");
    c.wait_for("the first prolog to start", || runs.exists());
    // The node daemon notes the prolog's process group just after starting it: killed before
    // that, it could not know what to kill (a window of a few milliseconds).
    let mark = c
        .dir()
        .join(format!("cluster/spool/clustern1/launches/{job}_0.prolog"));
    c.wait_for("the prolog's process group to be noted", || mark.exists());
    let first: i32 = std::fs::read_to_string(&runs)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    c.kill9_noded("clustern1");
    c.up();
    c.wait_for("the prolog to run again", || {
        std::fs::read_to_string(&runs).is_ok_and(|t| t.lines().count() == 2)
    });
    c.wait_for("the interrupted prolog to be killed", || {
        !Path::new(&format!("/proc/{first}")).exists()
    });
    std::fs::write(dir.path().join("go.2"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(c.read("ran.out"), "ran\n");
    let acct = c.ok(
        "sacct",
        &[
            "-n",
            "-X",
            "-P",
            "-o",
            "State,ExitCode",
            "-j",
            &job.to_string(),
        ],
    );
    assert_eq!(acct.trim(), "COMPLETED|0:0");
}

#[test]
fn an_adopted_job_runs_its_epilog_when_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let epilog = script(
        dir.path(),
        "epilog.sh",
        &format!(
            "env | sort > {d}/epilog.$SLURM_JOB_ID.tmp && mv {d}/epilog.$SLURM_JOB_ID.tmp {d}/epilog.$SLURM_JOB_ID.env"
        ),
    );
    let c = Cluster::start_with(1, &[&format!("Epilog={epilog}")]);
    let job = c.sbatch(&[
        "--wrap",
        "touch started; while [ ! -e go ]; do sleep 0.1; done; exit 4",
    ]);
    let record = c
        .dir()
        .join(format!("cluster/spool/clustern1/launches/{job}_0"));
    c.wait_for("the launch record", || record.exists());
    c.kill9_noded("clustern1");
    c.up();
    std::fs::write(c.work.join("go"), "").unwrap();
    assert_eq!(c.wait_done(job), "FAILED");
    let path = dir.path().join(format!("epilog.{job}.env"));
    c.wait_for("the epilog of the adopted job", || path.exists());
    let env = std::fs::read_to_string(&path).unwrap();
    assert!(
        env.contains("SLURM_SCRIPT_CONTEXT=epilog_slurmd\n"),
        "{env}"
    );
    assert!(env.contains("SLURMD_NODENAME=clustern1\n"), "{env}");
    let acct = c.ok(
        "sacct",
        &[
            "-n",
            "-X",
            "-P",
            "-o",
            "State,ExitCode",
            "-j",
            &job.to_string(),
        ],
    );
    assert_eq!(acct.trim(), "FAILED|4:0");
}

#[test]
fn a_controller_restarted_during_the_node_prolog_hold_launches_once_they_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // Each node notes each prolog run; the second node's waits for a release marker.
    let prolog = script(
        dir.path(),
        "prolog.sh",
        &format!(
            "echo $$ >> {d}/runs.$SLURMD_NODENAME\n\
             if [ \"$SLURMD_NODENAME\" = clustern2 ]; then touch {d}/waiting; \
             while [ ! -e {d}/release ]; do sleep 0.1; done; fi"
        ),
    );
    let c = Cluster::start_with(2, &[&format!("Prolog={prolog}"), "PrologFlags=Alloc"]);
    let job = c.sbatch(&["-N", "2", "-o", "job.out", "--wrap", "echo ran"]);
    c.wait_for("the second node's prolog to run", || {
        dir.path().join("waiting").exists()
    });
    assert_eq!(c.state(&job.to_string()), "CONFIGURING");
    c.kill9_ctld();
    c.up();
    // The restarted controller holds the launch still (not a lost launch to requeue).
    assert_eq!(c.state(&job.to_string()), "CONFIGURING");
    std::fs::write(dir.path().join("release"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED", "{}", c.read("job.out"));
    assert_eq!(c.read("job.out"), "ran\n");
    for node in ["clustern1", "clustern2"] {
        let runs = std::fs::read_to_string(dir.path().join(format!("runs.{node}"))).unwrap();
        assert_eq!(runs.lines().count(), 1, "{node}'s prolog ran once: {runs}");
    }
    let acct = c.ok(
        "sacct",
        &[
            "-n",
            "-X",
            "-D",
            "-P",
            "-o",
            "State,ExitCode",
            "-j",
            &job.to_string(),
        ],
    );
    assert_eq!(acct.trim(), "COMPLETED|0:0", "one run");
}
