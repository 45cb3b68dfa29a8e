//! Builders for scenario tests and benchmarks: a cluster described in `slurm.conf` lines, a
//! core built from it with a [`RecordingOutbox`], and helpers that move simulated time.
//!
//! ```
//! use sluice_ctld::testkit::ClusterBuilder;
//! use sluice_ctld::core::SubmitRequest;
//! let mut fx = ClusterBuilder::new().nodes("n[1-2]", "CPUs=4").partition("debug", "Nodes=n[1-2] Default=YES").build();
//! fx.register_all();
//! let id = fx.submit(SubmitRequest::new(1000, "job")).unwrap();
//! fx.schedule();
//! assert_eq!(fx.state(id), sluice_vocab::JobState::Running);
//! ```

use crate::conf::CtldConf;
use crate::core::{
    BATCH_STEP, Caller, CancelRequest, Core, IdLease, JobExit, JobReason, JobRef, NodeRegistration,
    NodeScript, PassStats, RecordingOutbox, RunReport, SimTime, SubmitRequest, on_cancel,
    on_job_exited, on_node_registered, on_submit, on_tick, schedule, schedule_fresh,
};
use crate::error::CtldError;
use sluice_vocab::nonstop_conf::NonstopConf;
use sluice_vocab::{FedJobId, JobState, LocalJobId};
use std::path::Path;

/// The simulated time fixtures start at.
pub const T0: SimTime = SimTime::from_secs(1_700_000_000);

/// Describes a cluster as `slurm.conf` lines.
#[derive(Debug, Clone)]
pub struct ClusterBuilder {
    lines: Vec<String>,
    first_id: u32,
    id_count: u32,
    nonstop: Option<String>,
}

impl Default for ClusterBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ClusterBuilder {
    /// A cluster named `test` with no nodes yet.
    pub fn new() -> Self {
        Self {
            lines: vec!["ClusterName=test".into(), "SlurmctldHost=localhost".into()],
            first_id: 1,
            id_count: 1_000_000,
            nonstop: None,
        }
    }

    /// Adds `NodeName=<names> <rest>`.
    pub fn nodes(mut self, names: &str, rest: &str) -> Self {
        self.lines.push(format!("NodeName={names} {rest}"));
        self
    }

    /// Turns failure management on with `text` as `nonstop.conf`.
    pub fn nonstop(mut self, text: &str) -> Self {
        self.nonstop = Some(text.to_string());
        self
    }

    /// Adds `PartitionName=<name> <rest>`.
    pub fn partition(mut self, name: &str, rest: &str) -> Self {
        self.lines.push(format!("PartitionName={name} {rest}"));
        self
    }

    /// Adds any other line, e.g. `KillWait=10`.
    pub fn conf(mut self, line: &str) -> Self {
        self.lines.push(line.to_string());
        self
    }

    /// Leases `count` job ids starting at `first` (default: 1 and a million).
    pub fn job_ids(mut self, first: u32, count: u32) -> Self {
        self.first_id = first;
        self.id_count = count;
        self
    }

    /// The configuration text.
    pub fn text(&self) -> String {
        self.lines.join("\n") + "\n"
    }

    /// Builds the fixture at [`T0`]; groups resolve `gN` to gid N.
    pub fn try_build(&self) -> Result<CoreFixture, CtldError> {
        let (mut conf, _) = CtldConf::parse(Path::new("slurm.conf"), &self.text())?;
        if let Some(text) = &self.nonstop {
            let parts: Vec<&str> = conf.partitions.iter().map(|p| p.name.as_str()).collect();
            let path = Path::new(sluice_vocab::nonstop_conf::FILE_NAME);
            conf.nonstop = Some(NonstopConf::parse(path, text, &parts)?);
        }
        let ids = LocalJobId::new(self.first_id)
            .map(|first| IdLease::with_range(None, first, self.id_count))
            .unwrap_or_default();
        let groups = |g: &str| g.strip_prefix('g').and_then(|n| n.parse().ok());
        let core = Core::new(&conf, Box::new(ids), &groups, T0)?;
        Ok(CoreFixture {
            core,
            out: RecordingOutbox::default(),
            now: T0,
        })
    }

    /// Builds the fixture, panicking on a bad description (tests and benchmarks only).
    pub fn build(&self) -> CoreFixture {
        match self.try_build() {
            Ok(fx) => fx,
            Err(e) => panic!("bad test cluster: {e}"),
        }
    }
}

/// A core, its recording outbox and the simulated clock.
pub struct CoreFixture {
    /// The core.
    pub core: Core,
    /// Everything the core asked for.
    pub out: RecordingOutbox,
    /// Simulated now.
    pub now: SimTime,
}

impl CoreFixture {
    /// Registers every node with exactly its configured resources.
    pub fn register_all(&mut self) {
        let regs: Vec<NodeRegistration> = self
            .core
            .nodes()
            .iter()
            .map(|n| NodeRegistration {
                name: n.name.clone(),
                cpus: n.cpus,
                real_memory_mb: n.real_memory_mb,
                tmp_disk_mb: n.tmp_disk_mb,
                boot_time: self.now,
                jobs: Vec::new(),
                pid: 0,
                again: false,
            })
            .collect();
        for reg in regs {
            let _ = on_node_registered(&mut self.core, &mut self.out, self.now, reg);
        }
    }

    /// Submits a job; returns its (array) job id.
    pub fn submit(&mut self, req: SubmitRequest) -> Result<FedJobId, CtldError> {
        on_submit(&mut self.core, &mut self.out, self.now, req).map(|r| r.job_id)
    }

    /// Submits a job that must be accepted, then runs one scheduling pass.
    pub fn submit_and_schedule(&mut self, req: SubmitRequest) -> FedJobId {
        let id = self.submit(req).expect("submit");
        self.schedule();
        id
    }

    /// Moves simulated time forward.
    pub fn advance(&mut self, secs: u64) {
        self.now = self.now.plus(secs);
    }

    /// Runs the periodic tick at the current time.
    pub fn tick(&mut self) -> PassStats {
        on_tick(&mut self.core, &mut self.out, self.now)
    }

    /// Runs one scheduling pass at the current time.
    pub fn schedule(&mut self) -> PassStats {
        schedule(&mut self.core, &mut self.out, self.now)
    }

    /// Runs the pass the runtime runs after a batch that only submitted jobs.
    pub fn schedule_fresh(&mut self) -> PassStats {
        schedule_fresh(&mut self.core, &mut self.out, self.now)
    }

    /// Reports that job `id`'s batch script exited with `code`, as its batch host reports the
    /// run it holds.
    pub fn exit(&mut self, id: FedJobId, code: i32) -> Result<(), CtldError> {
        let from = self.batch_report(id);
        self.report_exit(id, code, from)
    }

    /// Reports that job `id`'s batch script exited with `code`, from the node, run and step
    /// `from` names.
    pub fn report_exit(
        &mut self,
        id: FedJobId,
        code: i32,
        from: Option<RunReport>,
    ) -> Result<(), CtldError> {
        self.exited(id, code, from, None)
    }

    /// Reports that job `id`'s batch host's `failed` program failed (with exit code `code`).
    pub fn report_script_failure(
        &mut self,
        id: FedJobId,
        code: i32,
        failed: NodeScript,
    ) -> Result<(), CtldError> {
        let from = self.batch_report(id);
        self.exited(id, code, from, Some(failed))
    }

    fn exited(
        &mut self,
        job: FedJobId,
        exit_code: i32,
        from: Option<RunReport>,
        failed: Option<NodeScript>,
    ) -> Result<(), CtldError> {
        let exit = JobExit {
            job,
            exit_code,
            signal: 0,
            usage: None,
            from,
            failed,
        };
        on_job_exited(&mut self.core, &mut self.out, self.now, exit)
    }

    /// What job `id`'s batch host names in its reports about the run it holds (a job still
    /// completing after a requeue: the run before the requeue); `None` when no node holds it.
    pub fn batch_report(&self, id: FedJobId) -> Option<RunReport> {
        let job = self.core.job(id)?;
        let host = *job.nodes.first()?;
        let run = if job.state == JobState::Pending {
            job.restarts.checked_sub(1)?
        } else {
            job.restarts
        };
        Some(RunReport {
            node: self.core.nodes.get(host).name.clone(),
            run,
            step: BATCH_STEP,
        })
    }

    /// `scancel` of job `id` by `caller` (with `signal`: `scancel -s`).
    pub fn cancel(
        &mut self,
        caller: Caller,
        id: FedJobId,
        signal: Option<i32>,
    ) -> Result<(), CtldError> {
        let req = CancelRequest {
            job: JobRef::Job(id),
            signal,
        };
        on_cancel(&mut self.core, &mut self.out, self.now, caller, req)
    }

    /// A job's state (`REVOKED` stands in for "not in the core").
    pub fn state(&self, id: FedJobId) -> JobState {
        self.core.job(id).map_or(JobState::Revoked, |j| j.state)
    }

    /// A job's reason.
    pub fn reason(&self, id: FedJobId) -> JobReason {
        self.core.job(id).map_or(JobReason::None, |j| j.reason)
    }

    /// A job's nodes as a hostlist.
    pub fn nodes_of(&self, id: FedJobId) -> String {
        self.core
            .job(id)
            .map(|j| self.core.hostlist(&j.nodes))
            .unwrap_or_default()
    }

    /// The administrator caller.
    pub fn admin(&self) -> Caller {
        Caller::admin()
    }
}
