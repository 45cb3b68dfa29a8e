//! The federation state in the store's `meta` table: the view (`fed_view`, JSON) and the
//! event cursor (`fed_cursor`, the seq of the last event applied). Both are written in the
//! commit of the batch that changed them, so the cursor is durable exactly when the changes
//! of the events it passed are: a restarted controller resumes its event log from it.

use super::{StateStore, StoreError, json, put_meta};
use crate::core::Core;
use crate::core::federation::FedView;

/// What was last saved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SavedFed {
    pub view: FedView,
    pub cursor: u64,
}

/// Writes the view and cursor of `core` when they differ from `saved`; returns what is saved
/// once the transaction commits (`None`: nothing changed).
pub(super) fn write(
    tx: &rusqlite::Transaction<'_>,
    core: &Core,
    saved: &SavedFed,
) -> rusqlite::Result<Option<SavedFed>> {
    let (view, cursor) = (core.fed_view(), core.fed_cursor());
    if *view == saved.view && cursor == saved.cursor {
        return Ok(None);
    }
    if *view != saved.view {
        put_meta(tx, "fed_view", &json(view)?)?;
    }
    if cursor != saved.cursor {
        put_meta(tx, "fed_cursor", cursor.to_string().as_bytes())?;
    }
    Ok(Some(SavedFed {
        view: view.clone(),
        cursor,
    }))
}

impl StateStore {
    /// The saved federation view and event cursor (`None` when never saved).
    pub fn load_fed(&self) -> Result<Option<(FedView, u64)>, StoreError> {
        let view = self.meta("fed_view")?;
        let cursor = self.meta("fed_cursor")?;
        if view.is_none() && cursor.is_none() {
            return Ok(None);
        }
        let view = match view {
            Some(v) => serde_json::from_slice(&v)
                .map_err(|e| self.corrupt("meta", "fed_view", &e.to_string()))?,
            None => FedView::default(),
        };
        let cursor = match cursor {
            Some(c) => std::str::from_utf8(&c)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| self.corrupt("meta", "fed_cursor", "not an integer"))?,
            None => 0,
        };
        Ok(Some((view, cursor)))
    }
}
