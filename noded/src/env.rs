//! The environment a job's processes see: the job's own (as `sbatch --export` left it) plus
//! the `SLURM_*` variables Slurm sets for batch scripts and for step tasks.
//!
//! `SLURM_TASK_PID` is not here: only the started process knows its pid, so the launcher's
//! shell wrapper sets it (see [`crate::spawn`]).

use std::collections::BTreeMap;
use std::path::Path;

use sluice_wire::proto::{EnvVar, LaunchBatchRequest, RunStepRequest};

/// This node's facts that go into every job's environment.
#[derive(Debug, Clone, Copy)]
pub struct NodeFacts<'a> {
    /// `SLURMD_NODENAME`.
    pub node_name: &'a str,
    /// `SLURM_CLUSTER_NAME` when the request names none.
    pub cluster: &'a str,
    /// `SLURM_CONF`.
    pub conf_path: &'a Path,
}

/// An environment under construction; later settings win.
pub type Env = BTreeMap<String, String>;

fn base(env: &[EnvVar]) -> Env {
    env.iter()
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect()
}

fn set(env: &mut Env, name: &str, value: impl ToString) {
    env.insert(name.to_string(), value.to_string());
}

/// The environment of a batch script.
pub fn batch_env(req: &LaunchBatchRequest, node: NodeFacts<'_>) -> Env {
    let mut env = base(&req.env);
    let cluster = if req.cluster.is_empty() {
        node.cluster
    } else {
        &req.cluster
    };
    let submit_dir = if req.submit_dir.is_empty() {
        &req.workdir
    } else {
        &req.submit_dir
    };
    for name in ["SLURM_JOB_ID", "SLURM_JOBID"] {
        set(&mut env, name, req.job_id);
    }
    set(&mut env, "SLURM_JOB_NAME", &req.name);
    for name in ["SLURM_JOB_NODELIST", "SLURM_NODELIST"] {
        set(&mut env, name, &req.node_list);
    }
    let nodes = req.node_count.max(1);
    for name in ["SLURM_NNODES", "SLURM_JOB_NUM_NODES"] {
        set(&mut env, name, nodes);
    }
    if req.ntasks > 0 {
        for name in ["SLURM_NTASKS", "SLURM_NPROCS"] {
            set(&mut env, name, req.ntasks);
        }
    }
    set(&mut env, "SLURM_CPUS_ON_NODE", req.cpus_on_node);
    if req.ntasks_per_node > 0 {
        set(&mut env, "SLURM_NTASKS_PER_NODE", req.ntasks_per_node);
    }
    if req.cpus_per_task > 0 {
        set(&mut env, "SLURM_CPUS_PER_TASK", req.cpus_per_task);
    }
    let per_node = if req.cpus_per_node.is_empty() {
        vec![req.cpus_on_node; nodes as usize]
    } else {
        req.cpus_per_node.clone()
    };
    set(
        &mut env,
        "SLURM_JOB_CPUS_PER_NODE",
        sluice_vocab::counts::run_length(&per_node),
    );
    if req.mem_mb > 0 {
        set(&mut env, "SLURM_MEM_PER_NODE", req.mem_mb);
    }
    if req.mem_per_cpu_mb > 0 {
        set(&mut env, "SLURM_MEM_PER_CPU", req.mem_per_cpu_mb);
    }
    set(&mut env, "SLURM_CLUSTER_NAME", cluster);
    set(&mut env, "SLURM_SUBMIT_DIR", submit_dir);
    set(&mut env, "SLURM_SUBMIT_HOST", &req.submit_host);
    set(&mut env, "SLURM_JOB_PARTITION", &req.partition);
    set(&mut env, "SLURM_JOB_USER", &req.user);
    set(&mut env, "SLURM_JOB_UID", req.uid);
    set(&mut env, "SLURM_JOB_GID", req.gid);
    set(&mut env, "SLURM_JOB_ACCOUNT", &req.account);
    set(&mut env, "SLURMD_NODENAME", node.node_name);
    set(&mut env, "SLURM_NODEID", 0);
    set(&mut env, "SLURM_PROCID", 0);
    set(&mut env, "SLURM_LOCALID", 0);
    set(&mut env, "SLURM_GTIDS", 0);
    set(&mut env, "SLURM_CONF", node.conf_path.display());
    set(&mut env, "ENVIRONMENT", "BATCH");
    if !req.container.is_empty() {
        set(&mut env, "SLURM_CONTAINER", &req.container);
    }
    if let Some(task) = req.array_task_id {
        set(&mut env, "SLURM_ARRAY_JOB_ID", req.array_job_id);
        set(&mut env, "SLURM_ARRAY_TASK_ID", task);
        set(&mut env, "SLURM_ARRAY_TASK_COUNT", req.array_task_count);
        set(&mut env, "SLURM_ARRAY_TASK_MIN", req.array_task_min);
        set(&mut env, "SLURM_ARRAY_TASK_MAX", req.array_task_max);
    }
    env
}

/// The global rank of this node's `local`-th task: from srun's list under a cyclic, plane
/// or arbitrary distribution, else consecutive from `first_task`.
pub fn task_rank(req: &RunStepRequest, local: u32) -> u32 {
    req.task_ranks
        .get(local as usize)
        .copied()
        .unwrap_or(req.first_task + local)
}

/// The environment of step task `rank` (global) that is the `local`-th task on this node.
pub fn step_env(req: &RunStepRequest, node: NodeFacts<'_>, rank: u32, local: u32) -> Env {
    let mut env = base(&req.env);
    // An `srun -Z` step belongs to no job: as seen on Slurm 22.05, its tasks get no job id
    // nor job node count (only what srun's environment passes on).
    let no_alloc = sluice_vocab::ids::is_no_alloc(req.job_id);
    // Set by the batch script's environment inside an allocation; an srun that made its own
    // allocation has only the step's view.
    for (name, value) in [
        ("SLURM_JOB_NODELIST", req.node_list.clone()),
        ("SLURM_NODELIST", req.node_list.clone()),
        ("SLURM_NNODES", req.node_count.to_string()),
        ("SLURM_JOB_NUM_NODES", req.node_count.to_string()),
        ("SLURM_JOB_NAME", req.name.clone()),
        ("SLURM_CLUSTER_NAME", node.cluster.to_string()),
    ] {
        if !(no_alloc && name == "SLURM_JOB_NUM_NODES") {
            env.entry(name.to_string()).or_insert(value);
        }
    }
    // A step across a heterogeneous job's components: every task sees the leader's id.
    let job_id = if req.het_job_id != 0 {
        req.het_job_id
    } else {
        req.job_id
    };
    for name in ["SLURM_JOB_ID", "SLURM_JOBID"] {
        if !no_alloc {
            set(&mut env, name, job_id);
        }
    }
    for name in ["SLURM_STEP_ID", "SLURM_STEPID"] {
        set(&mut env, name, req.step_id);
    }
    set(&mut env, "SLURM_STEP_NODELIST", &req.node_list);
    set(&mut env, "SLURM_STEP_NUM_NODES", req.node_count);
    set(&mut env, "SLURM_STEP_NUM_TASKS", req.ntasks);
    for name in ["SLURM_NTASKS", "SLURM_NPROCS"] {
        // srun -E: the values srun was given (its allocation's) stay.
        if req.preserve_env {
            env.entry(name.to_string())
                .or_insert_with(|| req.ntasks.to_string());
        } else {
            set(&mut env, name, req.ntasks);
        }
    }
    set(&mut env, "SLURM_PROCID", rank);
    set(&mut env, "SLURM_LOCALID", local);
    set(&mut env, "SLURM_NODEID", req.node_index);
    let gtids: Vec<String> = (0..req.tasks_here)
        .map(|i| task_rank(req, i).to_string())
        .collect();
    set(&mut env, "SLURM_GTIDS", gtids.join(","));
    set(&mut env, "SLURMD_NODENAME", node.node_name);
    set(&mut env, "SLURM_CONF", node.conf_path.display());
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> NodeFacts<'static> {
        NodeFacts {
            node_name: "n1",
            cluster: "conf-cluster",
            conf_path: Path::new("/etc/slurm.conf"),
        }
    }

    #[test]
    fn batch_env_overrides_the_job_env_with_slurm_values() {
        let req = LaunchBatchRequest {
            job_id: 12,
            name: "sim".into(),
            node_list: "n[1-2]".into(),
            node_count: 2,
            ntasks: 4,
            cpus_on_node: 2,
            workdir: "/w".into(),
            env: vec![
                EnvVar {
                    name: "SLURM_JOB_ID".into(),
                    value: "stale".into(),
                },
                EnvVar {
                    name: "KEEP".into(),
                    value: "me".into(),
                },
            ],
            ..Default::default()
        };
        let env = batch_env(&req, facts());
        let get = |k: &str| env.get(k).map(String::as_str);
        assert_eq!(get("SLURM_JOB_ID"), Some("12"));
        assert_eq!(get("KEEP"), Some("me"));
        assert_eq!(get("SLURM_NNODES"), Some("2"));
        assert_eq!(get("SLURM_NPROCS"), Some("4"));
        assert_eq!(get("SLURM_JOB_CPUS_PER_NODE"), Some("2(x2)"));
        assert_eq!(get("SLURM_CLUSTER_NAME"), Some("conf-cluster"));
        assert_eq!(get("SLURM_SUBMIT_DIR"), Some("/w"));
        assert_eq!(get("SLURM_CONF"), Some("/etc/slurm.conf"));
        assert_eq!(get("SLURM_CPUS_PER_TASK"), None);
        assert_eq!(get("SLURM_MEM_PER_NODE"), None);
        assert_eq!(get("SLURM_CONTAINER"), None, "no --container");
        let with = LaunchBatchRequest {
            container: "/bundles/py".into(),
            ..req.clone()
        };
        let env = batch_env(&with, facts());
        assert_eq!(
            env.get("SLURM_CONTAINER").map(String::as_str),
            Some("/bundles/py")
        );
        assert_eq!(get("SLURM_ARRAY_TASK_ID"), None);
    }

    #[test]
    fn array_tasks_get_the_array_variables() {
        let req = LaunchBatchRequest {
            job_id: 13,
            array_job_id: 10,
            array_task_id: Some(3),
            array_task_count: 4,
            array_task_min: 0,
            array_task_max: 3,
            ..Default::default()
        };
        let env = batch_env(&req, facts());
        assert_eq!(env["SLURM_ARRAY_JOB_ID"], "10");
        assert_eq!(env["SLURM_ARRAY_TASK_ID"], "3");
        assert_eq!(env["SLURM_ARRAY_TASK_MAX"], "3");
    }

    #[test]
    fn step_env_names_ranks_and_keeps_the_allocation_view() {
        let req = RunStepRequest {
            job_id: 5,
            step_id: 1,
            node_list: "n[1-2]".into(),
            node_count: 2,
            node_index: 1,
            ntasks: 4,
            first_task: 2,
            tasks_here: 2,
            env: vec![EnvVar {
                name: "SLURM_JOB_NODELIST".into(),
                value: "n[1-4]".into(),
            }],
            ..Default::default()
        };
        let env = step_env(&req, facts(), 3, 1);
        assert_eq!(env["SLURM_PROCID"], "3");
        assert_eq!(env["SLURM_LOCALID"], "1");
        assert_eq!(env["SLURM_NODEID"], "1");
        assert_eq!(env["SLURM_GTIDS"], "2,3");
        assert_eq!(env["SLURM_STEP_NODELIST"], "n[1-2]");
        assert_eq!(env["SLURM_JOB_NODELIST"], "n[1-4]");
        assert_eq!(env["SLURM_STEP_NUM_TASKS"], "4");
    }

    #[test]
    fn a_no_allocation_step_has_no_job_id() {
        let req = RunStepRequest {
            job_id: 0xffff_2094,
            step_id: 915_579_058,
            node_list: "n1".into(),
            node_count: 1,
            ntasks: 2,
            tasks_here: 2,
            ..Default::default()
        };
        let env = step_env(&req, facts(), 0, 0);
        assert_eq!(env["SLURM_STEP_ID"], "915579058");
        assert_eq!(env["SLURM_NNODES"], "1");
        for name in ["SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NUM_NODES"] {
            assert!(!env.contains_key(name), "{name}");
        }
    }

    #[test]
    fn cyclic_ranks_come_from_srun_s_list() {
        let req = RunStepRequest {
            ntasks: 5,
            first_task: 1,
            tasks_here: 2,
            task_ranks: vec![1, 3],
            ..Default::default()
        };
        assert_eq!((task_rank(&req, 0), task_rank(&req, 1)), (1, 3));
        let env = step_env(&req, facts(), 3, 1);
        assert_eq!(env["SLURM_GTIDS"], "1,3");
        let block = RunStepRequest {
            first_task: 2,
            tasks_here: 2,
            ..Default::default()
        };
        assert_eq!(task_rank(&block, 1), 3);
    }
}
