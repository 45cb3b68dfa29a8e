//! Failure management (Slurm's `slurmctld/nonstop` plugin): hot spares, a running job's failed
//! and failing nodes, replacing and dropping them, user drains and time limit extensions.
//!
//! - A node of a job's allocation is *failed* when it is DOWN or not responding, *failing*
//!   when it is still up but drained (by an administrator, an invalid registration or a user
//!   of `UserDrainAllow`).
//! - [`spares`]: each partition named in `HotSpareCount=part:N` keeps `N` of its idle nodes
//!   out of ordinary jobs; which ones is recomputed from the idle nodes (the last ones in
//!   allocation order), so a node returned to service refills the pool by itself.
//! - [`ops`]: the requests of the `Nonstop` service (and `scontrol update State=DRAIN` by a
//!   user of `UserDrainAllow`), each checked for the job's owner or an administrator.
//! - A job submitted with `-k/--no-kill` survives one of its nodes failing
//!   ([`survives_node_failure`]): the steps on that node are killed, the job keeps the node in
//!   its allocation, as failed, until it is replaced or dropped.
//! - Every change of a watched job's nodes is an [`NonstopEvent`] through the [`Outbox`]; the
//!   runtime hands them to the subscribers of that job (`WatchJob`).
//!
//! What a job earned (replacements, drops, the wait for a spare) is kept per running job here,
//! not in the controller store: a restarted controller starts the counts afresh.

pub mod ops;
pub mod spares;

pub use ops::{
    on_drain_node, on_drop_node, on_extend_time, on_job_nodes, on_replace_node, on_user_drain,
};

use super::outbox::{NodeCommand, Outbox};
use super::signal::JobPart;
use super::{Core, SimTime};
use crate::conf::TimeLimit;
use sluice_vocab::nonstop_conf::NonstopConf;
use sluice_vocab::{FedJobId, JobState, NodeIdx};
use std::collections::{BTreeMap, HashMap};

/// How a node of a job's allocation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// In service.
    Ok,
    /// Out of service: DOWN or not responding.
    Failed,
    /// Still up but drained: expected to fail.
    Failing,
}

/// One node of a job's allocation as failure management shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonstopNode {
    /// The node's name.
    pub name: String,
    /// The job's CPUs on it.
    pub cpus: u32,
    /// How it stands.
    pub health: Health,
}

/// A job's allocation as failure management shows it (`NonstopAllocation` on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonstopView {
    /// The job.
    pub job: FedJobId,
    /// Its nodes as a compressed hostlist.
    pub node_list: String,
    /// Its nodes, in allocation order.
    pub nodes: Vec<NonstopNode>,
    /// `SLURM_JOB_CPUS_PER_NODE` form of the CPUs per node (`2(x2)`).
    pub cpus_per_node: String,
    /// Its time limit in minutes (0: unlimited).
    pub time_limit_min: u32,
    /// Minutes it may still extend its time limit by.
    pub extend_available_min: u32,
    /// Replacements it got so far.
    pub spares_used: u32,
    /// Hot spares free in its partition now.
    pub spares_free: u32,
}

/// What happened to a watched job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A node failed.
    Failed,
    /// A node is failing.
    Failing,
    /// A node was replaced.
    Replaced,
    /// A node left the allocation.
    Dropped,
    /// A node is back in service (still in the allocation).
    Recovered,
    /// The time limit was extended.
    TimeExtended,
    /// The job's run ended: the last event of its stream.
    JobEnded,
}

/// One event for the subscribers of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonstopEvent {
    /// What happened.
    pub kind: EventKind,
    /// The node concerned ("" for time extensions and the end).
    pub node: String,
    /// The node that replaced it (replacements only).
    pub replacement: Option<String>,
    /// When.
    pub at: SimTime,
    /// The allocation after the change.
    pub view: NonstopView,
}

/// What one running job earned and was told.
#[derive(Debug, Clone, Default)]
pub(crate) struct JobRecovery {
    /// Nodes replaced by spares.
    pub replaced: u32,
    /// Failed or failing nodes dropped.
    pub dropped: u32,
    /// A replacement failed for want of a spare: `TimeLimitDelay` is granted (once).
    pub delay_granted: bool,
    /// Minutes of extension already taken.
    pub extended_min: u32,
    /// The health of each node its subscribers last heard of (absent: in service).
    pub seen: BTreeMap<NodeIdx, Health>,
}

/// The failure management state of a controller with the plugin.
#[derive(Debug, Clone)]
pub struct NonstopState {
    /// `nonstop.conf`.
    pub(crate) conf: NonstopConf,
    /// Spares each partition keeps, by partition index.
    pub(crate) part_spares: Vec<u32>,
    /// Nodes ordinary jobs may take: every node but the current spares (rebuilt at each
    /// scheduling pass by [`spares::refresh`]).
    pub(crate) ordinary: fixedbitset::FixedBitSet,
    /// Per running job, what it earned (see [`JobRecovery`]).
    pub(crate) jobs: HashMap<FedJobId, JobRecovery>,
}

impl NonstopState {
    /// The state for `conf` over `core`'s partitions and nodes.
    pub(crate) fn new(conf: NonstopConf, core: &Core) -> Self {
        let part_spares = core.parts.iter().map(|p| conf.spares_of(&p.name)).collect();
        let mut ordinary = fixedbitset::FixedBitSet::with_capacity(core.nodes.nodes.len());
        ordinary.insert_range(..);
        Self {
            conf,
            part_spares,
            ordinary,
            jobs: HashMap::new(),
        }
    }

    /// `nonstop.conf` in force.
    pub fn conf(&self) -> &NonstopConf {
        &self.conf
    }
}

impl Core {
    /// The failure management state (`None` without `SlurmctldPlugin=slurmctld/nonstop`).
    pub fn nonstop(&self) -> Option<&NonstopState> {
        self.nonstop.as_ref()
    }
}

/// Installs failure management when the configuration asks for it (after the partitions and
/// nodes are built); keeps the jobs' records over a reconfiguration.
pub(crate) fn install(core: &mut Core) {
    let Some(conf) = core.conf.nonstop.clone() else {
        core.nonstop = None;
        return;
    };
    let jobs = core.nonstop.take().map(|s| s.jobs).unwrap_or_default();
    let mut state = NonstopState::new(conf, core);
    state.jobs = jobs;
    core.nonstop = Some(state);
    spares::refresh(core);
}

/// How much a failure-management note tells: `nonstop.conf`'s `Debug=N` logs the notes up to
/// detail `N` at info level (shown by the controller's default `SlurmctldDebug`); the others
/// keep their own level, shown only when the controller logs that much anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Detail {
    /// What changed a job: a node replaced or dropped, a drain, a time extension, a `--no-kill`
    /// job surviving a failure (`Debug=1`; otherwise at debug level).
    Action = 1,
    /// What a job's subscribers hear of its nodes' health, and requests refused for want of a
    /// spare (`Debug=2`; otherwise at debug level).
    Health = 2,
    /// The hot spare pools as recomputed (`Debug=3` and above; otherwise at trace level).
    Pool = 3,
}

/// The level a note of `detail` is logged at under `Debug=debug`.
pub(crate) fn level_of(debug: u8, detail: Detail) -> tracing::Level {
    if debug >= detail as u8 {
        tracing::Level::INFO
    } else if detail == Detail::Pool {
        tracing::Level::TRACE
    } else {
        tracing::Level::DEBUG
    }
}

/// Logs what failure management did, as `nonstop.conf`'s `Debug` asks (see [`Detail`]).
pub(crate) fn note(core: &Core, detail: Detail, what: std::fmt::Arguments<'_>) {
    let debug = core.nonstop.as_ref().map_or(0, |s| s.conf.debug);
    match level_of(debug, detail) {
        tracing::Level::INFO => tracing::info!(target: "sluice::nonstop", "{what}"),
        tracing::Level::DEBUG => tracing::debug!(target: "sluice::nonstop", "{what}"),
        _ => tracing::trace!(target: "sluice::nonstop", "{what}"),
    }
}

/// How node `i` stands for the jobs on it.
pub(crate) fn health(core: &Core, i: NodeIdx) -> Health {
    let n = core.nodes.get(i);
    if n.base == super::nodes::NodeBase::Down || n.not_responding {
        Health::Failed
    } else if n.drain || n.invalid {
        Health::Failing
    } else {
        Health::Ok
    }
}

/// Job `id`'s allocation as failure management shows it.
pub(crate) fn view(core: &Core, id: FedJobId) -> Option<NonstopView> {
    let job = core.jobs.map.get(&id)?;
    let (nodes, cpus) = match core.allocs.get(&id) {
        Some(a) => (a.nodes.clone(), a.cpus.clone()),
        None => (job.nodes.clone(), vec![0; job.nodes.len()]),
    };
    let rec = core.nonstop.as_ref().and_then(|s| s.jobs.get(&id));
    Some(NonstopView {
        job: id,
        node_list: core.nodes.hostlist(&nodes),
        nodes: nodes
            .iter()
            .zip(&cpus)
            .map(|(&n, &c)| NonstopNode {
                name: core.nodes.get(n).name.clone(),
                cpus: c,
                health: health(core, n),
            })
            .collect(),
        cpus_per_node: sluice_vocab::counts::run_length(&cpus),
        time_limit_min: match job.req.time_limit {
            TimeLimit::Minutes(m) => m,
            TimeLimit::Unlimited => 0,
        },
        extend_available_min: ops::extension_available(core, id),
        spares_used: rec.map_or(0, |r| r.replaced),
        spares_free: spares::free_in(core, job.partition).len() as u32,
    })
}

/// Sends `kind` about `node` of job `id` to its subscribers.
pub(crate) fn emit(
    core: &Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    kind: EventKind,
    node: &str,
    replacement: Option<String>,
) {
    if core.nonstop.is_none() {
        return;
    }
    if let Some(view) = view(core, id) {
        out.nonstop(NonstopEvent {
            kind,
            node: node.to_string(),
            replacement,
            at: now,
            view,
        });
    }
}

/// Node `i` changed state: tells the subscribers of each running job on it when the node's
/// health for that job changed (failed, failing, recovered).
pub(crate) fn node_changed(core: &mut Core, out: &mut impl Outbox, now: SimTime, i: NodeIdx) {
    if core.nonstop.is_none() {
        return;
    }
    let now_health = health(core, i);
    let jobs = core.nodes.get(i).jobs.clone();
    let name = core.nodes.get(i).name.clone();
    for id in jobs {
        let running = core
            .jobs
            .map
            .get(&id)
            .is_some_and(|j| matches!(j.state, JobState::Running | JobState::Suspended));
        let Some(state) = core.nonstop.as_mut() else {
            return;
        };
        if !running {
            continue;
        }
        let rec = state.jobs.entry(id).or_default();
        let before = rec.seen.get(&i).copied().unwrap_or(Health::Ok);
        if before == now_health {
            continue;
        }
        match now_health {
            Health::Ok => rec.seen.remove(&i),
            h => rec.seen.insert(i, h),
        };
        let kind = match now_health {
            Health::Ok => EventKind::Recovered,
            Health::Failed => EventKind::Failed,
            Health::Failing => EventKind::Failing,
        };
        note(
            core,
            Detail::Health,
            format_args!("job {id}: node {name} {kind:?}"),
        );
        emit(core, out, now, id, kind, &name, None);
    }
}

/// Job `id`'s run ended: its subscribers hear the end, and what it earned is forgotten.
pub(crate) fn job_ended(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    emit(core, out, now, id, EventKind::JobEnded, "", None);
    if let Some(state) = core.nonstop.as_mut() {
        state.jobs.remove(&id);
    }
}

/// Node `failed` of running job `id` failed: a `--no-kill` job survives it when it has other
/// nodes and the failed one does not run its batch script. Its steps using the node are
/// killed on their other nodes, and the node is told to kill what of the job it still runs; the
/// node stays in its allocation (failed). Returns whether
/// the job survives.
pub(crate) fn survives_node_failure(
    core: &mut Core,
    out: &mut impl Outbox,
    id: FedJobId,
    failed: NodeIdx,
) -> bool {
    let Some(job) = core.jobs.map.get(&id) else {
        return false;
    };
    let batch_host = job.runs_batch_script() && job.nodes.first() == Some(&failed);
    if !job.no_kill
        || job.state != JobState::Running
        || job.completing
        || job.nodes.len() < 2
        || batch_host
    {
        return false;
    }
    let steps: Vec<(u32, Vec<NodeIdx>)> = core
        .steps
        .get(&id)
        .into_iter()
        .flatten()
        .filter(|(_, hold)| hold.nodes.contains(&failed))
        .map(|(&s, hold)| (s, hold.nodes.clone()))
        .collect();
    for (step, nodes) in steps {
        let others: Vec<NodeIdx> = nodes.into_iter().filter(|&n| n != failed).collect();
        if !others.is_empty() {
            out.node(NodeCommand::SignalPart {
                job: id,
                nodes: others,
                part: JobPart::Step(step),
                signal: super::completion::SIGKILL,
            });
        }
    }
    // Whatever of the job still runs there (a node set DOWN by hand is alive) is killed, as
    // far as the node can still be reached.
    out.node(NodeCommand::Terminate {
        job: id,
        nodes: vec![failed],
    });
    let name = &core.nodes.get(failed).name;
    note(
        core,
        Detail::Action,
        format_args!("job {id}: node {name} failed, the --no-kill job keeps running"),
    );
    true
}

#[cfg(test)]
mod log_tests;
#[cfg(test)]
mod tests;
