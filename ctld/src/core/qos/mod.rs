//! Quality of service in the controller. The runtime hands the core the dbd's QOS with every
//! association refresh (and keeps the last ones while the dbd is away). A job gets its QOS at
//! submission (`--qos`, else its association's default QOS, else the only QOS its association
//! may use, else `normal`, as Slurm's controller picks it) and keeps it; its name is in the
//! job's launch spec, so it is saved with the job.
//!
//! * [`check`]: the submission checks (an unknown QOS, one the association may not use under
//!   `AccountingStorageEnforce=qos`, partition `AllowQos`/`DenyQos`, submit counts) and the
//!   limits that keep a pending job waiting under `AccountingStorageEnforce=limits` (Slurm's
//!   `QOS*` reasons);
//! * [`usage`]: what running jobs hold per QOS and per QOS and user;
//! * [`used_up`]: running jobs end once their QOS has used up its `GrpTRESMins`.
//!
//! The QOS priority feeds the multifactor QOS factor ([`super::priority::qos`]).

mod check;
mod usage;
mod used_up;

pub use check::QosReason;
pub(crate) use check::{blocking_reason, check_submit, resolve};
pub(crate) use used_up::on_tick;

use std::collections::HashMap;

use sluice_vocab::qos::Qos;

use super::Core;

/// The dbd's QOS, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosTable {
    map: HashMap<String, Qos>,
    max_priority: u32,
}

impl QosTable {
    /// The table of `list`.
    pub fn new(list: impl IntoIterator<Item = Qos>) -> Self {
        let map: HashMap<String, Qos> = list.into_iter().map(|q| (q.name.clone(), q)).collect();
        let max_priority = map.values().map(|q| q.priority).max().unwrap_or(0);
        Self { map, max_priority }
    }

    /// The QOS named `name` (names are lower case, as the dbd stores them).
    pub fn get(&self, name: &str) -> Option<&Qos> {
        self.map
            .get(name)
            .or_else(|| self.map.get(&name.to_ascii_lowercase()))
    }

    /// Every QOS, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Qos> {
        self.map.values()
    }

    /// The largest priority of any QOS (what the QOS factor normalizes by).
    pub fn max_priority(&self) -> u32 {
        self.max_priority
    }
}

/// Replaces the QOS the core knows (the runtime's refresh); a change is saved with the next
/// commit (see [`super::assoc::cache`]).
pub fn set(core: &mut Core, table: QosTable) {
    if core.qos.as_ref() != Some(&table) {
        core.qos = Some(table);
        super::assoc::cache::refingerprint(core);
    }
}

/// Replaces what the jobs of each QOS have used on this cluster (decayed TRES-seconds by QOS
/// name, from the dbd with each fair-share refresh), which QOS `GrpTRESMins` limits compare
/// with.
pub fn set_used(core: &mut Core, used: HashMap<String, super::assoc::TresSecs>) {
    core.qos_used = used;
}

/// `secs` of a job of QOS `qos` as its usage counts them: weighed by the QOS's
/// `UsageFactor` (1 for a QOS the core does not know).
pub(crate) fn charged_secs(core: &Core, qos: &str, secs: u64) -> u64 {
    let factor = core
        .qos
        .as_ref()
        .and_then(|t| t.get(qos))
        .map_or(1.0, |q| q.usage_factor.as_f64());
    if factor == 1.0 {
        secs
    } else {
        (secs as f64 * factor) as u64
    }
}

/// The QOS the core knows: `None` until the dbd listed them once.
pub fn table(core: &Core) -> Option<&QosTable> {
    core.qos.as_ref()
}
