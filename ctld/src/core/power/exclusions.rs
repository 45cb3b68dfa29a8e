//! `scontrol update SuspendExcNodes|SuspendExcParts|SuspendExcStates[+-]=value` (Slurm
//! 23.02+): the power save exclusions of the running controller. They change the
//! configuration in force ([`Core::conf`], what `scontrol show config` prints) and the power
//! settings derived from it, until the next `scontrol reconfigure` (which keeps them with
//! `ReconfigFlags=KeepPowerSaveSettings`) or restart (which reads `slurm.conf`, as Slurm does).
//!
//! `=` replaces the list (an empty value clears it), `+=` adds to it and `-=` takes from it.
//! Node counts (`n[1-8]:2`) only go with `=`, as in Slurm.

use super::super::{Caller, Core};
use super::PowerSettings;
use crate::conf::ExcNodes;
use crate::conf::exclusions::{ExcValueError, comma_list, parse_exc_nodes, parse_exc_states};
use crate::error::CtldError;
use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

/// Which exclusion an update changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuspendExcKey {
    /// `SuspendExcNodes`.
    Nodes,
    /// `SuspendExcParts`.
    Parts,
    /// `SuspendExcStates`.
    States,
}

/// How the value is combined with the list in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateMode {
    /// `=`: replaces it.
    Set,
    /// `+=`: adds what is not there yet.
    Add,
    /// `-=`: takes away what is there.
    Remove,
}

/// Changes exclusion `key` of the running controller by `value`. Unknown nodes, partitions or
/// states are refused with nothing changed.
pub fn on_suspend_exc_update(
    core: &mut Core,
    caller: Caller,
    key: SuspendExcKey,
    mode: UpdateMode,
    value: &str,
) -> Result<(), CtldError> {
    if !caller.admin {
        return Err(CtldError::AccessDenied);
    }
    let power = &core.conf.power;
    let mut next = power.clone();
    match key {
        SuspendExcKey::Nodes => {
            next.suspend_exc_nodes = exc_nodes(core, &power.suspend_exc_nodes, mode, value)?;
        }
        SuspendExcKey::Parts => {
            let mut parts = Vec::new();
            for name in comma_list(value) {
                if !core.parts.iter().any(|p| p.name == name) {
                    return Err(CtldError::InvalidPartitionName {
                        name: name.to_string(),
                    });
                }
                parts.push(name.to_string());
            }
            next.suspend_exc_parts = combine(&power.suspend_exc_parts, parts, mode);
        }
        SuspendExcKey::States => {
            let states = parse_exc_states(value).map_err(|e| match e {
                ExcValueError::BadState { state } => CtldError::InvalidSuspendExcState { state },
                other => CtldError::InvalidSuspendExcState {
                    state: other.to_string(),
                },
            })?;
            next.suspend_exc_states = combine(&power.suspend_exc_states, states, mode);
        }
    }
    Arc::make_mut(&mut core.conf).power = next;
    core.power.settings = PowerSettings::build(&core.conf, &core.nodes, &core.parts);
    Ok(())
}

/// The `SuspendExcNodes` sets after the update.
fn exc_nodes(
    core: &Core,
    now: &[ExcNodes],
    mode: UpdateMode,
    value: &str,
) -> Result<Vec<ExcNodes>, CtldError> {
    let invalid = || CtldError::InvalidNodeName {
        name: value.to_string(),
    };
    if mode != UpdateMode::Set {
        if value.contains(':') {
            return Err(CtldError::SuspendExcCountUpdate);
        }
        if now.iter().any(|s| s.count.is_some()) {
            return Err(CtldError::SuspendExcHasCounts);
        }
    }
    let sets = parse_exc_nodes(value).map_err(|_| invalid())?;
    if let Some(name) = sets
        .iter()
        .flat_map(|s| &s.nodes)
        .find(|n| !core.nodes.by_name.contains_key(n.as_str()))
    {
        return Err(CtldError::InvalidNodeName { name: name.clone() });
    }
    if mode == UpdateMode::Set {
        return Ok(sets);
    }
    let current: Vec<String> = now.iter().flat_map(|s| s.nodes.clone()).collect();
    let given: Vec<String> = sets.into_iter().flat_map(|s| s.nodes).collect();
    let nodes = combine(&current, given, mode);
    Ok(if nodes.is_empty() {
        Vec::new()
    } else {
        vec![ExcNodes { nodes, count: None }]
    })
}

/// `now` with `given` set, added or removed, in order and without repeats.
fn combine<T: Clone + Eq + Hash>(now: &[T], given: Vec<T>, mode: UpdateMode) -> Vec<T> {
    let (base, added, removed): (&[T], Vec<T>, HashSet<T>) = match mode {
        UpdateMode::Set => (&[], given, HashSet::new()),
        UpdateMode::Add => (now, given, HashSet::new()),
        UpdateMode::Remove => (now, Vec::new(), given.into_iter().collect()),
    };
    let mut seen = HashSet::new();
    base.iter()
        .cloned()
        .chain(added)
        .filter(|item| !removed.contains(item) && seen.insert(item.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{UpdateMode, combine};

    #[test]
    fn combine_sets_adds_and_removes_without_repeats() {
        let now = ["a", "b"];
        assert_eq!(combine(&now, vec!["c", "c"], UpdateMode::Set), ["c"]);
        assert_eq!(
            combine(&now, vec!["b", "c"], UpdateMode::Add),
            ["a", "b", "c"]
        );
        assert_eq!(combine(&now, vec!["a", "z"], UpdateMode::Remove), ["b"]);
        assert!(combine(&now, vec![], UpdateMode::Set).is_empty());
    }
}
