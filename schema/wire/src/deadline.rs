//! A command's deadline, carried with its requests so a daemon never applies a request whose
//! client has already given up (and so told its user it failed).
//!
//! A command waits `MessageTimeout` for each reply (see [`crate::client::connect_bounded`]);
//! its requests carry the moment it stops waiting, in wall-clock milliseconds
//! ([`HEADER`]). A request can sit in a daemon far longer than its client waits: the daemon
//! was stopped (SIGSTOP, a frozen host) with the request in its socket, or its core was busy.
//! The server's guard ([`crate::auth::Guarded`]) runs each request's handler with that
//! deadline in scope ([`current`]), and the controller's core refuses, without applying it, a
//! request it takes too late to answer in time ([`too_late`]). Hosts' clocks are assumed
//! close, as the credentials' validity already assumes.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The request header holding the client's deadline, milliseconds since the Unix epoch.
pub const HEADER: &str = "sluice-deadline-ms";

/// How long before its client's deadline a request must be taken to be applied: the time its
/// commit and its reply may take.
pub const ANSWER_MARGIN: Duration = Duration::from_secs(1);

tokio::task_local! {
    static DEADLINE: SystemTime;
}

/// The header value for a client waiting `timeout` from now.
pub fn stamp(timeout: Duration) -> String {
    millis(SystemTime::now() + timeout).to_string()
}

/// The deadline a request's headers carry, if any (an unreadable one counts as none).
pub fn of_headers(headers: &http::HeaderMap) -> Option<SystemTime> {
    let ms: u64 = headers.get(HEADER)?.to_str().ok()?.parse().ok()?;
    UNIX_EPOCH.checked_add(Duration::from_millis(ms))
}

/// Runs `fut` with `deadline` (the request's) in scope for [`current`].
pub async fn scope<F: Future>(deadline: Option<SystemTime>, fut: F) -> F::Output {
    match deadline {
        Some(d) => DEADLINE.scope(d, fut).await,
        None => fut.await,
    }
}

/// The deadline of the request whose handler is running, if its client gave one.
pub fn current() -> Option<SystemTime> {
    DEADLINE.try_with(|d| *d).ok()
}

/// Whether a request with `deadline`, taken at `now`, can no longer be answered before its
/// client gives up ([`ANSWER_MARGIN`]).
pub fn too_late(deadline: Option<SystemTime>, now: SystemTime) -> bool {
    deadline.is_some_and(|d| now + ANSWER_MARGIN > d)
}

fn millis(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_deadline_reads_back_and_decides_lateness() {
        let mut headers = http::HeaderMap::new();
        headers.insert(HEADER, stamp(Duration::from_secs(5)).parse().unwrap());
        let d = of_headers(&headers).unwrap();
        let now = SystemTime::now();
        assert!(!too_late(Some(d), now));
        assert!(!too_late(Some(d), now + Duration::from_millis(3900)));
        assert!(too_late(Some(d), now + Duration::from_millis(4100)));
        assert!(!too_late(None, now + Duration::from_secs(3600)));
        headers.insert(HEADER, "soon".parse().unwrap());
        assert_eq!(of_headers(&headers), None);
    }

    #[tokio::test]
    async fn the_deadline_is_in_scope_for_the_handler_only() {
        let d = UNIX_EPOCH + Duration::from_secs(42);
        assert_eq!(scope(Some(d), async { current() }).await, Some(d));
        assert_eq!(scope(None, async { current() }).await, None);
        assert_eq!(current(), None);
    }
}
