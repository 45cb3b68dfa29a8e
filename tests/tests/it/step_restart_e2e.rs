//! An srun step whose node daemon is killed with `kill -9` while its task runs, inside a batch
//! job: the task runs on under its supervisor (`sluice-stepd --task`), the restarted daemon
//! adopts it, srun (which lost its stream) says so and waits for the daemon, then gets the
//! task's true exit code; srun exits with it and sacct shows it for the step. The ended task's
//! files wait for srun: a second restart before srun comes back loses nothing; a burst larger
//! than what the supervisor keeps in memory, printed while the daemon is away, is spilled to a
//! private file and reaches srun whole.

use crate::common;

use common::cluster::Cluster;

#[test]
fn a_node_daemon_killed_under_an_srun_step_loses_no_exit_code() {
    let c = Cluster::start(1);
    let script = "srun sh -c 'echo before; touch started; while [ ! -e go ]; do sleep 0.1; done; echo after; exit 7'; echo srun=$? > srun.rc";
    let job = c.sbatch(&["-o", "job.out", "--wrap", script]);
    c.wait_for("the step's task to run", || c.work.join("started").exists());
    // Its first line reached srun before the kill.
    c.wait_file("job.out", "before\n");
    let record = c
        .dir()
        .join(format!("cluster/spool/clustern1/launches/step.{job}.0.0"));
    assert!(record.exists(), "the task's launch record");
    c.kill9_noded("clustern1");
    c.up();
    std::fs::write(c.work.join("go"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(
        c.read("srun.rc"),
        "srun=7\n",
        "srun has the task's exit code"
    );
    let step = format!("{job}.0");
    c.wait_for("the step's record", || {
        let out = c.cmd(
            "sacct",
            &[
                "-n",
                "-P",
                "-o",
                "JobID,State,ExitCode",
                "-j",
                &job.to_string(),
            ],
        );
        out.stdout
            .lines()
            .any(|l| l == format!("{step}|FAILED|7:0"))
    });
    let out = c.read("job.out");
    assert!(
        out.contains("before\n"),
        "the output before the kill: {out}"
    );
    assert!(
        out.contains("srun: error: clustern1: lost the connection to the node daemon"),
        "{out}"
    );
    assert!(out.contains("srun: clustern1: node daemon back"), "{out}");
    assert!(
        out.contains("srun: error: clustern1: task 0: Exited with exit code 7"),
        "{out}"
    );
    c.wait_for("the task's files to go once srun has its end", || {
        !record.exists()
    });
}

#[test]
fn an_srun_step_survives_two_node_daemon_restarts_before_srun_comes_back() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let c = Cluster::start(1);
    let task =
        "echo before; touch started; while [ ! -e go ]; do sleep 0.1; done; echo after; exit 7";
    let script =
        format!("srun sh -c '{task}' & echo $! > srun.pid; wait $!; echo srun=$? > srun.rc");
    let job = c.sbatch(&["-o", "job.out", "--wrap", &script]);
    c.wait_for("the step's task to run", || c.work.join("started").exists());
    c.wait_file("job.out", "before\n");
    let srun = Pid::from_raw(c.read("srun.pid").trim().parse().unwrap());
    let launches = c.dir().join("cluster/spool/clustern1/launches");
    let record = launches.join(format!("step.{job}.0.0"));
    assert!(record.exists(), "the task's launch record");
    let log = c.dir().join("log/noded-cluster-clustern1.log");
    let ended = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("adopted step tasks ended")
            .count()
    };
    // srun stays away (stopped) while the node daemon restarts twice.
    kill(srun, Signal::SIGSTOP).unwrap();
    c.kill9_noded("clustern1");
    c.up();
    let before = ended();
    std::fs::write(c.work.join("go"), "").unwrap();
    c.wait_for("the adopted task's end", || ended() > before);
    assert!(record.exists(), "the ended task's record waits for srun");
    c.kill9_noded("clustern1");
    c.up();
    c.wait_for("the ended task adopted again", || ended() > before + 1);
    kill(srun, Signal::SIGCONT).unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED", "{}", c.read("job.out"));
    assert_eq!(c.read("srun.rc"), "srun=7\n", "{}", c.read("job.out"));
    let out = c.read("job.out");
    assert!(out.contains("before\n") && out.contains("after\n"), "{out}");
    assert!(
        out.contains("srun: error: clustern1: task 0: Exited with exit code 7"),
        "{out}"
    );
    let step = format!("{job}.0");
    c.wait_for("the step's record", || {
        c.cmd(
            "sacct",
            &[
                "-n",
                "-P",
                "-o",
                "JobID,State,ExitCode",
                "-j",
                &job.to_string(),
            ],
        )
        .stdout
        .lines()
        .any(|l| l == format!("{step}|FAILED|7:0"))
    });
    c.wait_for("the task's files to go once delivered", || {
        std::fs::read_dir(&launches).is_ok_and(|d| {
            !d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("step."))
        })
    });
}

#[test]
fn a_burst_larger_than_the_kept_memory_while_the_node_daemon_is_away_loses_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let c = Cluster::start(1);
    // About 5.2 MiB of numbered lines, printed while the node daemon is away: more than the
    // 2 MiB the supervisor keeps in memory, so it goes to the spill file.
    let task = "touch started; while [ ! -e burst ]; do sleep 0.1; done; seq 1 800000; \
                touch printed; while [ ! -e go ]; do sleep 0.1; done; exit 0";
    let job = c.sbatch(&["-o", "job.out", "--wrap", &format!("srun sh -c '{task}'")]);
    c.wait_for("the step's task to run", || c.work.join("started").exists());
    c.kill9_noded("clustern1");
    std::fs::write(c.work.join("burst"), "").unwrap();
    c.wait_for("the burst to be printed", || {
        c.work.join("printed").exists()
    });
    let spill = c.dir().join(format!(
        "cluster/spool/clustern1/launches/step.{job}.0.0.out"
    ));
    let meta = std::fs::metadata(&spill).expect("the spill file");
    assert!(meta.len() > 5 << 20, "{} bytes kept", meta.len());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "private");
    c.up();
    std::fs::write(c.work.join("go"), "").unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED");
    let out = c.read("job.out");
    let numbers: Vec<u64> = out.lines().filter_map(|l| l.parse().ok()).collect();
    assert_eq!(numbers.len(), 800_000, "every line once");
    assert!(
        numbers.iter().copied().eq(1..=800_000),
        "every line in order"
    );
    c.wait_for("the spill file to go once delivered", || !spill.exists());
}
