//! The store behind the group commit. The loop sees it as a [`StateSink`], so tests can put a
//! failing store behind it; the daemon uses the controller store
//! ([`crate::store::StateStore`]) under `StateSaveLocation`.

use crate::core::assoc::cache::DbdCache;
use crate::core::federation::FedView;
use crate::core::snapshot::Snapshot;
use crate::core::{AcctRecord, Core, SaveHint};
use crate::store::StateStore;

/// Where a batch's changes become durable.
pub trait StateSink: Send {
    /// Writes, in ONE transaction, the jobs and nodes named by `saves` as they are in `core`,
    /// the accounting records `acct`, and the core's id source. Nothing is written on error.
    fn commit(
        &mut self,
        core: &Core,
        saves: &[SaveHint],
        acct: &[AcctRecord],
    ) -> Result<(), String>;

    /// Everything committed so far, to rebuild the core from after a failed commit (the
    /// failed batch's changes are in the core, not in the store).
    fn load(&self) -> Result<Snapshot, String>;

    /// The saved federation view and event cursor (`None`: nothing saved, or a store that
    /// keeps none).
    fn fed_state(&self) -> Option<(FedView, u64)> {
        None
    }

    /// The saved associations and users of the dbd (`None`: nothing saved, or a store that
    /// keeps none).
    fn dbd_cache(&self) -> Option<DbdCache> {
        None
    }
}

impl StateSink for StateStore {
    fn commit(
        &mut self,
        core: &Core,
        saves: &[SaveHint],
        acct: &[AcctRecord],
    ) -> Result<(), String> {
        StateStore::commit(self, core, saves, acct).map_err(|e| e.to_string())
    }

    fn load(&self) -> Result<Snapshot, String> {
        StateStore::load_committed(self).map_err(|e| e.to_string())
    }

    fn fed_state(&self) -> Option<(FedView, u64)> {
        match self.load_fed_committed() {
            Ok(state) => state,
            Err(e) => {
                tracing::error!("saved federation state unreadable, starting without: {e}");
                None
            }
        }
    }

    fn dbd_cache(&self) -> Option<DbdCache> {
        match self.load_dbd_cache_committed() {
            Ok(cache) => cache,
            Err(e) => {
                tracing::error!("saved associations unreadable, waiting for the dbd's: {e}");
                None
            }
        }
    }
}
