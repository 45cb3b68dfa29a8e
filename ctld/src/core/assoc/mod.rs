//! Associations and their limits in the controller (`AccountingStorageEnforce`): the runtime
//! hands the core this cluster's associations whenever it fetches them from the accounting
//! daemon, and keeps the last ones while the dbd is away. With `associations` a job needs an
//! association of its user with its account; with `limits` the association limits are
//! enforced: per-job limits and submit counts at submission (Slurm's "Job violates
//! accounting/QOS policy" refusal), running counts and group resources when the job would
//! start (Slurm's `Assoc*` pending reasons).
//!
//! `GrpTRESMins` compares the TRES-minutes used under an association (the dbd's decayed
//! usage, handed over with the fair-share table, so only under `priority/multifactor` as in
//! Slurm) with its limit: a job pends once they reach it, and running jobs under it end
//! (TIMEOUT, see [`used_up`]).
//! With `safe` a job starts only when its whole time limit times what it is allocated fits
//! in what is left after the usage and what running jobs still have to run. Group limits on
//! resources are checked twice, as Slurm does: with what the job asks before nodes are
//! picked, and with what it would really hold (whole nodes, `--exclusive`) after.
//!
//! `Max*` limits arrive as in force (inherited down the account tree by the dbd); `Grp*`
//! limits are checked at every level from the user's association up to the root.

pub mod cache;
mod check;
mod usage;
mod used_up;

pub use cache::{set, set_users};
pub use check::AssocReason;
pub(crate) use check::{allocation_reason, blocking_reason, check_submit};
pub(crate) use usage::Usage;
pub use usage::{TresSecs, set_used};
pub(crate) use used_up::on_tick;

use std::collections::HashMap;

use sluice_vocab::assoc_limits::AssocLimits;

use super::Core;

/// One association of this cluster, as the dbd lists it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct AssocRecord {
    /// Its account.
    pub account: String,
    /// Its user; `""` for the account's own association.
    pub user: String,
    /// For an account association its parent account (`""` for root).
    pub parent_account: String,
    /// The limits in force on it.
    pub limits: AssocLimits,
    /// The QOS it may use, in force.
    pub qos: Vec<String>,
    /// Its default QOS in force (`""`: none).
    pub default_qos: String,
}

/// An association's place in the tree: `(account, user)`, user `""` for an account's own.
pub type AssocKey = (String, String);

/// This cluster's associations, by `(account, user)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssocTable {
    map: HashMap<AssocKey, AssocRecord>,
}

impl AssocTable {
    /// The table of `records`.
    pub fn new(records: impl IntoIterator<Item = AssocRecord>) -> Self {
        Self {
            map: records
                .into_iter()
                .map(|r| ((r.account.clone(), r.user.clone()), r))
                .collect(),
        }
    }

    /// Every association.
    pub fn records(&self) -> impl Iterator<Item = &AssocRecord> {
        self.map.values()
    }

    /// The association of `user` with `account`.
    pub fn get(&self, account: &str, user: &str) -> Option<&AssocRecord> {
        self.map.get(&(account.to_string(), user.to_string()))
    }

    /// The keys from `user`'s association with `account` up to the root: the user's, its
    /// account's, then each parent account's.
    pub(crate) fn chain(&self, account: &str, user: &str) -> Vec<AssocKey> {
        let mut out = vec![(account.to_string(), user.to_string())];
        let mut cur = account.to_string();
        // The tree is acyclic in the dbd; the bound guards against a corrupted list.
        for _ in 0..10_000 {
            let key = (cur.clone(), String::new());
            let Some(rec) = self.map.get(&key) else { break };
            if key != out[0] {
                out.push(key);
            }
            if rec.parent_account.is_empty() {
                break;
            }
            cur.clone_from(&rec.parent_account);
        }
        out
    }
}

/// The associations the core knows: `None` until the dbd listed them once.
pub fn table(core: &Core) -> Option<&AssocTable> {
    core.assocs.as_ref()
}
