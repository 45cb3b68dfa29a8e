//! Waiting for a state another process or task reaches: poll a condition, bounded in time,
//! and fail naming what never happened. Tests never sleep for a fixed time instead.

use std::fmt::Debug;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a test waits for a state before it fails.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(20);
/// How often a condition is polled.
pub const POLL: Duration = Duration::from_millis(10);

/// Polls `check` until it gives a value, for at most [`DEFAULT_WAIT`]; panics naming `what`.
pub async fn eventually<T>(what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
    eventually_within(DEFAULT_WAIT, what, check).await
}

/// Like [`eventually`], for at most `timeout`.
pub async fn eventually_within<T>(
    timeout: Duration,
    what: &str,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(POLL).await;
    }
}

/// Polls `check` until it gives `Ok`, for at most [`DEFAULT_WAIT`]; on timeout the panic names
/// `what` and shows the last `Err` seen (the state that never became right).
pub async fn eventually_seen<T, S: Debug>(
    what: &str,
    mut check: impl AsyncFnMut() -> Result<T, S>,
) -> T {
    let deadline = Instant::now() + DEFAULT_WAIT;
    loop {
        match check().await {
            Ok(v) => return v,
            Err(seen) => assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; last seen: {seen:?}"
            ),
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until the file at `path` exists and returns its content.
pub async fn file_contents(path: &Path) -> String {
    eventually(&format!("{} to be written", path.display()), async || {
        std::fs::read_to_string(path).ok()
    })
    .await
}

/// Waits until nothing is at `path` any more.
pub async fn file_gone(path: &Path) {
    eventually(&format!("{} to be removed", path.display()), async || {
        (!path.exists()).then_some(())
    })
    .await
}

/// Polls a synchronous `check` until it holds, for at most `timeout`, from a test that has no
/// runtime (one driving command binaries); `on_timeout` adds context (logs, queue) to the panic.
pub fn wait_blocking(
    timeout: Duration,
    what: &str,
    mut check: impl FnMut() -> bool,
    on_timeout: impl FnOnce() -> String,
) {
    let deadline = Instant::now() + timeout;
    while !check() {
        if Instant::now() >= deadline {
            panic!("timed out waiting for {what}\n{}", on_timeout());
        }
        std::thread::sleep(POLL);
    }
}
