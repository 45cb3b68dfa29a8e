//! `scontrol reconfigure`: a new `slurm.conf`, already read and validated by the caller,
//! applied to the running core in one step, or not at all.
//!
//! What changes live: the controller's tunables (`KillWait`, `MinJobAge`, `MaxJobCount`,
//! `MaxArraySize`, `ReturnToService`, `SchedulerType`, `SchedulerParameters` (the backfill
//! bounds `bf_window` and `bf_max_job_test`), `SchedulerTimeSlice`, `DefMemPerCPU`,
//! `DefMemPerNode`, `FirstJobId` and `SlurmdSpoolDir` as shown), every power save key, the
//! partitions' `Default`, `MaxTime`, `MaxNodes`, `State`, `OverSubscribe`, `AllowGroups`,
//! `AllowAccounts`/`DenyAccounts`/`AllowQos`/`DenyQos` and power keys, and the nodes' `Features` and `Weight` (as long as the weights keep the node
//! order). New limits apply to what is submitted from then on, as a restart would.
//! A node's `State=` and `Reason=` in the file are where a new node starts, so a running
//! node keeps its state, as on a restart. Whatever else changed ([`check`]) is refused with
//! every such change named, and nothing is applied.
//!
//! The power save exclusions follow `ReconfigFlags=KeepPowerSaveSettings` of the new file
//! ([`PowerConf::reconfigured`](crate::conf::PowerConf::reconfigured)): with it the
//! `SuspendExc*` values in force (runtime updates included) survive, without it the file's
//! values replace them.

mod check;

use super::features::Constraint;
use super::jobs::JobTable;
use super::power::PowerSettings;
use super::{Caller, Core, CoreConfig, partitions};
use crate::conf::CtldConf;
use crate::error::CtldError;
use std::sync::Arc;

/// Applies `file` (a freshly read `slurm.conf`) to the running core, or changes nothing and
/// says why: the caller is no administrator, a change needs a restart
/// ([`CtldError::RestartNeeded`]), or an `AllowGroups` group is unknown (`group_id` resolves
/// group names, as for [`Core::new`]).
pub fn on_reconfigure(
    core: &mut Core,
    caller: Caller,
    file: CtldConf,
    group_id: &dyn Fn(&str) -> Option<u32>,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let order: Vec<&str> = core.nodes.nodes.iter().map(|n| n.name.as_str()).collect();
    let changes = check::restart_needed(&core.conf, &file, &order);
    if !changes.is_empty() {
        return Err(CtldError::RestartNeeded { changes });
    }
    let mut next = file;
    next.power = core.conf.power.reconfigured(&next.power);
    // Everything that can fail comes before the first change.
    let gids = next
        .partitions
        .iter()
        .map(|pc| partitions::allow_gids(&next, pc, group_id))
        .collect::<Result<Vec<_>, _>>()?;
    apply(core, next, gids);
    Ok(())
}

impl Core {
    /// The `SchedulerTimeSlice` in force, in seconds.
    pub fn time_slice_secs(&self) -> u64 {
        self.gang.slice_secs()
    }
}

/// Applies a checked configuration; `gids` are the partitions' `AllowGroups`, in order.
fn apply(core: &mut Core, next: CtldConf, gids: Vec<Option<Vec<u32>>>) {
    core.cfg = CoreConfig::from_conf(&next);
    core.policy.def_mem_per_cpu_mb = next.select.def_mem_per_cpu_mb;
    core.policy.def_mem_per_node_mb = next.select.def_mem_per_node_mb;
    core.gang
        .set_slice_secs(u64::from(next.select.time_slice_secs));
    let mut features_changed = false;
    for nc in &next.nodes {
        let Some(&i) = core.nodes.by_name.get(&nc.name) else {
            continue;
        };
        let node = core.nodes.get_mut(i);
        node.weight = nc.weight;
        if node.features != nc.features {
            node.features = nc.features.clone();
            features_changed = true;
        }
    }
    if features_changed {
        refresh_constraints(core);
    }
    let default = next.default_partition().map(|p| p.name.clone());
    for ((part, pc), allow_gids) in core.parts.iter_mut().zip(&next.partitions).zip(gids) {
        part.default = default.as_deref() == Some(pc.name.as_str());
        part.max_time = pc.max_time;
        part.max_nodes = pc.max_nodes;
        part.state = pc.state;
        part.oversubscribe = pc.oversubscribe;
        part.allow_gids = allow_gids;
        part.access = pc.access.clone();
        part.shapes = partitions::shapes(&part.nodes, &core.nodes);
    }
    core.power.settings = PowerSettings::build(&next, &core.nodes, &core.parts);
    core.conf = Arc::new(next);
    // nonstop.conf was read again with slurm.conf.
    super::nonstop::install(core);
    super::submit::recheck_part_limits(core);
}

/// Recomputes the node bitmap of every constraint seen so far, and each job's, after node
/// features changed.
fn refresh_constraints(core: &mut Core) {
    let JobTable {
        map,
        constraint_nodes,
        ..
    } = &mut core.jobs;
    constraint_nodes.retain(|spec, bits| match Constraint::parse(spec) {
        Some(c) => {
            *bits = Arc::new(c.bitmap(&core.nodes));
            true
        }
        None => false,
    });
    for job in map.values_mut() {
        let Some(spec) = &job.req.constraint else {
            continue;
        };
        let bits = match constraint_nodes.get(spec) {
            Some(bits) => bits.clone(),
            None => {
                let Some(c) = Constraint::parse(spec) else {
                    continue;
                };
                let bits = Arc::new(c.bitmap(&core.nodes));
                constraint_nodes.insert(spec.clone(), bits.clone());
                bits
            }
        };
        job.feature_nodes = Some(bits);
    }
}
