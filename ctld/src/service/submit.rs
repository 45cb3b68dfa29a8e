//! Submissions and steps: `sbatch` (Submit, also `--test-only`), `srun` without an allocation
//! (Allocate: an interactive job whose progress is streamed until it runs), and steps inside a
//! running job (CreateStep / StepDone, each recorded for accounting).

use super::ControllerService;
use super::convert::submit_request;
use crate::core::{
    JobExit, LaunchSpec, StepEnd, StepRequest, WillRun, on_allocation_complete, on_allocation_done,
    on_step_create, on_step_done, on_submit, on_submit_het, on_will_run, on_will_run_het,
};
use crate::error::CtldError;
use crate::runtime::Ctx;
use sluice_vocab::FedJobId;
use sluice_vocab::jobacct::StepUsage;
use sluice_wire::auth::credential::CREDENTIAL_LIFETIME;
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{
    Ack, Allocation, CompleteAllocationRequest, CreateStepReply, CreateStepRequest,
    JobCredentialBody, NodeAddr, StepDoneRequest, SubmitJobReply, SubmitJobRequest,
};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Status};

/// The core's form of `r` from `caller`: the user's groups as this host knows them, whether
/// `AllowGroups` applies (not to root and the SlurmUser), and the dbd's default account of the
/// user when `--account` is not given (as Slurm's controller charges it). With `--uid` root or
/// the SlurmUser submits for another user, who owns and runs the job; the partition's access
/// is still the submitter's (Slurm: "root may run jobs as a normal user in a RootOnly
/// partition"); anybody else is refused as Slurm refuses it.
fn submission(
    svc: &ControllerService,
    r: &SubmitJobRequest,
    caller: crate::core::Caller,
    interactive: bool,
) -> Result<crate::core::SubmitRequest, CtldError> {
    let root_or_slurm_user = svc.admins.contains(&caller.uid);
    let owner = match r.uid {
        Some(uid) if uid != caller.uid => {
            if !root_or_slurm_user {
                return Err(CtldError::InvalidUserId);
            }
            crate::core::Caller { uid, ..caller }
        }
        _ => caller,
    };
    let user = svc.users.get(owner.uid);
    let mut sreq = submit_request(r, owner, &user, interactive)?;
    sreq.root_or_slurm_user = root_or_slurm_user;
    if sreq.launch.account.is_empty()
        && let Some(account) = svc.dbd_admins.default_account(owner.uid)
    {
        sreq.launch.account = account;
    }
    Ok(sreq)
}

/// `sbatch`.
pub async fn submit(
    svc: &ControllerService,
    req: Request<SubmitJobRequest>,
) -> Result<SubmitJobReply, Status> {
    let caller = svc.caller(&req)?;
    let r = req.into_inner();
    let cluster = svc.conf.cluster_name.clone();
    if !r.het_components.is_empty() && r.test_only {
        let reqs = het_submissions(svc, &r, caller, false)?;
        let reply = will_run(svc, move |core, now| on_will_run_het(core, now, reqs)).await?;
        return Ok(SubmitJobReply { cluster, ..reply });
    }
    if !r.het_components.is_empty() {
        let job_id = submit_het(svc, &r, caller, false).await?;
        return Ok(SubmitJobReply {
            job_id: job_id.get(),
            cluster,
            ..SubmitJobReply::default()
        });
    }
    let sreq = submission(svc, &r, caller, false)?;
    if r.test_only {
        let reply = will_run(svc, move |core, now| on_will_run(core, now, sreq)).await?;
        return Ok(SubmitJobReply { cluster, ..reply });
    }
    let opts = crate::core::federation::FedSubmit {
        clusters: r.clusters.join(","),
        features: r.cluster_constraint.clone(),
    };
    let job_id = crate::fed_client::route::submit(svc.fed.as_ref(), &svc.core, sreq, opts).await?;
    Ok(SubmitJobReply {
        job_id: job_id.get(),
        cluster,
        ..SubmitJobReply::default()
    })
}

/// `--test-only`: when and where `test` (a will-run of the core) expects the job to start,
/// with the id it would get, as sbatch and srun print it; nothing is queued and no id is used up.
async fn will_run(
    svc: &ControllerService,
    test: impl FnOnce(&mut crate::core::Core, crate::core::SimTime) -> Result<WillRun, CtldError>
    + Send
    + 'static,
) -> Result<SubmitJobReply, Status> {
    let (job_id, start, nodes, cpus, partition) = svc
        .core
        .query(move |cx| {
            let w = test(cx.core, cx.now)?;
            let start = w.start.map_or(0, |t| i64::try_from(t.secs()).unwrap_or(0));
            let id = w.job_id.map_or(0, FedJobId::get);
            let nodes = cx.core.hostlist(&w.nodes);
            Ok::<_, CtldError>((id, start, nodes, w.cpus, w.partition))
        })
        .await??;
    Ok(SubmitJobReply {
        job_id,
        cluster: String::new(),
        test_start: start,
        test_nodes: nodes,
        test_cpus: cpus,
        test_partition: partition,
    })
}

/// The core's form of every component of heterogeneous job `r`, leader first.
fn het_submissions(
    svc: &ControllerService,
    r: &SubmitJobRequest,
    caller: crate::core::Caller,
    interactive: bool,
) -> Result<Vec<crate::core::SubmitRequest>, CtldError> {
    let mut reqs = vec![submission(svc, r, caller, interactive)?];
    for c in &r.het_components {
        reqs.push(submission(svc, c, caller, interactive)?);
    }
    Ok(reqs)
}

/// A heterogeneous job: every component checked as a job of its own, then all queued at once
/// on this cluster (never federated, as in Slurm); the leader's id.
async fn submit_het(
    svc: &ControllerService,
    r: &SubmitJobRequest,
    caller: crate::core::Caller,
    interactive: bool,
) -> Result<FedJobId, Status> {
    let reqs = het_submissions(svc, r, caller, interactive)?;
    let reply = svc
        .core
        .submit(move |cx| on_submit_het(cx.core, cx.out, cx.now, reqs))
        .await??;
    Ok(reply.job_id)
}

/// `srun` without an allocation: creates an interactive job and streams its progress.
pub async fn allocate(
    svc: &ControllerService,
    req: Request<SubmitJobRequest>,
) -> Result<ReceiverStream<Result<sluice_wire::proto::AllocationEvent, Status>>, Status> {
    let caller = svc.caller(&req)?;
    let r = req.into_inner();
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let follow_end = r.follow_end;
    if !r.het_components.is_empty() {
        // salloc A : B: every component an allocation, granted together with the leader.
        let reqs = het_submissions(svc, &r, caller, true)?;
        svc.core
            .call(move |cx| {
                let reply = on_submit_het(cx.core, cx.out, cx.now, reqs)?;
                cx.watch_allocation(reply.job_id, tx, follow_end);
                Ok::<_, CtldError>(())
            })
            .await??;
        return Ok(ReceiverStream::new(rx));
    }
    let sreq = submission(svc, &r, caller, true)?;
    svc.core
        .call(move |cx| {
            let reply = on_submit(cx.core, cx.out, cx.now, sreq)?;
            cx.watch_allocation(reply.job_id, tx, follow_end);
            Ok::<_, CtldError>(())
        })
        .await??;
    Ok(ReceiverStream::new(rx))
}

/// A step in a running job: its id and where its tasks run (srun then runs them itself).
/// Refused busy while the job's other steps hold the CPUs it needs (srun asks again).
pub async fn create_step(
    svc: &ControllerService,
    req: Request<CreateStepRequest>,
) -> Result<CreateStepReply, Status> {
    let caller = svc.caller(&req)?;
    let r = req.into_inner();
    let job = FedJobId::from_raw(r.job_id).map_err(|_| CtldError::InvalidJobId)?;
    let (step_id, alloc, owner) = svc
        .core
        .call(move |cx| {
            let sreq = StepRequest {
                job,
                ntasks: r.ntasks,
                min_nodes: r.min_nodes,
                max_nodes: r.max_nodes,
                cpus_per_task: r.cpus_per_task,
                nodelist: r.nodelist.clone(),
                ntasks_per_node: r.ntasks_per_node,
                overlap: r.overlap,
                whole: r.whole,
                relative: r.relative,
                overcommit: r.overcommit,
                name: r.name.clone(),
                launch: LaunchSpec::default(),
                het_step: r.het_step_id,
            };
            let grant = on_step_create(cx.core, cx.out, cx.now, caller, sreq)?;
            let mut alloc = allocation(cx, job, &grant.nodes, grant.ntasks());
            alloc.cpus_per_task = grant.cpus_per_task;
            alloc.cpus_per_node = grant.cpus.clone();
            alloc.tasks_per_node = grant.tasks.clone();
            let owner = cx.core.job(job).map(|j| (j.uid, j.gid, j.restarts));
            Ok::<_, CtldError>((grant.step, alloc, owner))
        })
        .await??;
    // The step's credential: its job and user, its nodes and CPUs, for the node daemons.
    let (uid, gid, run) = owner.ok_or(CtldError::InvalidJobId)?;
    let credential = svc.creds.issue(&JobCredentialBody {
        job_id: job.get(),
        step_id: Some(step_id),
        uid,
        gid,
        node_list: alloc.node_list.clone(),
        cpus_per_node: alloc.cpus_per_node.clone(),
        expires: chrono::Utc::now().timestamp() + CREDENTIAL_LIFETIME,
        restart_count: run,
        no_alloc: false,
    });
    Ok(CreateStepReply {
        step_id,
        allocation: Some(alloc),
        credential: Some(credential),
    })
}

/// A step ended; with `end_job`, so does the srun-created job it ran in.
pub async fn step_done(
    svc: &ControllerService,
    req: Request<StepDoneRequest>,
) -> Result<Ack, Status> {
    let caller = svc.caller(&req)?;
    let r = req.into_inner();
    let job = FedJobId::from_raw(r.job_id).map_err(|_| CtldError::InvalidJobId)?;
    svc.core
        .call(move |cx| {
            let end = StepEnd {
                job,
                step: r.step_id,
                exit_code: r.exit_code,
                signal: r.signal,
                usage: r.usage.as_ref().and_then(StepUsage::from_proto),
            };
            on_step_done(cx.core, cx.out, cx.now, caller, end)?;
            if r.end_job {
                let exit = JobExit::allocation_end(job, r.exit_code, r.signal);
                match on_allocation_done(cx.core, cx.out, cx.now, exit) {
                    // Cancelled meanwhile: the allocation ended when its steps were killed.
                    Err(CtldError::AlreadyDone) | Ok(()) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok::<_, CtldError>(())
        })
        .await??;
    Ok(Ack {})
}

/// `salloc`'s command ended: so does its allocation, with the command's status.
pub async fn complete_allocation(
    svc: &ControllerService,
    req: Request<CompleteAllocationRequest>,
) -> Result<Ack, Status> {
    let caller = svc.caller(&req)?;
    let r = req.into_inner();
    let job = FedJobId::from_raw(r.job_id).map_err(|_| CtldError::InvalidJobId)?;
    svc.core
        .call(move |cx| {
            let exit = JobExit::allocation_end(job, r.exit_code, r.signal);
            match on_allocation_complete(cx.core, cx.out, cx.now, caller, exit) {
                // Revoked (scancel, time limit) while its command ended: nothing left to end.
                Err(CtldError::AlreadyDone) => Ok(()),
                other => other,
            }
        })
        .await??;
    Ok(Ack {})
}

/// The nodes and tasks of an allocation or step, with where each node daemon listens.
fn allocation(
    cx: &Ctx<'_>,
    job: FedJobId,
    nodes: &[sluice_vocab::NodeIdx],
    ntasks: u32,
) -> Allocation {
    let cpus_per_task = cx.core.job(job).map_or(1, |j| j.req.cpus_per_task);
    let records: Vec<&crate::core::Node> = nodes
        .iter()
        .filter_map(|n| cx.core.nodes().get(n.get() as usize))
        .collect();
    Allocation {
        job_id: job.get(),
        node_list: cx.core.hostlist(nodes),
        nodes: records
            .iter()
            .map(|n| {
                let (addr, port) = cx.node_addr(&n.name).unwrap_or((n.addr.clone(), n.port));
                NodeAddr {
                    name: n.name.clone(),
                    addr,
                    port: u32::from(port),
                }
            })
            .collect(),
        ntasks,
        cpus_per_task,
        cpus_per_node: cx.core.cpus_held(job, nodes),
        tasks_per_node: Vec::new(),
        // A step's allocation: its job's variables come from the batch script or salloc.
        het_env: Vec::new(),
    }
}
