//! Administrators' power requests (`scontrol update nodename=X state=power_down|power_up|
//! power_down_asap|power_down_force`), the power side of `state=resume`, and `nodeaddr=` /
//! `nodehostname=` updates for cloud nodes.

use super::super::jobs::JobReason;
use super::super::kill::kill_job;
use super::super::outbox::{Outbox, SaveHint};
use super::super::{Caller, Core, SimTime};
use super::PowerStatus;
use crate::error::CtldError;
use sluice_vocab::JobState;

/// A manual power request for a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PowerRequest {
    /// `power_down`: power down as soon as it has no job (`!`).
    Down,
    /// `power_down_asap`: drain, then power down (`drng!`).
    DownAsap {
        /// The drain reason (Slurm's default when not given).
        reason: Option<String>,
    },
    /// `power_down_force`: requeue (or cancel) its job and power down.
    DownForce,
    /// `power_up`: resume it now.
    Up,
}

/// The drain reason of `power_down_asap` when none is given.
pub const POWER_DOWN_ASAP_REASON: &str = "POWER_DOWN_ASAP";

/// Applies a manual power request to node `name`. A node already powering up or down only
/// records the request, which takes effect once that is over (as in Slurm).
pub fn on_node_power(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    caller: Caller,
    name: &str,
    req: PowerRequest,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let i = core.nodes.lookup(name)?;
    let node = core.nodes.get_mut(i);
    match req {
        PowerRequest::Up => {
            node.power.down_requested = false;
            if node.power.status == PowerStatus::Off {
                node.power.status = PowerStatus::ResumeQueued;
            }
        }
        PowerRequest::Down => {
            if node.power.status != PowerStatus::Off {
                node.power.down_requested = true;
            }
        }
        PowerRequest::DownAsap { reason } => {
            if node.power.status != PowerStatus::Off {
                node.power.down_requested = true;
                node.drain = true;
                node.reason = Some(reason.unwrap_or_else(|| POWER_DOWN_ASAP_REASON.to_string()));
            }
        }
        PowerRequest::DownForce => {
            if node.power.status == PowerStatus::ResumeQueued {
                node.power.status = PowerStatus::Off;
            }
            if node.power.status != PowerStatus::Off {
                node.power.down_requested = true;
            }
            if let Some(job) = node.job {
                let requeue = core.jobs.map.get(&job).is_some_and(|j| j.may_requeue());
                let (state, reason) = if requeue {
                    (JobState::Pending, JobReason::None)
                } else {
                    (JobState::Cancelled, JobReason::None)
                };
                let active = core.jobs.map.get(&job).is_some_and(|j| {
                    !j.completing && matches!(j.state, JobState::Running | JobState::Suspended)
                });
                if active {
                    kill_job(core, out, now, job, state, reason);
                }
            }
        }
    }
    core.nodes.refresh(i);
    out.save(SaveHint::Node(i));
    Ok(())
}

/// The power side of `state=resume`: a node powering down is taken as powered down now, and a
/// pending power down request is withdrawn.
pub(crate) fn on_admin_resume(core: &mut Core, i: sluice_vocab::NodeIdx) {
    let p = &mut core.nodes.get_mut(i).power;
    p.down_requested = false;
    if matches!(p.status, PowerStatus::PoweringDown { .. }) {
        p.status = PowerStatus::Off;
        p.last_busy = None;
    }
}

/// `scontrol update nodename=X nodeaddr=A nodehostname=H`: where a (cloud) node is reached.
pub fn on_node_comm(
    core: &mut Core,
    out: &mut impl Outbox,
    caller: Caller,
    name: &str,
    addr: Option<String>,
    hostname: Option<String>,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let i = core.nodes.lookup(name)?;
    let node = core.nodes.get_mut(i);
    if let Some(a) = addr {
        node.addr = a;
    }
    if let Some(h) = hostname {
        node.power.hostname = Some(h);
    }
    out.save(SaveHint::Node(i));
    Ok(())
}
