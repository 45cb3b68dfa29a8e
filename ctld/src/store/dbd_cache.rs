//! The dbd's associations and users in the store's `meta` table (`dbd_cache`, JSON; see
//! [`crate::core::assoc::cache`]): written in the commit after the core's copy changed, read at
//! start so a controller restarted while the dbd is away still enforces the last lists.

use super::{StateStore, StoreError, json, put_meta};
use crate::core::Core;
use crate::core::assoc::cache::{self, DbdCache};

/// Writes the core's lists when their generation differs from `saved`; returns the
/// generation saved once the transaction commits (`None`: nothing to write).
pub(super) fn write(
    tx: &rusqlite::Transaction<'_>,
    core: &Core,
    saved: u64,
) -> rusqlite::Result<Option<u64>> {
    let generation = cache::generation(core);
    if generation == saved {
        return Ok(None);
    }
    if let Some(lists) = cache::snapshot(core) {
        put_meta(tx, "dbd_cache", &json(&lists)?)?;
    }
    Ok(Some(generation))
}

impl StateStore {
    /// The saved associations and users (`None` when never saved).
    pub fn load_dbd_cache(&self) -> Result<Option<DbdCache>, StoreError> {
        self.meta("dbd_cache")?
            .map(|v| {
                serde_json::from_slice(&v)
                    .map_err(|e| self.corrupt("meta", "dbd_cache", &e.to_string()))
            })
            .transpose()
    }
}
