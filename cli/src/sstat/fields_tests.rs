use sluice_vocab::jobacct::{StepUsage, TaskUsage};
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{JobRow, StepRecord};

use super::*;
use crate::output::{OutputMode, Printer};
use crate::sstat::fetch::LiveRecord;
use crate::sstat::rows;
use crate::timefmt::Zone;

fn names(spec: &str) -> Vec<(&'static str, i32)> {
    parse_format(spec)
        .unwrap()
        .into_iter()
        .map(|(f, c)| (f.name, c.width))
        .collect()
}

#[test]
fn fields_match_by_prefix_in_slurms_order() {
    assert_eq!(
        names("jobid,maxrss%20,ave,ntasks%-3,node"),
        vec![
            ("JobID", -12),
            ("MaxRSS", 20),
            ("AveCPU", 10),
            ("NTasks", -3),
            ("Nodelist", 20)
        ]
    );
    assert_eq!(
        parse_format("jobid,bogus").unwrap_err(),
        "sstat: error: Invalid field requested: \"bogus\""
    );
    assert_eq!(
        parse_format(crate::sstat::args::DEFAULT_FORMAT)
            .unwrap()
            .len(),
        47
    );
}

#[test]
fn every_usage_field_has_a_value_from_sacct_or_the_live_ones() {
    let known: Vec<&str> = USAGE_FIELDS
        .iter()
        .chain(LIVE_FIELDS)
        .map(|f| f.name)
        .collect();
    for f in FIELDS.iter().filter(|f| f.value.is_none()) {
        assert!(known.contains(&f.name), "{} has a value", f.name);
    }
}

#[test]
fn the_smallest_tasks_node_and_rank_are_shown() {
    let cols = parse_format(
        "jobid,mincpu,mincpunode,mincputask,tresusageinminn,tresusageinmint,tresusageoutminn",
    )
    .unwrap();
    let job = JobRow {
        job_id: 28,
        ..Default::default()
    };
    let cx = Cx {
        zone: Zone::Utc,
        now: 0,
        noconvert: false,
    };
    let printer = Printer::new(
        OutputMode::Parsable2,
        cols.iter().map(|c| c.1.clone()).collect(),
    );
    // Task 0 on c1n1 used the least CPU (2 s) and memory; on equal values the first task.
    assert_eq!(
        rows(&printer, &cols, &job, &[&step(0)], &cx),
        vec![
            "28.0|00:00:02|c1n1|0|cpu=c1n1,fs/disk=c1n1,mem=c1n1,pages=c1n1,vmem=c1n1|\
             cpu=0,fs/disk=0,mem=0,pages=0,vmem=0|fs/disk=c1n1"
        ]
    );
}

#[test]
fn the_field_list_is_four_to_a_line() {
    let text = help_format();
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       "
    );
    assert_eq!(text.lines().count(), 13);
    assert!(text.ends_with("TRESUsageOutMinNode TRESUsageOutMinTask TRESUsageOutTot    \n"));
}

fn step(step_id: i32) -> LiveRecord {
    let tasks = [
        TaskUsage {
            task: 0,
            node: 0,
            user_ms: 2000,
            rss: 1644 * 1024,
            ..Default::default()
        },
        TaskUsage {
            task: 1,
            node: 1,
            user_ms: 4000,
            rss: 4096 * 1024,
            ..Default::default()
        },
    ];
    let record = StepRecord {
        job_id: 28,
        step_id,
        node_list: "c1n[1-2]".into(),
        ntasks: 2,
        usage: Some(StepUsage::from_tasks(&tasks).unwrap().to_proto()),
        ..Default::default()
    };
    LiveRecord {
        record,
        pids: "31165,31170".into(),
    }
}

#[test]
fn step_rows_show_live_usage_as_slurm_does() {
    let cols =
        parse_format("jobid,maxrss,maxrssnode,maxrsstask,avecpu,ntasks,reqcpufreqmin").unwrap();
    let job = JobRow {
        job_id: 28,
        ..Default::default()
    };
    let cx = Cx {
        zone: Zone::Utc,
        now: 0,
        noconvert: false,
    };
    let (srun, batch) = (step(0), step(-4));
    let printer = Printer::new(
        OutputMode::Parsable,
        cols.iter().map(|c| c.1.clone()).collect(),
    );
    let lines = rows(&printer, &cols, &job, &[&batch, &srun], &cx);
    assert_eq!(
        lines,
        vec![
            "28.batch|4M|c1n2|1|00:00:03|2|0|",
            "28.0|4M|c1n2|1|00:00:03|2|Unknown|"
        ]
    );
    let fixed = Printer::new(
        OutputMode::Fixed,
        cols.iter().map(|c| c.1.clone()).collect(),
    );
    assert_eq!(
        rows(&fixed, &cols, &job, &[&srun], &cx)[0],
        "28.0                 4M       c1n2          1   00:00:03        2       Unknown "
    );
    let pid_cols = parse_format(crate::sstat::args::PID_FORMAT).unwrap();
    let pid_printer = Printer::new(
        OutputMode::Parsable2,
        pid_cols.iter().map(|c| c.1.clone()).collect(),
    );
    assert_eq!(
        rows(&pid_printer, &pid_cols, &job, &[&srun], &cx),
        vec!["28.0|c1n[1-2]|31165,31170"]
    );
}
