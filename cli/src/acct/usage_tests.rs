//! The usage fields on step and job lines, in Slurm's formats.

use sluice_vocab::jobacct::{StepUsage, TaskUsage};
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{JobRow, StepRecord};

use super::*;
use crate::timefmt::Zone;

const CX: Cx = Cx {
    zone: Zone::Utc,
    now: 0,
    noconvert: false,
};

fn usage(tasks: &[TaskUsage]) -> Option<sluice_wire::proto::StepUsage> {
    StepUsage::from_tasks(tasks).map(|u| u.to_proto())
}

fn task(task: u32, node: u32, user_ms: u64, rss: u64) -> TaskUsage {
    TaskUsage {
        task,
        node,
        user_ms,
        sys_ms: 250,
        rss,
        vmem: 220_000 * 1024,
        pages: 3,
        read: 2012,
        write: 8192,
    }
}

fn job() -> JobRow {
    JobRow {
        job_id: 5,
        steps: vec![
            StepRecord {
                step_id: -4,
                node_list: "n1".into(),
                usage: usage(&[task(0, 0, 1_234, 1180 * 1024)]),
                ..Default::default()
            },
            StepRecord {
                step_id: 0,
                node_list: "n[1-2]".into(),
                usage: usage(&[
                    task(0, 0, 3_600_000, 5_266_672 * 1024),
                    task(1, 1, 61_000, 2048 * 1024),
                ]),
                ..Default::default()
            },
            StepRecord {
                step_id: 1,
                node_list: "n1".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

fn show(name: &str, l: &Line) -> String {
    let f = USAGE_FIELDS.iter().find(|f| f.name == name).unwrap();
    (f.value)(l, &CX)
}

#[test]
fn cpu_times_follow_slurms_elapsed_time() {
    assert_eq!(cpu_time(0), "00:00:00");
    assert_eq!(cpu_time(1_234), "00:01.234");
    assert_eq!(cpu_time(61_000), "00:01:01");
    assert_eq!(cpu_time(3_723_400), "01:02:03");
    assert_eq!(cpu_time(90_061_000), "01-01:01:01");
}

#[test]
fn a_batch_step_shows_its_memory_and_cpu() {
    let j = job();
    let batch = Line::Step(&j, &j.steps[0]);
    assert_eq!(show("MaxRSS", &batch), "1180K");
    assert_eq!(show("MaxRSSNode", &batch), "n1");
    assert_eq!(show("MaxRSSTask", &batch), "0");
    assert_eq!(show("AveRSS", &batch), "1180K");
    assert_eq!(show("MaxVMSize", &batch), "220000K");
    assert_eq!(show("MaxPages", &batch), "3");
    assert_eq!(show("TotalCPU", &batch), "00:01.484");
    assert_eq!(show("UserCPU", &batch), "00:01.234");
    assert_eq!(show("SystemCPU", &batch), "00:00.250");
    assert_eq!(show("MinCPU", &batch), "00:00:01");
    assert_eq!(show("MaxDiskRead", &batch), "2012");
    assert_eq!(show("MaxDiskWrite", &batch), "8K");
    assert_eq!(
        show("TRESUsageInMax", &batch),
        "cpu=00:00:01,fs/disk=2012,mem=1180K,pages=3,vmem=220000K"
    );
    assert_eq!(show("TRESUsageOutTot", &batch), "fs/disk=8K");
    assert_eq!(
        show("TRESUsageInMaxNode", &batch),
        "cpu=n1,fs/disk=n1,mem=n1,pages=n1,vmem=n1"
    );
}

#[test]
fn noconvert_shows_sizes_in_bytes() {
    let j = job();
    let batch = Line::Step(&j, &j.steps[0]);
    let raw = Cx {
        noconvert: true,
        ..CX
    };
    let show_raw =
        |name: &str| (USAGE_FIELDS.iter().find(|f| f.name == name).unwrap().value)(&batch, &raw);
    assert_eq!(show_raw("MaxRSS"), (1180 * 1024).to_string());
    assert_eq!(show_raw("MaxDiskWrite"), "8192");
    assert_eq!(
        show_raw("TRESUsageInMax"),
        format!(
            "cpu=00:00:01,fs/disk=2012,mem={},pages=3,vmem={}",
            1180 * 1024,
            220_000 * 1024
        )
    );
    assert_eq!(show_raw("MaxRSSTask"), "0", "counts are what they are");
}

#[test]
fn a_multi_node_step_names_its_largest_task_and_node() {
    let j = job();
    let step = Line::Step(&j, &j.steps[1]);
    assert_eq!(show("MaxRSS", &step), "5266672K");
    assert_eq!(show("MaxRSSTask", &step), "0");
    assert_eq!(show("MinCPU", &step), "00:01:01");
    assert_eq!(show("AveCPU", &step), "00:30:30");
    assert_eq!(show("TotalCPU", &step), "01:01:01");
    assert_eq!(show("MaxVMSizeNode", &step), "n1");
    assert_eq!(
        show("TRESUsageInMaxTask", &step),
        "cpu=0,fs/disk=0,mem=0,pages=0,vmem=0"
    );
}

#[test]
fn unmeasured_steps_are_empty_and_the_job_line_sums_cpu() {
    let j = job();
    let unmeasured = Line::Step(&j, &j.steps[2]);
    assert_eq!(show("MaxRSS", &unmeasured), "");
    assert_eq!(show("TRESUsageInTot", &unmeasured), "");
    assert_eq!(show("TotalCPU", &unmeasured), "00:00:00");
    let line = Line::Job(&j);
    assert_eq!(show("MaxRSS", &line), "");
    assert_eq!(show("UserCPU", &line), "01:01:02");
    assert_eq!(show("SystemCPU", &line), "00:00.750");
    assert_eq!(show("TotalCPU", &line), "01:01:02");
}
