//! Golden outputs of squeue's federation fields (`-O cluster,origin,siblingsactive,...`).

use sluice_vocab::JobState;
use sluice_wire::proto::JobInfo;

use super::args::{Invocation, parse};
use super::render;
use crate::timefmt::Zone;

const NOW: i64 = 1_795_255_200;
const FED_JOB: u32 = (1 << 26) | 7;

fn copy(cluster: &str, state: JobState) -> JobInfo {
    JobInfo {
        job_id: FED_JOB,
        name: "fedjob".into(),
        uid: 1000,
        user: "alice".into(),
        partition: "debug".into(),
        state: state.stored(),
        reason: "None".into(),
        cluster: cluster.into(),
        now: NOW,
        fed_origin: "c1".into(),
        fed_viable: vec!["c1".into(), "c2".into(), "c3".into()],
        fed_viable_raw: 0b111,
        ..Default::default()
    }
}

fn show(jobs: &[JobInfo], args: &[&str]) -> String {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let Invocation::Run(o) = parse(&a, &|_| None, 1000).unwrap() else {
        panic!("not a run")
    };
    let r = render(jobs, &o, Zone::Utc, NOW);
    assert_eq!(r.err, "");
    r.out
}

const FED_FORMAT: &str = "JobID:.10,cluster:8,origin:8,siblingsactive:16,siblingsviable:16,\
                          siblingsactiveraw:20,siblingsviableraw:22,statecompact:3";

#[test]
fn origin_copy_shows_its_siblings_names_and_ids() {
    let origin = JobInfo {
        fed_active: vec!["c1".into(), "c2".into()],
        fed_active_raw: 0b011,
        ..copy("c1", JobState::Pending)
    };
    assert_eq!(
        show(&[origin], &["-O", FED_FORMAT]),
        "     JOBIDCLUSTER ORIGIN  ACTIVE_SIBLINGS VIABLE_SIBLINGS ACTIVE_SIBLINGS_RAW \
         VIALBLE_SIBLINGS_RAW  ST \n\
         \x20 67108871c1      c1      c1,c2           c1,c2,c3        1,2                 \
         1,2,3                 PD \n"
    );
}

#[test]
fn a_sibling_copy_shows_na_for_active_siblings() {
    let sibling = copy("c2", JobState::Running);
    assert_eq!(
        show(
            &[sibling],
            &[
                "-h",
                "-O",
                "cluster:4,origin:4,siblingsactive:6,siblingsactiveraw:4,statecompact:2"
            ]
        ),
        "c2  c1  NA    NA  R \n"
    );
}

#[test]
fn plain_jobs_show_na_everywhere() {
    let plain = JobInfo {
        job_id: 12,
        cluster: "c1".into(),
        state: JobState::Pending.stored(),
        ..Default::default()
    };
    assert_eq!(
        show(
            &[plain],
            &[
                "-h",
                "-O",
                "origin:3,originraw:3,siblingsactive:3,siblingsviable:3,siblingsviableraw:3"
            ]
        ),
        "NA NA NA NA NA \n"
    );
    let fed = copy("c1", JobState::Pending);
    assert_eq!(show(&[fed], &["-h", "-O", "originraw:2"]), "1 \n");
}
