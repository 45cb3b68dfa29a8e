//! The `Purge*After` settings of slurmdbd.conf (`PurgeJobAfter=12month`, `PurgeEventAfter=30days`,
//! `PurgeStepAfter=24hours`...): a number of months, or a number followed by `hours`, `days` or
//! `months`; `-1` keeps records forever (Slurm's default). Records older than the cut-off go.

use crate::calendar::{Calendar, HOUR};

/// The unit of a purge period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PurgeUnit {
    Hours,
    Days,
    Months,
}

/// How long records are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeAfter {
    /// At least 1.
    pub count: u32,
    pub unit: PurgeUnit,
}

/// A purge value that is not a period.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid purge period {value:?}: expected a number of months, or a number followed by hours, days or months (-1 keeps records)"
)]
pub struct PurgeParseError {
    pub value: String,
}

impl PurgeAfter {
    /// Parses a setting's value; `Ok(None)` for `-1` (keep forever).
    pub fn parse(value: &str) -> Result<Option<PurgeAfter>, PurgeParseError> {
        let err = || PurgeParseError {
            value: value.to_string(),
        };
        let v = value.trim();
        if v == "-1" {
            return Ok(None);
        }
        let digits = v.len() - v.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let count: u32 = v[..digits].parse().map_err(|_| err())?;
        let unit_word = v[digits..].trim().to_ascii_lowercase();
        let unit = match unit_word.as_str() {
            "" | "month" | "months" => PurgeUnit::Months,
            "day" | "days" => PurgeUnit::Days,
            "hour" | "hours" => PurgeUnit::Hours,
            _ => return Err(err()),
        };
        if count == 0 {
            return Err(err());
        }
        Ok(Some(PurgeAfter { count, unit }))
    }

    /// The cut-off at `now`: records that ended before it are purged. As in Slurm the period
    /// counts from the start of the current hour, day or month, so purges happen once per unit.
    pub fn cutoff(&self, cal: &Calendar, now: i64) -> i64 {
        match self.unit {
            PurgeUnit::Hours => cal
                .hour_start(now)
                .saturating_sub(i64::from(self.count) * HOUR),
            PurgeUnit::Days => cal.days_before(now, self.count),
            PurgeUnit::Months => cal.months_before(now, self.count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::DAY;

    const NOV1: i64 = 1_793_491_200;

    #[test]
    fn slurms_syntax() {
        let p = |v| PurgeAfter::parse(v).unwrap();
        let a = |count, unit| Some(PurgeAfter { count, unit });
        assert_eq!(p("12month"), a(12, PurgeUnit::Months));
        assert_eq!(p("12"), a(12, PurgeUnit::Months));
        assert_eq!(p("30days"), a(30, PurgeUnit::Days));
        assert_eq!(p("1DAY"), a(1, PurgeUnit::Days));
        assert_eq!(p("24hours"), a(24, PurgeUnit::Hours));
        assert_eq!(p(" 2 months "), a(2, PurgeUnit::Months));
        assert_eq!(p("-1"), None);
        for bad in [
            "",
            "0",
            "0days",
            "days",
            "12weeks",
            "-3",
            "1.5days",
            "99999999999",
        ] {
            assert!(PurgeAfter::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cutoffs_count_from_the_current_unit() {
        let c = Calendar::utc();
        let now = NOV1 + 14 * DAY + 5 * HOUR + 30; // 2026-11-15T05:00:30
        let cut = |v| PurgeAfter::parse(v).unwrap().unwrap().cutoff(&c, now);
        assert_eq!(cut("24hours"), NOV1 + 13 * DAY + 5 * HOUR);
        assert_eq!(cut("30days"), NOV1 + 14 * DAY - 30 * DAY);
        assert_eq!(cut("1month"), NOV1 - 31 * DAY);
    }
}
