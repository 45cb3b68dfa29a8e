//! `srun` on a powered-down cloud node of a real local cluster (`sluice up --cloud-nodes`):
//! started while the node is `idle~`, its job waits CONFIGURING while the ResumeProgram boots
//! the node daemon, and once the node registers srun runs the command there, prints its output
//! and exits 0, as it does on a node that was up.

use crate::common;

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::cluster::Cluster;

/// How long a power transition may take: a node daemon's start and registration on a loaded
/// host.
const POWER_TIMEOUT: Duration = Duration::from_secs(120);

/// Each node's short state (`%t`, with its power suffix) as `sinfo -N` shows it.
fn node_states(c: &Cluster) -> BTreeMap<String, String> {
    let out = c.ok("sinfo", &["-h", "-N", "-o", "%N %t"]);
    out.lines()
        .filter_map(|l| {
            let (node, st) = l.split_once(' ')?;
            Some((node.trim().to_string(), st.trim().to_string()))
        })
        .collect()
}

/// The long states (`%T`) and node lists of every job squeue knows, finished ones included.
fn jobs(c: &Cluster) -> Vec<(u32, String, String)> {
    c.ok("squeue", &["-h", "-t", "all", "-o", "%i %T %N"])
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((
                f.next()?.parse().ok()?,
                f.next()?.to_string(),
                f.next().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

/// Kills `child` when dropped, so a failed test leaves no srun behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn srun_on_a_powered_down_cloud_node_runs_once_the_node_has_booted() {
    let c = Cluster::start_args(&[], |args| {
        args.nodes = Some(1);
        args.cloud_nodes = Some(1);
    });
    c.wait_within(POWER_TIMEOUT, "cloud1 to be powered down", || {
        node_states(&c).get("cloud1").map(String::as_str) == Some("idle~")
    });
    let pid_file = c.dir().join("run").join("noded-cluster-cloud1.pid");
    assert!(
        !pid_file.exists(),
        "cloud1's node daemon runs before any job"
    );

    let mut srun = Reaped(
        c.command("srun", &["-p", "cloud", "hostname"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn srun"),
    );
    // While srun waits, its job is CONFIGURING on cloud1, which is booting.
    let mut configuring = None;
    c.wait_within(
        POWER_TIMEOUT,
        "srun's job to wait for cloud1 to boot",
        || {
            configuring = jobs(&c)
                .into_iter()
                .find(|(_, st, nodes)| st == "CONFIGURING" && nodes == "cloud1")
                .map(|(id, _, _)| id);
            configuring.is_some()
        },
    );
    let job = configuring.unwrap_or_default();

    let deadline = Instant::now() + POWER_TIMEOUT;
    let status = loop {
        if let Some(status) = srun.0.try_wait().expect("srun status") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "srun did not finish within {POWER_TIMEOUT:?} of cloud1 being resumed\nsinfo: {:?}\n{}",
            node_states(&c),
            c.logs()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut pipe) = srun.0.stdout.take() {
        pipe.read_to_string(&mut stdout).expect("srun stdout");
    }
    if let Some(mut pipe) = srun.0.stderr.take() {
        pipe.read_to_string(&mut stderr).expect("srun stderr");
    }
    assert!(
        status.success(),
        "srun failed ({status}):\nstdout: {stdout}\nstderr: {stderr}\n{}",
        c.logs()
    );
    // The node daemons run on this host: the task's hostname is this host's.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("this host's name");
    assert_eq!(
        stdout.trim(),
        host.trim(),
        "srun printed {stdout:?} (stderr {stderr:?})"
    );

    // The job ran on cloud1, which the ResumeProgram started, and is done.
    assert!(pid_file.exists(), "the ResumeProgram wrote no pid file");
    assert_eq!(c.wait_done(job), "COMPLETED");
    let ran = jobs(&c).into_iter().find(|(id, _, _)| *id == job);
    assert_eq!(
        ran.map(|(_, _, nodes)| nodes),
        Some("cloud1".to_string()),
        "job {job}"
    );
}
