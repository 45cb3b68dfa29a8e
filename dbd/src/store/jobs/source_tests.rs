//! The two sources of sacct's pages agree: the same history read through diesel and through
//! SQLite's own statements (the reader connections) gives the same runs, for every shape of
//! query and page size (the pages may split differently: the SQLite source leaves the
//! per-state windows to the Rust predicate, so its pages may hold fewer runs).

use sluice_vocab::states::JobState;

use super::query::Diesel;
use super::sqlite_scan::Sqlite;
use super::{JobCursor, JobPage, JobQuery, TextField, page};
use crate::store::types::records::*;
use crate::store::{AddClusters, Apply, Store, StoreError};

fn submitted(job_id: u32, run: u32, uid: u32, account: &str, submit: i64) -> RecordKind {
    RecordKind::JobSubmitted(Box::new(JobSubmitted {
        job_id,
        run,
        name: format!("job{}", job_id % 3),
        uid,
        gid: 100,
        user: format!("u{uid}"),
        account: account.into(),
        partition: if job_id.is_multiple_of(2) {
            "debug"
        } else {
            "long"
        }
        .into(),
        submit,
        eligible: submit,
        time_limit_min: 60,
        req_cpus: 2,
        workdir: "/home".into(),
        ..Default::default()
    }))
}

fn started(job_id: u32, run: u32, at: i64, nodes: &str) -> RecordKind {
    RecordKind::JobStarted(JobStarted {
        job_id,
        run,
        start: at,
        node_list: nodes.into(),
        node_count: 2,
        cpus: 4,
        mem_mb: 1024,
        eligible: 0,
    })
}

fn ended(job_id: u32, run: u32, at: i64, state: JobState) -> RecordKind {
    RecordKind::JobEnded(JobEnded {
        job_id,
        run,
        end: at,
        state: state.stored(),
        exit_code: i32::from(state != JobState::Completed),
        ..Default::default()
    })
}

fn step(job_id: u32, step_id: i32, start: i64) -> RecordKind {
    RecordKind::Step(Box::new(Step {
        job_id,
        run: 0,
        step_id,
        name: "s".into(),
        start,
        end: start + 5,
        state: JobState::Completed.stored(),
        node_list: "n1".into(),
        node_count: 1,
        ntasks: 1,
        cpus: 1,
        ..Default::default()
    }))
}

/// Two clusters of runs in every state: requeued runs, steps, a resized run, an array.
fn history(store: &Store) {
    let req = AddClusters {
        names: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    store.add_clusters(&req, Apply::Commit, 1).unwrap();
    for (cluster, shift) in [("a", 0i64), ("b", 7)] {
        let mut kinds = Vec::new();
        for j in 1..=40u32 {
            let t = 1_000 + i64::from(j) * 50 + shift;
            let (uid, acct) = if j.is_multiple_of(3) {
                (7, "phys")
            } else {
                (8, "chem")
            };
            kinds.push(submitted(j, 0, uid, acct, t));
            if j % 5 == 4 {
                continue; // still pending
            }
            kinds.push(started(j, 0, t + 10, "n[1-2]"));
            if j.is_multiple_of(7) {
                kinds.push(step(j, -4, t + 11));
                kinds.push(step(j, 0, t + 12));
            }
            if j == 12 {
                kinds.push(RecordKind::JobResized(JobResized {
                    job_id: j,
                    run: 0,
                    at: t + 20,
                    node_list: "n[1,3]".into(),
                    node_count: 2,
                    cpus: 4,
                    mem_mb: 1024,
                }));
            }
            match j % 6 {
                0 => {}
                1 => kinds.push(ended(j, 0, t + 30, JobState::Failed)),
                2 => {
                    kinds.push(ended(j, 0, t + 30, JobState::Requeued));
                    kinds.push(submitted(j, 1, uid, acct, t + 40));
                    kinds.push(ended(j, 1, t + 90, JobState::Completed));
                }
                _ => kinds.push(ended(j, 0, t + 200, JobState::Completed)),
            }
        }
        let records: Vec<Record> = kinds
            .into_iter()
            .zip(1..)
            .map(|(kind, seq)| Record { seq, kind })
            .collect();
        store.record_batch(cluster, 1, &records).unwrap();
    }
}

/// The runs of every page of `q` at `limit` rows a page, through `read`.
fn pages(
    q: &JobQuery,
    limit: usize,
    mut read: impl FnMut(Option<&JobCursor>) -> Result<JobPage, StoreError>,
) -> Vec<JobRun> {
    let mut runs = Vec::new();
    let mut after = None;
    for _ in 0..1_000 {
        let p = read(after.as_ref()).unwrap();
        // A resized run reads as one record more than its row (job 12, on each cluster).
        assert!(p.runs.len() <= limit + 2, "{q:?}: a page over its limit");
        runs.extend(p.runs);
        after = p.next;
        if after.is_none() {
            return runs;
        }
    }
    panic!("{q:?}: the pages never end");
}

/// A query of every shape a page can take.
fn queries() -> Vec<JobQuery> {
    let base = JobQuery::default();
    vec![
        base.clone(),
        JobQuery {
            start: 1_500,
            end: 2_500,
            ..base.clone()
        },
        JobQuery {
            start: 1_500,
            uids: vec![7],
            ..base.clone()
        },
        JobQuery {
            accounts: vec!["chem".into()],
            names: vec!["job1".into()],
            partitions: vec!["long".into()],
            duplicates: true,
            ..base.clone()
        },
        JobQuery {
            states: vec![JobState::Pending.stored(), JobState::Failed.stored()],
            ..base.clone()
        },
        JobQuery {
            states: vec![JobState::Running.stored(), JobState::Resizing.stored()],
            start: 1_200,
            end: 2_000,
            ..base.clone()
        },
        JobQuery {
            job_ids: vec![12, 14, 21, 39],
            clusters: vec!["b".into()],
            duplicates: true,
            ..base.clone()
        },
        JobQuery {
            federation: true,
            nodes: vec!["n3".into()],
            no_steps: true,
            ..base.clone()
        },
    ]
}

#[test]
fn sqlite_statements_and_diesel_read_the_same_pages() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("acct.db").display());
    let store = Store::connect_at(&url, 1).unwrap();
    history(&store);
    let readers = store.readers.as_ref().expect("a SQLite file has readers");
    let queries = queries();
    for q in &queries {
        for limit in [1, 3, 7, 100] {
            let through_diesel = pages(q, limit, |after| {
                store.read(|c| page(&mut Diesel(c), q, after, limit))
            });
            let through_sqlite = pages(q, limit, |after| {
                readers.read(|c| page(&mut Sqlite(c), q, after, limit))
            });
            assert!(!through_diesel.is_empty(), "{q:?} matches nothing");
            assert_eq!(through_sqlite, through_diesel, "{q:?}, {limit} a page");
        }
    }
}

/// `run` with the text fields `q` does not read emptied.
fn as_read(q: &JobQuery, mut run: JobRun) -> JobRun {
    let fields: [(TextField, &mut String); 10] = [
        (TextField::Name, &mut run.name),
        (TextField::User, &mut run.user),
        (TextField::Account, &mut run.account),
        (TextField::Partition, &mut run.partition),
        (TextField::NodeList, &mut run.node_list),
        (TextField::WorkDir, &mut run.workdir),
        (TextField::Reason, &mut run.reason),
        (TextField::Comment, &mut run.comment),
        (TextField::WcKey, &mut run.wckey),
        (TextField::Qos, &mut run.qos),
    ];
    for (field, value) in fields {
        if !q.reads(field) {
            value.clear();
        }
    }
    run
}

#[test]
fn projected_sqlite_pages_hold_the_same_runs_and_the_fields_read() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("acct.db").display());
    let store = Store::connect_at(&url, 1).unwrap();
    history(&store);
    let readers = store.readers.as_ref().expect("a SQLite file has readers");
    let projections = [
        vec![],
        vec![TextField::Account, TextField::Name, TextField::Partition],
        vec![TextField::NodeList, TextField::WcKey, TextField::Qos],
    ];
    for base in queries() {
        for fields in &projections {
            let q = JobQuery {
                fields: Some(fields.clone()),
                ..base.clone()
            };
            let limit = 3;
            let full: Vec<JobRun> = pages(&base, limit, |after| {
                store.read(|c| page(&mut Diesel(c), &base, after, limit))
            })
            .into_iter()
            .map(|r| as_read(&q, r))
            .collect();
            let projected: Vec<JobRun> = pages(&q, limit, |after| {
                readers.read(|c| page(&mut Sqlite(c), &q, after, limit))
            })
            .into_iter()
            .map(|r| as_read(&q, r))
            .collect();
            assert_eq!(projected, full, "{q:?}");
            // diesel sends full rows but skips the side reads nobody shows.
            let through_diesel: Vec<JobRun> = pages(&q, limit, |after| {
                store.read(|c| page(&mut Diesel(c), &q, after, limit))
            })
            .into_iter()
            .map(|r| as_read(&q, r))
            .collect();
            assert_eq!(through_diesel, full, "{q:?}");
        }
    }
    // Unread fields are really left out (a filter's field is read all the same).
    let q = JobQuery {
        fields: Some(vec![]),
        names: vec!["job1".into()],
        ..JobQuery::default()
    };
    let runs = pages(&q, 100, |after| {
        readers.read(|c| page(&mut Sqlite(c), &q, after, 100))
    });
    assert!(!runs.is_empty());
    assert!(
        runs.iter()
            .all(|r| r.name == "job1" && r.account.is_empty())
    );
}
