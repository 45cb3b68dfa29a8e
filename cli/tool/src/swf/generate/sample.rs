//! The few distributions the generator draws from, over a seeded generator so a trace is a
//! function of its seed: uniform, normal (Box-Muller), log-normal, and weighted choices
//! (Zipf-like popularity) by binary search over a cumulative table.

use rand::Rng;
use rand::rngs::StdRng;

/// A uniform draw in [0, 1).
pub fn unit(rng: &mut StdRng) -> f64 {
    rng.random::<f64>()
}

/// A standard normal draw.
pub fn normal(rng: &mut StdRng) -> f64 {
    // 1 - unit is in (0, 1], so its logarithm is finite.
    let u1 = 1.0 - unit(rng);
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A log-normal draw: `median × e^(sigma × N(0,1))`.
pub fn log_normal(rng: &mut StdRng, median: f64, sigma: f64) -> f64 {
    median * (sigma * normal(rng)).exp()
}

/// A choice among weighted items (indices from 0).
#[derive(Debug, Clone, PartialEq)]
pub struct Weighted {
    cumulative: Vec<f64>,
}

impl Weighted {
    /// A table over `weights` (negative weights count as 0; all zero = uniform).
    pub fn new(weights: impl IntoIterator<Item = f64>) -> Self {
        let mut total = 0.0;
        let mut cumulative: Vec<f64> = weights
            .into_iter()
            .map(|w| {
                total += w.max(0.0);
                total
            })
            .collect();
        if total <= 0.0 {
            let n = cumulative.len() as f64;
            for (i, c) in cumulative.iter_mut().enumerate() {
                *c = (i + 1) as f64 / n;
            }
        }
        Self { cumulative }
    }

    /// Zipf-like popularity over `n` items: item `k` (from 0) weighs `1 / (k + 1)^s`.
    pub fn zipf(n: usize, s: f64) -> Self {
        Self::new((1..=n).map(|k| 1.0 / (k as f64).powf(s)))
    }

    /// The chance of drawing item `i` (0 outside the table).
    pub fn probability(&self, i: usize) -> f64 {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let Some(&upto) = self.cumulative.get(i) else {
            return 0.0;
        };
        let before = if i == 0 { 0.0 } else { self.cumulative[i - 1] };
        if total > 0.0 {
            (upto - before) / total
        } else {
            0.0
        }
    }

    /// A draw: an index below [`Weighted::len`] (0 for an empty table).
    pub fn pick(&self, rng: &mut StdRng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let x = unit(rng) * total;
        self.cumulative
            .partition_point(|&c| c <= x)
            .min(self.cumulative.len().saturating_sub(1))
    }
}
