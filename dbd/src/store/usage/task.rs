//! The daemon's rollup task: every interval, rolls up the hours that closed and purges old
//! records. The clock is passed in, so only the daemon reads the real one.

use std::sync::Arc;
use std::time::Duration;

use sluice_reports::Calendar;

use super::PurgePolicy;
use crate::store::Store;

/// How often the daemon checks for closed hours (an hour is rolled within this of closing,
/// and late records within this of arriving).
pub const ROLLUP_INTERVAL: Duration = Duration::from_secs(60);

/// Rolls up and purges every `interval` until dropped (the daemon aborts it at shutdown),
/// reading the time from `clock`. A failing round is logged and retried next time.
pub async fn run(
    store: Arc<Store>,
    cal: Calendar,
    policy: PurgePolicy,
    interval: Duration,
    clock: impl Fn() -> i64 + Send + 'static,
) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let now = clock();
        let s = Arc::clone(&store);
        match tokio::task::spawn_blocking(move || s.roll_up(&cal, now, &policy)).await {
            Ok(Ok(summary)) if summary.hours > 0 || summary.purged != Default::default() => {
                tracing::info!(hours = summary.hours, purged = ?summary.purged, "usage rolled up");
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "usage rollup failed"),
            Err(e) => tracing::error!(error = %e, "usage rollup task failed"),
        }
    }
}
