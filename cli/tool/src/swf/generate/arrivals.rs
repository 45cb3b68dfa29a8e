//! When jobs are submitted: an hourly rate with a working-day rhythm (quiet nights, busy
//! mornings and afternoons), quieter weekends, and busier or quieter days at random. Exactly
//! the asked number of jobs is spread over the hours by their share of the total rate, and
//! each hour's jobs get uniform random seconds within it, in ascending order, so the trace
//! comes out sorted while only one hour's submissions are ever held in memory.

use rand::rngs::StdRng;

use super::sample::{log_normal, unit};

/// Relative submission rate by hour of the day (UTC).
const DIURNAL: [f64; 24] = [
    0.30, 0.25, 0.22, 0.20, 0.20, 0.22, 0.30, 0.45, 0.70, 0.95, 1.00, 1.00, 0.90, 0.95, 1.00, 1.00,
    0.95, 0.85, 0.70, 0.60, 0.55, 0.50, 0.45, 0.38,
];

/// Relative rate by day of the week, Sunday first.
const WEEKLY: [f64; 7] = [0.50, 1.00, 1.00, 1.00, 1.00, 0.95, 0.55];

const HOUR: i64 = 3600;

/// Submission times, in ascending order.
#[derive(Debug, Clone)]
pub struct Arrivals {
    start: i64,
    hours: usize,
    day_factor: Vec<f64>,
    total: f64,
    jobs: u64,
    hour: usize,
    cumulative: f64,
    emitted: u64,
    /// The current hour's remaining times, latest first.
    pending: Vec<i64>,
}

impl Arrivals {
    /// `jobs` submissions over `days` days from `start` (unix seconds).
    pub fn new(rng: &mut StdRng, start: i64, days: u32, jobs: u64) -> Self {
        let day_factor: Vec<f64> = (0..days).map(|_| log_normal(rng, 1.0, 0.25)).collect();
        let hours = day_factor.len() * 24;
        let mut me = Self {
            start,
            hours,
            day_factor,
            total: 0.0,
            jobs,
            hour: 0,
            cumulative: 0.0,
            emitted: 0,
            pending: Vec::new(),
        };
        me.total = (0..hours).map(|h| me.rate(h)).sum();
        me
    }

    /// The relative rate of hour `h` from the start.
    fn rate(&self, h: usize) -> f64 {
        let t = self.start + h as i64 * HOUR;
        let hour_of_day = t.div_euclid(HOUR).rem_euclid(24) as usize;
        // 1970-01-01 was a Thursday.
        let weekday = (t.div_euclid(86_400) + 4).rem_euclid(7) as usize;
        DIURNAL[hour_of_day] * WEEKLY[weekday] * self.day_factor[h / 24]
    }

    /// The next submission time; `None` once every job is placed.
    pub fn next_time(&mut self, rng: &mut StdRng) -> Option<i64> {
        while self.pending.is_empty() {
            if self.hour >= self.hours || self.emitted >= self.jobs {
                return None;
            }
            self.cumulative += self.rate(self.hour);
            let target = if self.hour + 1 == self.hours || self.total <= 0.0 {
                self.jobs
            } else {
                ((self.jobs as f64 * self.cumulative / self.total).round() as u64).min(self.jobs)
            };
            let count = target.saturating_sub(self.emitted);
            let from = self.start + self.hour as i64 * HOUR;
            self.pending
                .extend((0..count).map(|_| from + (unit(rng) * HOUR as f64) as i64));
            self.pending.sort_unstable_by(|a, b| b.cmp(a));
            self.emitted = target.max(self.emitted);
            self.hour += 1;
        }
        self.pending.pop()
    }
}
