//! The power state of a node as the controller store saves it, and the CONFIGURING jobs
//! rebuilt after a restart (their held launches are not saved: they are made again).

use super::super::nodes::Node;
use super::super::outbox::NodeCommand;
use super::super::{Core, SimTime};
use super::{Configuring, PowerStatus};
use crate::core::snapshot::JobSnap;
use serde::{Deserialize, Serialize};
use sluice_vocab::{FedJobId, JobState, NodeIdx};
use std::collections::{BTreeMap, BTreeSet};

/// A node's saved power state (absent in older saves: the configured state applies).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerSnap {
    /// `on`, `off`, `resume_queued`, `powering_up` or `powering_down`.
    pub status: String,
    /// When powering up or down began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// A power down was asked (`!`).
    #[serde(default)]
    pub down_requested: bool,
    /// LastBusyTime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_busy: Option<u64>,
    /// `NodeHostName` set by `scontrol update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// `NodeAddr` set by `scontrol update` (kept across restarts, as Slurm does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
}

impl PowerSnap {
    /// The saved form of `node`'s power state.
    pub fn of(node: &Node) -> Self {
        let p = &node.power;
        let (status, since) = match p.status {
            PowerStatus::On => ("on", None),
            PowerStatus::Off => ("off", None),
            PowerStatus::ResumeQueued => ("resume_queued", None),
            PowerStatus::PoweringUp { since } => ("powering_up", Some(since.secs())),
            PowerStatus::PoweringDown { since } => ("powering_down", Some(since.secs())),
        };
        Self {
            status: status.to_string(),
            since,
            down_requested: p.down_requested,
            last_busy: p.last_busy.map(SimTime::secs),
            hostname: p.hostname.clone(),
            addr: (node.addr != node.name).then(|| node.addr.clone()),
        }
    }

    /// Puts the saved state back on `node` (an unknown status leaves the configured one).
    pub fn apply(&self, node: &mut Node) {
        let since = SimTime::from_secs(self.since.unwrap_or(0));
        let status = match self.status.as_str() {
            "on" => PowerStatus::On,
            "off" => PowerStatus::Off,
            "resume_queued" => PowerStatus::ResumeQueued,
            "powering_up" => PowerStatus::PoweringUp { since },
            "powering_down" => PowerStatus::PoweringDown { since },
            _ => return,
        };
        node.power.status = status;
        node.power.down_requested = self.down_requested;
        node.power.last_busy = self.last_busy.map(SimTime::from_secs);
        node.power.hostname = self.hostname.clone();
        if let Some(a) = &self.addr {
            node.addr = a.clone();
        }
    }
}

/// What the CONFIGURING jobs of a restored snapshot were waiting for.
#[derive(Debug, Default)]
pub(crate) struct Waits {
    /// Jobs whose `PrologSlurmctld` was running.
    prolog: BTreeSet<FedJobId>,
    /// `PrologFlags=Alloc`: per job, the nodes whose prolog had not reported success.
    node_prologs: BTreeMap<FedJobId, BTreeSet<NodeIdx>>,
    /// Jobs whose batch script was launched before every node was up.
    launched: BTreeSet<FedJobId>,
    /// Jobs whose script waits for every node as cloud nodes boot for them.
    cloud_boot: BTreeSet<FedJobId>,
}

impl Waits {
    /// Notes what job `id`, restored from `s`, waited for (a node no longer configured is
    /// not waited for).
    pub fn note(&mut self, core: &Core, id: FedJobId, s: &JobSnap) {
        if s.prolog_slurmctld {
            self.prolog.insert(id);
        }
        if s.launched_early {
            self.launched.insert(id);
        }
        if s.cloud_boot {
            self.cloud_boot.insert(id);
        }
        let nodes: BTreeSet<NodeIdx> = s
            .alloc_prologs
            .iter()
            .filter_map(|n| core.nodes.lookup(n).ok())
            .collect();
        if !nodes.is_empty() {
            self.node_prologs.insert(id, nodes);
        }
    }
}

/// After a restore: running jobs with a node not yet up, whose `PrologSlurmctld` was running
/// or whose nodes' `PrologFlags=Alloc` prologs had not all succeeded are CONFIGURING again,
/// their batch launch rebuilt and held (unless it was sent already: a script that does not
/// wait for every node, its batch host up and no prolog holding it); those `PrologSlurmctld` run again from the next tick,
/// and the nodes are asked again for their prologs once up (a node whose prolog ran already
/// reports it again rather than running it twice).
pub(crate) fn restore_configuring(core: &mut Core, waits: &Waits) {
    let mut found = Vec::new();
    for &id in &core.jobs.active {
        let Some(job) = core.jobs.map.get(&id) else {
            continue;
        };
        let node_prologs = waits.node_prologs.get(&id).cloned().unwrap_or_default();
        let waiting = job
            .nodes
            .iter()
            .any(|&n| core.nodes.get(n).power.status != PowerStatus::On)
            || waits.prolog.contains(&id)
            || !node_prologs.is_empty();
        if job.state != JobState::Running || job.completing || !waiting {
            continue;
        }
        // A script launched before every node was up runs (or ran) on its batch host: it is
        // not launched again.
        let launched = waits.launched.contains(&id);
        let cloud_boot = waits.cloud_boot.contains(&id);
        let launch = (job.runs_batch_script() && !launched).then(|| NodeCommand::LaunchBatch {
            job: id,
            array: job.array,
            uid: job.uid,
            gid: job.gid,
            nodes: job.nodes.clone(),
            node_list: core.nodes.hostlist(&job.nodes),
            ntasks: job.req.ntasks,
            cpus_per_task: job.req.cpus_per_task,
            mem_per_node_mb: (job.req.mem_per_node_mb > 0).then_some(job.req.mem_per_node_mb),
            time_limit: job.req.time_limit,
            launch: job.launch.clone(),
        });
        found.push((
            id,
            Configuring {
                run: job.restarts,
                launch,
                prolog_running: waits.prolog.contains(&id),
                node_prologs,
                prologs_asked: false,
                launched,
                cloud_boot,
            },
        ));
    }
    core.power.prolog_restart = found
        .iter()
        .filter(|(_, c)| c.prolog_running)
        .map(|&(id, _)| id)
        .collect();
    for &(id, _) in &found {
        if let Some(job) = core.jobs.map.get(&id) {
            for &n in &job.nodes.clone() {
                core.nodes.get_mut(n).power.busy = true;
            }
        }
    }
    core.power.configuring.extend(found);
}
