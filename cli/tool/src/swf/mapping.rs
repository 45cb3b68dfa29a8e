//! What a trace's job line becomes in accounting: the records a controller would have sent
//! for the job (submitted, started if it ran, ended), so an imported trace reads like any
//! cluster's history in sacct and sreport.
//!
//! * submit = the trace's start time + submit time; eligible = submit (the format has no holds);
//!   start = submit + wait (an unknown wait counts as none); end = start + run time;
//! * job number N → job id N; user N → `user<N>` with uid N; group G → account `acct<G>`
//!   with gid G; partition P → `part<P>`; executable E → job name `app<E>`; queue Q → the
//!   comment `queue<Q>`; unknown (-1) → empty (an empty account is the user's default);
//! * allocated processors → CPUs (the requested count when unknown); nodes = CPUs over the
//!   machine's processors per node (`MaxProcs / MaxNodes`), rounded up; requested time → time
//!   limit in minutes, rounded up (unknown: UNLIMITED); memory per processor → MB per job;
//! * status 1 → COMPLETED, 0 → FAILED (exit code 1), 5 → CANCELLED. Status -1 (models carry
//!   none) → COMPLETED when the job ran, since a model's job runs its run time, and CANCELLED
//!   when it never ran. Statuses 2, 3 and 4 mark the partial executions (checkpoints,
//!   swap-outs) of a job whose summary line, under the same number, already carries the
//!   whole job: they are skipped, loading them would count its time twice;
//! * a job ran when it has a run time, except a CANCELLED one with a run time of 0 (the
//!   archive's mark of a job cancelled while queued): a job that never ran has no start,
//!   ends when it left the queue, and allocates nothing.

use sluice_vocab::states::JobState;
use sluice_wire::proto::acct_record::Kind;
use sluice_wire::proto::{JobEndedRecord, JobStartedRecord, JobSubmittedRecord};

use super::format::{LineProblem, Status, SwfJob};

/// How a trace's times and sizes are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// Unix time of the trace's submit time 0.
    pub base: i64,
    /// Processors per node, from the header (1 when unknown).
    pub procs_per_node: u64,
}

impl Mapping {
    /// A mapping from the trace start `base` and the machine's CPUs and nodes, if known.
    pub fn new(base: i64, cpus: Option<u64>, nodes: Option<u64>) -> Self {
        let procs_per_node = match (cpus, nodes) {
            (Some(c), Some(n)) if n > 0 => c.div_ceil(n).max(1),
            _ => 1,
        };
        Self {
            base,
            procs_per_node,
        }
    }
}

/// A job's records and what they add up to.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecords {
    /// Submitted, started (when it ran), ended: in that order.
    pub kinds: Vec<Kind>,
    /// Submit time (unix seconds).
    pub submit: i64,
    /// End time (unix seconds).
    pub end: i64,
    /// CPU-seconds allocated: CPUs × run time (0 when it never ran).
    pub cpu_secs: u64,
}

/// What a job line maps to.
#[derive(Debug, Clone, PartialEq)]
pub enum Mapped {
    /// A job to load.
    Job(JobRecords),
    /// A partial-execution line (status 2, 3 or 4): its summary line carries the job.
    Partial,
}

const OUT_OF_RANGE: LineProblem = LineProblem::BadTimes {
    what: "times out of range",
};

/// The records of `job`, or why it cannot be placed.
pub fn map_job(job: &SwfJob, m: &Mapping) -> Result<Mapped, LineProblem> {
    let (state, exit_code) = match job.status {
        s if s.is_partial() => return Ok(Mapped::Partial),
        Status::Failed => (JobState::Failed, 1),
        Status::Cancelled => (JobState::Cancelled, 0),
        Status::Completed => (JobState::Completed, 0),
        _ if job.run.is_some() => (JobState::Completed, 0),
        _ => (JobState::Cancelled, 0),
    };
    let ran = match job.run {
        None => false,
        Some(0) => state != JobState::Cancelled,
        Some(_) => true,
    };
    let submit = m.base.checked_add(job.submit).ok_or(OUT_OF_RANGE)?;
    let start = submit
        .checked_add(job.wait.unwrap_or(0))
        .ok_or(OUT_OF_RANGE)?;
    let run = if ran { job.run.unwrap_or(0) } else { 0 };
    let end = start.checked_add(run).ok_or(OUT_OF_RANGE)?;
    let cpus = job.alloc_procs.or(job.req_procs).unwrap_or(0);
    let req_cpus = job.req_procs.or(job.alloc_procs).unwrap_or(0);
    let mem_per_proc_kb = job.req_mem_kb.or(job.used_mem_kb).unwrap_or(0);
    let mut kinds = Vec::with_capacity(3);
    kinds.push(Kind::JobSubmitted(JobSubmittedRecord {
        job_id: job.job,
        name: job
            .executable
            .map(|e| format!("app{e}"))
            .unwrap_or_default(),
        uid: job.user.unwrap_or(u32::MAX),
        gid: job.group.unwrap_or(u32::MAX),
        user: job.user.map(|u| format!("user{u}")).unwrap_or_default(),
        account: job.group.map(|g| format!("acct{g}")).unwrap_or_default(),
        partition: job
            .partition
            .map(|p| format!("part{p}"))
            .unwrap_or_default(),
        submit,
        eligible: submit,
        time_limit_min: job
            .req_time
            .map_or(-1, |s| s.div_euclid(60) + i64::from(s % 60 != 0)),
        req_nodes: nodes(req_cpus, m),
        req_cpus,
        req_mem_mb: mem_mb(job.req_mem_kb.unwrap_or(0), req_cpus),
        comment: job.queue.map(|q| format!("queue{q}")).unwrap_or_default(),
        ..Default::default()
    }));
    if ran {
        kinds.push(Kind::JobStarted(JobStartedRecord {
            job_id: job.job,
            start,
            node_count: nodes(cpus, m),
            cpus,
            mem_mb: mem_mb(mem_per_proc_kb, cpus),
            eligible: submit,
            ..Default::default()
        }));
    }
    kinds.push(Kind::JobEnded(JobEndedRecord {
        job_id: job.job,
        end,
        state: state.stored(),
        exit_code,
        ..Default::default()
    }));
    let cpu_secs = if ran {
        u64::from(cpus).saturating_mul(u64::try_from(run).unwrap_or(0))
    } else {
        0
    };
    Ok(Mapped::Job(JobRecords {
        kinds,
        submit,
        end,
        cpu_secs,
    }))
}

/// Nodes holding `cpus` processors on this machine.
fn nodes(cpus: u32, m: &Mapping) -> u32 {
    u32::try_from(u64::from(cpus).div_ceil(m.procs_per_node)).unwrap_or(u32::MAX)
}

/// MB for `cpus` processors of `kb_per_proc` KB each, rounded up.
fn mem_mb(kb_per_proc: u64, cpus: u32) -> u64 {
    kb_per_proc.saturating_mul(u64::from(cpus)).div_ceil(1024)
}
