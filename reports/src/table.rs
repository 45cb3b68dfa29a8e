//! Which rollup table a report window reads: Slurm's `set_usage_information` rule.

use crate::calendar::{Calendar, DAY};

/// A rollup period, and the table holding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Period {
    Hour,
    Day,
    Month,
}

impl Period {
    /// Every period, shortest first.
    pub const ALL: [Period; 3] = [Period::Hour, Period::Day, Period::Month];

    /// The stored value (`period` column): 0 hour, 1 day, 2 month.
    pub fn id(self) -> i32 {
        match self {
            Period::Hour => 0,
            Period::Day => 1,
            Period::Month => 2,
        }
    }

    /// The name reports show: `hour`, `day` or `month`.
    pub fn name(self) -> &'static str {
        match self {
            Period::Hour => "hour",
            Period::Day => "day",
            Period::Month => "month",
        }
    }

    /// The table to read for the window `[start, end)` at `now`:
    /// * hours if either side is not at local midnight, the window is shorter than a day, or
    ///   it ends after `now` (the day and month rows of unfinished periods do not exist yet);
    /// * months if both sides are on the 1st of a month (and it spans more than a day);
    /// * days otherwise.
    pub fn pick(cal: &Calendar, start: i64, end: i64, now: i64) -> Period {
        let span = end.saturating_sub(start);
        if span < DAY || !cal.is_midnight(start) || !cal.is_midnight(end) || end > now {
            Period::Hour
        } else if cal.is_month_start(start) && cal.is_month_start(end) && span > DAY {
            Period::Month
        } else {
            Period::Day
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::HOUR;

    const NOV1: i64 = 1_793_491_200;
    const DEC1: i64 = NOV1 + 30 * DAY;

    #[test]
    fn slurms_table_choice() {
        let c = Calendar::utc();
        let now = DEC1 + 10 * DAY;
        let cases = [
            (NOV1, NOV1 + DAY, Period::Day),
            (NOV1, NOV1 + 7 * DAY, Period::Day),
            (NOV1, DEC1, Period::Month),
            (NOV1 + DAY, DEC1, Period::Day),
            (NOV1, NOV1 + HOUR, Period::Hour),
            (NOV1 + HOUR, NOV1 + DAY + HOUR, Period::Hour),
            (NOV1, NOV1 + DAY + HOUR, Period::Hour),
            (NOV1, NOV1 + 12 * HOUR, Period::Hour),
        ];
        for (start, end, period) in cases {
            assert_eq!(Period::pick(&c, start, end, now), period, "{start}..{end}");
        }
        assert_eq!(
            Period::pick(&c, NOV1, DEC1, DEC1 - 1),
            Period::Hour,
            "a window ending after now reads hours"
        );
        for p in Period::ALL {
            assert_eq!(Period::ALL[usize::try_from(p.id()).unwrap()], p);
        }
    }
}
