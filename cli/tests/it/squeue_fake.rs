//! The real `squeue` binary against a fake controller: default layout, filters passed to the
//! controller, `--json`, and Slurm's errors with their exit codes.

use crate::fake;

use fake::{FakeCluster, FakeState, dead_conf, run_bin};
use sluice_vocab::JobState;
use sluice_wire::proto::JobInfo;

const NOW: i64 = 1_795_255_200;
const SQUEUE: &str = env!("CARGO_BIN_EXE_squeue");

fn job(id: u32, state: JobState, reason: &str, nodes: &str) -> JobInfo {
    JobInfo {
        job_id: id,
        name: format!("job{id}"),
        uid: 1000,
        gid: 1000,
        user: "alice".into(),
        partition: "debug".into(),
        state: state.stored(),
        reason: reason.into(),
        time_limit_min: 30,
        start: if nodes.is_empty() { 0 } else { NOW - 90 },
        node_list: nodes.into(),
        node_count: 1,
        cpus: 1,
        now: NOW,
        ..Default::default()
    }
}

fn cluster() -> FakeCluster {
    FakeCluster::start(FakeState {
        jobs: vec![
            job(1, JobState::Running, "None", "n1"),
            job(2, JobState::Pending, "Priority", ""),
            job(3, JobState::Completed, "None", "n1"),
        ],
        ..Default::default()
    })
}

#[test]
fn default_listing_hides_finished_jobs() {
    let c = cluster();
    let out = c.run(SQUEUE, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n\
         \x20                2     debug     job2    alice PD       0:00      1 (Priority)\n\
         \x20                1     debug     job1    alice  R       1:30      1 n1\n"
    );
    // Finished jobs stay on the controller: the listing would drop them anyway.
    let reqs = &c.state.lock().unwrap().list_jobs_requests;
    assert!(!reqs.is_empty() && reqs.iter().all(|r| !r.include_finished));
}

#[test]
fn format_and_filters_reach_the_controller() {
    let c = cluster();
    let out = c.run(
        SQUEUE,
        &["-h", "-u", "1000", "-t", "all", "-o", "%i %T %l", "-S", "i"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "1 RUNNING 30:00\n2 PENDING 30:00\n3 COMPLETED 30:00\n"
    );
    let reqs = &c.state.lock().unwrap().list_jobs_requests;
    assert_eq!(reqs[0].uids, vec![1000]);
    assert!(reqs[0].include_finished, "-t all may show finished jobs");
}

#[test]
fn json_lists_jobs_with_slurm_names() {
    let c = cluster();
    let out = c.run(SQUEUE, &["--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let ids: Vec<u64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job_id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, vec![2, 1]);
    assert_eq!(v["jobs"][0]["state_reason"], "Priority");
}

#[test]
fn unknown_job_id_is_slurms_error() {
    let c = cluster();
    let out = c.run(SQUEUE, &["-j", "99"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "slurm_load_jobs error: Invalid job id specified\n"
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn bad_options_and_states_fail_before_any_request() {
    let c = cluster();
    let out = c.run(SQUEUE, &["-t", "bogus"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("squeue: error: Invalid job state specified: bogus\n"),
        "{}",
        out.stderr
    );
    let out = c.run(SQUEUE, &["-x"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "squeue: invalid option -- 'x'\nTry \"squeue --help\" for more information\n"
        )
    );
    let out = c.run(SQUEUE, &["-S", "z"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "squeue: error: Invalid sort specification: z\n")
    );
    assert!(c.state.lock().unwrap().list_jobs_requests.is_empty());
}

#[test]
fn unreachable_controller() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_bin(SQUEUE, &dead_conf(dir.path()), &[]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
    );
}
