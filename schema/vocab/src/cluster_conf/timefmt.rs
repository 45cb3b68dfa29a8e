//! Slurm's time-limit syntax, shared by `MaxTime=` in `slurm.conf` and `--time` of the commands.
//!
//! Accepted forms (Slurm's `time_str2mins`): `minutes`, `minutes:seconds`,
//! `hours:minutes:seconds`, `days-hours`, `days-hours:minutes`, `days-hours:minutes:seconds`,
//! and `UNLIMITED`, `INFINITE` or `-1` for no limit. Fields after the first are not range
//! checked (Slurm accepts `0:90`), and seconds round up to the next whole minute, because limits
//! are kept in minutes.

use std::fmt;

/// A time limit in whole minutes, or none at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimeLimit {
    /// A limit of this many minutes.
    Minutes(u32),
    /// No limit (`UNLIMITED`/`INFINITE`); orders after every finite limit.
    Unlimited,
}

/// Why a time specification is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeFmtError {
    /// Empty input.
    #[error("empty time specification")]
    Empty,
    /// A field that is not a plain decimal number, or too many fields.
    #[error("invalid time specification \"{0}\"")]
    Invalid(String),
    /// A value too large to represent in minutes.
    #[error("time specification \"{0}\" is too large")]
    Overflow(String),
}

impl TimeLimit {
    /// The limit in seconds, `None` when unlimited.
    pub fn as_secs(self) -> Option<u64> {
        match self {
            Self::Minutes(m) => Some(u64::from(m) * 60),
            Self::Unlimited => None,
        }
    }

    /// Whether this limit fits within `max` (everything fits within `Unlimited`).
    pub fn within(self, max: TimeLimit) -> bool {
        self <= max
    }
}

impl fmt::Display for TimeLimit {
    /// Slurm's rendering (`mins2time_str`): `UNLIMITED`, `hh:mm:ss`, or `d-hh:mm:ss`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Unlimited => f.write_str("UNLIMITED"),
            Self::Minutes(m) => {
                let (days, rest) = (m / 1440, m % 1440);
                let (hours, mins) = (rest / 60, rest % 60);
                if days > 0 {
                    write!(f, "{days}-{hours:02}:{mins:02}:00")
                } else {
                    write!(f, "{hours:02}:{mins:02}:00")
                }
            }
        }
    }
}

impl std::str::FromStr for TimeLimit {
    type Err = TimeFmtError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_time_limit(s)
    }
}

/// Parses a Slurm time specification into a [`TimeLimit`].
pub fn parse_time_limit(input: &str) -> Result<TimeLimit, TimeFmtError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(TimeFmtError::Empty);
    }
    if s == "-1" || s.eq_ignore_ascii_case("UNLIMITED") || s.eq_ignore_ascii_case("INFINITE") {
        return Ok(TimeLimit::Unlimited);
    }
    let secs = parse_secs(s)?;
    let mins = secs.div_ceil(60);
    u32::try_from(mins)
        .ok()
        .filter(|m| *m < u32::MAX)
        .map(TimeLimit::Minutes)
        .ok_or_else(|| TimeFmtError::Overflow(s.to_string()))
}

/// A duration in the same syntax, to the second (not rounded to minutes; no `UNLIMITED`):
/// the priority keys' `PriorityMaxAge=7-0`, `PriorityCalcPeriod=0:30`.
pub fn parse_duration_secs(input: &str) -> Result<u64, TimeFmtError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(TimeFmtError::Empty);
    }
    parse_secs(s)
}

fn parse_secs(s: &str) -> Result<u64, TimeFmtError> {
    let invalid = || TimeFmtError::Invalid(s.to_string());
    let (days, clock) = match s.split_once('-') {
        Some((d, rest)) => (Some(field(d, s)?), rest),
        None => (None, s),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let nums: Vec<u64> = parts
        .iter()
        .map(|p| field(p, s))
        .collect::<Result<_, _>>()?;
    let (h, m, sec) = match (days.is_some(), nums.as_slice()) {
        // days-hours[:minutes[:seconds]]
        (true, [h]) => (*h, 0, 0),
        (true, [h, m]) => (*h, *m, 0),
        (true, [h, m, sec]) => (*h, *m, *sec),
        // minutes, minutes:seconds, hours:minutes:seconds
        (false, [m]) => (0, *m, 0),
        (false, [m, sec]) => (0, *m, *sec),
        (false, [h, m, sec]) => (*h, *m, *sec),
        _ => return Err(invalid()),
    };
    let overflow = || TimeFmtError::Overflow(s.to_string());
    days.unwrap_or(0)
        .checked_mul(24)
        .and_then(|x| x.checked_add(h))
        .and_then(|x| x.checked_mul(60))
        .and_then(|x| x.checked_add(m))
        .and_then(|x| x.checked_mul(60))
        .and_then(|x| x.checked_add(sec))
        .ok_or_else(overflow)
}

fn field(text: &str, whole: &str) -> Result<u64, TimeFmtError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TimeFmtError::Invalid(whole.to_string()));
    }
    text.parse::<u64>()
        .map_err(|_| TimeFmtError::Overflow(whole.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mins(s: &str) -> TimeLimit {
        parse_time_limit(s).unwrap()
    }

    #[test]
    fn every_slurm_form_parses() {
        assert_eq!(mins("30"), TimeLimit::Minutes(30));
        assert_eq!(mins("30:00"), TimeLimit::Minutes(30));
        assert_eq!(mins("30:01"), TimeLimit::Minutes(31), "seconds round up");
        assert_eq!(mins("2:30:00"), TimeLimit::Minutes(150));
        assert_eq!(mins("1-0"), TimeLimit::Minutes(1440));
        assert_eq!(mins("1-2:30"), TimeLimit::Minutes(1440 + 150));
        assert_eq!(mins("1-2:30:59"), TimeLimit::Minutes(1440 + 151));
        assert_eq!(mins("UNLIMITED"), TimeLimit::Unlimited);
        assert_eq!(mins("infinite"), TimeLimit::Unlimited);
        assert_eq!(mins("-1"), TimeLimit::Unlimited);
        assert_eq!(mins("0"), TimeLimit::Minutes(0));
    }

    #[test]
    fn malformed_specs_are_rejected() {
        for bad in [
            "",
            "abc",
            "1:2:3:4",
            "1-2:3:4:5",
            "-5",
            "1-",
            "1--2",
            ":5",
            "5:",
            "1.5",
            "+3",
        ] {
            assert!(parse_time_limit(bad).is_err(), "{bad:?} should be rejected");
        }
        assert!(matches!(
            parse_time_limit("99999999999999999999"),
            Err(TimeFmtError::Overflow(_))
        ));
    }

    #[test]
    fn display_matches_slurm() {
        assert_eq!(TimeLimit::Minutes(150).to_string(), "02:30:00");
        assert_eq!(TimeLimit::Minutes(1440 + 61).to_string(), "1-01:01:00");
        assert_eq!(TimeLimit::Unlimited.to_string(), "UNLIMITED");
        assert!(TimeLimit::Minutes(u32::MAX - 1) < TimeLimit::Unlimited);
    }

    proptest! {
        #[test]
        fn display_round_trips(m in 0u32..10_000_000) {
            let t = TimeLimit::Minutes(m);
            prop_assert_eq!(parse_time_limit(&t.to_string()).unwrap(), t);
        }

        #[test]
        fn components_add_up(d in 0u64..400, h in 0u64..24, m in 0u64..60, s in 0u64..60) {
            let want = ((d * 24 + h) * 60 + m) * 60 + s;
            let got = parse_time_limit(&format!("{d}-{h}:{m}:{s}")).unwrap();
            prop_assert_eq!(got, TimeLimit::Minutes(want.div_ceil(60) as u32));
            let hms = parse_time_limit(&format!("{h}:{m}:{s}")).unwrap();
            prop_assert_eq!(hms, TimeLimit::Minutes(((h * 60 + m) * 60 + s).div_ceil(60) as u32));
            let ms = parse_time_limit(&format!("{m}:{s}")).unwrap();
            prop_assert_eq!(ms, TimeLimit::Minutes((m * 60 + s).div_ceil(60) as u32));
        }

        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,20}") {
            let _ = parse_time_limit(&s);
        }

        #[test]
        fn non_digit_fields_fail(a in "[0-9]{1,4}", junk in "[a-zA-Z.+]{1,3}") {
            let spec = format!("{a}{junk}");
            prop_assert!(parse_time_limit(&spec).is_err());
        }
    }
}
