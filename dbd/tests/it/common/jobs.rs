//! Builders for accounting records and a job-query reader, for the job accounting suites.

use sluice_dbd::store::*;
use sluice_vocab::states::JobState;

use super::{T1, TestDb, s};

/// A store with the clusters `names` added.
pub fn with_clusters(db: &TestDb, names: &[&str]) -> Store {
    let store = db.open();
    let req = AddClusters {
        names: s(names),
        ..Default::default()
    };
    store.add_clusters(&req, Apply::Commit, T1).unwrap();
    store
}

/// Numbers `kinds` from `first_seq` on.
pub fn numbered(first_seq: u64, kinds: Vec<RecordKind>) -> Vec<Record> {
    kinds
        .into_iter()
        .zip(first_seq..)
        .map(|(kind, seq)| Record { seq, kind })
        .collect()
}

/// A submit of `job_id` (run 0) by alice on account `acct` in partition `debug` at `submit`.
pub fn submit(job_id: u32, submit: i64) -> JobSubmitted {
    JobSubmitted {
        job_id,
        name: format!("job{job_id}"),
        uid: 1000,
        gid: 100,
        user: "alice".into(),
        account: "acct".into(),
        partition: "debug".into(),
        submit,
        eligible: submit,
        time_limit_min: 60,
        req_nodes: 1,
        req_cpus: 2,
        req_mem_mb: 512,
        workdir: "/home/alice".into(),
        ..Default::default()
    }
}

pub fn submitted(job_id: u32, at: i64) -> RecordKind {
    RecordKind::JobSubmitted(Box::new(submit(job_id, at)))
}

pub fn started(job_id: u32, run: u32, at: i64) -> RecordKind {
    RecordKind::JobStarted(JobStarted {
        job_id,
        run,
        start: at,
        node_list: "n[1-2]".into(),
        node_count: 2,
        cpus: 4,
        mem_mb: 1024,
        eligible: 0,
    })
}

pub fn ended(job_id: u32, run: u32, at: i64, state: JobState, exit_code: i32) -> RecordKind {
    RecordKind::JobEnded(JobEnded {
        job_id,
        run,
        end: at,
        state: state.stored(),
        exit_code,
        signal: 0,
        reason: String::new(),
        requester_uid: None,
    })
}

pub fn suspended(job_id: u32, at: i64, suspended: bool) -> RecordKind {
    RecordKind::JobSuspended(JobSuspended {
        job_id,
        run: 0,
        at,
        suspended,
    })
}

pub fn step(job_id: u32, step_id: i32, start: i64, end: i64, state: JobState) -> RecordKind {
    RecordKind::Step(Box::new(Step {
        job_id,
        run: 0,
        step_id,
        name: if step_id == -4 {
            "batch".into()
        } else {
            "hostname".into()
        },
        start,
        end,
        state: state.stored(),
        exit_code: 0,
        signal: 0,
        node_list: "n1".into(),
        node_count: 1,
        ntasks: 1,
        cpus: 2,
        usage: None,
    }))
}

pub fn node_event(node: &str, at: i64, kind: &str, reason: &str) -> RecordKind {
    RecordKind::NodeEvent(NodeEvent {
        node: node.into(),
        at,
        kind: kind.into(),
        reason: reason.into(),
        reason_uid: 0,
        cpus: 64,
    })
}

/// Every run matching `query`, read page by page with pages of `page` runs.
pub fn query_paged(store: &Store, query: &JobQuery, page: usize) -> Vec<JobRun> {
    let mut runs = Vec::new();
    let mut after: Option<JobCursor> = None;
    loop {
        let p = store.list_jobs(query, after.as_ref(), page).unwrap();
        runs.extend(p.runs);
        match p.next {
            Some(next) => after = Some(next),
            None => return runs,
        }
    }
}

/// Every run matching `query`.
pub fn query(store: &Store, query: &JobQuery) -> Vec<JobRun> {
    query_paged(store, query, 1_000)
}

/// (cluster, job id, run) of each run, in order.
pub fn keys(runs: &[JobRun]) -> Vec<(String, u32, u32)> {
    runs.iter()
        .map(|r| (r.cluster.clone(), r.job_id, r.run))
        .collect()
}

/// Job ids of each run, in order.
pub fn ids(runs: &[JobRun]) -> Vec<u32> {
    runs.iter().map(|r| r.job_id).collect()
}
