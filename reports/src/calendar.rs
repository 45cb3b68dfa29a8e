//! Hour, day and month boundaries in the accounting daemon's time zone.
//!
//! Slurm rolls usage up by the local hours, days and months of the machine its slurmdbd runs
//! on, and sreport asks for windows starting at local midnights; the day and month tables only
//! answer such windows if both sides agree on the zone. The daemon uses [`Calendar::local`];
//! tests use [`Calendar::utc`] or a fixed offset so they do not depend on the machine's zone.
//!
//! Every function takes and returns unix seconds and never panics: a time outside chrono's
//! range is returned unchanged.

use chrono::{DateTime, Datelike, Duration, FixedOffset, Local, LocalResult, NaiveDate, TimeZone};

/// Seconds in an hour.
pub const HOUR: i64 = 3_600;
/// Seconds in a day without a daylight-saving change.
pub const DAY: i64 = 86_400;

/// The zone a [`Calendar`] counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Zone {
    Utc,
    Local,
    Fixed(FixedOffset),
}

/// Local-time boundaries of hours, days and months.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calendar {
    zone: Zone,
}

impl Calendar {
    /// Boundaries in UTC.
    pub fn utc() -> Self {
        Self { zone: Zone::Utc }
    }

    /// Boundaries in the machine's local zone (`TZ`, `/etc/localtime`), as slurmdbd's.
    pub fn local() -> Self {
        Self { zone: Zone::Local }
    }

    /// Boundaries at a fixed offset east of UTC, in seconds; `None` beyond ±24 hours.
    pub fn fixed(east_secs: i32) -> Option<Self> {
        FixedOffset::east_opt(east_secs).map(|o| Self {
            zone: Zone::Fixed(o),
        })
    }

    /// Local minus UTC, in seconds, at the instant `t`.
    fn offset_at(&self, t: i64) -> i64 {
        match self.zone {
            Zone::Utc => 0,
            Zone::Fixed(o) => i64::from(o.local_minus_utc()),
            Zone::Local => Local
                .timestamp_opt(t, 0)
                .single()
                .map_or(0, |d| i64::from(d.offset().local_minus_utc())),
        }
    }

    /// The local calendar date of the instant `t`.
    fn date(&self, t: i64) -> Option<NaiveDate> {
        let local = t.checked_add(self.offset_at(t))?;
        DateTime::from_timestamp(local, 0).map(|d| d.date_naive())
    }

    /// The first instant of local midnight of `date` (a midnight skipped by a daylight-saving
    /// change is the first instant of that day).
    fn midnight(&self, date: NaiveDate) -> Option<i64> {
        let naive = date.and_hms_opt(0, 0, 0)?;
        match self.zone {
            Zone::Utc => Some(naive.and_utc().timestamp()),
            Zone::Fixed(o) => Some(naive.and_utc().timestamp() - i64::from(o.local_minus_utc())),
            Zone::Local => {
                let mut wall = naive;
                for _ in 0..4 {
                    match Local.from_local_datetime(&wall) {
                        LocalResult::Single(d) => return Some(d.timestamp()),
                        LocalResult::Ambiguous(earliest, _) => return Some(earliest.timestamp()),
                        LocalResult::None => wall += Duration::minutes(30),
                    }
                }
                None
            }
        }
    }

    /// The start of the local hour holding `t`.
    pub fn hour_start(&self, t: i64) -> i64 {
        let off = self.offset_at(t);
        t.checked_add(off)
            .and_then(|local| local.div_euclid(HOUR).checked_mul(HOUR))
            .and_then(|start| start.checked_sub(off))
            .unwrap_or(t)
    }

    /// The start of the local day holding `t`.
    pub fn day_start(&self, t: i64) -> i64 {
        self.date(t).and_then(|d| self.midnight(d)).unwrap_or(t)
    }

    /// The start of the local day after the one holding `t`.
    pub fn next_day(&self, t: i64) -> i64 {
        self.date(t)
            .and_then(|d| d.succ_opt())
            .and_then(|d| self.midnight(d))
            .unwrap_or(t)
    }

    /// The start of the local month holding `t`.
    pub fn month_start(&self, t: i64) -> i64 {
        self.date(t)
            .and_then(|d| d.with_day(1))
            .and_then(|d| self.midnight(d))
            .unwrap_or(t)
    }

    /// The start of the local month after the one holding `t`.
    pub fn next_month(&self, t: i64) -> i64 {
        self.date(t)
            .and_then(|d| d.with_day(1))
            .and_then(|d| d.checked_add_months(chrono::Months::new(1)))
            .and_then(|d| self.midnight(d))
            .unwrap_or(t)
    }

    /// The start of the local day `days` days before the day holding `t`.
    pub fn days_before(&self, t: i64, days: u32) -> i64 {
        self.date(t)
            .and_then(|d| d.checked_sub_days(chrono::Days::new(u64::from(days))))
            .and_then(|d| self.midnight(d))
            .unwrap_or(i64::MIN)
    }

    /// The start of the local month `months` months before the month holding `t`.
    pub fn months_before(&self, t: i64, months: u32) -> i64 {
        self.date(t)
            .and_then(|d| d.with_day(1))
            .and_then(|d| d.checked_sub_months(chrono::Months::new(months)))
            .and_then(|d| self.midnight(d))
            .unwrap_or(i64::MIN)
    }

    /// Whether `t` is a local midnight.
    pub fn is_midnight(&self, t: i64) -> bool {
        self.day_start(t) == t
    }

    /// Whether `t` is local midnight of the 1st of a month.
    pub fn is_month_start(&self, t: i64) -> bool {
        self.month_start(t) == t
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// 2026-11-01T00:00:00Z, a Sunday.
    const NOV1: i64 = 1_793_491_200;

    #[test]
    fn utc_boundaries() {
        let c = Calendar::utc();
        let t = NOV1 + 14 * DAY + 5 * HOUR + 17; // 2026-11-15T05:00:17
        assert_eq!(c.hour_start(t), NOV1 + 14 * DAY + 5 * HOUR);
        assert_eq!(c.day_start(t), NOV1 + 14 * DAY);
        assert_eq!(c.next_day(t), NOV1 + 15 * DAY);
        assert_eq!(c.month_start(t), NOV1);
        assert_eq!(c.next_month(t), NOV1 + 30 * DAY, "November has 30 days");
        assert_eq!(c.days_before(t, 14), NOV1);
        assert_eq!(
            c.months_before(t, 1),
            NOV1 - 31 * DAY,
            "October has 31 days"
        );
        assert!(c.is_midnight(NOV1 + 3 * DAY));
        assert!(!c.is_midnight(NOV1 + 3 * DAY + 1));
        assert!(c.is_month_start(NOV1) && !c.is_month_start(NOV1 + DAY));
    }

    #[test]
    fn fixed_offsets_move_the_boundaries() {
        // UTC+05:30: local midnight of Nov 1 is 18:30 UTC the day before.
        let c = Calendar::fixed(5 * 3600 + 1800).unwrap();
        let midnight = NOV1 - 5 * HOUR - 1800;
        assert_eq!(c.day_start(NOV1), midnight);
        assert_eq!(c.month_start(NOV1 + DAY), midnight);
        assert_eq!(
            c.hour_start(NOV1),
            NOV1 - 1800,
            "local hours start at :30 UTC"
        );
        assert!(Calendar::fixed(100_000).is_none());
    }

    #[test]
    fn extreme_times_do_not_panic() {
        let c = Calendar::local();
        for t in [i64::MIN, i64::MAX, 0] {
            let _ = (c.hour_start(t), c.day_start(t), c.next_month(t));
            let _ = (c.days_before(t, 3), c.months_before(t, 2));
        }
    }

    proptest! {
        #[test]
        fn boundaries_hold_their_time(t in 0i64..4_000_000_000, off in -12i32..=14) {
            let c = Calendar::fixed(off * 3600).unwrap();
            let h = c.hour_start(t);
            prop_assert!(h <= t && t < h + HOUR);
            let d = c.day_start(t);
            prop_assert!(d <= h && t < c.next_day(t));
            prop_assert_eq!(c.next_day(t) - d, DAY);
            prop_assert!(c.is_midnight(d));
            let m = c.month_start(t);
            prop_assert!(m <= d && t < c.next_month(t));
            prop_assert!(c.is_month_start(m) && c.is_month_start(c.next_month(t)));
            let days = (c.next_month(t) - m) / DAY;
            prop_assert!((28..=31).contains(&days));
        }
    }
}
