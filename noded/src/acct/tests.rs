use std::os::unix::process::CommandExt;

use super::*;

fn conf(frequency: u32) -> JobAcctGather {
    JobAcctGather {
        enabled: true,
        frequency,
    }
}

/// A shell that burns CPU in a child it waits for, then a little in itself.
fn burner() -> std::process::Child {
    let script = "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'; \
                  j=0; while [ $j -lt 20000 ]; do j=$((j+1)); done";
    std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .process_group(0)
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn a_cpu_burning_task_reports_its_cpu_and_memory() {
    let mut child = burner();
    let pid = i32::try_from(child.id()).unwrap();
    let tracker = Tracker::start(&conf(30), pid, 0, 0).unwrap();
    exited(pid).await;
    let usage = tracker.finish();
    assert!(
        child.wait().unwrap().success(),
        "reaped only after the last sample"
    );
    assert!(
        usage.user_ms + usage.sys_ms >= 100,
        "the waited-for child's CPU counts: {usage:?}"
    );
    assert!(usage.rss >= 64 * 1024, "a shell's resident size: {usage:?}");
    assert!(usage.vmem >= usage.rss, "{usage:?}");
}

#[tokio::test]
async fn gathering_off_or_without_a_group_measures_nothing() {
    let off = JobAcctGather {
        enabled: false,
        frequency: 30,
    };
    assert!(Tracker::start(&off, 12345, 0, 0).is_none());
    assert!(Tracker::start(&conf(30), 0, 0, 0).is_none());
    exited(0).await;
}

#[test]
fn a_step_s_acctg_freq_replaces_the_node_s_interval() {
    assert_eq!(for_step(conf(30), Some(2)), conf(2));
    assert_eq!(for_step(conf(30), Some(0)), conf(0));
    assert_eq!(for_step(conf(30), None), conf(30));
    let off = JobAcctGather {
        enabled: false,
        ..conf(30)
    };
    assert!(!for_step(off, Some(5)).enabled, "gathering stays off");
}
