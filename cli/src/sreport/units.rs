//! sreport's time formats (`-t` / `time`): how a usage value in TRES-seconds is printed, the
//! words the header uses for it, and how wide a usage column is (Slurm's
//! `sreport_set_usage_col_width`).

use super::error::SreportError;

/// How usage values are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    /// `Seconds`: the raw TRES-seconds.
    Seconds,
    /// `Minutes` (the default): TRES-seconds / 60, rounded.
    #[default]
    Minutes,
    /// `Hours`: TRES-seconds / 3600, rounded.
    Hours,
    /// `Percent`: the share of the total, `12.34%`.
    Percent,
    /// `SecPer`: `seconds(12.34%)`.
    SecPer,
    /// `MinPer`: `minutes(12.34%)`.
    MinPer,
    /// `HourPer`: `hours(12.34%)`.
    HourPer,
}

impl TimeFormat {
    /// Parses a `-t` value the way sreport does: `SecPer`, `MinPer`, `HourPer` need six
    /// characters, the others one (case-insensitive prefixes).
    pub fn parse(word: &str) -> Result<Self, SreportError> {
        use crate::words::is_keyword as kw;
        let found = [
            ("SecPer", 6, Self::SecPer),
            ("MinPer", 6, Self::MinPer),
            ("HourPer", 6, Self::HourPer),
            ("Seconds", 1, Self::Seconds),
            ("Minutes", 1, Self::Minutes),
            ("Hours", 1, Self::Hours),
            ("Percent", 1, Self::Percent),
        ]
        .into_iter()
        .find(|(name, min, _)| kw(word, name, *min));
        found
            .map(|(_, _, f)| f)
            .ok_or_else(|| SreportError::TimeFormat(word.to_string()))
    }

    /// The words after "Usage reported in" (`Minutes`, `Percentage of Total`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Self::Seconds => "Seconds",
            Self::Minutes => "Minutes",
            Self::Hours => "Hours",
            Self::Percent => "Percentage of Total",
            Self::SecPer => "Seconds/Percentage of Total",
            Self::MinPer => "Minutes/Percentage of Total",
            Self::HourPer => "Hours/Percentage of Total",
        }
    }

    /// Whether values carry a percentage after them (the wider `*Per` columns).
    pub fn is_per(self) -> bool {
        matches!(self, Self::SecPer | Self::MinPer | Self::HourPer)
    }

    /// `value` TRES-seconds as this format prints it; percentages are of `total` (a zero
    /// total counts as 1, as Slurm does).
    pub fn value(self, value: u64, total: u64) -> String {
        let total = total.max(1) as f64;
        let v = value as f64;
        let pct = v / total * 100.0;
        match self {
            Self::Seconds => value.to_string(),
            Self::Minutes => format!("{:.0}", v / 60.0),
            Self::Hours => format!("{:.0}", v / 3600.0),
            Self::Percent => format!("{pct:.2}%"),
            Self::SecPer => format!("{value}({pct:.2}%)"),
            Self::MinPer => format!("{:.0}({pct:.2}%)", v / 60.0),
            Self::HourPer => format!("{:.0}({pct:.2}%)", v / 3600.0),
        }
    }

    /// The width of a usage column whose largest value is `max_secs` seconds: 8, one more for
    /// each power of ten from 1e8 up that the value reaches, and 9 more for the `*Per` formats.
    pub fn usage_width(self, max_secs: u64) -> i32 {
        // Slurm walks the powers of ten below a limit that overflowed 64 bits (1e25 mod 2^64),
        // so the last power it can count is 1e18.
        const LIMIT: u64 = 1_590_897_978_359_414_784;
        let mut width = 8;
        let mut order: u64 = 100_000_000;
        while order < LIMIT && max_secs >= order {
            width += 1;
            order = order.saturating_mul(10);
        }
        if self.is_per() { width + 9 } else { width }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_follow_sreport() {
        for (word, f) in [
            ("s", TimeFormat::Seconds),
            ("MIN", TimeFormat::Minutes),
            ("h", TimeFormat::Hours),
            ("percent", TimeFormat::Percent),
            ("p", TimeFormat::Percent),
            ("secper", TimeFormat::SecPer),
            ("MinPer", TimeFormat::MinPer),
            ("hourpe", TimeFormat::HourPer),
        ] {
            assert_eq!(TimeFormat::parse(word).unwrap(), f, "{word}");
        }
        for bad in ["minp", "x", "", "secondsx", "hourp"] {
            assert_eq!(
                TimeFormat::parse(bad).unwrap_err().to_string(),
                format!("unknown time format {bad}")
            );
        }
    }

    #[test]
    fn values_round_like_printf() {
        let f = |t: TimeFormat, v, tot| t.value(v, tot);
        assert_eq!(f(TimeFormat::Seconds, 7265, 0), "7265");
        assert_eq!(f(TimeFormat::Minutes, 150, 0), "2", "2.5 rounds to even");
        assert_eq!(f(TimeFormat::Minutes, 210, 0), "4", "3.5 rounds to even");
        assert_eq!(f(TimeFormat::Minutes, 91, 0), "2");
        assert_eq!(f(TimeFormat::Hours, 5400, 0), "2");
        assert_eq!(f(TimeFormat::Percent, 1, 3), "33.33%");
        assert_eq!(
            f(TimeFormat::Percent, 5, 0),
            "500.00%",
            "zero total counts as 1"
        );
        assert_eq!(f(TimeFormat::SecPer, 60, 240), "60(25.00%)");
        assert_eq!(f(TimeFormat::MinPer, 3600, 14_400), "60(25.00%)");
        assert_eq!(f(TimeFormat::HourPer, 7200, 7200), "2(100.00%)");
    }

    #[test]
    fn usage_width_grows_per_power_of_ten() {
        let m = TimeFormat::Minutes;
        assert_eq!(m.usage_width(0), 8);
        assert_eq!(m.usage_width(99_999_999), 8);
        assert_eq!(m.usage_width(100_000_000), 9);
        assert_eq!(m.usage_width(999_999_999), 9);
        assert_eq!(m.usage_width(1_000_000_000), 10);
        assert_eq!(m.usage_width(u64::MAX), 19, "1e8 ..= 1e18 count");
        assert_eq!(TimeFormat::MinPer.usage_width(5), 17);
        assert_eq!(TimeFormat::SecPer.usage_width(100_000_000), 18);
    }
}
