//! Slurm's display formats for durations and timestamps, shared by squeue, sinfo, scontrol
//! and sacct. Parsing of time limits lives in `sluice_vocab::cluster_conf::timefmt`.
//!
//! Slurm has three duration renderings, and each command uses a specific one:
//! * [`elapsed`]: squeue's and sinfo's compact `M:SS`, `H:MM:SS`, `D-HH:MM:SS`;
//! * [`clock`]: scontrol's and sacct's `HH:MM:SS`, `D-HH:MM:SS` (`secs2time_str`);
//! * limits in minutes: [`limit_compact`] (squeue `%l`), [`limit_clock`] (scontrol),
//!   [`limit_sinfo`] (`infinite` for no limit).

use chrono::{Local, TimeZone, Utc};

/// Longest duration squeue shows; anything above reads `INVALID`, as Slurm does.
const YEAR_SECS: i64 = 365 * 24 * 3600;

/// Which zone timestamps are shown in: the user's (default) or UTC (tests, `TZ=UTC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Zone {
    /// The local time zone (`TZ`).
    #[default]
    Local,
    /// Coordinated universal time.
    Utc,
}

fn split(secs: i64) -> (i64, i64, i64, i64) {
    (
        secs / 86_400,
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60,
    )
}

/// squeue's duration: `0:05`, `12:34`, `1:02:03`, `2-03:04:05`; `INVALID` when negative
/// or longer than a year.
pub fn elapsed(secs: i64) -> String {
    if !(0..=YEAR_SECS).contains(&secs) {
        return "INVALID".to_string();
    }
    let (d, h, m, s) = split(secs);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// scontrol's and sacct's duration: `00:00:05`, `2-03:04:05`; `INVALID` when negative.
pub fn clock(secs: i64) -> String {
    if secs < 0 {
        return "INVALID".to_string();
    }
    let (d, h, m, s) = split(secs);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// A time limit in minutes (`-1` = none) as squeue shows it: `UNLIMITED` or [`elapsed`].
pub fn limit_compact(minutes: i64) -> String {
    if minutes < 0 {
        "UNLIMITED".to_string()
    } else {
        elapsed(minutes.saturating_mul(60))
    }
}

/// A time limit in minutes (`-1` = none) as scontrol and sacct show it: `UNLIMITED` or [`clock`].
pub fn limit_clock(minutes: i64) -> String {
    if minutes < 0 {
        "UNLIMITED".to_string()
    } else {
        clock(minutes.saturating_mul(60))
    }
}

/// A partition's time limit as sinfo shows it: `infinite` or [`elapsed`].
pub fn limit_sinfo(minutes: i64) -> String {
    if minutes < 0 {
        "infinite".to_string()
    } else {
        elapsed(minutes.saturating_mul(60))
    }
}

/// A timestamp (unix seconds) as Slurm prints it, `2026-11-21T10:00:00`; `N/A` for 0.
pub fn timestamp(t: i64, zone: Zone) -> String {
    timestamp_or(t, zone, "N/A")
}

/// Like [`timestamp`], with the word Slurm uses for "never" in that place (`Unknown`, `None`).
pub fn timestamp_or(t: i64, zone: Zone, never: &str) -> String {
    if t <= 0 {
        return never.to_string();
    }
    const FMT: &str = "%Y-%m-%dT%H:%M:%S";
    let shown = match zone {
        Zone::Local => Local
            .timestamp_opt(t, 0)
            .single()
            .map(|d| d.format(FMT).to_string()),
        Zone::Utc => Utc
            .timestamp_opt(t, 0)
            .single()
            .map(|d| d.format(FMT).to_string()),
    };
    shown.unwrap_or_else(|| never.to_string())
}

/// The date line `squeue -l` and `sinfo -l` print first (C's `ctime`), with its newline.
pub fn ctime(now: i64, zone: Zone) -> String {
    const FMT: &str = "%a %b %e %H:%M:%S %Y";
    let text = match zone {
        Zone::Local => Local
            .timestamp_opt(now, 0)
            .single()
            .map(|d| d.format(FMT).to_string()),
        Zone::Utc => Utc
            .timestamp_opt(now, 0)
            .single()
            .map(|d| d.format(FMT).to_string()),
    };
    format!("{}\n", text.unwrap_or_default())
}

/// The start of the day containing `now` in `zone` (sacct's default window start).
pub fn midnight(now: i64, zone: Zone) -> i64 {
    let secs_into_day = match zone {
        Zone::Utc => now.rem_euclid(86_400),
        Zone::Local => Local
            .timestamp_opt(now, 0)
            .single()
            .map_or(now.rem_euclid(86_400), |d| {
                i64::from(d.offset().local_minus_utc()) + now
            })
            .rem_euclid(86_400),
    };
    now - secs_into_day
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_durations_drop_leading_zero_fields() {
        assert_eq!(elapsed(0), "0:00");
        assert_eq!(elapsed(65), "1:05");
        assert_eq!(elapsed(3600 + 62), "1:01:02");
        assert_eq!(elapsed(86_400 * 2 + 3 * 3600 + 4 * 60 + 5), "2-03:04:05");
        assert_eq!(elapsed(-1), "INVALID");
        assert_eq!(elapsed(YEAR_SECS + 1), "INVALID");
    }

    #[test]
    fn clock_durations_keep_two_digit_fields() {
        assert_eq!(clock(5), "00:00:05");
        assert_eq!(clock(86_400 + 61), "1-00:01:01");
        assert_eq!(clock(-5), "INVALID");
    }

    #[test]
    fn limits_render_per_command() {
        assert_eq!(limit_compact(-1), "UNLIMITED");
        assert_eq!(limit_compact(30), "30:00");
        assert_eq!(limit_compact(60), "1:00:00");
        assert_eq!(limit_compact(1440), "1-00:00:00");
        assert_eq!(limit_clock(30), "00:30:00");
        assert_eq!(limit_clock(-1), "UNLIMITED");
        assert_eq!(limit_sinfo(-1), "infinite");
        assert_eq!(limit_sinfo(30), "30:00");
    }

    #[test]
    fn timestamps_are_iso_without_zone() {
        assert_eq!(timestamp(1_795_255_200, Zone::Utc), "2026-11-21T10:00:00");
        assert_eq!(timestamp(0, Zone::Utc), "N/A");
        assert_eq!(timestamp_or(0, Zone::Utc, "Unknown"), "Unknown");
    }

    #[test]
    fn midnight_is_the_start_of_the_day() {
        assert_eq!(midnight(1_795_255_200, Zone::Utc), 1_795_219_200);
        let local = midnight(1_795_255_200, Zone::Local);
        assert!(local <= 1_795_255_200 && 1_795_255_200 - local < 86_400);
    }
}
