//! Figures that are not durations (rates, CPU shares, memory) against their targets, and the
//! process measurements they come from (`/proc/<pid>/stat`, `/proc/<pid>/status`).

use std::time::Duration;

use comfy_table::{Table, presets};

/// One measured figure against a target that is either a floor or a ceiling.
#[derive(Debug, Clone)]
pub struct Gauge {
    /// What was measured.
    pub name: String,
    /// The measurement, in `unit`.
    pub measured: f64,
    /// The target, in `unit`.
    pub target: f64,
    /// The unit both are printed in (`jobs/s`, `ms`, `% of a core`, `MB`).
    pub unit: &'static str,
    /// Whether the target is a floor (`>=`) rather than a ceiling (`<`).
    pub at_least: bool,
    /// A detail to print (how it was measured).
    pub detail: String,
}

impl Gauge {
    /// A figure that must stay below `target`.
    pub fn below(name: impl Into<String>, measured: f64, target: f64, unit: &'static str) -> Self {
        Self {
            name: name.into(),
            measured,
            target,
            unit,
            at_least: false,
            detail: String::new(),
        }
    }

    /// A figure that must reach at least `target`.
    pub fn at_least(
        name: impl Into<String>,
        measured: f64,
        target: f64,
        unit: &'static str,
    ) -> Self {
        Self {
            at_least: true,
            ..Self::below(name, measured, target, unit)
        }
    }

    /// A duration that must stay below `target`, in milliseconds.
    pub fn millis(name: impl Into<String>, measured: Duration, target: Duration) -> Self {
        Self::below(name, ms(measured), ms(target), "ms")
    }

    /// The same figure with `detail`.
    pub fn with(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    /// Whether the measurement meets the target.
    pub fn ok(&self) -> bool {
        match self.at_least {
            true => self.measured >= self.target,
            false => self.measured < self.target,
        }
    }
}

/// Milliseconds in a duration, as a float.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Renders the figures as a table.
pub fn render(gauges: &[Gauge]) -> String {
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED);
    table.set_header(["benchmark", "measured", "target", "", "detail"]);
    for g in gauges {
        let cmp = if g.at_least { ">=" } else { "<" };
        table.add_row([
            g.name.clone(),
            format!("{:.2} {}", g.measured, g.unit),
            format!("{cmp} {} {}", g.target, g.unit),
            if g.ok() { "ok" } else { "MISSED" }.to_string(),
            g.detail.clone(),
        ]);
    }
    table.to_string()
}

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// The CPU time (user + system) process `pid` has used, from `/proc/<pid>/stat`.
pub fn cpu_time(pid: i32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    cpu_time_of(&text)
}

/// utime + stime of a `/proc/<pid>/stat` line (fields 14 and 15; the command name, in
/// parentheses, may hold spaces, so fields are counted after its closing parenthesis).
fn cpu_time_of(stat: &str) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_secs_f64((utime + stime) as f64 / USER_HZ))
}

/// The resident memory of process `pid` in MB (`VmRSS` of `/proc/<pid>/status`).
pub fn rss_mb(pid: i32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    rss_mb_of(&text)
}

fn rss_mb_of(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_counts_fields_after_the_name() {
        let stat = "42 (a b) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 5 0 0";
        assert_eq!(cpu_time_of(stat), Some(Duration::from_secs(3)));
        assert_eq!(cpu_time_of("42 (x) S 1"), None);
        assert!(cpu_time(std::process::id() as i32).is_some());
    }

    #[test]
    fn rss_is_read_in_megabytes() {
        assert_eq!(rss_mb_of("Name:\tx\nVmRSS:\t  2048 kB\n"), Some(2.0));
        assert_eq!(rss_mb_of("Name:\tx\n"), None);
        assert!(rss_mb(std::process::id() as i32).is_some_and(|mb| mb > 0.0));
    }

    #[test]
    fn floors_and_ceilings_are_judged_and_flagged() {
        let fast = Gauge::at_least("rate", 1200.0, 1000.0, "jobs/s");
        let slow = Gauge::at_least("rate", 900.0, 1000.0, "jobs/s");
        let small = Gauge::below("mem", 150.0, 200.0, "MB").with("VmRSS");
        let late = Gauge::millis("t", Duration::from_millis(12), Duration::from_millis(10));
        assert!(fast.ok() && !slow.ok() && small.ok() && !late.ok());
        let text = render(&[fast, slow, small, late]);
        assert!(
            text.contains(">= 1000 jobs/s") && text.contains("< 10 ms"),
            "{text}"
        );
        assert!(text.contains("MISSED") && text.contains("VmRSS"), "{text}");
    }
}
