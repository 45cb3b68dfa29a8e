//! The replay cache: every daemon remembers the nonce of each token it accepted until the token
//! is too old to be accepted anyway, and refuses a token whose nonce it has seen. Together with
//! the binding of a token to its request, a token captured on the wire or left in a process's
//! memory buys nothing: it was good for one call, which has been made.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

use super::MAX_TOKEN_AGE;

/// Nonces seen, with the unix time after which each one's token is stale anyway.
#[derive(Debug, Default)]
pub struct ReplayCache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The nonces remembered (128 random bits each: a nonce is its own key, no allocation).
    seen: HashSet<u128>,
    /// The same nonces in the order they were admitted, with the last second each one's token
    /// is accepted. Tokens arrive nearly in order of issue, so the front is (nearly) the
    /// oldest: dropping from the front costs each nonce one pop instead of a sweep of the whole
    /// set every second. One admitted out of order waits behind its elders, at most the
    /// clock skew allowed longer than needed.
    by_age: VecDeque<(i64, u128)>,
}

impl ReplayCache {
    /// Records `nonce` of a token issued at `issued`, at unix time `now`; false when the nonce
    /// was seen before (a replay).
    pub fn admit(&self, nonce: u128, issued: i64, now: i64) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(&(last, old)) = state.by_age.front() {
            if last >= now {
                break;
            }
            state.by_age.pop_front();
            state.seen.remove(&old);
        }
        if !state.seen.insert(nonce) {
            return false;
        }
        let last = issued.saturating_add(MAX_TOKEN_AGE);
        state.by_age.push_back((last, nonce));
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

    const A: u128 = 0xa;
    const B: u128 = 0xb;
    const C: u128 = 0xc;

    #[test]
    fn a_nonce_is_refused_the_second_time_within_the_window() {
        let cache = ReplayCache::default();
        assert!(cache.admit(A, 100, 100));
        assert!(!cache.admit(A, 100, 130), "replayed 30 s later");
        assert!(cache.admit(B, 100, 130));
        assert!(!cache.admit(A, 100, 100 + MAX_TOKEN_AGE));
    }

    #[test]
    fn nonces_are_forgotten_once_their_tokens_are_stale() {
        let cache = ReplayCache::default();
        assert!(cache.admit(A, 100, 100));
        assert!(cache.admit(B, 150, 150));
        assert_eq!(cache.len(), 2);
        // A is stale from 161 on: the verifier refuses it for its age, the cache forgets it.
        assert!(cache.admit(C, 161, 100 + MAX_TOKEN_AGE + 1));
        assert_eq!(cache.len(), 2);
        assert!(!cache.admit(B, 150, 100 + MAX_TOKEN_AGE + 1));
    }

    #[test]
    fn a_nonce_admitted_out_of_order_is_kept_until_its_elders_go() {
        let cache = ReplayCache::default();
        assert!(cache.admit(A, 150, 150));
        // Issued earlier, arrived later (clock skew between hosts).
        assert!(cache.admit(B, 140, 150));
        // B's token is stale after 200 but A's is not: both are still remembered...
        assert!(!cache.admit(B, 140, 201));
        // ...until A's time is over too.
        assert!(cache.admit(C, 211, 211));
        assert_eq!(cache.len(), 1);
    }
}
