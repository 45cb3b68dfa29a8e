//! Job steps inside a running job (`srun` in an allocation), as Slurm gives them out since
//! 20.11: each step takes CPUs of the job's allocation that no other step holds, unless it
//! overlaps (`--overlap`, sharing with every step). A step whose CPUs are taken is refused
//! busy (srun waits and asks again); one larger than the whole allocation is refused at
//! once. `--whole` (Slurm's step on whole nodes) holds every CPU the job has on each node
//! the step uses, so it only takes nodes no other step holds CPUs of; without it a step holds
//! exactly the CPUs its tasks need (Slurm's `--exact`). `-r/--relative n` leaves out the job's
//! first n nodes. A step's CPUs come back when it is done or when the job leaves its nodes. The batch
//! step (the script itself) holds nothing: Slurm's batch step overlaps.

use super::jobs::LaunchSpec;
use super::outbox::{NodeCommand, Outbox, SaveHint};
use super::{Caller, Core, SimTime};
use crate::error::CtldError;
use sluice_vocab::{FedJobId, JobState, NodeIdx};
use std::collections::BTreeMap;
use std::sync::Arc;

mod record;
mod snap;
pub(crate) use record::close_open_steps;
pub use record::{StepEnd, StepStart, on_step_done};
pub(crate) use snap::restore;
pub use snap::{OpenStepSnap, StepSnap};

/// `srun` inside a running job's allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRequest {
    /// The job.
    pub job: FedJobId,
    /// Tasks of the step (`-n`; default: the job's tasks, at least one per node asked).
    pub ntasks: Option<u32>,
    /// Fewest nodes (`-N min`; default 1, at most one node per task).
    pub min_nodes: Option<u32>,
    /// Most nodes (`-N min-max`; default every node of the job).
    pub max_nodes: Option<u32>,
    /// CPUs per task (`-c`, default 1).
    pub cpus_per_task: Option<u32>,
    /// Nodes the step must use (`-w`), by name.
    pub nodelist: Vec<String>,
    /// `--ntasks-per-node`: at most this many tasks on a node; without `-n`, this many on
    /// each of the step's nodes (`-N`, default every node of the job).
    pub ntasks_per_node: Option<u32>,
    /// `--overlap`: share CPUs with every other step (it holds none of its own).
    pub overlap: bool,
    /// `--whole`: hold every CPU of the job on the step's nodes.
    pub whole: bool,
    /// `-r/--relative`: the index (in the job's node order) of the step's first node.
    pub relative: Option<u32>,
    /// `-O/--overcommit`: any number of tasks on a node with one task's CPUs free; the step
    /// holds one task's CPUs on each of its nodes and its tasks share them.
    pub overcommit: bool,
    /// The step's name, for its accounting records.
    pub name: String,
    /// What the step runs.
    pub launch: LaunchSpec,
    /// A step across the components of a heterogeneous job (`srun --het-group=0,1`): the id
    /// its first component's step took, which this component's step takes too.
    pub het_step: Option<u32>,
}

/// The id of the step `req` asks for, taken from its job's counter. The components of a
/// heterogeneous job share the leader's counter (Slurm numbers a heterogeneous job's steps
/// once, `123+0.4` and `123+1.4` being one step); a component's part of a step across
/// components takes the id the first part took, which must be one the leader gave out and
/// not open in this component.
fn step_id(core: &mut Core, req: &StepRequest) -> Result<u32, CtldError> {
    let job = core.jobs.map.get(&req.job).ok_or(CtldError::InvalidJobId)?;
    let Some(het) = job.het else {
        return Ok(job.next_step);
    };
    let leader = core
        .jobs
        .map
        .get_mut(&het.leader)
        .ok_or(CtldError::InvalidJobId)?;
    match req.het_step {
        Some(s) if s < leader.next_step => {
            let open = core
                .jobs
                .map
                .get(&req.job)
                .is_some_and(|j| j.open_steps.contains_key(&s));
            if open {
                Err(CtldError::InvalidJobId)
            } else {
                Ok(s)
            }
        }
        Some(_) => Err(CtldError::InvalidJobId),
        None => {
            let s = leader.next_step;
            leader.next_step += 1;
            Ok(s)
        }
    }
}

impl StepRequest {
    /// A step of `job` with every option left to its default.
    pub fn new(job: FedJobId) -> Self {
        Self {
            job,
            ntasks: None,
            min_nodes: None,
            max_nodes: None,
            cpus_per_task: None,
            nodelist: Vec::new(),
            ntasks_per_node: None,
            overlap: false,
            whole: false,
            relative: None,
            overcommit: false,
            name: String::new(),
            launch: LaunchSpec::default(),
            het_step: None,
        }
    }
}

/// A step given out: where its tasks run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepGrant {
    /// Its step id.
    pub step: u32,
    /// Its nodes, in the job's node order.
    pub nodes: Vec<NodeIdx>,
    /// CPUs it uses on each of `nodes`.
    pub cpus: Vec<u32>,
    /// Tasks on each of `nodes` (block: consecutive ranks per node).
    pub tasks: Vec<u32>,
    /// CPUs per task.
    pub cpus_per_task: u32,
}

impl StepGrant {
    /// Tasks of the whole step.
    pub fn ntasks(&self) -> u32 {
        self.tasks.iter().sum()
    }
}

/// What one step holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepHold {
    /// Shares with every step: its CPUs are not counted.
    pub overlap: bool,
    /// Its nodes.
    pub nodes: Vec<NodeIdx>,
    /// CPUs on each of `nodes`.
    pub cpus: Vec<u32>,
}

/// The steps of one job that hold CPUs, by step id.
pub type JobSteps = BTreeMap<u32, StepHold>;

impl Core {
    /// The steps of `job` holding CPUs (none: no step holds any).
    pub fn job_steps(&self, job: FedJobId) -> Option<&JobSteps> {
        self.steps.get(&job)
    }
}

/// Creates a step in a running job at `now`: picks its nodes and CPUs from what the job's
/// other steps leave free, records its start (kept with the job until it is done) and asks its
/// nodes to launch it.
pub fn on_step_create(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    req: StepRequest,
) -> Result<StepGrant, CtldError> {
    let job = core.jobs.map.get(&req.job).ok_or(CtldError::InvalidJobId)?;
    super::lifecycle::authorize(caller, job)?;
    match (job.state, job.completing) {
        (JobState::Running, false) => {}
        (JobState::Pending, _) => return Err(CtldError::JobPending),
        (s, c) if c || s.is_finished() => return Err(CtldError::AlreadyDone),
        _ => return Err(CtldError::JobNotRunning),
    }
    // A batch script started on its batch host while its other nodes boot: steps wait.
    if super::power::boot::step_waits(core, req.job) {
        return Err(CtldError::NodesBusy);
    }
    let (alloc_nodes, alloc_cpus) = match core.allocs.get(&req.job) {
        Some(a) => (a.nodes.clone(), a.cpus.clone()),
        None => (job.nodes.clone(), core.cpus_held(req.job, &job.nodes)),
    };
    let ask = Ask::of(&req, job.req.ntasks, &alloc_nodes, core)?;
    let held = held_cpus(core.steps.get(&req.job), &alloc_nodes);
    let mut free: Vec<u32> = if req.overlap {
        alloc_cpus.clone()
    } else {
        alloc_cpus
            .iter()
            .zip(&held)
            .map(|(c, h)| c.saturating_sub(*h))
            .collect()
    };
    // A failed node a `--no-kill` job keeps until it is replaced or dropped runs no step.
    for (k, &n) in alloc_nodes.iter().enumerate() {
        if super::nonstop::health(core, n) == super::nonstop::Health::Failed {
            free[k] = 0;
        }
    }
    let first = match req.relative {
        Some(r) if r as usize >= alloc_nodes.len() => {
            return Err(CtldError::NodeConfigUnavailable);
        }
        Some(r) => r as usize,
        None => 0,
    };
    // Leaves out the nodes before -r's and, now (`busy`), those --whole cannot have whole.
    let usable = |mut cpus: Vec<u32>, now: bool| {
        for (k, c) in cpus.iter_mut().enumerate() {
            let partly_held = now && req.whole && !req.overlap && held[k] > 0;
            if k < first || partly_held {
                *c = 0;
            }
        }
        cpus
    };
    let tasks = match ask.fit(&usable(free, true)) {
        Some(t) => t,
        None if ask.fit(&usable(alloc_cpus.clone(), false)).is_some() => {
            return Err(CtldError::NodesBusy);
        }
        None => return Err(CtldError::TooManyProcessors),
    };
    let step = step_id(core, &req)?;
    let job = core
        .jobs
        .map
        .get_mut(&req.job)
        .ok_or(CtldError::InvalidJobId)?;
    job.next_step = job.next_step.max(step + 1);
    let mut grant = StepGrant {
        step,
        nodes: Vec::new(),
        cpus: Vec::new(),
        tasks: Vec::new(),
        cpus_per_task: ask.cpus_per_task,
    };
    for (k, &n) in tasks.iter().enumerate() {
        if n > 0 {
            grant.nodes.push(alloc_nodes[k]);
            grant.tasks.push(n);
            grant.cpus.push(if req.whole {
                alloc_cpus[k]
            } else if req.overcommit {
                ask.cpus_per_task
            } else {
                n * ask.cpus_per_task
            });
        }
    }
    core.steps.entry(req.job).or_default().insert(
        step,
        StepHold {
            overlap: req.overlap,
            nodes: grant.nodes.clone(),
            cpus: grant.cpus.clone(),
        },
    );
    let node_list = core.nodes.hostlist(&grant.nodes);
    let start = StepStart {
        name: req.name,
        start: now,
        node_list: node_list.clone(),
        node_count: grant.nodes.len() as u32,
        ntasks: grant.ntasks(),
        cpus: grant.cpus.iter().sum(),
    };
    record::started(core, out, req.job, step, start);
    out.node(NodeCommand::LaunchStep {
        job: req.job,
        step,
        nodes: grant.nodes.clone(),
        node_list,
        ntasks: grant.ntasks(),
        launch: Arc::new(req.launch),
    });
    Ok(grant)
}

/// Frees the CPUs `step` of `job` holds for the job's other steps.
fn release(core: &mut Core, out: &mut impl Outbox, job: FedJobId, step: u32) {
    let Some(steps) = core.steps.get_mut(&job) else {
        return;
    };
    if steps.remove(&step).is_some() {
        out.save(SaveHint::Job(job));
    }
    if steps.is_empty() {
        core.steps.remove(&job);
    }
}

/// CPUs the job's non-overlapping steps hold on each of `nodes`.
fn held_cpus(steps: Option<&JobSteps>, nodes: &[NodeIdx]) -> Vec<u32> {
    let mut held = vec![0; nodes.len()];
    for hold in steps.into_iter().flat_map(|s| s.values()) {
        if hold.overlap {
            continue;
        }
        for (n, c) in hold.nodes.iter().zip(&hold.cpus) {
            if let Some(k) = nodes.iter().position(|x| x == n) {
                held[k] += c;
            }
        }
    }
    held
}

/// A step request checked against the job's nodes.
#[derive(Debug)]
struct Ask {
    ntasks: u32,
    cpus_per_task: u32,
    min_nodes: usize,
    max_nodes: usize,
    /// Most tasks on one node (`--ntasks-per-node`).
    per_node: u32,
    /// Indexes (in the job's node order) of the nodes it must use.
    required: Vec<usize>,
    /// `-O`: a node with one task's CPUs free takes any number of tasks.
    overcommit: bool,
}

impl Ask {
    fn of(
        req: &StepRequest,
        job_ntasks: u32,
        alloc: &[NodeIdx],
        core: &Core,
    ) -> Result<Self, CtldError> {
        let cpus_per_task = req.cpus_per_task.unwrap_or(1);
        if cpus_per_task == 0 {
            return Err(CtldError::InvalidCpuCount);
        }
        let mut required = Vec::new();
        for name in &req.nodelist {
            let idx = core
                .nodes
                .by_name
                .get(name.as_str())
                .ok_or_else(|| CtldError::InvalidNodeName { name: name.clone() })?;
            let k = alloc
                .iter()
                .position(|n| n == idx)
                .ok_or(CtldError::NodeConfigUnavailable)?;
            if !required.contains(&k) {
                required.push(k);
            }
        }
        let asked_min = req.min_nodes.unwrap_or(1).max(1) as usize;
        let per_node = req.ntasks_per_node.unwrap_or(u32::MAX).max(1);
        let ntasks = match (req.ntasks, req.ntasks_per_node) {
            (Some(n), _) => n,
            (None, Some(p)) => {
                let nodes = req.min_nodes.map_or(alloc.len() as u32, |n| n.max(1));
                p.max(1).saturating_mul(nodes)
            }
            (None, None) => job_ntasks.max(asked_min.max(required.len()) as u32),
        };
        if ntasks == 0 {
            return Err(CtldError::InvalidTaskCount);
        }
        // Slurm runs fewer nodes than asked rather than nodes without a task.
        let min_nodes = asked_min.min(ntasks as usize).max(required.len());
        let max_nodes = req
            .max_nodes
            .map_or(alloc.len(), |m| (m as usize).max(min_nodes));
        if min_nodes > alloc.len() || required.len() > ntasks as usize {
            return Err(CtldError::NodeConfigUnavailable);
        }
        Ok(Self {
            ntasks,
            cpus_per_task,
            min_nodes,
            max_nodes: max_nodes.min(alloc.len()),
            per_node,
            required,
            overcommit: req.overcommit,
        })
    }

    /// Tasks per node of the job (0 = not in the step) when `free` CPUs per node can run the
    /// step: the nodes it must use, then the first nodes with room, as few as the tasks need
    /// and at least `min_nodes`; one task on each, then filled in node order.
    fn fit(&self, free: &[u32]) -> Option<Vec<u32>> {
        let room: Vec<u32> = free
            .iter()
            .map(|f| match f / self.cpus_per_task {
                0 => 0,
                _ if self.overcommit => self.per_node.min(self.ntasks),
                n => n.min(self.per_node),
            })
            .collect();
        let mut chosen = self.required.clone();
        if chosen.iter().any(|&k| room[k] == 0) {
            return None;
        }
        let capacity = |chosen: &[usize]| {
            chosen
                .iter()
                .fold(0u32, |sum, &k| sum.saturating_add(room[k]))
        };
        for (k, &r) in room.iter().enumerate() {
            let enough = chosen.len() >= self.min_nodes && capacity(&chosen) >= self.ntasks;
            if enough || chosen.len() >= self.max_nodes {
                break;
            }
            if r > 0 && !chosen.contains(&k) {
                chosen.push(k);
            }
        }
        if chosen.len() < self.min_nodes || capacity(&chosen) < self.ntasks {
            return None;
        }
        chosen.sort_unstable();
        let mut tasks = vec![0; room.len()];
        for &k in &chosen {
            tasks[k] = 1;
        }
        let mut left = self.ntasks - chosen.len() as u32;
        if self.overcommit {
            // Overcommitted tasks are not bound by CPUs: dealt evenly, in block order.
            let (each, extra) = (left / chosen.len() as u32, left % chosen.len() as u32);
            for (i, &k) in chosen.iter().enumerate() {
                tasks[k] += (each + u32::from((i as u32) < extra)).min(room[k] - 1);
            }
            return Some(tasks);
        }
        for &k in &chosen {
            let more = left.min(room[k] - 1);
            tasks[k] += more;
            left -= more;
        }
        Some(tasks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(ntasks: u32, min: usize, max: usize, required: Vec<usize>) -> Ask {
        Ask {
            ntasks,
            cpus_per_task: 1,
            min_nodes: min,
            max_nodes: max,
            per_node: u32::MAX,
            required,
            overcommit: false,
        }
    }

    #[test]
    fn overcommitted_tasks_share_one_tasks_cpus() {
        let mut a = ask(8, 1, 2, vec![]);
        assert_eq!(a.fit(&[1, 1]), None, "eight tasks, two CPUs");
        a.overcommit = true;
        assert_eq!(a.fit(&[1, 1]), Some(vec![8, 0]));
        a.min_nodes = 2;
        assert_eq!(a.fit(&[1, 1]), Some(vec![4, 4]));
        a.ntasks = 5;
        assert_eq!(a.fit(&[1, 1]), Some(vec![3, 2]));
        assert_eq!(a.fit(&[0, 1]), None, "a node without a task's CPUs");
    }

    #[test]
    fn fewest_nodes_first_fill_in_order() {
        assert_eq!(ask(3, 1, 2, vec![]).fit(&[4, 4]), Some(vec![3, 0]));
        assert_eq!(ask(3, 2, 2, vec![]).fit(&[2, 2]), Some(vec![2, 1]));
        assert_eq!(ask(4, 1, 2, vec![]).fit(&[1, 3]), Some(vec![1, 3]));
        assert_eq!(ask(2, 1, 2, vec![]).fit(&[0, 2]), Some(vec![0, 2]));
        assert_eq!(ask(3, 1, 1, vec![]).fit(&[2, 2]), None);
    }

    #[test]
    fn required_nodes_come_first() {
        assert_eq!(ask(1, 1, 2, vec![1]).fit(&[2, 2]), Some(vec![0, 1]));
        assert_eq!(ask(3, 1, 2, vec![1]).fit(&[2, 2]), Some(vec![2, 1]));
        assert_eq!(ask(1, 1, 2, vec![1]).fit(&[2, 0]), None);
    }

    #[test]
    fn ntasks_per_node_caps_each_node() {
        let mut a = ask(4, 1, 2, vec![]);
        a.per_node = 2;
        assert_eq!(a.fit(&[4, 4]), Some(vec![2, 2]));
        assert_eq!(a.fit(&[4, 1]), None);
    }

    #[test]
    fn cpus_per_task_divide_the_room() {
        let mut a = ask(2, 1, 2, vec![]);
        a.cpus_per_task = 2;
        assert_eq!(a.fit(&[3, 2]), Some(vec![1, 1]));
        assert_eq!(a.fit(&[3, 1]), None);
    }
}
