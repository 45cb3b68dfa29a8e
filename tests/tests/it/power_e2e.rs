//! Power save on a real local cluster started with `sluice up --cloud-nodes`: cloud nodes
//! start powered down (`idle~`), a burst of jobs resumes them through the ResumeProgram (which
//! starts their node daemons), the jobs run, and the nodes are powered down again through the
//! SuspendProgram after `SuspendTime`. A ResumeProgram that never brings a node up leaves it
//! `down~` ("ResumeTimeout reached") and its job is requeued and runs on a normal node.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::cluster::Cluster;

/// How long a power transition may take: SuspendTime + SuspendTimeout, or a node daemon's
/// start and registration, on a loaded host.
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

fn node_state(c: &Cluster, node: &str) -> String {
    node_states(c).get(node).cloned().unwrap_or_default()
}

/// The pid file a cloud node's daemon gets from the ResumeProgram.
fn cloud_pid_file(c: &Cluster, node: &str) -> std::path::PathBuf {
    c.dir()
        .join("run")
        .join(format!("noded-cluster-{node}.pid"))
}

#[test]
fn a_burst_resumes_cloud_nodes_which_power_down_again_after_suspend_time() {
    let c = Cluster::start_args(&[], |args| {
        args.nodes = Some(1);
        args.cloud_nodes = Some(2);
        args.suspend_time = Some(3);
    });
    let conf = std::fs::read_to_string(c.conf()).unwrap();
    assert!(
        conf.contains("PartitionName=cloud Nodes=cloud[1-2]"),
        "{conf}"
    );
    c.wait_within(POWER_TIMEOUT, "the cloud nodes to be powered down", || {
        ["cloud1", "cloud2"]
            .iter()
            .all(|n| node_state(&c, n) == "idle~")
    });
    assert!(!cloud_pid_file(&c, "cloud1").exists());

    let jobs: Vec<u32> = (0..2)
        .map(|_| c.sbatch(&["-p", "cloud", "-N", "1", "--wrap", "sleep 2"]))
        .collect();
    let (mut powering_up, mut configuring, mut pid_files) = (false, false, false);
    c.wait_within(POWER_TIMEOUT, "the burst to run on the cloud nodes", || {
        let states = node_states(&c);
        powering_up |= ["cloud1", "cloud2"]
            .iter()
            .any(|n| states.get(*n).is_some_and(|s| s.ends_with('#')));
        // The ResumeProgram starts the node daemons, with pid files named as `down` knows them.
        pid_files |= cloud_pid_file(&c, "cloud1").exists() && cloud_pid_file(&c, "cloud2").exists();
        configuring |= jobs
            .iter()
            .any(|j| c.state(&j.to_string()) == "CONFIGURING");
        jobs.iter().all(|j| c.state(&j.to_string()) == "COMPLETED")
    });
    assert!(powering_up, "no cloud node was seen powering up (#)");
    assert!(
        configuring,
        "no job was seen CONFIGURING while its node booted"
    );
    for job in &jobs {
        let nodes = c.ok(
            "squeue",
            &["-h", "-t", "all", "-j", &job.to_string(), "-o", "%N"],
        );
        assert!(
            nodes.trim().starts_with("cloud"),
            "job {job} ran on {nodes}"
        );
    }
    assert!(pid_files, "the ResumeProgram wrote no pid files");

    c.wait_within(POWER_TIMEOUT, "the cloud nodes to power down again", || {
        ["cloud1", "cloud2"]
            .iter()
            .all(|n| node_state(&c, n) == "idle~")
    });
    // The SuspendProgram stopped their daemons.
    c.wait_within(POWER_TIMEOUT, "the cloud node daemons to stop", || {
        !cloud_pid_file(&c, "cloud1").exists() && !cloud_pid_file(&c, "cloud2").exists()
    });
    assert_eq!(
        node_state(&c, "clustern1"),
        "idle",
        "the normal node stays up"
    );
}

#[test]
fn a_node_that_never_resumes_goes_down_and_its_job_runs_elsewhere() {
    let c = Cluster::start_args(
        &[
            // Never brings a node up.
            "ResumeProgram=/bin/true",
            "ResumeTimeout=5",
            "PartitionName=mixed Nodes=clustern1,cloud1 MaxTime=INFINITE State=UP",
        ],
        |args| {
            args.nodes = Some(1);
            args.cloud_nodes = Some(1);
        },
    );
    c.wait_within(POWER_TIMEOUT, "the cloud node to be powered down", || {
        node_state(&c, "cloud1") == "idle~"
    });
    // The normal node is busy, so the job in `mixed` gets the cloud node.
    let blocker = c.sbatch(&["-p", "debug", "--wrap", "sleep 300"]);
    c.wait_state(blocker, "RUNNING");
    let job = c.sbatch(&["-p", "mixed", "-N", "1", "--wrap", "true"]);
    c.wait_within(
        POWER_TIMEOUT,
        "cloud1 to be DOWN~ after ResumeTimeout",
        || node_state(&c, "cloud1") == "down~",
    );
    let show = c.ok("scontrol", &["show", "node", "cloud1"]);
    assert!(show.contains("Reason=ResumeTimeout reached"), "{show}");
    // Requeued, it waits for the normal node.
    c.wait_within(POWER_TIMEOUT, "the job to be requeued", || {
        c.state(&job.to_string()) == "PENDING"
    });
    c.ok("scancel", &[&blocker.to_string()]);
    c.wait_within(POWER_TIMEOUT, "the requeued job to complete", || {
        c.state(&job.to_string()) == "COMPLETED"
    });
    let nodes = c.ok(
        "squeue",
        &["-h", "-t", "all", "-j", &job.to_string(), "-o", "%N"],
    );
    assert_eq!(nodes.trim(), "clustern1");
}
