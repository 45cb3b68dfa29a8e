//! The replay cache: every daemon remembers the nonce of each token it accepted until the token
//! is too old to be accepted anyway, and refuses a token whose nonce it has seen. Together with
//! the binding of a token to its request, a token captured on the wire or left in a process's
//! memory buys nothing: it was good for one call, which has been made.

use std::collections::HashMap;
use std::sync::Mutex;

use super::MAX_TOKEN_AGE;

/// Nonces seen, with the unix time after which each one's token is stale anyway.
#[derive(Debug, Default)]
pub struct ReplayCache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Nonce -> the last second its token is accepted.
    seen: HashMap<String, i64>,
    /// When stale entries were last dropped.
    pruned_at: i64,
}

impl ReplayCache {
    /// Records the nonce of a token issued at `issued`, at unix time `now`; false when the nonce
    /// was seen before (a replay).
    pub fn admit(&self, nonce: &str, issued: i64, now: i64) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // At most once a second: the map holds one window of requests, so a sweep costs about
        // as much as that many inserts.
        if now > state.pruned_at {
            state.seen.retain(|_, last| *last >= now);
            state.pruned_at = now;
        }
        if state.seen.contains_key(nonce) {
            return false;
        }
        state
            .seen
            .insert(nonce.to_string(), issued.saturating_add(MAX_TOKEN_AGE));
        true
    }

    /// How many nonces are remembered (tests, diagnostics).
    pub fn len(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .seen
            .len()
    }

    /// Whether no nonce is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_is_refused_the_second_time_within_the_window() {
        let cache = ReplayCache::default();
        assert!(cache.admit("a", 100, 100));
        assert!(!cache.admit("a", 100, 130), "replayed 30 s later");
        assert!(cache.admit("b", 100, 130));
        assert!(!cache.admit("a", 100, 100 + MAX_TOKEN_AGE));
    }

    #[test]
    fn nonces_are_forgotten_once_their_tokens_are_stale() {
        let cache = ReplayCache::default();
        assert!(cache.admit("a", 100, 100));
        assert!(cache.admit("b", 150, 150));
        assert_eq!(cache.len(), 2);
        // "a" is stale from 161 on: the verifier refuses it for its age, the cache forgets it.
        assert!(cache.admit("c", 161, 100 + MAX_TOKEN_AGE + 1));
        assert_eq!(cache.len(), 2);
        assert!(!cache.admit("b", 150, 100 + MAX_TOKEN_AGE + 1));
    }
}
