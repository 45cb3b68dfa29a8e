//! Slurm's time specifications (`parse_time` in Slurm, with sacct's "may be in the past"
//! flag), as `sacct -S/-E` and `sreport start=/end=` take them:
//!
//! * `now[{+|-}count[seconds|minutes|hours|days|weeks]]` (seconds by default; units may be
//!   shortened: `s`, `min`, `h`, `d`, `w`...);
//! * `today` (00:00 today), `tomorrow` (00:00 tomorrow), `midnight` (00:00 today), `noon`
//!   (12:00), `elevenses` (11:00), `fika` (15:00), `teatime` (16:00), all today even when
//!   still to come;
//! * `YYYY-MM-DD[THH:MM[:SS]]`;
//! * `MM/DD[/YY]`, `MM.DD[.YY]`, `MMDD[YY]`, each optionally followed by `-HH:MM[:SS]`;
//! * `HH:MM[:SS][AM|PM]` (today at that time).
//!
//! A date without a time is its 00:00; a two-digit year is in this century. Times are read in
//! the given [`Zone`]; the parser is pure (`now` is an argument).

use chrono::{Datelike, Duration, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

use crate::timefmt::Zone;

/// A time specification Slurm would refuse: `pos` is where reading it failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid time specification (pos={pos}): {spec}")]
pub struct TimeSpecError {
    /// The character position where the specification stopped making sense.
    pub pos: usize,
    /// The specification as given.
    pub spec: String,
}

/// Parses `spec` relative to `now` (unix seconds) in `zone`, into unix seconds.
pub fn parse(spec: &str, now: i64, zone: Zone) -> Result<i64, TimeSpecError> {
    let fail = |pos: usize| TimeSpecError {
        pos,
        spec: spec.to_string(),
    };
    let text = spec.trim().to_ascii_lowercase();
    if text.is_empty() {
        return Err(fail(0));
    }
    if let Some(rest) = text.strip_prefix("now") {
        return relative(rest, now).ok_or_else(|| fail(3));
    }
    let today = local(now, zone).ok_or_else(|| fail(0))?.date();
    let named = |h: u32| today.and_hms_opt(h, 0, 0);
    let at = match text.as_str() {
        "today" | "midnight" => named(0),
        "tomorrow" => today.succ_opt().and_then(|d| d.and_hms_opt(0, 0, 0)),
        "noon" => named(12),
        "elevenses" => named(11),
        "fika" => named(15),
        "teatime" => named(16),
        _ => absolute(&text, today).map_err(fail)?,
    };
    at.and_then(|t| unix(t, zone)).ok_or_else(|| fail(0))
}

/// `now` plus the `{+|-}count[unit]` after it (nothing = now itself).
fn relative(rest: &str, now: i64) -> Option<i64> {
    if rest.is_empty() {
        return Some(now);
    }
    let (sign, rest) = match rest.as_bytes().first()? {
        b'+' => (1i64, &rest[1..]),
        b'-' => (-1i64, &rest[1..]),
        _ => return None,
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let count: i64 = rest[..digits].parse().ok()?;
    let unit = unit_secs(&rest[digits..])?;
    now.checked_add(sign.checked_mul(count.checked_mul(unit)?)?)
}

/// Seconds per unit for Slurm's relative-time units (and their prefixes).
fn unit_secs(unit: &str) -> Option<i64> {
    let is = |word: &str, shortest: usize| unit.len() >= shortest && word.starts_with(unit);
    match unit {
        "" => Some(1),
        _ if is("seconds", 1) => Some(1),
        _ if is("minutes", 1) => Some(60),
        _ if is("hours", 1) => Some(3600),
        _ if is("days", 1) => Some(86_400),
        _ if is("weeks", 1) => Some(7 * 86_400),
        _ => None,
    }
}

/// A date and/or time of day; the error is the failing position.
fn absolute(text: &str, today: NaiveDate) -> Result<Option<NaiveDateTime>, usize> {
    if let Some((date, time)) = text.split_once('t') {
        let d = NaiveDate::parse_from_str(date, "%Y-%m-%d").map_err(|_| 0usize)?;
        let t = time_of_day(time).ok_or(date.len() + 1)?;
        return Ok(Some(d.and_time(t)));
    }
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0));
    }
    if text.contains(':') && !text.contains('-') {
        let t = time_of_day(text).ok_or(0usize)?;
        return Ok(Some(today.and_time(t)));
    }
    let (date, time) = match text.split_once('-') {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let d = short_date(date, today).ok_or(0usize)?;
    let t = match time {
        Some(t) => time_of_day(t).ok_or(date.len() + 1)?,
        None => NaiveTime::MIN,
    };
    Ok(Some(d.and_time(t)))
}

/// `MM/DD[/YY]`, `MM.DD[.YY]` or `MMDD[YY]`; the year defaults to this one.
fn short_date(text: &str, today: NaiveDate) -> Option<NaiveDate> {
    let parts: Vec<&str> = if text.contains('/') {
        text.split('/').collect()
    } else if text.contains('.') {
        text.split('.').collect()
    } else if (text.len() == 4 || text.len() == 6) && text.bytes().all(|b| b.is_ascii_digit()) {
        vec![&text[..2], &text[2..4], &text[4..]]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect()
    } else {
        return None;
    };
    let num = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (month, day) = (num(parts.first()?)?, num(parts.get(1)?)?);
    let year = match parts.get(2) {
        None => today.year(),
        Some(y) => 2000 + i32::try_from(num(y)?).ok()?,
    };
    if parts.len() > 3 {
        return None;
    }
    NaiveDate::from_ymd_opt(year, month, day)
}

/// `HH:MM[:SS]` with an optional `am`/`pm`.
fn time_of_day(text: &str) -> Option<NaiveTime> {
    let (clock, half) = if let Some(c) = text.strip_suffix("am") {
        (c, Some(false))
    } else if let Some(c) = text.strip_suffix("pm") {
        (c, Some(true))
    } else {
        (text, None)
    };
    let parts: Vec<&str> = clock.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let num = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let mut hour = num(parts[0])?;
    let minute = num(parts[1])?;
    let second = match parts.get(2) {
        Some(s) => num(s)?,
        None => 0,
    };
    if let Some(pm) = half {
        if !(1..=12).contains(&hour) {
            return None;
        }
        hour = hour % 12 + if pm { 12 } else { 0 };
    }
    NaiveTime::from_hms_opt(hour, minute, second)
}

/// The wall-clock time of `t` in `zone`.
pub fn local(t: i64, zone: Zone) -> Option<NaiveDateTime> {
    match zone {
        Zone::Utc => Utc.timestamp_opt(t, 0).single().map(|d| d.naive_utc()),
        Zone::Local => Local.timestamp_opt(t, 0).single().map(|d| d.naive_local()),
    }
}

/// The unix time of wall-clock `t` in `zone` (the earlier one when the clock repeats).
pub fn unix(t: NaiveDateTime, zone: Zone) -> Option<i64> {
    match zone {
        Zone::Utc => Some(t.and_utc().timestamp()),
        Zone::Local => Local
            .from_local_datetime(&t)
            .earliest()
            .or_else(|| {
                // A time skipped by a DST jump: take the same time an hour later.
                Local
                    .from_local_datetime(&(t + Duration::hours(1)))
                    .earliest()
            })
            .map(|d| d.timestamp()),
    }
}

#[cfg(test)]
#[path = "timespec_tests.rs"]
mod tests;
