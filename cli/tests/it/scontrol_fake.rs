//! The real `scontrol` binary against a fake controller: show, update, job actions, errors.

use crate::fake;

use fake::{FakeCluster, FakeState};
use sluice_vocab::JobState;
use sluice_wire::proto::{JobAction, JobError, JobInfo, NodeInfo, PartitionInfo};

const SCONTROL: &str = env!("CARGO_BIN_EXE_scontrol");

fn cluster() -> FakeCluster {
    FakeCluster::start(FakeState {
        jobs: vec![JobInfo {
            job_id: 5,
            name: "x".into(),
            user: "alice".into(),
            partition: "debug".into(),
            state: JobState::Pending.stored(),
            reason: "Priority".into(),
            time_limit_min: 10,
            ..Default::default()
        }],
        nodes: vec![NodeInfo {
            name: "n1".into(),
            state: "IDLE".into(),
            cpus: 1,
            ..Default::default()
        }],
        partitions: vec![PartitionInfo {
            name: "debug".into(),
            state: "UP".into(),
            ..Default::default()
        }],
        config: vec![("ClusterName".into(), "c1".into())],
        ..Default::default()
    })
}

#[test]
fn show_job_node_partition_config() {
    let c = cluster();
    let out = c.run(SCONTROL, &["show", "job", "5"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("JobId=5 JobName=x\n   UserId=alice(0) "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\n   JobState=PENDING Reason=Priority Dependency=(null)\n")
    );
    assert!(out.stdout.ends_with("\n\n"));
    let out = c.run(SCONTROL, &["-o", "show", "node"]);
    assert!(
        out.stdout
            .starts_with("NodeName=n1 CoresPerSocket=1 CPUAlloc=0 "),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 1);
    let out = c.run(SCONTROL, &["show", "partition", "debug"]);
    assert!(
        out.stdout
            .starts_with("PartitionName=debug\n   AllowGroups=ALL"),
        "{}",
        out.stdout
    );
    let out = c.run(SCONTROL, &["show", "config"]);
    assert_eq!(
        out.stdout,
        "Configuration data as of 2026-11-21T10:00:00\nClusterName             = c1\n"
    );
}

#[test]
fn show_errors_and_empty_lists() {
    let c = cluster();
    let out = c.run(SCONTROL, &["show", "job", "99"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "slurm_load_jobs error: Invalid job id specified\n")
    );
    let out = c.run(SCONTROL, &["show", "node", "zz"]);
    assert_eq!((out.code, out.stderr.as_str()), (1, "Node zz not found\n"));
    let out = c.run(SCONTROL, &["show", "partition", "zz"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "Partition zz not found\n")
    );
    let empty = FakeCluster::start(FakeState::default());
    let out = empty.run(SCONTROL, &["show", "job"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "No jobs in the system\n")
    );
}

#[test]
fn updates_and_actions_are_sent() {
    let c = cluster();
    let out = c.run(
        SCONTROL,
        &["update", "jobid=5", "TimeLimit=20", "Partition=debug"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = c.run(
        SCONTROL,
        &["update", "NodeName=n1", "State=DRAIN", "Reason=disk bad"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = c.run(SCONTROL, &["hold", "5", "6_2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let s = c.state.lock().unwrap();
    let settings: Vec<(&str, &str)> = s.update_job_requests[0]
        .settings
        .iter()
        .map(|e| (e.name.as_str(), e.value.as_str()))
        .collect();
    assert_eq!(settings, vec![("TimeLimit", "20"), ("Partition", "debug")]);
    assert_eq!(s.update_job_requests[0].jobs, vec!["5".to_string()]);
    assert_eq!(
        s.update_node_requests[0].reason.as_deref(),
        Some("disk bad")
    );
    assert_eq!(s.control_requests[0].action, JobAction::Hold as i32);
    assert_eq!(
        s.control_requests[0].jobs,
        vec!["5".to_string(), "6_2".to_string()]
    );
}

#[test]
fn refusals_print_slurm_text_and_exit_1() {
    let c = cluster();
    let out = c.run(SCONTROL, &["update", "NodeName=n1", "State=DOWN"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "You must specify a reason when DOWNING or DRAINING a node. Request denied\n"
    );
    assert!(c.state.lock().unwrap().update_node_requests.is_empty());
    c.state.lock().unwrap().job_errors = vec![JobError {
        job_id: 9,
        job: "9".into(),
        message: "Invalid job id specified".into(),
    }];
    let out = c.run(SCONTROL, &["release", "9"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "Invalid job id specified for job 9\n")
    );
    c.state.lock().unwrap().node_update_error = Some("Invalid node name specified".into());
    let out = c.run(SCONTROL, &["update", "NodeName=zz", "State=RESUME"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "slurm_update error: Invalid node name specified\n")
    );
    let out = c.run(SCONTROL, &["bogus"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "invalid keyword: bogus\n")
    );
}
