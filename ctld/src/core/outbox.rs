//! What the core asks the world to do. The runtime implements [`Outbox`] by sending node
//! commands to node daemons, writing accounting records to the durable accounting outbox and
//! state changes to the controller store; tests use [`RecordingOutbox`].

use super::SimTime;
use super::jobs::{ArrayTask, Job, JobReason, LaunchSpec};
use super::signal::JobPart;
use crate::conf::TimeLimit;
use sluice_vocab::jobacct::StepUsage;
use sluice_vocab::{FedJobId, JobState, NodeIdx};
use std::sync::Arc;

/// A request for node daemons. `nodes` index the core's node table; `node_list` is the same
/// set as a compressed hostlist (what `SLURM_JOB_NODELIST` shows).
#[derive(Debug, Clone, PartialEq)]
pub enum NodeCommand {
    /// Start a job's batch script on the first node of its allocation.
    LaunchBatch {
        job: FedJobId,
        array: Option<ArrayTask>,
        uid: u32,
        gid: u32,
        nodes: Vec<NodeIdx>,
        node_list: String,
        ntasks: u32,
        cpus_per_task: u32,
        mem_per_node_mb: Option<u64>,
        time_limit: TimeLimit,
        launch: Arc<LaunchSpec>,
    },
    /// `PrologFlags=Alloc`: run the node prolog of an `srun`/`salloc` allocation on its nodes
    /// at allocation (a batch job's other nodes are told along with its launch).
    AllocProlog { job: FedJobId, nodes: Vec<NodeIdx> },
    /// Start a step of a running job on its nodes.
    LaunchStep {
        job: FedJobId,
        step: u32,
        nodes: Vec<NodeIdx>,
        node_list: String,
        ntasks: u32,
        launch: Arc<LaunchSpec>,
    },
    /// Send `signal` to every process of the job (scancel -s, or SIGTERM before a kill).
    Signal {
        job: FedJobId,
        nodes: Vec<NodeIdx>,
        signal: i32,
    },
    /// Send `signal` to one part of the job: a step, or the batch shell alone.
    SignalPart {
        job: FedJobId,
        nodes: Vec<NodeIdx>,
        part: JobPart,
        signal: i32,
    },
    /// Kill whatever is left of the job (SIGKILL) and clean up (epilog).
    Terminate { job: FedJobId, nodes: Vec<NodeIdx> },
    /// Stop the job's processes (SIGSTOP of its process groups).
    Suspend { job: FedJobId, nodes: Vec<NodeIdx> },
    /// Continue the job's processes (SIGCONT).
    Resume { job: FedJobId, nodes: Vec<NodeIdx> },
}

/// A node event kind for accounting (`sacctmgr show event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeEventKind {
    /// The node went DOWN.
    Down,
    /// The node was drained (by an admin or an invalid registration).
    Drain,
    /// The node is usable again.
    Up,
    /// The node was powered down by power save (planned down in reports).
    PowerDown,
    /// The node is being powered up by power save.
    PowerUp,
}

/// A record for the accounting daemon, written to the durable outbox.
///
/// Job records carry `run`, the job's restart count when the run began: accounting keys a run
/// by (cluster, job id, run), so a requeued job's runs stay apart.
#[derive(Debug, Clone, PartialEq)]
pub enum AcctRecord {
    /// A job (or array task) was accepted, or queued again for run `run` after a requeue.
    JobSubmitted {
        job: FedJobId,
        array: Option<ArrayTask>,
        /// Its heterogeneous job and offset, for a component of one.
        het: Option<super::jobs::HetMember>,
        run: u32,
        name: String,
        uid: u32,
        gid: u32,
        partition: String,
        submit: SimTime,
        /// When this run became eligible (the submission, or the requeue).
        eligible: SimTime,
        time_limit: TimeLimit,
        min_nodes: u32,
        cpus: u32,
        /// `--mem` per node in MB (0 when not asked).
        mem_per_node_mb: u64,
        constraint: Option<String>,
        /// User name, account, working directory, comment.
        launch: Arc<LaunchSpec>,
    },
    /// A job started on nodes.
    JobStarted {
        job: FedJobId,
        run: u32,
        start: SimTime,
        node_list: String,
        node_count: u32,
        cpus: u32,
        /// Memory allocated over all its nodes, in MB.
        mem_mb: u64,
    },
    /// A running job's allocation changed at `at` (failure management replaced or dropped a
    /// node) to the one given: accounting ends the record of the allocation before it there
    /// (Slurm's RESIZING record) so usage counts each allocation for its own time.
    JobResized {
        job: FedJobId,
        run: u32,
        at: SimTime,
        node_list: String,
        node_count: u32,
        cpus: u32,
        /// Memory allocated over all its nodes, in MB.
        mem_mb: u64,
    },
    /// A job was suspended (`suspended`) or resumed.
    JobSuspended {
        job: FedJobId,
        run: u32,
        at: SimTime,
        suspended: bool,
    },
    /// A run of a job ended; `state` is `REQUEUED` when the job goes back to the queue.
    JobEnded {
        job: FedJobId,
        run: u32,
        end: SimTime,
        state: JobState,
        exit_code: i32,
        signal: i32,
        reason: JobReason,
        /// Who cancelled it (`CANCELLED` runs cancelled by a user or an administrator).
        requester_uid: Option<u32>,
    },
    /// A step of a job started (`end` is `None`) or ended. `step` is the step id, or Slurm's
    /// -4 for the batch step and -5 for the extern step.
    Step {
        job: FedJobId,
        run: u32,
        step: i32,
        name: String,
        start: SimTime,
        end: Option<SimTime>,
        state: JobState,
        exit_code: i32,
        signal: i32,
        node_list: String,
        node_count: u32,
        ntasks: u32,
        cpus: u32,
        /// What the step's tasks used, when the node daemons measured it.
        usage: Option<Box<StepUsage>>,
    },
    /// A node changed state.
    NodeEvent {
        node: String,
        at: SimTime,
        kind: NodeEventKind,
        reason: Option<String>,
        /// Who set the state (0 for the controller itself).
        reason_uid: u32,
        /// The node's configured CPUs.
        cpus: u32,
    },
    /// The cluster's configured size from `at` on (sent at start; the dbd ignores a repeat
    /// of the size in force). Usage reports count capacity from it.
    ClusterCapacity {
        at: SimTime,
        cpus: u64,
        mem_mb: u64,
        nodes: u32,
    },
}

impl AcctRecord {
    /// The capacity of a cluster whose nodes have `(configured CPUs, memory MB)`, at `at`.
    pub fn capacity(nodes: impl IntoIterator<Item = (u32, u64)>, at: SimTime) -> Self {
        let (mut cpus, mut mem_mb, mut count) = (0u64, 0u64, 0u32);
        for (c, m) in nodes {
            cpus += u64::from(c);
            mem_mb = mem_mb.saturating_add(m);
            count = count.saturating_add(1);
        }
        AcctRecord::ClusterCapacity {
            at,
            cpus,
            mem_mb,
            nodes: count,
        }
    }

    /// The submission record of `job`'s current run again after a change the history shows
    /// (time limit, name): eligible 0 tells the dbd to keep the eligible time it has.
    pub fn amended(job: &Job, partition: &str) -> Self {
        Self::submitted(job, partition, SimTime::from_secs(0))
    }

    /// The submission record of `job`'s current run in `partition`, eligible from `eligible`.
    pub fn submitted(job: &Job, partition: &str, eligible: SimTime) -> Self {
        AcctRecord::JobSubmitted {
            job: job.id,
            array: job.array,
            het: job.het,
            run: job.restarts,
            name: job.name.clone(),
            uid: job.uid,
            gid: job.gid,
            partition: partition.to_string(),
            submit: job.submit_time,
            eligible,
            time_limit: job.req.time_limit,
            min_nodes: job.req.min_nodes,
            cpus: job.req.min_cpus(),
            mem_per_node_mb: job.req.mem_per_node_mb,
            constraint: job.req.constraint.clone(),
            launch: job.launch.clone(),
        }
    }
}

/// What changed and should reach the controller store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveHint {
    /// A job's record changed.
    Job(FedJobId),
    /// A job left the core (purged after MinJobAge).
    JobPurged(FedJobId),
    /// A node's state changed.
    Node(NodeIdx),
    /// Partition states changed (`scontrol update PartitionName=... State=...`, or a
    /// reconfiguration putting back the configuration's).
    Partitions,
}

/// The core's port to the world.
pub trait Outbox {
    /// Sends a command to node daemons.
    fn node(&mut self, cmd: NodeCommand);
    /// Appends an accounting record to the accounting outbox.
    fn accounting(&mut self, rec: AcctRecord);
    /// Notes a state change to persist.
    fn save(&mut self, hint: SaveHint);
    /// Asks for a power save program to run. Outboxes that run no programs (benchmarks) may
    /// keep this default, which drops the request.
    fn power(&mut self, cmd: super::power::PowerCommand) {
        let _ = cmd;
    }
    /// Asks something of the accounting daemon's federation arbiter. Outboxes of clusters
    /// outside a federation (benchmarks) may keep this default, which drops the request.
    fn fed(&mut self, req: super::federation::FedRequest) {
        let _ = req;
    }
    /// Asks for a controller program (`EpilogSlurmctld`) to run. Outboxes that run no programs
    /// (benchmarks) may keep this default, which drops the request.
    fn script(&mut self, run: super::ctld_scripts::ScriptRun) {
        let _ = run;
    }
    /// Tells the subscribers of a job about a failure management event. Outboxes without
    /// subscribers (benchmarks) may keep this default, which drops the event.
    fn nonstop(&mut self, event: super::nonstop::NonstopEvent) {
        let _ = event;
    }
}

/// An outbox that keeps everything, for tests and benchmarks.
#[derive(Debug, Default, Clone)]
pub struct RecordingOutbox {
    /// Node commands, in order.
    pub node_cmds: Vec<NodeCommand>,
    /// Accounting records, in order.
    pub acct: Vec<AcctRecord>,
    /// State-save hints, in order.
    pub saves: Vec<SaveHint>,
    /// Power save programs asked for, in order.
    pub power_cmds: Vec<super::power::PowerCommand>,
    /// Requests for the federation arbiter, in order.
    pub fed_reqs: Vec<super::federation::FedRequest>,
    /// Controller programs asked for, in order.
    pub scripts: Vec<super::ctld_scripts::ScriptRun>,
    /// Failure management events, in order.
    pub nonstop_events: Vec<super::nonstop::NonstopEvent>,
}

impl RecordingOutbox {
    /// Returns what was recorded so far and starts afresh.
    pub fn take(&mut self) -> RecordingOutbox {
        std::mem::take(self)
    }

    /// The jobs launched, in order.
    pub fn launched(&self) -> Vec<FedJobId> {
        self.node_cmds
            .iter()
            .filter_map(|c| match c {
                NodeCommand::LaunchBatch { job, .. } => Some(*job),
                _ => None,
            })
            .collect()
    }
}

impl Outbox for RecordingOutbox {
    fn node(&mut self, cmd: NodeCommand) {
        self.node_cmds.push(cmd);
    }

    fn accounting(&mut self, rec: AcctRecord) {
        self.acct.push(rec);
    }

    fn save(&mut self, hint: SaveHint) {
        self.saves.push(hint);
    }

    fn power(&mut self, cmd: super::power::PowerCommand) {
        self.power_cmds.push(cmd);
    }

    fn fed(&mut self, req: super::federation::FedRequest) {
        self.fed_reqs.push(req);
    }

    fn script(&mut self, run: super::ctld_scripts::ScriptRun) {
        self.scripts.push(run);
    }

    fn nonstop(&mut self, event: super::nonstop::NonstopEvent) {
        self.nonstop_events.push(event);
    }
}
