//! What the commands show: jobs (`squeue`, `scontrol show job`), nodes and partitions (`sinfo`,
//! `scontrol show node|partition`); the configuration is in [`super::config`].

use super::ControllerService;
use super::convert::{job_info, node_info, partition_info, shown_state};
use super::users::group_name;
use crate::core::private;
use crate::error::CtldError;
use sluice_vocab::FedJobId;
use sluice_vocab::private_data::Private;
use sluice_wire::proto::{
    ListJobsReply, ListJobsRequest, ListNodesReply, ListNodesRequest, ListPartitionsReply,
    ListPartitionsRequest,
};
use std::collections::HashMap;
use tonic::{Request, Status};

/// `squeue`: jobs matching the filters, pending ones in priority order first.
pub async fn list_jobs(
    svc: &ControllerService,
    req: Request<ListJobsRequest>,
) -> Result<ListJobsReply, Status> {
    let caller = svc.caller(&req)?;
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
                // A submission given up (sbatch said it failed) is not listed while it is
                // withdrawn at the dbd.
                .filter(|j| !j.is_withdrawing())
                .filter(|j| private::sees_job(core, caller, j))
                // The origin's REVOKED tracker of a federated job shows too (squeue on the
                // origin lists it while the job waits or runs elsewhere).
                .filter(|j| {
                    r.include_finished
                        || !j.state.is_finished()
                        || j.completing
                        || j.state == sluice_vocab::JobState::Revoked
                })
                .filter(|j| {
                    r.job_ids.is_empty()
                        || r.job_ids.contains(&j.id.get())
                        || j.array.is_some_and(|a| r.job_ids.contains(&a.job.get()))
                        || j.het.is_some_and(|h| r.job_ids.contains(&h.leader.get()))
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
                    let priority = shown_priority(core, j, rank.get(&j.id).map(|i| top - i));
                    job_info(core, j, cx.now, priority)
                })
                .collect();
            // Pending jobs in queue order first, then the others by id.
            out.sort_by_key(|j| {
                let id = FedJobId::from_raw(j.job_id).ok();
                (
                    id.and_then(|id| rank.get(&id).copied()).unwrap_or(u64::MAX),
                    j.job_id,
                )
            });
            out
        })
        .await?;
    for j in &mut jobs {
        j.user = svc.users.name(j.uid);
    }
    Ok(ListJobsReply { jobs })
}

/// The priority `squeue %Q` and `scontrol show job` show: under `priority/multifactor` (or
/// when an administrator set one) the job's number; under `priority/basic` its rank from the
/// end of the queue (pending jobs; others 0), as before priorities were numbers.
fn shown_priority(
    core: &crate::core::Core,
    job: &crate::core::jobs::Job,
    rank: Option<u64>,
) -> u64 {
    use sluice_vocab::cluster_conf::PriorityType;
    if job.req.place.priority.is_some() || core.conf().priority.kind == PriorityType::Multifactor {
        return u64::from(job.req.place.priority.unwrap_or(job.priority));
    }
    rank.unwrap_or(0)
}

/// `sinfo -N`, `scontrol show node`.
pub async fn list_nodes(
    svc: &ControllerService,
    req: Request<ListNodesRequest>,
) -> Result<ListNodesReply, Status> {
    let caller = svc.caller(&req)?;
    let names = req.into_inner().names;
    let nodes = svc
        .core
        .query(move |cx| {
            private::may_list(cx.core, caller, Private::Nodes)?;
            Ok::<_, CtldError>(
                cx.core
                    .nodes()
                    .iter()
                    .filter(|n| names.is_empty() || names.contains(&n.name))
                    .filter(|n| private::lists_node(cx.core, n))
                    .map(|n| {
                        let addr = cx.node_addr(&n.name).unwrap_or((n.addr.clone(), n.port));
                        node_info(cx.core, n, addr)
                    })
                    .collect(),
            )
        })
        .await??;
    Ok(ListNodesReply { nodes })
}

/// `sinfo`, `scontrol show partition`.
pub async fn list_partitions(
    svc: &ControllerService,
    req: Request<ListPartitionsRequest>,
) -> Result<ListPartitionsReply, Status> {
    let caller = svc.caller(&req)?;
    let names = req.into_inner().names;
    let partitions = svc
        .core
        .query(move |cx| {
            private::may_list(cx.core, caller, Private::Partitions)?;
            Ok::<_, CtldError>(
                cx.core
                    .partitions()
                    .iter()
                    .filter(|p| names.is_empty() || names.contains(&p.name))
                    .map(|p| partition_info(cx.core, p, &group_name))
                    .collect(),
            )
        })
        .await??;
    Ok(ListPartitionsReply { partitions })
}
