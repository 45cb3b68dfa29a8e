//! Days from hours and months from days: which periods a rolled range of hours closes, and
//! how a period's usage sums up from the periods inside it (as Slurm's
//! `as_mysql_nonhour_rollup` sums the lower table).

use crate::calendar::Calendar;
use crate::rollup::{Span, UsageSecs};

/// The usage of consecutive periods added up; the count is the latest period's.
pub fn sum(periods: impl IntoIterator<Item = (i64, UsageSecs)>) -> UsageSecs {
    let mut total = UsageSecs::default();
    let mut latest = i64::MIN;
    for (start, u) in periods {
        total.total = total.total.saturating_add(u.total);
        total.alloc = total.alloc.saturating_add(u.alloc);
        total.down = total.down.saturating_add(u.down);
        total.pdown = total.pdown.saturating_add(u.pdown);
        total.idle = total.idle.saturating_add(u.idle);
        total.plan = total.plan.saturating_add(u.plan);
        total.over = total.over.saturating_add(u.over);
        if start >= latest {
            latest = start;
            total.count = u.count;
        }
    }
    total
}

/// The local days whose last hour lies in `[from, to)`: rolling those hours completes them.
pub fn closed_days(cal: &Calendar, from: i64, to: i64) -> Vec<Span> {
    closed(from, to, |t| cal.day_start(t), |t| cal.next_day(t))
}

/// The local months whose last hour lies in `[from, to)`.
pub fn closed_months(cal: &Calendar, from: i64, to: i64) -> Vec<Span> {
    closed(from, to, |t| cal.month_start(t), |t| cal.next_month(t))
}

fn closed(from: i64, to: i64, first: impl Fn(i64) -> i64, next: impl Fn(i64) -> i64) -> Vec<Span> {
    let mut out = Vec::new();
    if from >= to {
        return out;
    }
    let mut start = first(from);
    loop {
        let end = next(start);
        if end <= start || end > to {
            return out;
        }
        if end > from {
            out.push(Span::new(start, end));
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::{DAY, HOUR};

    const NOV1: i64 = 1_793_491_200;

    #[test]
    fn rolling_hours_closes_the_days_and_months_they_end() {
        let c = Calendar::utc();
        assert_eq!(closed_days(&c, NOV1 + 5 * HOUR, NOV1 + DAY - HOUR), vec![]);
        assert_eq!(
            closed_days(&c, NOV1 + 5 * HOUR, NOV1 + DAY),
            vec![Span::new(NOV1, NOV1 + DAY)],
            "the last hour of a day closes it, even if its first hours were rolled earlier"
        );
        assert_eq!(
            closed_days(&c, NOV1 + DAY - HOUR, NOV1 + 3 * DAY + HOUR),
            vec![
                Span::new(NOV1, NOV1 + DAY),
                Span::new(NOV1 + DAY, NOV1 + 2 * DAY),
                Span::new(NOV1 + 2 * DAY, NOV1 + 3 * DAY)
            ]
        );
        assert_eq!(closed_days(&c, NOV1, NOV1), vec![]);
        let dec1 = NOV1 + 30 * DAY;
        assert_eq!(closed_months(&c, NOV1, dec1 - HOUR), vec![]);
        assert_eq!(
            closed_months(&c, dec1 - HOUR, dec1 + DAY),
            vec![Span::new(NOV1, dec1)]
        );
    }

    #[test]
    fn sums_add_every_kind_and_keep_the_latest_count() {
        let a = UsageSecs {
            count: 4,
            total: 10,
            alloc: 1,
            down: 2,
            pdown: 3,
            idle: 1,
            plan: 2,
            over: 5,
        };
        let b = UsageSecs { count: 8, ..a };
        let s = sum([(7_200, b), (3_600, a)]);
        assert_eq!(
            s,
            UsageSecs {
                count: 8,
                total: 20,
                alloc: 2,
                down: 4,
                pdown: 6,
                idle: 2,
                plan: 4,
                over: 10
            }
        );
        assert_eq!(sum([]), UsageSecs::default());
    }
}
