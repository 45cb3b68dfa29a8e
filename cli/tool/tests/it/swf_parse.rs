//! The Standard Workload Format parser and mapping, on a hand-written trace: the header,
//! comments, every field, `-1` as unknown, each status, and malformed lines with their numbers.

use crate::swf_support;

use sluice_tool::swf::format::FIELD_NAMES;
use sluice_tool::swf::{
    Event, LineError, LineProblem, Mapped, Mapping, Reader, Status, SwfJob, map_job, parse_line,
};
use sluice_vocab::states::JobState;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::{JobEndedRecord, JobStartedRecord, JobSubmittedRecord};
use swf_support::{LOADED, MALFORMED_LINES, T0, TRACE};

/// The job lines (with their numbers), the malformed lines, and the reader at the end.
type Read<'a> = (Vec<(u64, SwfJob)>, Vec<LineError>, Reader<&'a [u8]>);

fn read_all(text: &[u8]) -> Read<'_> {
    let mut reader = Reader::new(text);
    let (mut jobs, mut bad) = (Vec::new(), Vec::new());
    while let Some(event) = reader.next_event() {
        match event.expect("reading from memory") {
            Event::Job { line, job } => jobs.push((line, *job)),
            Event::Malformed(e) => bad.push(e),
        }
    }
    (jobs, bad, reader)
}

#[test]
fn the_header_is_read_from_its_comments() {
    let (_, _, reader) = read_all(TRACE.as_bytes());
    let h = reader.header();
    assert_eq!(h.version.as_deref(), Some("2.2"));
    assert_eq!(h.unix_start_time, Some(T0));
    assert_eq!(h.time_zone.as_deref(), Some("Europe/Berlin"));
    assert_eq!(
        (h.max_procs, h.max_nodes, h.max_jobs),
        (Some(16), Some(4), Some(11))
    );
    assert_eq!((h.cpus(), h.nodes()), (Some(16), Some(4)));
    assert!(h.problems.is_empty(), "{:?}", h.problems);
    assert_eq!(
        h.pairs[1],
        ("Computer".to_string(), "Test machine".to_string())
    );
    assert_eq!(
        h.pairs.len(),
        7,
        "the free comment is not a key: {:?}",
        h.pairs
    );
    assert_eq!(reader.lines(), 23);
}

#[test]
fn every_field_is_read_and_minus_one_is_unknown() {
    let (jobs, _, _) = read_all(TRACE.as_bytes());
    let first = &jobs[0];
    assert_eq!(first.0, 10);
    assert_eq!(
        first.1,
        SwfJob {
            job: 1,
            submit: 0,
            wait: Some(10),
            run: Some(3600),
            alloc_procs: Some(4),
            avg_cpu: Some(3000.5),
            used_mem_kb: Some(1024),
            req_procs: Some(4),
            req_time: Some(7200),
            req_mem_kb: Some(2048),
            status: Status::Completed,
            user: Some(1),
            group: Some(1),
            executable: Some(5),
            queue: Some(1),
            partition: Some(1),
            preceding: None,
            think: None,
        }
    );
    let second = &jobs[1].1;
    assert_eq!(
        (second.wait, second.avg_cpu, second.req_time, second.status),
        (None, None, None, Status::Failed)
    );
    assert_eq!((second.preceding, second.think), (Some(1), Some(30)));
    // A fractional run time is rounded.
    let fifth = &jobs[4].1;
    assert_eq!(
        (fifth.job, fifth.run, fifth.status),
        (5, Some(100), Status::Unknown)
    );
    let numbers: Vec<u32> = jobs.iter().map(|(_, j)| j.job).collect();
    assert_eq!(
        numbers,
        [1, 2, 3, 4, 5, 8, 11],
        "job lines, the partial one included"
    );
}

#[test]
fn malformed_lines_are_reported_with_their_numbers() {
    let (_, bad, _) = read_all(TRACE.as_bytes());
    let lines: Vec<u64> = bad.iter().map(|e| e.line).collect();
    assert_eq!(lines, [15, 16, 17, 19, 21, 22]);
    assert_eq!(
        bad[0].problem,
        LineProblem::FieldCount { found: 5 },
        "'this is not a job'"
    );
    assert_eq!(bad[1].problem, LineProblem::BadStatus { value: 7 });
    assert_eq!(bad[2].problem, LineProblem::FieldCount { found: 5 });
    assert_eq!(
        bad[3].problem,
        LineProblem::BadField {
            field: "submit time",
            text: "-5".into()
        }
    );
    assert_eq!(
        bad[4].problem,
        LineProblem::BadField {
            field: "allocated processors",
            text: "abc".into()
        }
    );
    assert_eq!(
        bad[5].problem,
        LineProblem::BadField {
            field: "job number",
            text: "0".into()
        }
    );
    assert_eq!(lines, MALFORMED_LINES);
    assert_eq!(
        bad[4].to_string(),
        "line 21: bad allocated processors: 'abc'"
    );
}

#[test]
fn lines_that_are_not_text_are_malformed_and_reading_goes_on() {
    let mut text = b"; MaxProcs: 4\n".to_vec();
    text.extend_from_slice(b"1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 \xff\n");
    text.extend_from_slice(b"2 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1");
    let (jobs, bad, _) = read_all(&text);
    assert_eq!(bad.len(), 1);
    assert_eq!((bad[0].line, &bad[0].problem), (2, &LineProblem::NotText));
    assert_eq!(jobs.len(), 1, "the last line needs no newline");
    assert_eq!((jobs[0].0, jobs[0].1.job), (3, 2));
}

#[test]
fn line_kinds() {
    assert_eq!(
        parse_line("   \t"),
        Ok(sluice_tool::swf::format::Line::Blank)
    );
    assert_eq!(
        parse_line(";MaxNodes:  128 "),
        Ok(sluice_tool::swf::format::Line::Comment(Some((
            "MaxNodes".into(),
            "128".into()
        ))))
    );
    assert_eq!(
        parse_line("; just words"),
        Ok(sluice_tool::swf::format::Line::Comment(None))
    );
    assert_eq!(FIELD_NAMES.len(), 18);
    for (i, name) in FIELD_NAMES.iter().enumerate().skip(1) {
        // Put a bad value in each field in turn: the error names that field.
        let mut fields = vec!["1"; 18];
        fields[10] = "1";
        fields[i] = "x";
        let err = parse_line(&fields.join(" ")).unwrap_err();
        assert_eq!(
            err,
            LineProblem::BadField {
                field: name,
                text: "x".into()
            }
        );
    }
}

fn mapping() -> Mapping {
    Mapping::new(T0, Some(16), Some(4))
}

fn records(job: &SwfJob) -> Vec<Kind> {
    match map_job(job, &mapping()) {
        Ok(Mapped::Job(j)) => j.kinds,
        other => panic!("job {} did not map to records: {other:?}", job.job),
    }
}

#[test]
fn a_completed_job_becomes_submit_start_and_end_records() {
    let (jobs, _, _) = read_all(TRACE.as_bytes());
    assert_eq!(
        records(&jobs[0].1),
        vec![
            Kind::JobSubmitted(JobSubmittedRecord {
                job_id: 1,
                name: "app5".into(),
                uid: 1,
                gid: 1,
                user: "user1".into(),
                account: "acct1".into(),
                partition: "part1".into(),
                submit: T0,
                eligible: T0,
                time_limit_min: 120,
                req_nodes: 1,
                req_cpus: 4,
                req_mem_mb: 8,
                comment: "queue1".into(),
                ..Default::default()
            }),
            Kind::JobStarted(JobStartedRecord {
                job_id: 1,
                start: T0 + 10,
                node_count: 1,
                cpus: 4,
                mem_mb: 8,
                eligible: T0,
                ..Default::default()
            }),
            Kind::JobEnded(JobEndedRecord {
                job_id: 1,
                end: T0 + 10 + 3600,
                state: JobState::Completed.stored(),
                ..Default::default()
            }),
        ]
    );
}

#[test]
fn each_status_maps_to_its_state() {
    let (jobs, _, _) = read_all(TRACE.as_bytes());
    let state_of = |job: &SwfJob| match records(job).last() {
        Some(Kind::JobEnded(e)) => (JobState::from_stored(e.state), e.exit_code, e.end),
        other => panic!("no end record: {other:?}"),
    };
    // 2: failed, unknown wait counts as none, 8 CPUs on 2 nodes, unlimited.
    assert_eq!(
        state_of(&jobs[1].1),
        (Some(JobState::Failed), 1, T0 + 60 + 1800)
    );
    let r2 = records(&jobs[1].1);
    match (&r2[0], &r2[1]) {
        (Kind::JobSubmitted(s), Kind::JobStarted(st)) => {
            assert_eq!(
                (s.time_limit_min, s.name.as_str(), s.comment.as_str()),
                (-1, "", "")
            );
            assert_eq!((st.start, st.cpus, st.node_count), (T0 + 60, 8, 2));
        }
        other => panic!("{other:?}"),
    }
    // 3: cancelled while queued (run time 0): no start, ended when it left the queue.
    let r3 = records(&jobs[2].1);
    assert_eq!(r3.len(), 2, "{r3:?}");
    assert_eq!(
        state_of(&jobs[2].1),
        (Some(JobState::Cancelled), 0, T0 + 120 + 300)
    );
    // 4: cancelled while running; unknown user-less group and partition; CPUs requested
    // unknown, so the request is the allocation.
    let r4 = records(&jobs[3].1);
    assert_eq!(r4.len(), 3);
    match &r4[0] {
        Kind::JobSubmitted(s) => {
            assert_eq!(
                (s.user.as_str(), s.account.as_str(), s.partition.as_str()),
                ("user3", "", "")
            );
            assert_eq!((s.uid, s.gid, s.req_cpus), (3, u32::MAX, 2));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        state_of(&jobs[3].1),
        (Some(JobState::Cancelled), 0, T0 + 180 + 600)
    );
    // 5: status unknown (-1) but it ran: completed; every identity unknown.
    assert_eq!(
        state_of(&jobs[4].1),
        (Some(JobState::Completed), 0, T0 + 240 + 100)
    );
    // 8: a partial execution: skipped, its summary line carries the job.
    assert_eq!(map_job(&jobs[5].1, &mapping()), Ok(Mapped::Partial));
    // 11: 16 CPUs fill the 4 nodes; memory is per processor.
    let r11 = records(&jobs[6].1);
    match (&r11[0], &r11[1]) {
        (Kind::JobSubmitted(s), Kind::JobStarted(st)) => {
            assert_eq!((s.req_nodes, s.req_mem_mb, s.time_limit_min), (4, 64, 60));
            assert_eq!((st.node_count, st.mem_mb), (4, 64));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn cpu_seconds_are_cpus_times_run_time() {
    let (jobs, _, _) = read_all(TRACE.as_bytes());
    let got: Vec<(u32, u64)> = jobs
        .iter()
        .filter_map(|(_, j)| match map_job(j, &mapping()) {
            Ok(Mapped::Job(r)) => Some((j.job, r.cpu_secs)),
            _ => None,
        })
        .collect();
    assert_eq!(got, LOADED);
}

#[test]
fn a_status_without_a_run_time_never_ran() {
    let line = "1 0 30 -1 4 -1 -1 4 600 -1 -1 1 1 -1 -1 -1 -1 -1";
    let Ok(sluice_tool::swf::format::Line::Job(job)) = parse_line(line) else {
        panic!("a valid line");
    };
    match map_job(&job, &Mapping::new(T0, None, None)) {
        Ok(Mapped::Job(r)) => {
            assert_eq!((r.kinds.len(), r.cpu_secs, r.end), (2, 0, T0 + 30));
            match &r.kinds[1] {
                Kind::JobEnded(e) => assert_eq!(e.state, JobState::Cancelled.stored()),
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
}
