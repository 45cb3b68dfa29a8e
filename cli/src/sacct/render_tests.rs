//! Golden outputs of sacct's lines over hand-built accounting rows: layouts, step selection,
//! array ids, federation views and JSON.

use sluice_vocab::JobState;
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{JobRow, StepRecord};

use super::args::{Context, Invocation, SacctOpts, parse};
use super::fields::Cx;
use super::format::parse_format;
use super::jobsel::BATCH_STEP;
use super::json::{self, JsonOut};
use super::render::{TextOut, job_lines};
use crate::timefmt::Zone;

const NOW: i64 = 1_795_255_200;
const CX: Cx = Cx {
    zone: Zone::Utc,
    now: NOW,
    noconvert: false,
};

fn opts(args: &[&str]) -> SacctOpts {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cx = Context {
        env: &|_| None,
        now: NOW,
        zone: Zone::Utc,
    };
    match parse(&a, &cx).unwrap() {
        Invocation::Run(o) => *o,
        other => panic!("{other:?}"),
    }
}

fn step(id: i32, name: &str, state: JobState, code: i32) -> StepRecord {
    StepRecord {
        job_id: 7,
        step_id: id,
        name: name.into(),
        start: NOW - 100,
        end: NOW - 10,
        state: state.stored(),
        exit_code: code,
        node_list: "n1".into(),
        node_count: 1,
        ntasks: 1,
        cpus: 2,
        ..Default::default()
    }
}

fn row() -> JobRow {
    JobRow {
        cluster: "c1".into(),
        job_id: 7,
        name: "analysis-long-name".into(),
        uid: 1000,
        user: "alice".into(),
        account: "physics".into(),
        partition: "debug".into(),
        state: JobState::Failed.stored(),
        exit_code: 3,
        start: NOW - 100,
        end: NOW - 10,
        cpus: 2,
        node_list: "n1".into(),
        node_count: 1,
        steps: vec![
            step(0, "hostname", JobState::Completed, 0),
            step(BATCH_STEP, "batch", JobState::Failed, 3),
        ],
        ..Default::default()
    }
}

fn show_rows(args: &[&str], rows: &[JobRow], local: Option<&str>) -> String {
    let o = opts(args);
    let cols = parse_format(&o.fields, o.long).unwrap();
    let mut text = TextOut::new(&o, &cols);
    let mut out = Vec::new();
    if !o.no_header {
        text.header(&mut out).unwrap();
    }
    for r in rows {
        text.lines(&mut out, &job_lines(r, &o, local), &CX).unwrap();
    }
    String::from_utf8(out).unwrap()
}

fn show(args: &[&str]) -> String {
    show_rows(args, &[row()], None)
}

#[test]
fn default_columns_with_batch_and_srun_steps() {
    assert_eq!(
        show(&[]),
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n\
         ------------ ---------- ---------- ---------- ---------- ---------- -------- \n\
         7            analysis-+      debug    physics          2     FAILED      3:0 \n\
         7.batch           batch               physics          2     FAILED      3:0 \n\
         7.0            hostname               physics          2  COMPLETED      0:0 \n"
    );
}

#[test]
fn parsable_layouts_delimiters_and_widths() {
    assert_eq!(
        show(&["-X", "-P", "-n"]),
        "7|analysis-long-name|debug|physics|2|FAILED|3:0\n"
    );
    assert_eq!(
        show(&["-p", "-o", "jobid,elapsed,nodelist%5,user"]),
        "JobID|Elapsed|NodeList|User|\n7|00:01:30|n1|alice|\n7.batch|00:01:30|n1||\n7.0|00:01:30|n1||\n"
    );
    assert_eq!(
        show(&["-P", "-X", "--delimiter=;;", "-o", "jobid,state,cputimeraw"]),
        "JobID;;State;;CPUTimeRAW\n7;;FAILED;;180\n"
    );
    assert_eq!(
        show(&["-n", "-X", "-o", "jobid%-6,state%6,start"]),
        "7      FAILED 2026-11-21T09:58:20 \n"
    );
    assert_eq!(
        show(&["-b", "-X"]),
        "JobID             State ExitCode \n------------ ---------- -------- \n7                FAILED      3:0 \n"
    );
}

#[test]
fn long_prints_the_accounted_part_of_slurms_list() {
    assert_eq!(
        show(&["-l", "-X", "-P"]),
        "JobID|JobIDRaw|JobName|Partition|MaxVMSize|MaxVMSizeNode|MaxVMSizeTask|AveVMSize|MaxRSS|\
         MaxRSSNode|MaxRSSTask|AveRSS|MaxPages|MaxPagesNode|MaxPagesTask|AvePages|MinCPU|AveCPU|\
         NTasks|AllocCPUS|Elapsed|State|ExitCode|ReqMem|MaxDiskRead|MaxDiskReadNode|\
         MaxDiskReadTask|AveDiskRead|MaxDiskWrite|MaxDiskWriteNode|MaxDiskWriteTask|AveDiskWrite|\
         AllocTRES|TRESUsageInAve|TRESUsageInMax|TRESUsageInMaxNode|TRESUsageInMaxTask|\
         TRESUsageInMin|TRESUsageInTot|TRESUsageOutMax|TRESUsageOutMaxNode|TRESUsageOutMaxTask|\
         TRESUsageOutAve|TRESUsageOutTot\n\
         7|7|analysis-long-name|debug||||||||||||||||2|00:01:30|FAILED|3:0|0M|||||||||\
         billing=2,cpu=2,node=1|||||||||||\n"
    );
}

#[test]
fn step_selection_prints_only_that_step() {
    assert_eq!(
        show(&["-n", "-P", "-j", "7.batch", "-o", "jobid,state"]),
        "7.batch|FAILED\n"
    );
    assert_eq!(
        show(&["-n", "-P", "-j", "7", "-o", "jobid"]),
        "7\n7.batch\n7.0\n"
    );
    assert_eq!(show(&["-n", "-P", "-j", "7", "-X", "-o", "jobid"]), "7\n");
}

#[test]
fn array_tasks_and_cancellers() {
    let task = |id: u32, t: u32| JobRow {
        cluster: "c1".into(),
        job_id: id,
        array_job_id: 20,
        array_task_id: Some(t),
        state: JobState::Cancelled.stored(),
        requester_uid: (t == 1).then_some(1000),
        ..Default::default()
    };
    let rows = [task(20, 0), task(21, 1)];
    assert_eq!(
        show_rows(&["-n", "-P", "-o", "jobid,jobidraw,state"], &rows, None),
        "20_0|20|CANCELLED\n20_1|21|CANCELLED by 1000\n"
    );
    assert_eq!(
        show_rows(&["-n", "-P", "-j", "20_1", "-o", "jobid"], &rows, None),
        "20_1\n"
    );
    assert_eq!(
        show_rows(&["-n", "-o", "state"], &rows[1..], None),
        "CANCELLED+ \n",
        "cut at width 10, as Slurm shows it"
    );
}

#[test]
fn federation_views_hide_other_clusters_local_jobs() {
    let mut remote_local = row();
    remote_local.cluster = "c2".into();
    let mut remote_fed = row();
    remote_fed.cluster = "c2".into();
    remote_fed.job_id = 0x0800_0007;
    let rows = [row(), remote_local, remote_fed];
    assert_eq!(
        show_rows(
            &["-n", "-X", "-P", "-o", "cluster,jobid"],
            &rows,
            Some("c1")
        ),
        "c1|7\nc2|134217735\n"
    );
}

#[test]
fn json_streams_a_jobs_document() {
    let mut out = Vec::new();
    let mut doc = JsonOut::default();
    let r = row();
    doc.job(&mut out, &json::job(&r, true, &CX)).unwrap();
    doc.job(&mut out, &json::job(&r, false, &CX)).unwrap();
    doc.finish(&mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["job_id"], 7);
    assert_eq!(jobs[0]["state"]["current"][0], "FAILED");
    assert_eq!(jobs[0]["exit_code"]["return_code"]["number"], 3);
    assert_eq!(jobs[0]["exit_code"]["status"][0], "ERROR");
    assert_eq!(jobs[0]["time"]["elapsed"], 90);
    assert_eq!(jobs[0]["tres"]["allocated"][0]["type"], "cpu");
    assert_eq!(jobs[0]["steps"][0]["step"]["id"], "7.0");
    assert_eq!(jobs[0]["steps"][0]["nodes"]["list"][0], "n1");
    assert!(jobs[1]["steps"].as_array().unwrap().is_empty());
    assert_eq!(v["errors"], serde_json::json!([]));
    let mut empty = Vec::new();
    JsonOut::default().finish(&mut empty).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&empty).unwrap();
    assert_eq!(v["jobs"], serde_json::json!([]));
}

#[test]
fn usage_fields_on_step_lines_and_cpu_sums_on_the_job_line() {
    use sluice_vocab::jobacct::{StepUsage, TaskUsage};
    let mut r = row();
    let task = TaskUsage {
        user_ms: 1_234,
        sys_ms: 100,
        rss: 1180 * 1024,
        ..Default::default()
    };
    r.steps[1].usage = StepUsage::from_tasks(&[task]).map(|u| u.to_proto());
    assert_eq!(
        show_rows(
            &["-P", "-o", "jobid,totalcpu,maxrss,usercpu"],
            &[r.clone()],
            None
        ),
        "JobID|TotalCPU|MaxRSS|UserCPU\n7|00:01.334||00:01.234\n7.batch|00:01.334|1180K|00:01.234\n\
         7.0|00:00:00||00:00:00\n"
    );
    assert_eq!(
        show_rows(&["-o", "jobid,maxrss,totalcpu"], &[r], None),
        "JobID            MaxRSS   TotalCPU \n------------ ---------- ---------- \n\
         7                        00:01.334 \n7.batch           1180K  00:01.334 \n\
         7.0                       00:00:00 \n"
    );
}

#[test]
fn rows_come_without_steps_only_when_nothing_shown_needs_them() {
    let needs = |args: &[&str]| {
        let o = opts(args);
        let cols = parse_format(&o.fields, o.long).unwrap();
        super::needs_steps(&o, &cols)
    };
    assert!(needs(&[]));
    assert!(!needs(&["-X"]));
    assert!(!needs(&["-X", "-P", "-o", "jobid,state,elapsed"]));
    assert!(needs(&["-X", "-o", "jobid,derivedexitcode"]));
    assert!(needs(&["-X", "-o", "jobid,totalcpu"]));
    assert!(needs(&["-X", "--json"]));
}
