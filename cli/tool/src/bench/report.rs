//! The benchmark table: what was measured, the target, the figure, and whether it meets it.

use std::time::Duration;

use comfy_table::{Table, presets};

/// One measured figure against its target.
#[derive(Debug, Clone)]
pub struct Figure {
    /// What was measured.
    pub name: String,
    /// The target, as the issue states it.
    pub target: Duration,
    /// The measurement.
    pub measured: Duration,
    /// A detail to print (e.g. "median of 20").
    pub detail: String,
}

impl Figure {
    /// Whether the measurement meets the target.
    pub fn ok(&self) -> bool {
        self.measured <= self.target
    }
}

/// Renders the figures as a table.
pub fn render(figures: &[Figure]) -> String {
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED);
    table.set_header(["benchmark", "measured", "target", "", "detail"]);
    for f in figures {
        table.add_row([
            f.name.clone(),
            fmt_duration(f.measured),
            format!("< {}", fmt_duration(f.target)),
            if f.ok() { "ok" } else { "SLOW" }.to_string(),
            f.detail.clone(),
        ]);
    }
    table.to_string()
}

/// Milliseconds with two decimals below ten seconds, seconds above.
pub fn fmt_duration(d: Duration) -> String {
    if d < Duration::from_secs(10) {
        format!("{:.2} ms", d.as_secs_f64() * 1000.0)
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

/// The median of `samples` (which it sorts).
pub fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    match samples.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => samples[n / 2],
        n => (samples[n / 2 - 1] + samples[n / 2]) / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&mut [ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(
            median(&mut [ms(4), ms(1), ms(3), ms(2)]),
            Duration::from_micros(2500)
        );
        assert_eq!(median(&mut []), Duration::ZERO);
    }

    #[test]
    fn the_table_flags_slow_figures() {
        let f = |measured| Figure {
            name: "x".into(),
            target: Duration::from_millis(20),
            measured,
            detail: String::new(),
        };
        let text = render(&[f(Duration::from_millis(5)), f(Duration::from_millis(30))]);
        assert!(text.contains("ok") && text.contains("SLOW"), "{text}");
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1500.00 ms");
        assert_eq!(fmt_duration(Duration::from_secs(12)), "12.00 s");
    }
}
