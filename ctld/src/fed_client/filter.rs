//! `scancel` by filters (`-u`, `-n`, `-p`, `-t`, `--me`; no ids) in a federation. Slurm's
//! scancel loads the jobs of the whole federation (`SHOW_FEDERATION`), filters them and
//! cancels each match by id through its controller, which routes it. Here the controller does
//! the listing for the command: the federated jobs that match — its own copies, and every live
//! copy another member lists (so a job of another origin running on a third cluster is found
//! too) — become ids for [`super::commands::cancel`]; another member's array tasks are
//! cancelled on that member, their origin ([`forward_tasks`]); local jobs stay with the usual
//! filter path. A member that does not answer is left out, as Slurm's listing does. What
//! matches and in which order is the core's policy ([`crate::core::cancel`]); this module only
//! lists the members' jobs and sends the cancels.

use super::FedHandle;
use super::route::member_client;
use crate::core::Caller;
use crate::core::cancel::{CancelFilter, cancel_order, cancellable};
use crate::runtime::CoreHandle;
use sluice_vocab::JobState;
use sluice_wire::proto::{CancelReply, CancelRequest, JobError, JobInfo, ListJobsRequest};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long one member may take to list its jobs.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `j`, listed by member `member`, is a live federated copy that `filter` selects (an
/// array task only where its array runs: on its origin).
pub fn accepts_listed(filter: &CancelFilter, j: &JobInfo, member: &str) -> bool {
    !j.fed_origin.is_empty()
        && (j.array_task_id.is_none() || j.fed_origin == member)
        && cancellable(j.state)
        && filter.accepts(j.uid, &j.name, j.state, &j.partition)
}

/// What a filtered `scancel` found elsewhere in the federation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matches {
    /// Federated jobs to cancel by id ([`super::commands::cancel`]).
    pub ids: Vec<u32>,
    /// Tasks of other members' arrays (`array_task` as written), by origin: an array runs on
    /// its origin only, and its tasks are cancelled there ([`forward_tasks`]).
    pub tasks: Vec<(String, Vec<String>)>,
}

/// The live federated jobs matching `filter` anywhere in the federation, in the core's
/// [`cancel_order`] (pending first).
pub async fn matching(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    filter: &CancelFilter,
) -> Matches {
    let f = filter.clone();
    let Ok((mut found, siblings)) = core
        .query(move |cx| {
            let here: Found = cx
                .core
                .jobs()
                .filter(|j| f.accepts_copy(cx.core, j))
                .map(|j| (j.id.get(), j.state != JobState::Pending))
                .collect();
            let siblings: Vec<String> = cx
                .core
                .fed_view()
                .siblings
                .iter()
                .filter(|m| !m.host.is_empty() && m.port > 0)
                .map(|m| m.name.clone())
                .collect();
            (here, siblings)
        })
        .await
    else {
        return Matches::default();
    };
    let request = ListJobsRequest {
        uids: filter.uids.clone(),
        names: filter.names.clone(),
        states: filter.states.clone(),
        partitions: filter.partitions.clone(),
        ..ListJobsRequest::default()
    };
    let mut tasks = Vec::new();
    for name in siblings {
        let jobs =
            match tokio::time::timeout(LIST_TIMEOUT, listed(fed, core, caller, &name, &request))
                .await
            {
                Ok(Ok(jobs)) => jobs,
                Ok(Err(status)) => {
                    tracing::debug!(cluster = %name, "jobs not listed: {}", status.message());
                    continue;
                }
                Err(_) => {
                    tracing::debug!(cluster = %name, "jobs not listed in time");
                    continue;
                }
            };
        let mut here: Vec<((u32, String), bool)> = Vec::new();
        for j in jobs.iter().filter(|j| accepts_listed(filter, j, &name)) {
            let started = j.state != JobState::Pending.stored();
            match j.array_task_id {
                Some(task) => {
                    here.push(((j.job_id, format!("{}_{task}", j.array_job_id)), started))
                }
                None => *found.entry(j.job_id).or_default() |= started,
            }
        }
        if !here.is_empty() {
            let ordered = cancel_order(here).into_iter().map(|(_, t)| t).collect();
            tasks.push((name, ordered));
        }
    }
    Matches {
        ids: cancel_order(found),
        tasks,
    }
}

/// Matching job ids, each with whether some copy of it has started.
type Found = BTreeMap<u32, bool>;

/// Cancels (or signals, as `r` asks) the array tasks `tasks` found on other members, each on
/// its origin, signed as `caller`; returns what they did.
pub async fn forward_tasks(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    r: &CancelRequest,
    tasks: Vec<(String, Vec<String>)>,
) -> CancelReply {
    let mut reply = CancelReply::default();
    for (cluster, job_tasks) in tasks {
        let req = CancelRequest {
            job_tasks: job_tasks.clone(),
            signal: r.signal,
            batch_only: r.batch_only,
            ..CancelRequest::default()
        };
        let answer = match member_client(fed, core, &cluster, caller).await {
            Ok(mut client) => client.cancel(req).await.map(tonic::Response::into_inner),
            Err(status) => Err(status),
        };
        match answer {
            Ok(done) => {
                reply.cancelled.extend(done.cancelled);
                reply.errors.extend(done.errors);
            }
            Err(status) => reply.errors.extend(job_tasks.into_iter().map(|t| JobError {
                job_id: 0,
                job: t,
                message: status.message().to_string(),
            })),
        }
    }
    reply
}

async fn listed(
    fed: &FedHandle,
    core: &CoreHandle,
    caller: Caller,
    cluster: &str,
    request: &ListJobsRequest,
) -> Result<Vec<JobInfo>, tonic::Status> {
    let mut client = member_client(fed, core, cluster, caller).await?;
    Ok(client.list_jobs(request.clone()).await?.into_inner().jobs)
}
