//! scancel's parsing and messages.

use super::args::{Command, parse};
use super::*;
use sluice_vocab::JobState;
use sluice_wire::proto::JobError;

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn request(s: &str) -> CancelRequest {
    match parse(&words(s)) {
        Ok(Command::Cancel { request, .. }) => *request,
        other => panic!("expected a cancel, got {other:?}"),
    }
}

fn error(s: &str) -> String {
    parse(&words(s)).unwrap_err().to_string()
}

#[test]
fn ids_array_elements_and_ranges() {
    let r = request("12 13_4 20_[1-3,7]");
    assert_eq!(r.job_ids, vec![12]);
    assert_eq!(r.job_tasks, vec!["13_4", "20_1", "20_2", "20_3", "20_7"]);
    assert_eq!(r.signal, None);
}

#[test]
fn options_may_follow_ids() {
    let r = request("12 -s USR1 --batch");
    assert_eq!(r.job_ids, vec![12]);
    assert_eq!(r.signal, Some(10));
    assert!(r.batch_only);
    assert_eq!(request("--signal=SIGINT 1").signal, Some(2));
    assert_eq!(request("-s 9 1").signal, Some(9));
}

#[test]
fn steps_go_to_the_controller_as_written() {
    let r = request("12.3 13_4.0 -s USR1");
    assert_eq!(r.job_steps, vec!["12.3", "13_4.0"]);
    assert!(r.job_ids.is_empty() && r.job_tasks.is_empty());
    assert_eq!(r.signal, Some(10));
    assert_eq!(error("12.x"), "Invalid job id 12.x");
    assert_eq!(error("a.1"), "Invalid job id a.1");
    let reply = CancelReply {
        cancelled: Vec::new(),
        errors: vec![JobError {
            job_id: 12,
            job: "12.3".into(),
            message: "Invalid job id specified".into(),
        }],
    };
    let mut err = Vec::new();
    assert_eq!(report(&request("12.3"), &reply, true, &mut err), 1);
    assert_eq!(
        String::from_utf8(err).unwrap(),
        "scancel: Terminating step 12.3\n\
         scancel: error: Kill job error on job step id 12.3: Invalid job id specified\n"
    );
}

#[test]
fn filters_stand_in_for_ids() {
    let r = request("-u 4242 -n a,b -t PD -p debug");
    assert!(r.job_ids.is_empty());
    assert_eq!(r.uids, vec![4242]);
    assert_eq!(r.names, vec!["a", "b"]);
    assert_eq!(r.states, vec![JobState::Pending.stored()]);
    assert_eq!(r.partitions, vec!["debug"]);
    assert_eq!(request("-t running -u root").uids, vec![0]);
}

#[test]
fn refusals_use_slurm_text() {
    assert_eq!(error(""), "No job identification provided");
    assert_eq!(error("-s INT"), "No job identification provided");
    assert_eq!(error("abc"), "Invalid job id abc");
    assert_eq!(error("12_x"), "Invalid job id 12_x");
    assert_eq!(error("12_[5-2]"), "Invalid job id 12_[5-2]");
    assert_eq!(error("-s BOGUS 1"), "Unknown job signal: BOGUS");
    assert_eq!(
        error("-t COMPLETED"),
        "Invalid job state specified: COMPLETED\nValid job states are PENDING, RUNNING and SUSPENDED"
    );
    assert_eq!(
        error("-u no_such_user_here_xyz"),
        "Invalid user name: no_such_user_here_xyz"
    );
    assert_eq!(error("--bogus 1"), "unrecognized option '--bogus'");
}

#[test]
fn per_job_errors_are_printed_and_fail() {
    let reply = CancelReply {
        cancelled: vec![3],
        errors: vec![
            JobError {
                job_id: 9,
                job: String::new(),
                message: "Invalid job id specified".into(),
            },
            JobError {
                job_id: 5,
                job: "5_2".into(),
                message: "Job/step already completing or completed".into(),
            },
        ],
    };
    // Unknown and finished jobs: shown only with -v, and no failure for a kill (as Slurm).
    let mut err = Vec::new();
    let code = report(&CancelRequest::default(), &reply, true, &mut err);
    assert_eq!(code, 0);
    assert_eq!(
        String::from_utf8(err).unwrap(),
        "scancel: Terminating job 3\n\
         scancel: error: Kill job error on job id 9: Invalid job id specified\n\
         scancel: error: Kill job error on job id 5_2: Job/step already completing or completed\n"
    );
    let mut err = Vec::new();
    assert_eq!(
        report(&CancelRequest::default(), &reply, false, &mut err),
        0
    );
    assert!(err.is_empty());
    // Another signal than KILL to such a job fails, silently without -v.
    let usr1 = CancelRequest {
        signal: Some(10),
        ..CancelRequest::default()
    };
    let mut err = Vec::new();
    assert_eq!(report(&usr1, &reply, false, &mut err), 1);
    assert!(err.is_empty());
    // Any other refusal is printed and fails.
    let denied = CancelReply {
        cancelled: Vec::new(),
        errors: vec![JobError {
            job_id: 4,
            job: String::new(),
            message: "Access/permission denied".into(),
        }],
    };
    let mut err = Vec::new();
    assert_eq!(
        report(&CancelRequest::default(), &denied, false, &mut err),
        1
    );
    assert_eq!(
        String::from_utf8(err).unwrap(),
        "scancel: error: Kill job error on job id 4: Access/permission denied\n"
    );
    let ok = CancelReply::default();
    assert_eq!(
        report(&CancelRequest::default(), &ok, false, &mut Vec::new()),
        0
    );
}

#[test]
fn sibling_and_clusters_are_read() {
    let args: Vec<String> = ["--sibling=c2", "-M", "c1,c2", "67108865"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    match parse(&args) {
        Ok(Command::Cancel {
            request, clusters, ..
        }) => {
            assert_eq!(request.sibling, "c2");
            assert_eq!(request.job_ids, vec![67_108_865]);
            assert_eq!(clusters.as_deref(), Some("c1,c2"));
        }
        other => panic!("expected a cancel, got {other:?}"),
    }
}
