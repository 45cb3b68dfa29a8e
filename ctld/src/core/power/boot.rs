//! Jobs allocated nodes that must boot first: they wait in CONFIGURING until every node
//! registered, then their start time is reset (the time limit counts from then). A batch
//! script starts as soon as its batch host is up (Slurm's default), or only once every node
//! is with `--wait-all-nodes=1`, `SchedulerParameters=sbatch_wait_nodes` or cloud nodes
//! booting for it; srun and salloc allocations are granted once every node is up. Also what the ResumeProgram learns of them:
//! the `SLURM_RESUME_FILE` JSON.

use super::super::completion::release_nodes;
use super::super::jobs::Job;
use super::super::kill::finish_completing;
use super::super::nodes::NodeBase;
use super::super::outbox::{AcctRecord, NodeCommand, Outbox, SaveHint};
use super::super::{Core, SimTime};
use super::{Configuring, PowerStatus};
use serde::Serialize;
use sluice_vocab::{FedJobId, JobState, NodeIdx};

/// The `SLURM_RESUME_FILE` JSON: every node resumed by one ResumeProgram run, and for each job
/// that needed some of them, its allocation and the nodes resumed for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResumeFile {
    /// The program's hostlist argument.
    pub all_nodes_resume: String,
    /// The jobs waiting for these nodes.
    pub jobs: Vec<ResumeJob>,
}

/// One job of a [`ResumeFile`] (keys in Slurm's order, which is alphabetical).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResumeJob {
    /// `--extra` (Sluice has none: `null`).
    pub extra: Option<String>,
    /// `--constraint`, or `null`.
    pub features: Option<String>,
    /// The job id.
    pub job_id: u32,
    /// Every node of its allocation.
    pub nodes_alloc: String,
    /// Its nodes resumed by this run.
    pub nodes_resume: String,
    /// squeue's OVER_SUBSCRIBE value: `NO` (it may not share), `YES` (it may) or `OK` (see
    /// [`crate::core::alloc::shown`]).
    pub oversubscribe: String,
    /// Its partition.
    pub partition: String,
    /// Its reservation (Sluice has none: `null`).
    pub reservation: Option<String>,
}

impl ResumeFile {
    /// The compact JSON the program reads.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}

/// `start_job` assigned `nodes` to job `id`: powered-down nodes are queued for resume, and
/// when any node must boot first the job is CONFIGURING (its launch will be held).
pub(crate) fn allocate(core: &mut Core, id: FedJobId, nodes: &[NodeIdx]) {
    let Some((part, run)) = core
        .jobs
        .map
        .get(&id)
        .map(|j| (j.partition.get(), j.restarts))
    else {
        return;
    };
    let down_on_idle = core
        .power
        .settings
        .down_on_idle
        .get(part)
        .copied()
        .unwrap_or(false);
    let (mut boot, mut cloud_boot) = (false, false);
    for &n in nodes {
        let p = &mut core.nodes.get_mut(n).power;
        p.busy = true;
        p.down_on_idle = down_on_idle;
        match p.status {
            PowerStatus::Off => {
                p.status = PowerStatus::ResumeQueued;
                boot = true;
                cloud_boot |= p.cloud;
            }
            PowerStatus::ResumeQueued | PowerStatus::PoweringUp { .. } => {
                boot = true;
                cloud_boot |= p.cloud;
            }
            PowerStatus::On | PowerStatus::PoweringDown { .. } => {}
        }
        core.nodes.refresh(n);
    }
    if boot {
        core.power.configuring.insert(
            id,
            Configuring {
                run,
                launch: None,
                prolog_running: false,
                node_prologs: Default::default(),
                prologs_asked: false,
                launched: false,
                cloud_boot,
            },
        );
    } else {
        core.power.configuring.remove(&id);
    }
}

/// Sends a job's batch launch, or holds it while the job is CONFIGURING.
pub(crate) fn send_or_hold(power: &mut super::PowerState, out: &mut impl Outbox, cmd: NodeCommand) {
    let job = match &cmd {
        NodeCommand::LaunchBatch { job, .. } => *job,
        _ => {
            out.node(cmd);
            return;
        }
    };
    match power.configuring.get_mut(&job) {
        Some(c) => c.launch = Some(cmd),
        None => out.node(cmd),
    }
}

/// A CONFIGURING job is being killed: unless its script was launched already (its batch
/// host will report the end), nothing runs, so its nodes are free at once.
pub(crate) fn forget(core: &mut Core, now: SimTime, id: FedJobId) {
    if core
        .power
        .configuring
        .remove(&id)
        .is_some_and(|c| !c.launched)
    {
        release_nodes(core, id);
        finish_completing(core, id, now);
    }
}

/// Whether `job` waits for every node of its allocation to be up before its batch script
/// starts (or, for an allocation, before it is granted): a job given cloud nodes that boot
/// for it always (see [`Configuring::cloud_boot`]); else as it asked (`--wait-all-nodes`;
/// srun always asks), else as `SchedulerParameters` says (`sbatch_wait_nodes`,
/// `salloc_wait_nodes`). Otherwise, as in Slurm, a script starts once its batch host is up
/// and salloc's allocation is granted at once (its steps wait for the nodes).
pub(crate) fn waits_all_nodes(core: &Core, job: &Job) -> bool {
    let sched = &core.conf.sched;
    let default = if job.launch.interactive {
        sched.salloc_wait_nodes
    } else {
        sched.sbatch_wait_nodes
    };
    core.power
        .configuring
        .get(&job.id)
        .is_some_and(|c| c.cloud_boot)
        || job.req.place.wait_all_nodes.unwrap_or(default)
}

/// Whether CONFIGURING allocation `id` (srun's, salloc's) may be granted before its nodes
/// are up: it need not wait for them ([`waits_all_nodes`]) and no prolog holds it.
pub(crate) fn granted_early(core: &Core, id: FedJobId) -> bool {
    let (Some(job), Some(c)) = (core.jobs.map.get(&id), core.power.configuring.get(&id)) else {
        return false;
    };
    job.launch.interactive
        && !c.prolog_running
        && c.node_prologs.is_empty()
        && !waits_all_nodes(core, job)
}

/// Whether node `n` is powered up and registered.
fn node_up(core: &Core, n: NodeIdx) -> bool {
    let node = core.nodes.get(n);
    node.power.status == PowerStatus::On && node.base == NodeBase::Up
}

/// Whether a step of CONFIGURING job `id` must wait: some of its nodes are not up yet (its
/// script may run already, on its batch host).
pub(crate) fn step_waits(core: &Core, id: FedJobId) -> bool {
    core.power.configuring.contains_key(&id)
        && core
            .jobs
            .map
            .get(&id)
            .is_some_and(|j| !j.nodes.iter().all(|&n| node_up(core, n)))
}

/// Sends the held launch of CONFIGURING job `id` when it need not wait for every node: its
/// batch host is up and no prolog holds it. The job stays CONFIGURING until every node is.
pub(crate) fn launch_early(core: &mut Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let host_up = job.nodes.first().is_some_and(|&n| node_up(core, n));
    if !host_up || waits_all_nodes(core, job) {
        return;
    }
    let Some(c) = core.power.configuring.get_mut(&id) else {
        return;
    };
    if c.prolog_running || !c.node_prologs.is_empty() {
        return;
    }
    if let Some(cmd) = c.launch.take() {
        c.launched = true;
        out.node(cmd);
        out.save(SaveHint::Job(id));
    }
}

/// Node `i` registered: it is powered up (whatever it was doing), and jobs whose nodes are
/// now all up launch.
pub(crate) fn on_registered(core: &mut Core, out: &mut impl Outbox, now: SimTime, i: NodeIdx) {
    let node = core.nodes.get_mut(i);
    match node.power.status {
        PowerStatus::PoweringDown { .. } => return,
        PowerStatus::On => {
            if node.power.last_busy.is_none() {
                node.power.last_busy = Some(now);
            }
        }
        PowerStatus::Off | PowerStatus::ResumeQueued | PowerStatus::PoweringUp { .. } => {
            node.power.status = PowerStatus::On;
            node.power.last_busy = Some(now);
            core.nodes.refresh(i);
            out.save(SaveHint::Node(i));
        }
    }
    release_ready(core, out, now);
}

/// Launches the CONFIGURING jobs whose nodes are all up (and whose `PrologSlurmctld` and
/// allocation prologs succeeded), asks nodes now up for the allocation prologs a job waits
/// for; drops entries of runs that ended.
pub(crate) fn release_ready(core: &mut Core, out: &mut impl Outbox, now: SimTime) {
    if core.power.configuring.is_empty() {
        return;
    }
    let early: Vec<FedJobId> = core
        .power
        .configuring
        .iter()
        .filter(|(_, c)| c.launch.is_some())
        .map(|(&id, _)| id)
        .collect();
    for id in early {
        launch_early(core, out, id);
    }
    let mut ready = Vec::new();
    let mut stale = Vec::new();
    let mut ask = Vec::new();
    for (&id, c) in &core.power.configuring {
        let Some(job) = core.jobs.map.get(&id) else {
            stale.push(id);
            continue;
        };
        if job.state != JobState::Running || job.completing || job.restarts != c.run {
            stale.push(id);
            continue;
        }
        let up = job.nodes.iter().all(|&n| node_up(core, n));
        if up && !c.prolog_running && c.node_prologs.is_empty() {
            ready.push(id);
        } else if up && !c.prologs_asked && !c.node_prologs.is_empty() {
            ask.push(id);
        }
    }
    for id in stale {
        core.power.configuring.remove(&id);
    }
    for id in ask {
        if let Some(c) = core.power.configuring.get_mut(&id) {
            crate::core::alloc_prologs::ask_when_up(c, out, id);
        }
    }
    for id in ready {
        let Some(c) = core.power.configuring.remove(&id) else {
            continue;
        };
        if let Some(job) = core.jobs.map.get_mut(&id) {
            job.start_time = Some(now);
            job.signal_sent = false;
        }
        // Accounting learns the real start: the run began when the nodes were up.
        if let Some(rec) = started_record(core, id, now) {
            out.accounting(rec);
        }
        out.save(SaveHint::Job(id));
        if let Some(cmd) = c.launch {
            out.node(cmd);
        }
    }
}

/// The accounting start record of `id`'s current run, starting `now`.
fn started_record(core: &Core, id: FedJobId, now: SimTime) -> Option<AcctRecord> {
    let job = core.jobs.map.get(&id)?;
    let node_mem: u64 = job
        .nodes
        .iter()
        .map(|&n| core.nodes.get(n).real_memory_mb)
        .sum();
    let cpus: u32 = core.allocs.get(&id).map_or_else(
        || job.nodes.iter().map(|&n| core.nodes.get(n).cpus).sum(),
        |a| a.total_cpus(),
    );
    Some(AcctRecord::JobStarted {
        job: id,
        run: job.restarts,
        start: now,
        node_list: core.nodes.hostlist(&job.nodes),
        node_count: job.nodes.len() as u32,
        cpus,
        mem_mb: job
            .req
            .mem_charged_mb(job.nodes.len(), u64::from(cpus), node_mem),
    })
}

/// The resume-file entry of job `id` resuming `resumed` this pass.
pub(crate) fn resume_job(core: &Core, id: FedJobId, resumed: &[NodeIdx]) -> Option<ResumeJob> {
    let job = core.jobs.map.get(&id)?;
    let part = core.parts.get(job.partition.get())?;
    Some(ResumeJob {
        extra: None,
        features: job.req.constraint.clone(),
        job_id: id.get(),
        nodes_alloc: core.nodes.hostlist(&job.nodes),
        nodes_resume: core.nodes.hostlist(resumed),
        oversubscribe: core.oversubscribe_shown(job).to_string(),
        partition: part.name.clone(),
        reservation: None,
    })
}
