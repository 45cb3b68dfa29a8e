//! Every accounted field's value on a job line and on a step line.

use sluice_vocab::JobState;
use sluice_wire::proto::{JobRow, StepRecord};

use super::*;
use crate::timefmt::Zone;

const NOW: i64 = 1_795_255_200;
const CX: Cx = Cx {
    zone: Zone::Utc,
    now: NOW,
    noconvert: false,
};

fn job() -> JobRow {
    JobRow {
        cluster: "c1".into(),
        job_id: 12,
        array_job_id: 10,
        array_task_id: Some(2),
        name: "sweep".into(),
        uid: 1000,
        gid: 4_000_000,
        user: "alice".into(),
        account: "phys".into(),
        partition: "debug".into(),
        state: JobState::Cancelled.stored(),
        requester_uid: Some(0),
        exit_code: 0,
        signal: 15,
        submit: NOW - 4000,
        eligible: NOW - 3900,
        start: NOW - 3600,
        end: NOW - 600,
        suspended_secs: 600,
        time_limit_min: 90,
        node_list: "n[1-2]".into(),
        node_count: 2,
        cpus: 8,
        mem_mb: 16_384,
        req_cpus: 4,
        req_mem_mb: 4000,
        workdir: "/home/alice".into(),
        comment: "note".into(),
        qos: "high".into(),
        wckey: "proj".into(),
        steps: vec![StepRecord {
            job_id: 12,
            step_id: 0,
            name: "solver".into(),
            start: NOW - 3500,
            end: 0,
            state: JobState::Cancelled.stored(),
            exit_code: 2,
            node_list: "n1".into(),
            node_count: 1,
            ntasks: 3,
            cpus: 4,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn values(l: &Line) -> Vec<(&'static str, String)> {
    FIELDS.iter().map(|f| (f.name, (f.value)(l, &CX))).collect()
}

fn expect(got: Vec<(&'static str, String)>, want: &[(&str, &str)]) {
    let got: Vec<(&str, &str)> = got.iter().map(|(n, v)| (*n, v.as_str())).collect();
    assert_eq!(got, want);
}

#[test]
fn job_line_values() {
    let j = job();
    expect(
        values(&Line::Job(&j)),
        &[
            ("Account", "phys"),
            ("AllocCPUS", "8"),
            ("AllocNodes", "2"),
            ("AllocTRES", "billing=8,cpu=8,mem=16G,node=2"),
            ("Cluster", "c1"),
            ("Comment", "note"),
            ("CPUTime", "05:20:00"),
            ("CPUTimeRAW", "19200"),
            ("DerivedExitCode", "2:0"),
            ("Elapsed", "00:40:00"),
            ("ElapsedRaw", "2400"),
            ("Eligible", "2026-11-21T08:55:00"),
            ("End", "2026-11-21T09:50:00"),
            ("ExitCode", "0:15"),
            ("GID", "4000000"),
            ("Group", ""),
            ("JobID", "10_2"),
            ("JobIDRaw", "12"),
            ("JobName", "sweep"),
            ("NCPUS", "8"),
            ("NNodes", "2"),
            ("NodeList", "n[1-2]"),
            ("NTasks", ""),
            ("Partition", "debug"),
            ("Planned", "00:05:00"),
            ("PlannedCPU", "00:20:00"),
            ("PlannedCPURAW", "1200"),
            ("QOS", "high"),
            ("Reason", "None"),
            ("ReqCPUS", "4"),
            ("ReqMem", "4000M"),
            ("Start", "2026-11-21T09:00:00"),
            ("State", "CANCELLED by 0"),
            ("Submit", "2026-11-21T08:53:20"),
            ("Suspended", "00:10:00"),
            ("Timelimit", "01:30:00"),
            ("TimelimitRaw", "90"),
            ("UID", "1000"),
            ("User", "alice"),
            ("WCKey", "proj"),
            ("WorkDir", "/home/alice"),
        ],
    );
}

#[test]
fn step_line_values() {
    let j = job();
    expect(
        values(&Line::Step(&j, &j.steps[0])),
        &[
            ("Account", "phys"),
            ("AllocCPUS", "4"),
            ("AllocNodes", "1"),
            ("AllocTRES", "cpu=4,node=1"),
            ("Cluster", "c1"),
            ("Comment", ""),
            ("CPUTime", "03:13:20"),
            ("CPUTimeRAW", "11600"),
            ("DerivedExitCode", ""),
            ("Elapsed", "00:48:20"),
            ("ElapsedRaw", "2900"),
            ("Eligible", "2026-11-21T09:01:40"),
            ("End", "2026-11-21T09:50:00"),
            ("ExitCode", "2:0"),
            ("GID", ""),
            ("Group", ""),
            ("JobID", "10_2.0"),
            ("JobIDRaw", "12.0"),
            ("JobName", "solver"),
            ("NCPUS", "4"),
            ("NNodes", "1"),
            ("NodeList", "n1"),
            ("NTasks", "3"),
            ("Partition", ""),
            ("Planned", ""),
            ("PlannedCPU", ""),
            ("PlannedCPURAW", ""),
            ("QOS", ""),
            ("Reason", ""),
            ("ReqCPUS", "4"),
            ("ReqMem", ""),
            ("Start", "2026-11-21T09:01:40"),
            ("State", "CANCELLED"),
            ("Submit", "2026-11-21T09:01:40"),
            ("Suspended", "00:00:00"),
            ("Timelimit", ""),
            ("TimelimitRaw", ""),
            ("UID", ""),
            ("User", ""),
            ("WCKey", "proj"),
            ("WorkDir", ""),
        ],
    );
}

#[test]
fn pending_jobs_show_slurms_words() {
    let j = JobRow {
        job_id: 3,
        state: JobState::Pending.stored(),
        eligible: NOW - 60,
        time_limit_min: -1,
        ..Default::default()
    };
    let l = Line::Job(&j);
    let get = |name: &str| {
        let f = FIELDS.iter().find(|f| f.name == name).unwrap();
        (f.value)(&l, &CX)
    };
    assert_eq!(get("NodeList"), "None assigned");
    assert_eq!(get("Start"), "Unknown");
    assert_eq!(get("End"), "Unknown");
    assert_eq!(get("Elapsed"), "00:00:00");
    assert_eq!(get("Planned"), "00:01:00");
    assert_eq!(get("Timelimit"), "UNLIMITED");
    assert_eq!(get("TimelimitRaw"), "UNLIMITED");
    assert_eq!(get("AllocTRES"), "");
    assert_eq!(get("State"), "PENDING");
}

/// `row` with the text field `column` (a `JobRow` name) emptied.
fn without(row: &JobRow, column: &str) -> JobRow {
    let mut r = row.clone();
    let field = match column {
        "account" => &mut r.account,
        "comment" => &mut r.comment,
        "name" => &mut r.name,
        "node_list" => &mut r.node_list,
        "partition" => &mut r.partition,
        "qos" => &mut r.qos,
        "reason" => &mut r.reason,
        "user" => &mut r.user,
        "wckey" => &mut r.wckey,
        "workdir" => &mut r.workdir,
        other => panic!("{other} is not a projected text field"),
    };
    field.clear();
    r
}

#[test]
fn every_field_reads_only_the_text_fields_it_asks_for() {
    let mut row = job();
    row.reason = "Resources".into();
    let columns = [
        "account",
        "comment",
        "name",
        "node_list",
        "partition",
        "qos",
        "reason",
        "user",
        "wckey",
        "workdir",
    ];
    for f in FIELDS.iter().chain(crate::acct::usage::USAGE_FIELDS) {
        let reads = text_reads([f.name]);
        for column in columns.iter().filter(|c| !reads.iter().any(|r| r == *c)) {
            let blank = without(&row, column);
            let lines = |r: &JobRow| -> Vec<String> {
                let mut out = vec![(f.value)(&Line::Job(r), &CX)];
                out.extend(r.steps.iter().map(|s| (f.value)(&Line::Step(r, s), &CX)));
                out
            };
            assert_eq!(
                lines(&blank),
                lines(&row),
                "{} reads {column}: add it to TEXT_READS",
                f.name
            );
        }
    }
}

#[test]
fn text_reads_names_each_column_once() {
    assert_eq!(
        text_reads(["JobID", "Account", "State", "Account", "WCKey"]),
        ["account", "wckey"]
    );
    assert!(text_reads(["JobID", "State", "Elapsed"]).is_empty());
}
