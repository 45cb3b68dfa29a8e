//! The in-memory rules of record application, without a database.

use std::collections::HashMap;

use sluice_vocab::states::JobState;

use super::apply::Batch;
use crate::store::types::records::*;

fn batch() -> Batch {
    let defaults = HashMap::from([("alice".to_string(), "physics".to_string())]);
    Batch::new(
        "c1",
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        defaults,
    )
}

fn submitted(job_id: u32, run: u32) -> RecordKind {
    RecordKind::JobSubmitted(Box::new(JobSubmitted {
        job_id,
        run,
        name: "sim".into(),
        user: "alice".into(),
        submit: 100,
        eligible: 100,
        ..Default::default()
    }))
}

fn ended(job_id: u32, run: u32, end: i64, state: JobState) -> RecordKind {
    RecordKind::JobEnded(JobEnded {
        job_id,
        run,
        end,
        state: state.stored(),
        ..Default::default()
    })
}

fn suspend(at: i64, suspended: bool) -> RecordKind {
    RecordKind::JobSuspended(JobSuspended {
        job_id: 7,
        run: 0,
        at,
        suspended,
    })
}

fn event(node: &str, at: i64, kind: &str) -> RecordKind {
    RecordKind::NodeEvent(NodeEvent {
        node: node.into(),
        at,
        kind: kind.into(),
        reason: format!("{kind} reason"),
        ..Default::default()
    })
}

#[test]
fn an_empty_account_becomes_the_default_account() {
    let mut b = batch();
    b.apply(&submitted(7, 0));
    let row = &b.runs[&(7, 0)].row;
    assert_eq!(row.account, "physics");
    assert_eq!(row.state, i64::from(JobState::Pending.stored()));
    assert!(row.latest && !b.runs[&(7, 0)].stored);
}

#[test]
fn an_amending_submission_record_keeps_the_runs_state_and_eligible_time() {
    let mut b = batch();
    b.apply(&submitted(7, 0));
    b.apply(&RecordKind::JobStarted(JobStarted {
        job_id: 7,
        run: 0,
        start: 120,
        node_list: "n1".into(),
        node_count: 1,
        ..Default::default()
    }));
    b.apply(&RecordKind::JobSubmitted(Box::new(JobSubmitted {
        job_id: 7,
        run: 0,
        name: "renamed".into(),
        user: "alice".into(),
        submit: 100,
        eligible: 0,
        time_limit_min: 41,
        ..Default::default()
    })));
    let row = &b.runs[&(7, 0)].row;
    assert_eq!(
        (row.name.as_str(), row.time_limit_min, row.time_eligible),
        ("renamed", 41, 100)
    );
    assert_eq!(
        (row.state, row.time_start, row.node_list.as_str()),
        (i64::from(JobState::Running.stored()), 120, "n1")
    );
}

#[test]
fn a_requeue_ends_the_run_and_opens_the_next() {
    let mut b = batch();
    b.apply(&submitted(7, 0));
    b.apply(&ended(7, 0, 150, JobState::Requeued));
    let (first, second) = (&b.runs[&(7, 0)].row, &b.runs[&(7, 1)].row);
    assert_eq!(
        (first.state, first.time_end, first.latest),
        (1024, 150, false)
    );
    assert_eq!(
        (second.state, second.time_submit, second.name.as_str()),
        (0, 150, "sim")
    );
    assert!(second.latest);
    // The submit record of the next run refreshes that run instead of adding another.
    b.apply(&submitted(7, 1));
    assert_eq!(b.runs.len(), 2);
    assert_eq!(b.runs[&(7, 1)].row.time_submit, 100);
}

#[test]
fn suspended_time_accumulates_and_a_repeated_suspend_counts_once() {
    let mut b = batch();
    b.apply(&submitted(7, 0));
    for k in [suspend(200, true), suspend(210, true), suspend(230, false)] {
        b.apply(&k);
    }
    assert_eq!(b.runs[&(7, 0)].row.suspended_secs, 30);
    assert_eq!(
        b.runs[&(7, 0)].row.state,
        i64::from(JobState::Running.stored())
    );
    // Ending while suspended counts the time up to the end.
    b.apply(&suspend(300, true));
    b.apply(&ended(7, 0, 305, JobState::Cancelled));
    let row = &b.runs[&(7, 0)].row;
    assert_eq!((row.suspended_secs, row.suspend_since), (35, 0));
}

#[test]
fn node_events_open_and_the_next_up_closes_them() {
    let mut b = batch();
    b.apply(&event("n1", 10, "drain"));
    b.apply(&event("n1", 11, "drain"));
    b.apply(&event("n2", 12, "power_down"));
    b.apply(&event("n2", 13, "down"));
    b.apply(&event("n2", 14, "power_up"));
    b.apply(&event("n1", 20, "up"));
    let summary: Vec<_> = b
        .events
        .iter()
        .map(|e| {
            (
                e.row.node_name.as_str(),
                e.row.kind.as_str(),
                e.row.time_start,
                e.row.time_end,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("n1", "drain", 10, 20),
            ("n2", "power_down", 12, 14),
            ("n2", "down", 13, 0),
        ]
    );
}

#[test]
fn a_step_end_without_its_start_keeps_the_start_record_fields() {
    let mut b = batch();
    let start = Step {
        job_id: 7,
        step_id: 0,
        name: "hostname".into(),
        start: 1_000,
        state: JobState::Running.stored(),
        node_list: "n[1-2]".into(),
        node_count: 2,
        ntasks: 4,
        cpus: 8,
        ..Default::default()
    };
    b.apply(&RecordKind::Step(Box::new(start.clone())));
    // The controller restarted in between and forgot the step's start.
    let end = Step {
        job_id: 7,
        step_id: 0,
        end: 1_100,
        state: JobState::Failed.stored(),
        exit_code: 2,
        ..Default::default()
    };
    b.apply(&RecordKind::Step(Box::new(end)));
    let row = &b.steps[&(7, 0, 0)].row;
    assert_eq!(
        (
            row.name.as_str(),
            row.time_start,
            row.time_end,
            row.exit_code
        ),
        ("hostname", 1_000, 1_100, 2)
    );
    assert_eq!(
        (row.node_list.as_str(), row.node_count, row.ntasks, row.cpus),
        ("n[1-2]", 2, 4, 8)
    );
    assert_eq!(row.state, i64::from(JobState::Failed.stored()));
    // A full record still replaces everything.
    let again = Step {
        name: "other".into(),
        start: 1_200,
        ..start
    };
    b.apply(&RecordKind::Step(Box::new(again)));
    let row = &b.steps[&(7, 0, 0)].row;
    assert_eq!(
        (row.name.as_str(), row.time_start, row.time_end),
        ("other", 1_200, 0)
    );
}

fn resized(at: i64, node_list: &str, node_count: u32, cpus: u32) -> RecordKind {
    RecordKind::JobResized(JobResized {
        job_id: 7,
        run: 0,
        at,
        node_list: node_list.into(),
        node_count,
        cpus,
        mem_mb: u64::from(node_count) * 100,
    })
}

#[test]
fn a_resize_keeps_the_allocation_before_it_as_an_earlier_record() {
    let mut b = batch();
    b.apply(&submitted(7, 0));
    b.apply(&RecordKind::JobStarted(JobStarted {
        job_id: 7,
        run: 0,
        start: 120,
        node_list: "n[1-2]".into(),
        node_count: 2,
        cpus: 8,
        mem_mb: 200,
        ..Default::default()
    }));
    b.apply(&suspend(150, true));
    b.apply(&suspend(160, false));
    b.apply(&suspend(170, true));
    b.apply(&resized(180, "n1", 1, 4));
    // The same second again: the allocation between the two lasted no time.
    b.apply(&resized(180, "n3", 1, 4));
    b.apply(&resized(300, "n[3-4]", 2, 8));
    let row = &b.runs[&(7, 0)].row;
    assert_eq!(
        (row.node_list.as_str(), row.cpus, row.node_count),
        ("n[3-4]", 8, 2)
    );
    let kept: Vec<_> = b
        .resizes
        .iter()
        .map(|r| (r.time_end, r.node_list.as_str(), r.cpus, r.suspended_secs))
        .collect();
    // Suspended 10 s, then again from 170: 20 s by 180 and 140 s by 300.
    assert_eq!(kept, vec![(180, "n[1-2]", 8, 20), (300, "n3", 4, 140)]);
}

#[test]
fn a_resize_before_the_start_only_sets_the_allocation() {
    let mut b = batch();
    b.apply(&submitted(7, 0));
    b.apply(&resized(110, "n1", 1, 4));
    assert!(b.resizes.is_empty());
    assert_eq!(b.runs[&(7, 0)].row.node_list, "n1");
}
