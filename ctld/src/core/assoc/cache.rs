//! What the controller keeps of the accounting daemon's associations (with their QOS lists),
//! users and QOS across a restart, as Slurm's controller keeps them in its `assoc_mgr` state files: with
//! `AccountingStorageEnforce`, a controller restarted while the dbd is away still knows who
//! may submit (and their default accounts, administrators and coordinators, and the QOS with
//! their limits) from the last lists it fetched, instead of refusing everyone until the dbd answers.
//!
//! The core holds the lists and a fingerprint of them that moves when they change; the state
//! store saves them in the commit after a change and hands them back at start (and after a
//! failed commit, when the core is rebuilt from the store).

use serde::{Deserialize, Serialize};

use super::{AssocRecord, AssocTable};
use crate::core::Core;
use crate::core::qos::QosTable;
use sluice_vocab::qos::Qos;

/// A user as the dbd lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct DbdUser {
    /// Login name.
    pub name: String,
    /// `AdminLevel` as the dbd names it (`None`, `Operator`, `Administrator`).
    pub admin_level: String,
    /// Default account (`""`: none).
    pub default_account: String,
    /// The accounts it coordinates (granted and below).
    pub coord_accounts: Vec<String>,
}

/// The saved form: this cluster's associations, the dbd's users and QOS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct DbdCache {
    /// The associations, in no particular order.
    pub assocs: Vec<AssocRecord>,
    /// The users.
    pub users: Vec<DbdUser>,
    /// The QOS, by name (empty in a cache saved before QOS were kept, or before the dbd
    /// listed them once).
    pub qos: Vec<Qos>,
}

/// The lists the core holds and their generation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Kept {
    /// The dbd's users as last fetched (or restored).
    pub users: Vec<DbdUser>,
    /// A fingerprint of the associations and users: moves on every change of them.
    pub generation: u64,
}

/// Replaces the associations the core knows (the runtime's refresh).
pub fn set(core: &mut Core, table: AssocTable) {
    if core.assocs.as_ref() != Some(&table) {
        core.assocs = Some(table);
        refingerprint(core);
    }
}

/// Replaces the dbd's users the core keeps for a restart.
pub fn set_users(core: &mut Core, mut users: Vec<DbdUser>) {
    users.sort_by(|a, b| a.name.cmp(&b.name));
    if core.dbd_kept.users != users {
        core.dbd_kept.users = users;
        refingerprint(core);
    }
}

/// Takes back what a previous run saved (at start, before the dbd is heard from).
pub fn restore(core: &mut Core, cache: DbdCache) {
    core.assocs = Some(AssocTable::new(cache.assocs));
    core.dbd_kept.users = cache.users;
    if !cache.qos.is_empty() {
        core.qos = Some(QosTable::new(cache.qos));
    }
    refingerprint(core);
}

/// Moves the generation after a change of the kept lists (the QOS refresh calls it too).
pub(crate) fn refingerprint(core: &mut Core) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    snapshot(core).hash(&mut h);
    // 0 is what a store that saved nothing holds: never a fingerprint.
    core.dbd_kept.generation = h.finish().max(1);
}

/// The dbd's users as kept.
pub fn users(core: &Core) -> &[DbdUser] {
    &core.dbd_kept.users
}

/// The generation of the kept lists.
pub fn generation(core: &Core) -> u64 {
    core.dbd_kept.generation
}

/// The kept lists in their saved form (`None` before the dbd listed associations once).
pub fn snapshot(core: &Core) -> Option<DbdCache> {
    let table = core.assocs.as_ref()?;
    let mut assocs: Vec<AssocRecord> = table.records().cloned().collect();
    assocs.sort_by(|a, b| (&a.account, &a.user).cmp(&(&b.account, &b.user)));
    let mut qos: Vec<Qos> = core
        .qos
        .as_ref()
        .map(|t| t.iter().cloned().collect())
        .unwrap_or_default();
    qos.sort_by(|a, b| a.name.cmp(&b.name));
    Some(DbdCache {
        assocs,
        users: core.dbd_kept.users.clone(),
        qos,
    })
}
