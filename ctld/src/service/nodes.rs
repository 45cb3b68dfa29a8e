//! Node daemons' calls (RegisterNode, Heartbeat, JobExited: administrator-signed only, i.e.
//! root or the SlurmUser), `scontrol update node` and `scontrol update partition`
//! (administrators only).

use super::ControllerService;
use crate::conf::PartState;
use crate::core::nonstop::on_user_drain;
use crate::core::{
    JobExit, NodeRegistration, NodeRun, NodeScript, NodeUpdate, PowerRequest, RunReport, SimTime,
    on_job_exited, on_node_comm, on_node_heartbeat, on_node_power, on_node_prolog_done,
    on_node_registered, on_node_update, on_partition_state,
};
use crate::error::CtldError;
use sluice_vocab::FedJobId;
use sluice_vocab::jobacct::StepUsage;
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{
    Ack, HeartbeatRequest, JobExitedRequest, NodeRun as WireNodeRun, NodeScriptFailure,
    RegisterNodeReply, RegisterNodeRequest, UpdateNodeRequest, UpdatePartitionRequest,
};
use tonic::{Request, Status};

/// Seconds between a node's heartbeats: a third of SlurmdTimeout, within 1..=30.
pub fn heartbeat_secs(slurmd_timeout: u32) -> u32 {
    match slurmd_timeout {
        0 => 30,
        t => (t / 3).clamp(1, 30),
    }
}

/// The runs a node reports, from the wire (entries with an invalid job id are dropped).
fn node_runs(raw: &[WireNodeRun]) -> Vec<NodeRun> {
    raw.iter()
        .filter_map(|r| {
            Some(NodeRun {
                job: FedJobId::from_raw(r.job_id).ok()?,
                run: r.restart_count,
                batch: r.batch,
                steps: r.steps.clone(),
            })
        })
        .collect()
}

fn runs_to_wire(runs: Vec<NodeRun>) -> Vec<WireNodeRun> {
    runs.into_iter()
        .map(|r| WireNodeRun {
            job_id: r.job.get(),
            restart_count: r.run,
            batch: r.batch,
            steps: r.steps,
        })
        .collect()
}

/// A node daemon (re)started: its resources, address and the runs it holds. The reply lists
/// the runs (or steps) it holds that the controller does not hold there: it kills them.
pub async fn register_node(
    svc: &ControllerService,
    req: Request<RegisterNodeRequest>,
) -> Result<RegisterNodeReply, Status> {
    svc.admin(&req)?;
    let r = req.into_inner();
    let reported = node_runs(&r.running_runs);
    let kill_runs = svc
        .core
        .call(move |cx| {
            if cx.core.node(&r.name).is_none() {
                return Err(CtldError::InvalidNodeName { name: r.name });
            }
            if let (false, Ok(port)) = (r.addr.is_empty(), u16::try_from(r.port))
                && port != 0
            {
                cx.set_node_addr(&r.name, r.addr.clone(), port);
            }
            let reg = NodeRegistration {
                name: r.name.clone(),
                cpus: r.cpus,
                real_memory_mb: r.real_memory_mb,
                tmp_disk_mb: r.tmp_disk_mb,
                boot_time: SimTime::from_secs(u64::try_from(r.boot_time).unwrap_or(0)),
                jobs: reported,
                pid: r.pid,
                again: r.again,
            };
            on_node_registered(cx.core, cx.out, cx.now, reg)
        })
        .await??;
    Ok(RegisterNodeReply {
        cluster: svc.conf.cluster_name.clone(),
        heartbeat_secs: heartbeat_secs(svc.conf.slurmd_timeout),
        kill_jobs: Vec::new(),
        kill_runs: runs_to_wire(kill_runs),
    })
}

/// A node daemon is alive.
pub async fn heartbeat(
    svc: &ControllerService,
    req: Request<HeartbeatRequest>,
) -> Result<Ack, Status> {
    svc.admin(&req)?;
    let r = req.into_inner();
    let runs = node_runs(&r.running_runs);
    svc.core
        .query(move |cx| on_node_heartbeat(cx.core, cx.out, cx.now, &r.name, &runs))
        .await??;
    Ok(Ack {})
}

/// A batch script ended. Acknowledged once durable; a report the controller already has (a
/// retry after a lost reply, or after a restart) is acknowledged too. A report about another
/// run than the one the job's nodes hold, from a node not holding it, or about a step that
/// ended already (a node daemon back after its job was requeued elsewhere) is logged and
/// acknowledged without being applied, so the node forgets it.
pub async fn job_exited(
    svc: &ControllerService,
    req: Request<JobExitedRequest>,
) -> Result<Ack, Status> {
    svc.admin(&req)?;
    let r = req.into_inner();
    let Ok(job) = FedJobId::from_raw(r.job_id) else {
        return Ok(Ack {});
    };
    if r.prolog_done {
        let (node, run) = (r.node, r.restart_count);
        svc.core
            .call(move |cx| on_node_prolog_done(cx.core, cx.out, cx.now, job, &node, run))
            .await?;
        return Ok(Ack {});
    }
    let exit = JobExit {
        job,
        exit_code: r.exit_code,
        signal: r.signal,
        // A malformed usage is dropped, not the exit.
        usage: r.usage.as_ref().and_then(StepUsage::from_proto),
        from: Some(RunReport {
            node: r.node,
            run: r.restart_count,
            step: r.step_id,
        }),
        failed: match NodeScriptFailure::try_from(r.failed) {
            Ok(NodeScriptFailure::Prolog) => Some(NodeScript::Prolog),
            Ok(NodeScriptFailure::Epilog) => Some(NodeScript::Epilog),
            Ok(NodeScriptFailure::KillTask) => Some(NodeScript::KillTask),
            Ok(NodeScriptFailure::None) | Err(_) => None,
        },
    };
    let result = svc
        .core
        .call(move |cx| on_job_exited(cx.core, cx.out, cx.now, exit))
        .await?;
    match result {
        Ok(()) | Err(CtldError::AlreadyDone | CtldError::InvalidJobId) => Ok(Ack {}),
        Err(e @ CtldError::StaleReport { .. }) => {
            tracing::warn!("{e}");
            Ok(Ack {})
        }
        Err(e) => Err(e.into()),
    }
}

/// `scontrol update nodename=... state=drain|down|resume|undrain|idle reason=...`.
/// `scontrol update PartitionName=... State=...`: administrators only.
pub async fn update_partition(
    svc: &ControllerService,
    req: Request<UpdatePartitionRequest>,
) -> Result<Ack, Status> {
    let caller = svc.admin(&req)?;
    let r = req.into_inner();
    let state = match r.state.to_ascii_uppercase().as_str() {
        "UP" => PartState::Up,
        "DOWN" => PartState::Down,
        "DRAIN" => PartState::Drain,
        "INACTIVE" => PartState::Inactive,
        other => {
            return Err(Status::invalid_argument(format!(
                "Invalid partition state specified: {other}"
            )));
        }
    };
    svc.core
        .call(move |cx| on_partition_state(cx.core, cx.out, caller, &r.partition, state))
        .await??;
    Ok(Ack {})
}

pub async fn update_node(
    svc: &ControllerService,
    req: Request<UpdateNodeRequest>,
) -> Result<Ack, Status> {
    let caller = svc.caller(&req)?;
    let r = req.into_inner();
    if !caller.admin {
        return user_drain(svc, caller, r).await;
    }
    if !r.features.is_empty() || r.weight.is_some() {
        return Err(Status::invalid_argument(
            "Update of this parameter is not supported",
        ));
    }
    let reason = r.reason.clone().filter(|s| !s.is_empty());
    let update = match r.state.as_deref().map(str::to_ascii_uppercase).as_deref() {
        Some("POWER_DOWN") => Some(Change::Power(PowerRequest::Down)),
        Some("POWER_DOWN_ASAP") => Some(Change::Power(PowerRequest::DownAsap {
            reason: reason.clone(),
        })),
        Some("POWER_DOWN_FORCE") => Some(Change::Power(PowerRequest::DownForce)),
        Some("POWER_UP") => Some(Change::Power(PowerRequest::Up)),
        Some("DRAIN") | Some("DOWN") if reason.is_none() => {
            return Err(Status::invalid_argument(
                "You must specify a reason when DOWNING or DRAINING a node. Request denied",
            ));
        }
        Some("DRAIN") => Some(Change::Node(NodeUpdate::Drain {
            reason: reason.unwrap_or_default(),
        })),
        Some("DOWN") => Some(Change::Node(NodeUpdate::Down {
            reason: reason.unwrap_or_default(),
        })),
        Some("RESUME" | "UNDRAIN" | "IDLE") => Some(Change::Node(NodeUpdate::Resume)),
        Some(other) => {
            return Err(Status::invalid_argument(format!(
                "Invalid node state specified: {other}"
            )));
        }
        None => None,
    };
    let comm = (r.node_addr.clone(), r.node_hostname.clone());
    if update.is_none() && comm == (None, None) {
        return Ok(Ack {});
    }
    let mut names = Vec::new();
    for expr in &r.nodes {
        let expanded = sluice_vocab::hostlist::expand(expr)
            .map_err(|_| Status::from(CtldError::InvalidNodeName { name: expr.clone() }))?;
        names.extend(expanded);
    }
    svc.core
        .call(move |cx| {
            for name in &names {
                match update.clone() {
                    Some(Change::Node(u)) => {
                        on_node_update(cx.core, cx.out, cx.now, caller, name, u)?
                    }
                    Some(Change::Power(p)) => {
                        on_node_power(cx.core, cx.out, cx.now, caller, name, p)?
                    }
                    None => {}
                }
                if comm != (None, None) {
                    let (addr, host) = comm.clone();
                    on_node_comm(cx.core, cx.out, caller, name, addr.clone(), host)?;
                    if let Some(a) = addr
                        && let Some((_, port)) = cx.node_addr(name)
                    {
                        cx.set_node_addr(name, a, port);
                    }
                }
            }
            Ok::<_, CtldError>(())
        })
        .await??;
    Ok(Ack {})
}

/// `scontrol update NodeName=... State=DRAIN Reason=...` by a user who is not an
/// administrator: failure management lets users of `UserDrainAllow` drain nodes of their own
/// running jobs; anything else is refused.
async fn user_drain(
    svc: &ControllerService,
    caller: crate::core::Caller,
    r: UpdateNodeRequest,
) -> Result<Ack, Status> {
    let drain = r
        .state
        .as_deref()
        .is_some_and(|s| s.eq_ignore_ascii_case("DRAIN"))
        && r.features.is_empty()
        && r.weight.is_none()
        && r.node_addr.is_none()
        && r.node_hostname.is_none();
    if !drain {
        tracing::warn!(
            uid = caller.uid,
            "refused a node update that needs an administrator"
        );
        return Err(CtldError::AccessDenied.into());
    }
    let Some(reason) = r.reason.filter(|s| !s.is_empty()) else {
        return Err(Status::invalid_argument(
            "You must specify a reason when DOWNING or DRAINING a node. Request denied",
        ));
    };
    let mut names = Vec::new();
    for expr in &r.nodes {
        let expanded = sluice_vocab::hostlist::expand(expr)
            .map_err(|_| Status::from(CtldError::InvalidNodeName { name: expr.clone() }))?;
        names.extend(expanded);
    }
    let user = svc.users.name(caller.uid);
    svc.core
        .call(move |cx| {
            // Every node is checked before any is drained: a refusal changes nothing.
            for name in &names {
                crate::core::nonstop::ops::may_user_drain(cx.core, caller, &user, name)?;
            }
            for name in &names {
                on_user_drain(cx.core, cx.out, cx.now, caller, &user, name, &reason)?;
            }
            Ok::<_, CtldError>(())
        })
        .await??;
    Ok(Ack {})
}

/// What `state=` asks: an ordinary node update, or a power request.
#[derive(Debug, Clone)]
enum Change {
    Node(NodeUpdate),
    Power(PowerRequest),
}

#[cfg(test)]
mod tests {
    use super::heartbeat_secs;

    #[test]
    fn heartbeats_come_three_times_per_timeout_within_bounds() {
        assert_eq!(heartbeat_secs(300), 30);
        assert_eq!(heartbeat_secs(30), 10);
        assert_eq!(heartbeat_secs(1), 1);
        assert_eq!(heartbeat_secs(0), 30);
    }
}
