//! Golden outputs of squeue's renderers over hand-built jobs.

use sluice_vocab::JobState;
use sluice_wire::proto::JobInfo;

use super::args::{Invocation, SqueueOpts, parse};
use super::render;
use crate::timefmt::Zone;

const NOW: i64 = 1_795_255_200; // 2026-11-21T10:00:00Z

fn job(id: u32, name: &str, state: JobState, part: &str) -> JobInfo {
    JobInfo {
        job_id: id,
        name: name.into(),
        uid: 1000,
        gid: 1000,
        user: "alice".into(),
        partition: part.into(),
        state: state.stored(),
        reason: "None".into(),
        time_limit_min: 60,
        submit: NOW - 600,
        node_count: 1,
        cpus: 2,
        ntasks: 1,
        cpus_per_task: 2,
        priority: 100,
        cluster: "c1".into(),
        now: NOW,
        batch: true,
        ..Default::default()
    }
}

fn running(id: u32, name: &str, nodes: &str, secs: i64) -> JobInfo {
    JobInfo {
        start: NOW - secs,
        node_list: nodes.into(),
        batch_host: nodes.into(),
        ..job(id, name, JobState::Running, "debug")
    }
}

fn pending(id: u32, name: &str, reason: &str) -> JobInfo {
    JobInfo {
        reason: reason.into(),
        ..job(id, name, JobState::Pending, "debug")
    }
}

fn task(id: u32, array: u32, task: u32, state: JobState) -> JobInfo {
    JobInfo {
        array_job_id: array,
        array_task_id: Some(task),
        array_throttle: 2,
        reason: "JobArrayTaskLimit".into(),
        start: if state == JobState::Running {
            NOW - 5
        } else {
            0
        },
        node_list: if state == JobState::Running {
            "n1".into()
        } else {
            String::new()
        },
        ..job(id, "arr", state, "debug")
    }
}

fn opts(args: &[&str]) -> SqueueOpts {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match parse(&a, &|_| None, 1000).unwrap() {
        Invocation::Run(o) => *o,
        other => panic!("{other:?}"),
    }
}

fn show(jobs: &[JobInfo], args: &[&str]) -> String {
    let r = render(jobs, &opts(args), Zone::Utc, NOW);
    assert_eq!(r.err, "");
    r.out
}

fn sample() -> Vec<JobInfo> {
    vec![
        running(3, "longjobname", "n[1-2]", 3725),
        pending(5, "wait", "Resources"),
        running(4, "short", "n3", 65),
        JobInfo {
            end: NOW - 10,
            ..job(2, "done", JobState::Completed, "debug")
        },
    ]
}

#[test]
fn default_layout_pending_first_then_latest_start_first() {
    let out = show(&sample(), &[]);
    assert_eq!(
        out,
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n\
         \x20                5     debug     wait    alice PD       0:00      1 (Resources)\n\
         \x20                4     debug    short    alice  R       1:05      1 n3\n\
         \x20                3     debug longjobn    alice  R    1:02:05      1 n[1-2]\n"
    );
}

#[test]
fn letter_format_with_widths_and_all_states() {
    let out = show(
        &sample(),
        &[
            "-t",
            "all",
            "-S",
            "i",
            "-o",
            "%i|%5j|%.3u %T %t %M %l %D %R %P %C",
        ],
    );
    assert_eq!(
        out,
        "JOBID|NAME |USE STATE ST TIME TIME_LIMIT NODES NODELIST(REASON) PARTITION CPUS\n\
         2|done |ali COMPLETED CD 0:00 1:00:00 1  debug 2\n\
         3|longj|ali RUNNING R 1:02:05 1:00:00 1 n[1-2] debug 2\n\
         4|short|ali RUNNING R 1:05 1:00:00 1 n3 debug 2\n\
         5|wait |ali PENDING PD 0:00 1:00:00 1 (Resources) debug 2\n"
    );
}

#[test]
fn long_format_names_and_widths() {
    let out = show(
        &sample(),
        &[
            "-h",
            "-t",
            "R",
            "-O",
            "JobID:6,Name:.8,StateCompact:3,TimeUsed,ReasonList",
        ],
    );
    assert_eq!(
        out,
        "4        shortR  1:05                n3                  \n\
         3     longjobnR  1:02:05             n[1-2]              \n"
    );
}

#[test]
fn filters_by_user_partition_name_and_job() {
    let jobs = sample();
    assert_eq!(show(&jobs, &["-h", "-o", "%i", "-u", "0"]), "");
    assert_eq!(show(&jobs, &["-h", "-o", "%i", "-p", "other"]), "");
    assert_eq!(show(&jobs, &["-h", "-o", "%i", "-n", "WAIT"]), "5\n");
    assert_eq!(
        show(&jobs, &["-h", "-o", "%i", "-j", "4,5", "-S", "i"]),
        "4\n5\n"
    );
    assert_eq!(show(&jobs, &["-h", "-o", "%i", "-w", "n2"]), "3\n");
    assert_eq!(show(&jobs, &["-h", "-o", "%i", "-t", "CD"]), "2\n");
}

#[test]
fn pending_array_tasks_fold_and_running_tasks_stand_alone() {
    let jobs = vec![
        task(10, 10, 1, JobState::Running),
        task(11, 10, 2, JobState::Running),
        task(12, 10, 3, JobState::Pending),
        task(13, 10, 4, JobState::Pending),
        task(14, 10, 5, JobState::Pending),
        task(16, 10, 7, JobState::Pending),
    ];
    assert_eq!(
        show(&jobs, &["-h", "-o", "%i %t %r"]),
        "10_[3-5,7%2] PD JobArrayTaskLimit\n10_1 R JobArrayTaskLimit\n10_2 R JobArrayTaskLimit\n"
    );
    assert_eq!(
        show(&jobs, &["-h", "-r", "-t", "PD", "-o", "%i %F %K"]),
        "10_3 10 3\n10_4 10 4\n10_5 10 5\n10_7 10 7\n"
    );
    assert_eq!(show(&jobs, &["-h", "-j", "10_4", "-o", "%i"]), "10_4\n");
    assert_eq!(
        show(&jobs, &["-h", "-j", "10", "-t", "R", "-o", "%A"]),
        "10\n11\n"
    );
}

#[test]
fn invalid_letters_warn_and_print_literally() {
    let r = render(
        &sample(),
        &opts(&["-h", "-t", "PD", "-o", "%i %b"]),
        Zone::Utc,
        NOW,
    );
    assert_eq!(
        r.err,
        "squeue: error: Invalid job format specification: b\n"
    );
    assert_eq!(r.out, "5 %b\n");
}

#[test]
fn long_listing_starts_with_the_date() {
    let out = show(&[pending(5, "wait", "Priority")], &["-l"]);
    assert_eq!(
        out,
        "Sat Nov 21 10:00:00 2026\n\
         \x20            JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n\
         \x20                5     debug     wait    alice  PENDING       0:00   1:00:00      1 (Priority)\n"
    );
}

#[test]
fn json_uses_slurm_field_names() {
    let out = show(&[running(3, "x", "n1", 5)], &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let j = &v["jobs"][0];
    assert_eq!(j["job_id"], 3);
    assert_eq!(j["job_state"][0], "RUNNING");
    assert_eq!(j["user_name"], "alice");
    assert_eq!(j["nodes"], "n1");
    assert_eq!(j["time_limit"]["number"], 60);
    assert_eq!(j["start_time"]["number"], NOW - 5);
    assert_eq!(j["exit_code"]["status"][0], "SUCCESS");
    assert_eq!(v["errors"].as_array().map(Vec::len), Some(0));
}

#[test]
fn over_subscribe_by_letter_and_name() {
    let jobs = vec![
        JobInfo {
            oversubscribe: "YES".into(),
            ..running(3, "shared", "n1", 5)
        },
        JobInfo {
            oversubscribe: "NO".into(),
            ..pending(4, "excl", "Resources")
        },
        pending(5, "older", "Priority"),
    ];
    assert_eq!(
        show(&jobs, &["-S", "i", "-o", "%i %h"]),
        "JOBID OVER_SUBSCRIBE\n3 YES\n4 NO\n5 OK\n"
    );
    assert_eq!(
        show(&jobs, &["-h", "-S", "i", "-O", "JobId:4,oversubscribe:5"]),
        "3   YES  \n4   NO   \n5   OK   \n"
    );
}
