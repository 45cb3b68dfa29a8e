//! The environment salloc gives its command: salloc's own, plus the allocation's `SLURM_*`
//! variables as Slurm's salloc sets them, so that `srun` inside runs in the allocation.

use sluice_vocab::counts::run_length;
use sluice_wire::proto::Allocation;

use std::path::Path;

use crate::jobspec::{JobOpts, Submitter};

/// What the command runs with: `environ` with the allocation's variables set (replacing any
/// of the same name, e.g. from an enclosing allocation).
pub fn for_command(
    environ: &[(String, String)],
    alloc: &Allocation,
    name: &str,
    job: &JobOpts,
    who: &Submitter,
    cluster: &str,
    conf_path: &Path,
) -> Vec<(String, String)> {
    let id = alloc.job_id.to_string();
    let nodes = alloc.nodes.len();
    let ntasks = job
        .ntasks
        .unwrap_or(u32::try_from(nodes).unwrap_or(u32::MAX));
    let tasks: Vec<u32> = match job.ntasks_per_node {
        Some(per_node) => vec![per_node; nodes],
        None => block(ntasks, nodes),
    };
    let mut set: Vec<(&str, String)> = vec![
        ("SLURM_CLUSTER_NAME", cluster.to_string()),
        ("SLURM_CONF", conf_path.display().to_string()),
        ("SLURM_JOB_ID", id.clone()),
        ("SLURM_JOBID", id),
        ("SLURM_JOB_NAME", name.to_string()),
        ("SLURM_JOB_NODELIST", alloc.node_list.clone()),
        ("SLURM_NODELIST", alloc.node_list.clone()),
        ("SLURM_JOB_NUM_NODES", nodes.to_string()),
        ("SLURM_NNODES", nodes.to_string()),
        ("SLURM_JOB_CPUS_PER_NODE", run_length(&alloc.cpus_per_node)),
        ("SLURM_TASKS_PER_NODE", run_length(&tasks)),
        ("SLURM_SUBMIT_DIR", who.cwd.clone()),
        ("SLURM_SUBMIT_HOST", who.host.clone()),
    ];
    if let Some(account) = &job.account {
        set.push(("SLURM_JOB_ACCOUNT", account.clone()));
    }
    if let Some(partition) = &job.partition {
        set.push(("SLURM_JOB_PARTITION", partition.clone()));
    }
    if let Some(n) = job.ntasks {
        set.push(("SLURM_NTASKS", n.to_string()));
        set.push(("SLURM_NPROCS", n.to_string()));
    }
    if let Some(n) = job.ntasks_per_node {
        set.push(("SLURM_NTASKS_PER_NODE", n.to_string()));
    }
    if let Some(c) = job.cpus_per_task {
        set.push(("SLURM_CPUS_PER_TASK", c.to_string()));
    }
    if let Some(mb) = job.mem_mb {
        set.push(("SLURM_MEM_PER_NODE", mb.to_string()));
    }
    if let Some(mb) = job.mem_per_cpu_mb {
        set.push(("SLURM_MEM_PER_CPU", mb.to_string()));
    }
    for (name, value) in job.topo_vars() {
        set.push((name, value.to_string()));
    }
    set.extend(job.placement_vars());
    let mut env: Vec<(String, String)> = environ
        .iter()
        .filter(|(k, _)| !set.iter().any(|(s, _)| s == k))
        .cloned()
        .collect();
    env.extend(set.into_iter().map(|(k, v)| (k.to_string(), v)));
    // A heterogeneous allocation: every component's variables (and, as Slurm's salloc sets
    // them, each component's `SLURM_NODELIST_HET_GROUP_N`).
    for v in &alloc.het_env {
        env.retain(|(k, _)| *k != v.name);
        env.push((v.name.clone(), v.value.clone()));
        if let Some(rest) = v.name.strip_prefix("SLURM_JOB_NODELIST_") {
            env.push((format!("SLURM_NODELIST_{rest}"), v.value.clone()));
        }
    }
    env
}

/// Tasks per node of `ntasks` spread over `nodes` in blocks (the first nodes take one more
/// when they do not divide evenly), nodes without a task left out.
fn block(ntasks: u32, nodes: usize) -> Vec<u32> {
    let Ok(n) = u32::try_from(nodes) else {
        return Vec::new();
    };
    if n == 0 {
        return Vec::new();
    }
    (0..n)
        .map(|i| ntasks / n + u32::from(i < ntasks % n))
        .filter(|&c| c > 0)
        .collect()
}

/// The command line to run: `command`, else the user's shell (`SHELL`, else `/bin/sh`).
pub fn command_line(command: &[String], env: &[(String, String)]) -> Vec<String> {
    if !command.is_empty() {
        return command.to_vec();
    }
    let shell = env
        .iter()
        .find(|(k, v)| k == "SHELL" && !v.is_empty())
        .map_or("/bin/sh", |(_, v)| v.as_str());
    vec![shell.to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_wire::proto::NodeAddr;

    fn alloc() -> Allocation {
        let node = |name: &str| NodeAddr {
            name: name.into(),
            ..Default::default()
        };
        Allocation {
            job_id: 42,
            node_list: "n[1-3]".into(),
            nodes: vec![node("n1"), node("n2"), node("n3")],
            cpus_per_node: vec![2, 2, 1],
            ..Default::default()
        }
    }

    fn who() -> Submitter {
        Submitter {
            user: "u".into(),
            uid: 1000,
            gid: 1000,
            groups: vec![1000],
            host: "login1".into(),
            cwd: "/home/u".into(),
        }
    }

    fn get<'a>(env: &'a [(String, String)], k: &str) -> Option<&'a str> {
        env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn the_allocation_is_described_as_slurm_does() {
        let environ = vec![
            ("HOME".to_string(), "/home/u".to_string()),
            ("SLURM_JOB_ID".to_string(), "7".to_string()),
        ];
        let job = JobOpts {
            ntasks: Some(5),
            cpus_per_task: Some(1),
            ..JobOpts::default()
        };
        let env = for_command(
            &environ,
            &alloc(),
            "interactive",
            &job,
            &who(),
            "c1",
            Path::new("/etc/slurm/slurm.conf"),
        );
        assert_eq!(get(&env, "HOME"), Some("/home/u"));
        assert_eq!(
            get(&env, "SLURM_JOB_ID"),
            Some("42"),
            "the enclosing job is replaced"
        );
        assert_eq!(env.iter().filter(|(k, _)| k == "SLURM_JOB_ID").count(), 1);
        assert_eq!(get(&env, "SLURM_JOBID"), Some("42"));
        assert_eq!(get(&env, "SLURM_JOB_NAME"), Some("interactive"));
        assert_eq!(get(&env, "SLURM_JOB_NODELIST"), Some("n[1-3]"));
        assert_eq!(get(&env, "SLURM_NNODES"), Some("3"));
        assert_eq!(get(&env, "SLURM_JOB_CPUS_PER_NODE"), Some("2(x2),1"));
        assert_eq!(get(&env, "SLURM_TASKS_PER_NODE"), Some("2(x2),1"));
        assert_eq!(get(&env, "SLURM_NTASKS"), Some("5"));
        assert_eq!(get(&env, "SLURM_NPROCS"), Some("5"));
        assert_eq!(get(&env, "SLURM_CPUS_PER_TASK"), Some("1"));
        assert_eq!(get(&env, "SLURM_CLUSTER_NAME"), Some("c1"));
        assert_eq!(get(&env, "SLURM_SUBMIT_HOST"), Some("login1"));
        assert_eq!(get(&env, "SLURM_CONF"), Some("/etc/slurm/slurm.conf"));
        assert_eq!(get(&env, "SLURM_MEM_PER_NODE"), None);
    }

    #[test]
    fn without_a_command_the_users_shell_runs() {
        let sh = vec![("SHELL".to_string(), "/bin/bash".to_string())];
        assert_eq!(command_line(&[], &sh), ["/bin/bash"]);
        assert_eq!(command_line(&[], &[]), ["/bin/sh"]);
        assert_eq!(command_line(&["id".to_string()], &sh), ["id"]);
    }
}
