//! The time window a report covers (Slurm's `slurmdb_report_set_start_end_time`).
//!
//! * Without `start=`/`end=`: yesterday 00:00 to today 00:00 (local time).
//! * `end=` is first capped at now, then rounded *up* to the hour; `start=` is rounded *down*.
//! * A window shorter than an hour is stretched to one hour after its start.
//!
//! Headers print the last second of the window (`end - 1`). Day boundaries are local time, so
//! the functions take the zone; only the command's entry point reads the clock.

use chrono::{Duration, NaiveDateTime, TimeZone, Timelike};

use crate::timefmt::{self, Zone};

/// A report window `[start, end)` in unix seconds, already rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
}

impl Window {
    /// The window's length in seconds (the `(%d secs)` of the headers).
    pub fn secs(&self) -> i64 {
        self.end - self.start
    }

    /// `2024-01-01T00:00:00 - 2024-01-01T23:59:59`: start and last second, as headers show them.
    pub fn text(&self, zone: Zone) -> String {
        format!(
            "{} - {}",
            timefmt::timestamp_or(self.start, zone, "Unknown"),
            timefmt::timestamp_or(self.end - 1, zone, "Unknown")
        )
    }
}

/// The window for `start=`/`end=` as given (`None` = not given), at `now`, in `zone`.
pub fn report_window(start: Option<i64>, end: Option<i64>, now: i64, zone: Zone) -> Window {
    match zone {
        Zone::Local => window_in(&chrono::Local, start, end, now),
        Zone::Utc => window_in(&chrono::Utc, start, end, now),
    }
}

/// [`report_window`] for any time zone.
pub fn window_in<Tz: TimeZone>(tz: &Tz, start: Option<i64>, end: Option<i64>, now: i64) -> Window {
    // A time of 0 means "not given" to Slurm too (parse errors give 0).
    let start = start.filter(|s| *s != 0);
    let end = end.filter(|e| *e != 0).map(|e| e.min(now));
    let end = match end {
        Some(e) => round_up(tz, e),
        None => midnight(tz, now, 0),
    };
    let start = match start {
        Some(s) => round_down(tz, s),
        None => midnight(tz, now, -1),
    };
    let end = if end - start < 3600 {
        start + 3600
    } else {
        end
    };
    Window { start, end }
}

fn local<Tz: TimeZone>(tz: &Tz, t: i64) -> NaiveDateTime {
    tz.timestamp_opt(t, 0)
        .earliest()
        .map_or_else(|| utc_naive(t), |d| d.naive_local())
}

fn utc_naive(t: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp(t, 0)
        .unwrap_or_default()
        .naive_utc()
}

/// Local wall time back to unix seconds, as `mktime` with `tm_isdst = -1` does: an ambiguous
/// time takes its first instant, a time in a spring-forward gap moves on by the gap.
fn unix<Tz: TimeZone>(tz: &Tz, wall: NaiveDateTime) -> i64 {
    tz.from_local_datetime(&wall)
        .earliest()
        .or_else(|| {
            tz.from_local_datetime(&(wall + Duration::hours(1)))
                .earliest()
        })
        .map_or_else(|| wall.and_utc().timestamp(), |d| d.timestamp())
}

/// 00:00 of the local day of `now`, moved by `days`.
fn midnight<Tz: TimeZone>(tz: &Tz, now: i64, days: i64) -> i64 {
    let day = local(tz, now).date() + Duration::days(days);
    unix(tz, day.and_hms_opt(0, 0, 0).unwrap_or_default())
}

fn round_down<Tz: TimeZone>(tz: &Tz, t: i64) -> i64 {
    let w = local(tz, t);
    let hour = w.date().and_hms_opt(w.hour(), 0, 0).unwrap_or_default();
    unix(tz, hour)
}

/// Slurm's rule: a second past the minute makes the next minute, a minute past the hour the
/// next hour.
fn round_up<Tz: TimeZone>(tz: &Tz, t: i64) -> i64 {
    let w = local(tz, t);
    let minutes = i64::from(w.minute()) + i64::from(w.second() != 0);
    let base = w.date().and_hms_opt(w.hour(), 0, 0).unwrap_or_default();
    let rounded = if minutes > 0 {
        base + Duration::hours(1)
    } else {
        base
    };
    unix(tz, rounded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{FixedOffset, Utc};

    /// 2026-11-21T10:20:30Z.
    const NOW: i64 = 1_795_256_430;
    const DAY: i64 = 86_400;
    /// 2026-11-21T00:00:00Z.
    const TODAY: i64 = 1_795_219_200;

    fn w(start: Option<i64>, end: Option<i64>) -> Window {
        window_in(&Utc, start, end, NOW)
    }

    #[test]
    fn default_is_yesterday() {
        let win = w(None, None);
        assert_eq!(
            win,
            Window {
                start: TODAY - DAY,
                end: TODAY
            }
        );
        assert_eq!(win.secs(), DAY);
        assert_eq!(
            win.text(Zone::Utc),
            "2026-11-20T00:00:00 - 2026-11-20T23:59:59"
        );
    }

    #[test]
    fn start_rounds_down_and_end_rounds_up() {
        let win = w(
            Some(TODAY + 3 * 3600 + 59 * 60 + 59),
            Some(TODAY + 5 * 3600 + 1),
        );
        assert_eq!(win.start, TODAY + 3 * 3600);
        assert_eq!(win.end, TODAY + 6 * 3600, "one second past 05:00 is 06:00");
        let exact = w(Some(TODAY + 3600), Some(TODAY + 7200));
        assert_eq!((exact.start, exact.end), (TODAY + 3600, TODAY + 7200));
        let minute = w(Some(TODAY), Some(TODAY + 3600 + 60));
        assert_eq!(minute.end, TODAY + 7200);
    }

    #[test]
    fn end_is_capped_at_now_then_rounded_up() {
        let win = w(Some(TODAY), Some(NOW + 5 * DAY));
        assert_eq!(
            win.end,
            TODAY + 11 * 3600,
            "now 10:20:30 rounds up to 11:00"
        );
        assert!(win.end > NOW, "the rounded end may pass now (hour table)");
    }

    #[test]
    fn at_least_one_hour() {
        let win = w(Some(TODAY + 3600), Some(TODAY + 3600));
        assert_eq!(win.end - win.start, 3600);
        let backwards = w(Some(TODAY + 7200), Some(TODAY + 3600));
        assert_eq!(
            backwards,
            Window {
                start: TODAY + 7200,
                end: TODAY + 10_800
            }
        );
        let start_only = w(Some(TODAY), None);
        assert_eq!(
            start_only,
            Window {
                start: TODAY,
                end: TODAY + 3600
            }
        );
        // Slurm's default end (today 00:00) before the given start: one hour after the start.
        let late = w(Some(TODAY + 3600), None);
        assert_eq!(
            late,
            Window {
                start: TODAY + 3600,
                end: TODAY + 7200
            }
        );
    }

    #[test]
    fn day_boundaries_are_local() {
        let tz = FixedOffset::east_opt(2 * 3600).unwrap();
        let win = window_in(&tz, None, None, NOW);
        // Local now is 12:20:30 on the 21st; local midnight is 22:00Z on the 20th.
        assert_eq!(win.end, TODAY - 2 * 3600);
        assert_eq!(win.start, TODAY - 2 * 3600 - DAY);
    }

    #[test]
    fn with_start_only_span_is_fixed() {
        let start = TODAY - 3 * DAY + 1800;
        let win = w(Some(start), None);
        assert_eq!(win.start, TODAY - 3 * DAY);
        assert_eq!(win.end, TODAY);
    }
}
