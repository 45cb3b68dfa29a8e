//! `sluice up` for whole clusters, driven as a user would from a shell: one cluster's first
//! job, a second `up` that starts only what is missing, `down` and `up` again with the history
//! intact, several clusters in a federation (the README's first command: a federated job seen
//! by `squeue --federation` and `sacct --federation`), Ctrl-C in the foreground.

use crate::common;
use common::procs::{interrupt, up_in_foreground};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::federation::{STATE_TIMEOUT, kill_jobs_of};
use common::{CmdOutput, DAEMON_TIMEOUT, bin, exit_code, run};
use sluice_tool::up::process::is_running;

fn sluice(args: &[&str]) -> CmdOutput {
    run(Command::new(bin("sluice")).args(args), None)
}

/// Runs `script` in `sh` in `work` after sourcing `dir/env.sh`, with a PATH that has no
/// Sluice binaries of its own: what a user types after `sluice up`.
fn shell(dir: &Path, work: &Path, script: &str) -> CmdOutput {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(". '{}/env.sh' && {script}", dir.display()))
        .current_dir(work)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("SLURM_CONF");
    run(&mut cmd, None)
}

/// Polls `script` in the shell until its trimmed stdout is `want`.
fn shell_until(dir: &Path, work: &Path, script: &str, want: &str) {
    let deadline = std::time::Instant::now() + STATE_TIMEOUT;
    loop {
        let out = shell(dir, work, script);
        if out.stdout.trim() == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "`{script}` never printed {want:?}; last: {out:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Stops whatever `up` started in the directory (and the jobs left running), even when a
/// test fails half-way.
struct Down(PathBuf, Vec<PathBuf>);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = Command::new(bin("sluice"))
            .args(["down", "--dir"])
            .arg(&self.0)
            .stdout(Stdio::null())
            .status();
        for conf in &self.1 {
            kill_jobs_of(conf);
        }
    }
}

fn pids(dir: &Path) -> Vec<(String, i32)> {
    let mut all: Vec<(String, i32)> = std::fs::read_dir(dir.join("run"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let id = name.strip_suffix(".pid")?.to_string();
                    let pid = std::fs::read_to_string(e.path())
                        .ok()?
                        .trim()
                        .parse()
                        .ok()?;
                    Some((id, pid))
                })
                .collect()
        })
        .unwrap_or_default();
    all.sort();
    all
}

fn program_of(id: &str) -> &'static str {
    match id.split('-').next() {
        Some("dbd") => "sluice-dbd",
        Some("ctld") => "sluice-ctld",
        _ => "sluice-noded",
    }
}

fn all_running(dir: &Path) -> bool {
    let pids = pids(dir);
    !pids.is_empty()
        && pids
            .iter()
            .all(|(id, pid)| is_running(*pid, program_of(id)))
}

#[test]
fn the_readme_flow_then_up_again_then_down_and_up_with_the_history_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("local");
    let work = tmp.path().to_path_buf();
    let d = dir.to_str().unwrap();
    let _down = Down(dir.clone(), vec![dir.join("cluster/slurm.conf")]);

    let out = sluice(&["up", "--detach", "--dir", d]);
    assert_eq!(out.code, 0, "{out:?}");
    for needle in [
        "env.sh",
        "sinfo",
        "sbatch --wrap",
        "squeue",
        "sacct",
        "cluster cluster with 2 nodes",
    ] {
        assert!(
            out.stdout.contains(needle),
            "missing {needle:?}:\n{}",
            out.stdout
        );
    }
    let first = pids(&dir);
    let ids: Vec<&str> = first.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "ctld-cluster",
            "dbd",
            "noded-cluster-clustern1",
            "noded-cluster-clustern2"
        ]
    );
    assert!(all_running(&dir));

    // The README: source env.sh, submit a job, see it in squeue and sacct.
    let out = shell(&dir, &work, "sinfo -h -o '%P %a %D %t %N'");
    assert_eq!(out.stdout, "debug* up 2 idle clustern[1-2]\n", "{out:?}");
    let out = shell(&dir, &work, "sbatch --wrap 'hostname'");
    assert_eq!(out.code, 0, "{out:?}");
    let job: u32 = out
        .stdout
        .trim()
        .strip_prefix("Submitted batch job ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out:?}"));
    shell_until(
        &dir,
        &work,
        &format!("squeue -h -t all -j {job} -o %T"),
        "COMPLETED",
    );
    shell_until(
        &dir,
        &work,
        &format!("sacct -n -X -P -o JobID,JobName,State -j {job}"),
        &format!("{job}|wrap|COMPLETED"),
    );
    let host = std::fs::read_to_string(work.join(format!("slurm-{job}.out"))).unwrap();
    assert!(!host.trim().is_empty());

    // Up again: nothing restarted, options of a set-up directory ignored with a note.
    let conf = dir.join("cluster/slurm.conf");
    let edited = std::fs::read_to_string(&conf).unwrap() + "# edited by an admin\n";
    std::fs::write(&conf, &edited).unwrap();
    let out = sluice(&["up", "--detach", "--dir", d, "--nodes", "5"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.matches("already running").count(),
        4,
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("--nodes is ignored"), "{}", out.stderr);
    assert_eq!(pids(&dir), first);
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), edited);

    // A node daemon that died is the only thing started again.
    let (_, node_pid) = first
        .iter()
        .find(|(id, _)| id == "noded-cluster-clustern2")
        .cloned()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(node_pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let deadline = std::time::Instant::now() + DAEMON_TIMEOUT;
    while is_running(node_pid, "sluice-noded") {
        assert!(std::time::Instant::now() < deadline, "kill -9 did not kill");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = sluice(&["up", "--detach", "--dir", d]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.matches("already running").count(),
        3,
        "{}",
        out.stdout
    );
    assert!(all_running(&dir));

    // Down stops everything, node daemons first.
    let out = sluice(&["down", "--dir", d]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert!(
        lines[0].starts_with("Stopped sluice-noded"),
        "{}",
        out.stdout
    );
    assert!(
        lines[1].starts_with("Stopped sluice-noded"),
        "{}",
        out.stdout
    );
    assert!(
        lines[2].starts_with("Stopped sluice-ctld"),
        "{}",
        out.stdout
    );
    assert!(lines[3].starts_with("Stopped sluice-dbd"), "{}", out.stdout);
    assert!(
        pids(&dir).is_empty(),
        "pid files are removed: {:?}",
        pids(&dir)
    );

    // Up again: the controller and the dbd remember the job; new ids continue.
    let out = sluice(&["up", "--detach", "--dir", d]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = shell(&dir, &work, &format!("squeue -h -t all -j {job} -o %T"));
    assert_eq!(out.stdout.trim(), "COMPLETED", "{out:?}");
    let out = shell(
        &dir,
        &work,
        &format!("sacct -n -X -P -o JobID,State -j {job}"),
    );
    assert_eq!(out.stdout.trim(), format!("{job}|COMPLETED"), "{out:?}");
    let out = shell(&dir, &work, "sbatch --parsable --wrap true");
    let next: u32 = out
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert!(next > job, "{next} after {job}");
}

#[test]
fn several_clusters_in_a_federation_each_run_their_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fed");
    let work = tmp.path().to_path_buf();
    let d = dir.to_str().unwrap();
    let _down = Down(
        dir.clone(),
        vec![dir.join("east/slurm.conf"), dir.join("west/slurm.conf")],
    );
    let out = sluice(&[
        "up",
        "--detach",
        "--dir",
        d,
        "--clusters",
        "east,west",
        "--nodes",
        "1",
        "--federation",
        "both",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("federation both"), "{}", out.stdout);
    assert!(out.stdout.contains("west/slurm.conf"), "{}", out.stdout);

    let out = shell(
        &dir,
        &work,
        "sacctmgr -n -P show federation format=federation,cluster",
    );
    let mut members: Vec<&str> = out.stdout.lines().collect();
    members.sort_unstable();
    assert_eq!(members, ["both|east", "both|west"], "{out:?}");

    // A job submitted to either cluster runs once, on one of the federation's clusters (a
    // federated job may start on any sibling); the ids are federated, so they differ.
    let mut ids = Vec::new();
    for cluster in ["east", "west"] {
        let conf = dir.join(cluster).join("slurm.conf");
        let script = format!(
            "SLURM_CONF='{}' sbatch --parsable --wrap 'echo $SLURM_CLUSTER_NAME $SLURMD_NODENAME'",
            conf.display()
        );
        let out = shell(&dir, &work, &script);
        assert_eq!(out.code, 0, "{out:?}");
        ids.push(out.stdout.trim().to_string());
    }
    assert_ne!(ids[0], ids[1]);
    for job in &ids {
        let file = work.join(format!("slurm-{job}.out"));
        let deadline = std::time::Instant::now() + STATE_TIMEOUT;
        while !std::fs::read_to_string(&file).is_ok_and(|t| t.ends_with('\n')) {
            assert!(std::time::Instant::now() < deadline, "job {job}: no output");
            std::thread::sleep(Duration::from_millis(100));
        }
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text == "east eastn1\n" || text == "west westn1\n",
            "job {job} ran once on a cluster of the federation: {text:?}"
        );
        // The README's first command: the federation's queue and accounting show it, from
        // the first cluster's env.sh wherever it ran.
        shell_until(
            &dir,
            &work,
            &format!("squeue --federation -h -t all -j {job} -o %T"),
            "COMPLETED",
        );
        shell_until(
            &dir,
            &work,
            &format!("sacct --federation -n -X -P -o JobID,State -j {job}"),
            &format!("{job}|COMPLETED"),
        );
    }
}

#[test]
fn in_the_foreground_ctrl_c_stops_every_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fg");
    let _down = Down(dir.clone(), vec![dir.join("cluster/slurm.conf")]);
    let (mut child, _) = up_in_foreground(&["--nodes", "1"], &dir);
    let running = pids(&dir);
    assert_eq!(running.len(), 3, "{running:?}");
    assert!(all_running(&dir));
    let status = interrupt(&mut child);
    assert_eq!(exit_code(status), 0);
    for (id, pid) in running {
        assert!(
            !is_running(pid, program_of(&id)),
            "Ctrl-C left {id} running"
        );
    }
}

#[test]
fn bad_options_are_clear_errors_that_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("x");
    for (args, needle) in [
        (vec!["--nodes", "0"], "bad --nodes \"0\""),
        (vec!["--clusters", "a,a"], "cluster a is named twice"),
        (vec!["--clusters", "no/slash"], "bad --clusters"),
    ] {
        let mut all = vec!["up", "--detach", "--dir", d.to_str().unwrap()];
        all.extend(args);
        let out = sluice(&all);
        assert_ne!(out.code, 0, "{out:?}");
        assert!(out.stderr.contains(needle), "{needle}: {}", out.stderr);
        assert!(!d.exists(), "a rejected command created files");
    }
}
