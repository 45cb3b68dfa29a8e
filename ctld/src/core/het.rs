//! Heterogeneous jobs (`sbatch A : B`, `#SBATCH hetjob`, `salloc A : B`): one submission of
//! several components, each a job of its own with its own resources, ids following the
//! leader's (the leader's id is the heterogeneous job's id, `HetJobId`).
//!
//! What binds the components, as in Slurm 22.05:
//! - They start together or not at all ([`try_start`]): every component is placed before any
//!   starts, each on nodes no other component of the job takes (Slurm's backfill plans each
//!   component on whole nodes, so two components never share a node).
//! - Only the leader is considered by a scheduling pass; it waits while any component may not
//!   start (held, dependency, ...), and the followers show the leader's reason.
//! - The leader runs the batch script on its first node; when the script ends, every component
//!   ends with it ([`end_followers`]). Cancelling, requeueing or killing the leader does the
//!   same to every running component ([`kill_followers`]), and a failed node of any component
//!   requeues (or ends as NODE_FAIL) the whole job.
//! - A follower's own time limit ends that component alone (TIMEOUT), and `scancel` of a
//!   running follower by its own id cancels it alone; a pending follower can not be cancelled
//!   alone (`ESLURM_NOT_WHOLE_HET_JOB`).
//! - Heterogeneous jobs are never arrays and never federated: they run on the cluster that
//!   took them.

use super::jobs::{HetMember, JobReason};
use super::outbox::{NodeCommand, Outbox};
use super::request::{SubmitReply, SubmitRequest};
use super::sched::{Start, count_started, ineligible, start_maps};
use super::submit::{build, next_free_id, record_new};
use super::{Core, SimTime, alloc, completion, gang, kill};
use crate::conf::TimeLimit;
use crate::error::CtldError;
use fixedbitset::FixedBitSet;
use sluice_vocab::{FedJobId, JobState};
use std::sync::Arc;

/// Validates every component and queues them all, or none. Component 0 is the leader; the
/// others get the ids that follow. A component asking for an array is refused as Slurm
/// refuses it (`Invalid job array specification`).
pub fn on_submit_het(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    reqs: Vec<SubmitRequest>,
) -> Result<SubmitReply, CtldError> {
    if let Some(spec) = reqs.iter().find_map(|r| r.array.clone()) {
        return Err(CtldError::InvalidArray { spec });
    }
    let mut jobs = Vec::with_capacity(reqs.len());
    for req in reqs {
        jobs.push(build(core, now, req, None)?.0);
    }
    if jobs.is_empty() {
        return Err(CtldError::InvalidJobId);
    }
    if core.jobs.map.len() + jobs.len() > core.cfg.max_job_count as usize {
        return Err(CtldError::MaxJobCount {
            limit: core.cfg.max_job_count,
        });
    }
    if core.ids.remaining() < jobs.len() as u64 {
        return Err(CtldError::JobIdsExhausted);
    }
    let ids = jobs
        .iter()
        .map(|_| next_free_id(core))
        .collect::<Result<Vec<FedJobId>, CtldError>>()?;
    let leader = ids[0];
    for (offset, (mut job, &id)) in jobs.into_iter().zip(&ids).enumerate() {
        job.id = id;
        job.het = Some(HetMember {
            leader,
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
        });
        if offset > 0 {
            // The script is the leader's alone.
            let launch = Arc::make_mut(&mut job.launch);
            launch.script.clear();
            launch.script_args.clear();
        }
        record_new(core, out, job);
    }
    core.jobs.hets.insert(leader, ids.clone());
    Ok(SubmitReply {
        job_id: leader,
        jobs: ids,
    })
}

/// The components of the heterogeneous job led by `leader`, in offset order (empty when
/// `leader` leads none).
pub(crate) fn components(core: &Core, leader: FedJobId) -> Vec<FedJobId> {
    core.jobs.hets.get(&leader).cloned().unwrap_or_default()
}

/// The followers (offsets 1...) of the heterogeneous job led by `leader`.
fn followers(core: &Core, leader: FedJobId) -> Vec<FedJobId> {
    core.jobs
        .hets
        .get(&leader)
        .map(|c| c.iter().skip(1).copied().collect())
        .unwrap_or_default()
}

/// Whether `id` leads a heterogeneous job.
pub(crate) fn is_leader(core: &Core, id: FedJobId) -> bool {
    core.jobs.hets.contains_key(&id)
}

/// Why a follower of `leader` keeps the whole job waiting, apart from resources.
pub(crate) fn followers_ineligible(
    core: &Core,
    leader: FedJobId,
    now: SimTime,
) -> Option<JobReason> {
    followers(core, leader)
        .into_iter()
        .filter_map(|f| core.jobs.map.get(&f))
        .find_map(|f| ineligible(core, f, now))
}

/// Shows the leader's reason on its queued followers (a follower held by itself keeps its own).
pub(crate) fn mirror_reason(core: &mut Core, leader: FedJobId, now: SimTime) {
    let Some(reason) = core.jobs.map.get(&leader).map(|j| j.reason) else {
        return;
    };
    for f in followers(core, leader) {
        let Some(job) = core.jobs.map.get(&f) else {
            continue;
        };
        if !job.is_queued() {
            continue;
        }
        let own = ineligible(core, job, now).unwrap_or(reason);
        if let Some(job) = core.jobs.map.get_mut(&f) {
            job.reason = own;
        }
    }
}

/// The longest time limit of the components (what backfill must fit before a reservation).
pub(crate) fn longest_limit(core: &Core, leader: FedJobId) -> Option<TimeLimit> {
    components(core, leader)
        .iter()
        .filter_map(|c| core.jobs.map.get(c))
        .map(|j| j.req.time_limit)
        .max()
}

/// Starts every component of the heterogeneous job led by `leader` on free resources of
/// nodes that pass `allow`, each component on nodes no other one takes, or none of them.
pub(crate) fn try_start(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    leader: FedJobId,
    mut allow: impl FnMut(usize) -> bool,
) -> Start {
    let members = components(core, leader);
    let mut taken = FixedBitSet::with_capacity(core.nodes.nodes.len());
    let mut allocs = Vec::with_capacity(members.len());
    for &m in &members {
        let Some(job) = core.jobs.map.get(&m) else {
            return Start::NoRoom;
        };
        if !job.is_queued() {
            return Start::NoRoom;
        }
        let maps = start_maps(core, job);
        let picked = alloc::pick::pick(core, job, &maps, |i| !taken.contains(i) && allow(i));
        let Some(a) = picked else {
            return Start::NoRoom;
        };
        if let Some(r) = super::assoc::allocation_reason(core, job, &a, now) {
            return Start::Limited(r);
        }
        a.nodes.iter().for_each(|n| taken.insert(n.get() as usize));
        allocs.push((m, a));
    }
    for (m, a) in allocs {
        completion::start_job(core, out, now, m, a);
        gang::job_started(core, out, now, m);
        count_started(core, m, now);
    }
    Start::Started
}

/// The leader's batch script ended the heterogeneous job in `state`: every running follower
/// ends with it (its steps killed on its nodes, its nodes freed) with the script's exit code,
/// and a pending one is cancelled.
pub(crate) fn end_followers(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    leader: FedJobId,
    state: JobState,
    reason: JobReason,
) {
    let code = core
        .jobs
        .map
        .get(&leader)
        .map_or((0, 0), |j| (j.exit_code, j.exit_signal));
    for f in followers(core, leader) {
        let Some(job) = core.jobs.map.get_mut(&f) else {
            continue;
        };
        if job.is_queued() {
            completion::cancel_pending(core, out, now, f);
            continue;
        }
        // Every component records the script's exit code, as Slurm's do.
        (job.exit_code, job.exit_signal) = code;
        if !core.jobs.active.contains(&f) || job.completing {
            continue;
        }
        let nodes = job.nodes.clone();
        out.node(NodeCommand::Terminate { job: f, nodes });
        completion::release_nodes(core, f);
        completion::leave_running(&mut core.jobs, f);
        gang::job_stopped(core, out, now, f);
        completion::end_run(core, out, now, f, state, reason);
        core.jobs.finished.insert((now, f));
    }
}

/// The leader is killed into `state` (cancelled, timed out, requeued as PENDING, NODE_FAIL):
/// every follower still running is killed the same way, every one still queued is cancelled
/// (or, for a requeue, left queued with its leader).
pub(crate) fn kill_followers(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    leader: FedJobId,
    state: JobState,
    reason: JobReason,
) {
    for f in followers(core, leader) {
        let Some(job) = core.jobs.map.get(&f) else {
            continue;
        };
        if job.is_queued() {
            if state != JobState::Pending {
                completion::cancel_pending(core, out, now, f);
            }
            continue;
        }
        if running(core, f) {
            kill::kill_job(core, out, now, f, state, reason);
        }
    }
}

/// A node of component `id` failed and the component was handled (requeued or NODE_FAIL):
/// the rest of its heterogeneous job follows it, as Slurm requeues or fails the whole job.
pub(crate) fn node_failed(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(leader) = core.jobs.map.get(&id).and_then(|j| j.het).map(|h| h.leader) else {
        return;
    };
    let requeued = core
        .jobs
        .map
        .get(&id)
        .is_some_and(|j| j.state == JobState::Pending);
    let (state, reason) = if requeued {
        (JobState::Pending, JobReason::None)
    } else {
        (JobState::NodeFail, JobReason::NodeDown)
    };
    for c in components(core, leader) {
        if c != id && running(core, c) {
            kill::kill_job(core, out, now, c, state, reason);
        }
    }
}

/// Whether component `id` runs and is not yet ending.
fn running(core: &Core, id: FedJobId) -> bool {
    core.jobs.active.contains(&id) && core.jobs.map.get(&id).is_some_and(|j| !j.completing)
}

/// Forgets a heterogeneous job once none of its components is held any more.
pub(crate) fn purged(core: &mut Core, id: FedJobId, het: Option<HetMember>) {
    let Some(h) = het else {
        return;
    };
    let gone = core
        .jobs
        .hets
        .get(&h.leader)
        .is_some_and(|c| c.iter().all(|j| *j == id || !core.jobs.map.contains_key(j)));
    if gone {
        core.jobs.hets.remove(&h.leader);
    }
}

/// Tasks of a component on each of its nodes: block by CPUs (each node as many tasks as its
/// CPUs hold, at least one), the last nodes taking what is left.
fn tasks_per_node(ntasks: u32, cpus: &[u32], cpus_per_task: u32) -> Vec<u32> {
    let mut left = ntasks;
    let n = cpus.len();
    cpus.iter()
        .enumerate()
        .map(|(k, &c)| {
            let room = (c / cpus_per_task.max(1)).max(1);
            let nodes_after = u32::try_from(n - k - 1).unwrap_or(u32::MAX);
            let here = room.min(left.saturating_sub(nodes_after)).max(1).min(left);
            left -= here;
            here
        })
        .collect()
}

impl Core {
    /// The variables Slurm gives the batch script (and steps) of heterogeneous job `leader`:
    /// `SLURM_HET_SIZE` and, for each component N, `SLURM_JOB_ID_HET_GROUP_N`,
    /// `SLURM_JOB_NODELIST_HET_GROUP_N`, `SLURM_NTASKS_HET_GROUP_N`, ... (each also under its
    /// older `PACK` name, as Slurm 22.05 still sets both). Empty for any other job.
    pub fn het_env(&self, leader: FedJobId) -> Vec<(String, String)> {
        let members = components(self, leader);
        let mut env = Vec::new();
        if members.is_empty() {
            return env;
        }
        let mut put = |name: &str, group: Option<usize>, value: String| {
            for kind in ["HET", "PACK"] {
                let key = match group {
                    Some(k) => format!("{name}_{kind}_GROUP_{k}"),
                    None => format!("{name}_{kind}_SIZE"),
                };
                env.push((key, value.clone()));
            }
        };
        put("SLURM", None, members.len().to_string());
        for (k, id) in members.iter().enumerate() {
            let Some(job) = self.jobs.map.get(id) else {
                continue;
            };
            let cpus = self.job_cpus(*id);
            let cpt = job.req.cpus_per_task.max(1);
            let tasks = tasks_per_node(job.req.ntasks, &cpus, cpt);
            let g = Some(k);
            if !job.launch.account.is_empty() {
                put("SLURM_JOB_ACCOUNT", g, job.launch.account.clone());
            }
            put(
                "SLURM_JOB_CPUS_PER_NODE",
                g,
                sluice_vocab::counts::run_length(&cpus),
            );
            if job.launch.cpus_per_task_given {
                put("SLURM_CPUS_PER_TASK", g, job.req.cpus_per_task.to_string());
            }
            put("SLURM_JOB_ID", g, id.to_string());
            put("SLURM_JOB_NAME", g, job.name.clone());
            put("SLURM_JOB_NODELIST", g, self.hostlist(&job.nodes));
            put("SLURM_JOB_NUM_NODES", g, job.nodes.len().to_string());
            if let Some(part) = self.parts.get(job.partition.get()) {
                put("SLURM_JOB_PARTITION", g, part.name.clone());
            }
            if !job.launch.qos.is_empty() {
                put("SLURM_JOB_QOS", g, job.launch.qos.clone());
            }
            if job.req.mem_per_node_mb > 0 {
                put("SLURM_MEM_PER_NODE", g, job.req.mem_per_node_mb.to_string());
            }
            put("SLURM_NPROCS", g, job.req.ntasks.to_string());
            put("SLURM_NTASKS", g, job.req.ntasks.to_string());
            put(
                "SLURM_TASKS_PER_NODE",
                g,
                sluice_vocab::counts::run_length(&tasks),
            );
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::tasks_per_node;

    #[test]
    fn tasks_are_laid_out_in_blocks_by_cpus() {
        assert_eq!(tasks_per_node(2, &[4], 2), [2]);
        assert_eq!(tasks_per_node(3, &[2, 2], 1), [2, 1]);
        assert_eq!(tasks_per_node(2, &[8, 8], 1), [1, 1]);
        assert_eq!(tasks_per_node(1, &[1], 1), [1]);
    }
}
