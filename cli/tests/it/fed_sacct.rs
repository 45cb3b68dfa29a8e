//! sacct over a federation's records in a real accounting daemon: the job is shown from the
//! cluster that ran it, `-D` adds the revoked sibling records, `-M` and `--federation` pick the
//! clusters.

use crate::fed_support;

use fed_support::Fed;
use sluice_vocab::JobState;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::{JobEndedRecord, JobStartedRecord, JobSubmittedRecord};

const SACCT: &str = env!("CARGO_BIN_EXE_sacct");
const J1: u32 = (1 << 26) | 1;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn submitted(at: i64) -> Kind {
    Kind::JobSubmitted(JobSubmittedRecord {
        job_id: J1,
        name: "fed".into(),
        uid: 1000,
        gid: 1000,
        user: "alice".into(),
        partition: "debug".into(),
        submit: at,
        eligible: at,
        time_limit_min: 10,
        req_nodes: 1,
        req_cpus: 1,
        workdir: "/tmp".into(),
        ..Default::default()
    })
}

fn ended(at: i64, state: JobState) -> Kind {
    Kind::JobEnded(JobEndedRecord {
        job_id: J1,
        end: at,
        state: state.stored(),
        ..Default::default()
    })
}

fn sorted(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text.lines().collect();
    v.sort_unstable();
    v
}

#[test]
fn sacct_shows_the_run_and_d_adds_the_revoked_copies() {
    let fed = Fed::start(&["c1", "c2", "c3"], &["c1", "c2"], &[]);
    let t = now() - 600;
    // c1 is the origin: its copy was revoked when c2 started the job.
    fed.send("c1", vec![submitted(t), ended(t + 10, JobState::Revoked)]);
    fed.send(
        "c2",
        vec![
            submitted(t),
            Kind::JobStarted(JobStartedRecord {
                job_id: J1,
                start: t + 10,
                node_list: "b1".into(),
                node_count: 1,
                cpus: 1,
                ..Default::default()
            }),
            ended(t + 70, JobState::Completed),
        ],
    );
    let id = J1.to_string();
    let sacct = |extra: &[&str]| {
        let mut args = vec!["-X", "-n", "-P", "-o", "jobid,cluster,state", "-j", &id];
        args.extend_from_slice(extra);
        let out = fed.run(SACCT, &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    assert_eq!(sacct(&["--federation"]), "67108865|c2|COMPLETED\n");
    assert_eq!(
        sorted(&sacct(&["--federation", "-D"])),
        vec!["67108865|c1|REVOKED", "67108865|c2|COMPLETED"]
    );
    assert_eq!(
        sacct(&[]),
        "",
        "the local cluster only has the revoked copy"
    );
    assert_eq!(sacct(&["-D"]), "67108865|c1|REVOKED\n");
    assert_eq!(sacct(&["-M", "c2,c3"]), "67108865|c2|COMPLETED\n");
    assert_eq!(sacct(&["-M", "all"]), "67108865|c2|COMPLETED\n");
}

#[test]
fn federation_view_hides_runs_of_a_reused_id_a_day_older() {
    let fed = Fed::start(&["c1", "c2"], &["c1", "c2"], &[]);
    let t = now() - 600;
    let job = |id: u32, kinds: Vec<Kind>| -> Vec<Kind> {
        kinds
            .into_iter()
            .map(|k| match k {
                Kind::JobSubmitted(s) => Kind::JobSubmitted(JobSubmittedRecord { job_id: id, ..s }),
                Kind::JobEnded(e) => Kind::JobEnded(JobEndedRecord { job_id: id, ..e }),
                other => other,
            })
            .collect()
    };
    let (j2, j3) = (J1 + 1, J1 + 2);
    // J2: a pending federated job cancelled today, its copies on both clusters.
    // J3: ended on c1 two days ago; the id was used again on c2 today.
    let day2 = t - 2 * 86_400;
    let mut c1 = job(j2, vec![submitted(t), ended(t + 5, JobState::Cancelled)]);
    c1.extend(job(
        j3,
        vec![submitted(day2), ended(day2 + 5, JobState::Failed)],
    ));
    fed.send("c1", c1);
    let mut c2 = job(j2, vec![submitted(t), ended(t + 6, JobState::Cancelled)]);
    c2.extend(job(
        j3,
        vec![submitted(t), ended(t + 7, JobState::Completed)],
    ));
    fed.send("c2", c2);
    let ids = format!("{j2},{j3}");
    let sacct = |extra: &[&str]| {
        let mut args = vec!["-X", "-n", "-P", "-o", "jobid,cluster,state", "-j", &ids];
        args.extend_from_slice(extra);
        let out = fed.run(SACCT, &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        sorted(&out.stdout)
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (s2, s3) = (j2.to_string(), j3.to_string());
    let row = |id: &str, c: &str, st: &str| format!("{id}|{c}|{st}");
    assert_eq!(
        sacct(&["--federation"]),
        vec![
            row(&s2, "c1", "CANCELLED"),
            row(&s2, "c2", "CANCELLED"),
            row(&s3, "c2", "COMPLETED"),
        ]
    );
    // Not a federation view: every cluster's run is shown, as in Slurm.
    assert_eq!(
        sacct(&["-M", "c1,c2"]),
        vec![
            row(&s2, "c1", "CANCELLED"),
            row(&s2, "c2", "CANCELLED"),
            row(&s3, "c1", "FAILED"),
            row(&s3, "c2", "COMPLETED"),
        ]
    );
    assert_eq!(sacct(&["--federation", "-D"]).len(), 4);
}
