//! What the commands show: jobs (`squeue`, `scontrol show job`), nodes and partitions (`sinfo`,
//! `scontrol show node|partition`) and the configuration (`scontrol show config`).

use super::ControllerService;
use super::convert::{job_info, node_info, partition_info, shown_state};
use super::users::group_name;
use crate::conf::SchedulerType;
use sluice_schema::FedJobId;
use sluice_schema::proto::{
    ConfigReply, EnvVar, GetConfigRequest, ListJobsReply, ListJobsRequest, ListNodesReply,
    ListNodesRequest, ListPartitionsReply, ListPartitionsRequest,
};
use std::collections::HashMap;
use tonic::{Request, Status};

/// `squeue`: jobs matching the filters, pending ones in priority order first.
pub async fn list_jobs(
    svc: &ControllerService,
    req: Request<ListJobsRequest>,
) -> Result<ListJobsReply, Status> {
    svc.caller(&req)?;
    let r = req.into_inner();
    let mut jobs = svc
        .core
        .query(move |cx| {
            let core = &*cx.core;
            let rank: HashMap<FedJobId, u64> = core
                .pending()
                .enumerate()
                .map(|(i, id)| (id, i as u64))
                .collect();
            let top = rank.len() as u64;
            let mut out: Vec<_> = core
                .jobs()
                // The origin's REVOKED tracker of a federated job shows too (squeue on the
                // origin lists it while the job waits or runs elsewhere).
                .filter(|j| {
                    r.include_finished
                        || !j.state.is_finished()
                        || j.completing
                        || j.state == sluice_schema::JobState::Revoked
                })
                .filter(|j| {
                    r.job_ids.is_empty()
                        || r.job_ids.contains(&j.id.get())
                        || j.array.is_some_and(|a| r.job_ids.contains(&a.job.get()))
                })
                .filter(|j| r.uids.is_empty() || r.uids.contains(&j.uid))
                .filter(|j| {
                    // `-t CG` / `-t CF` find completing / configuring jobs; their run's own
                    // state matches too.
                    r.states.is_empty()
                        || r.states.contains(&j.state.stored())
                        || r.states.contains(&shown_state(core, j).stored())
                })
                .filter(|j| r.names.is_empty() || r.names.contains(&j.name))
                .filter(|j| {
                    r.partitions.is_empty()
                        || core
                            .partitions()
                            .get(j.partition.get())
                            .is_some_and(|p| r.partitions.contains(&p.name))
                })
                .map(|j| {
                    let priority = rank.get(&j.id).map_or(0, |i| top - i);
                    job_info(core, j, cx.now, priority)
                })
                .collect();
            out.sort_by_key(|j| (std::cmp::Reverse(j.priority), j.job_id));
            out
        })
        .await?;
    for j in &mut jobs {
        j.user = svc.users.name(j.uid);
    }
    Ok(ListJobsReply { jobs })
}

/// `sinfo -N`, `scontrol show node`.
pub async fn list_nodes(
    svc: &ControllerService,
    req: Request<ListNodesRequest>,
) -> Result<ListNodesReply, Status> {
    svc.caller(&req)?;
    let names = req.into_inner().names;
    let nodes = svc
        .core
        .query(move |cx| {
            cx.core
                .nodes()
                .iter()
                .filter(|n| names.is_empty() || names.contains(&n.name))
                .map(|n| {
                    let addr = cx.node_addr(&n.name).unwrap_or((n.addr.clone(), n.port));
                    node_info(cx.core, n, addr)
                })
                .collect()
        })
        .await?;
    Ok(ListNodesReply { nodes })
}

/// `sinfo`, `scontrol show partition`.
pub async fn list_partitions(
    svc: &ControllerService,
    req: Request<ListPartitionsRequest>,
) -> Result<ListPartitionsReply, Status> {
    svc.caller(&req)?;
    let names = req.into_inner().names;
    let partitions = svc
        .core
        .query(move |cx| {
            cx.core
                .partitions()
                .iter()
                .filter(|p| names.is_empty() || names.contains(&p.name))
                .map(|p| partition_info(cx.core, p, &group_name))
                .collect()
        })
        .await?;
    Ok(ListPartitionsReply { partitions })
}

/// `scontrol show config`: the keys as Slurm prints them, sorted.
pub fn get_config(
    svc: &ControllerService,
    req: Request<GetConfigRequest>,
) -> Result<ConfigReply, Status> {
    svc.caller(&req)?;
    let c = &svc.conf;
    let path = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map_or_else(|| "(null)".to_string(), |p| p.display().to_string())
    };
    let slurm_uid = nix::unistd::User::from_name(&c.slurm_user)
        .ok()
        .flatten()
        .map_or_else(|| "?".to_string(), |u| u.uid.to_string());
    let hosts: Vec<String> = c
        .ctld_hosts
        .iter()
        .map(|h| match &h.addr {
            Some(a) => format!("{}({a})", h.name),
            None => h.name.clone(),
        })
        .collect();
    let mut entries: Vec<(&str, String)> = vec![
        (
            "AccountingStorageHost",
            c.accounting_storage_host
                .clone()
                .unwrap_or_else(|| "(null)".into()),
        ),
        (
            "AccountingStoragePort",
            c.accounting_storage_port.to_string(),
        ),
        (
            "AccountingStorageType",
            if c.accounting_storage_host.is_some() {
                "accounting_storage/slurmdbd"
            } else {
                "accounting_storage/none"
            }
            .into(),
        ),
        ("BOOT_TIME", svc.started.secs().to_string()),
        ("ClusterName", c.cluster_name.clone()),
        ("FirstJobId", c.first_job_id.to_string()),
        ("KillWait", format!("{} sec", c.kill_wait)),
        ("MaxArraySize", c.max_array_size.to_string()),
        ("MaxJobCount", c.max_job_count.to_string()),
        ("MinJobAge", format!("{} sec", c.min_job_age)),
        ("ReturnToService", c.return_to_service.to_string()),
        (
            "SchedulerType",
            match c.scheduler {
                SchedulerType::Backfill => "sched/backfill",
                SchedulerType::Builtin => "sched/builtin",
            }
            .into(),
        ),
        ("PreemptMode", c.select.preempt_mode.display()),
        (
            "SchedulerTimeSlice",
            format!("{} sec", c.select.time_slice_secs),
        ),
        ("SelectType", c.select.select_type_name().into()),
        ("SelectTypeParameters", c.select.params_name()),
        ("SLURM_CONF", c.path.display().to_string()),
        ("SLURM_VERSION", env!("CARGO_PKG_VERSION").into()),
        ("SlurmUser", format!("{}({slurm_uid})", c.slurm_user)),
        ("SlurmctldHost", hosts.join(",")),
        ("SlurmctldLogFile", path(&c.slurmctld_log_file)),
        ("SlurmctldPidFile", path(&c.slurmctld_pid_file)),
        ("SlurmctldPort", c.ctld_port.to_string()),
        ("SlurmdPort", c.slurmd_port.to_string()),
        ("SlurmdSpoolDir", c.slurmd_spool_dir.display().to_string()),
        ("SlurmdTimeout", format!("{} sec", c.slurmd_timeout)),
        (
            "StateSaveLocation",
            c.state_save_location.display().to_string(),
        ),
    ];
    // Slurm prints the default memory key in force: per CPU, else per node.
    entries.push(
        match (c.select.def_mem_per_cpu_mb, c.select.def_mem_per_node_mb) {
            (Some(m), _) => ("DefMemPerCPU", m.to_string()),
            (None, Some(m)) => ("DefMemPerNode", m.to_string()),
            (None, None) => ("DefMemPerNode", "UNLIMITED".into()),
        },
    );
    entries.sort_by_key(|e| e.0.to_ascii_lowercase());
    Ok(ConfigReply {
        entries: entries
            .into_iter()
            .map(|(k, v)| EnvVar {
                name: k.to_string(),
                value: v,
            })
            .collect(),
        now: chrono::Utc::now().timestamp(),
    })
}
