//! `--cpu-freq`: the step's CPUs run at the asked frequency or governor while its tasks run,
//! through the kernel's cpufreq files (`/sys/devices/system/cpu/cpuN/cpufreq`), and get their
//! old settings back when the step ends, as Slurm's step daemon does. A CPU without those
//! files (no cpufreq driver, as in most virtual machines) is left as it is, as Slurm leaves
//! it; a file the daemon cannot write (not root) is logged and skipped.
//!
//! A single frequency runs under the `userspace` governor at that speed (`scaling_setspeed`);
//! a range sets `scaling_min_freq`/`scaling_max_freq`, then its governor if it names one;
//! `low`, `medium`, `high` and `highm1` are taken from the CPU's available frequencies.

use std::path::{Path, PathBuf};

use sluice_vocab::cpu_freq::{CpuFreq, Freq, Governor};

/// A cpufreq file and what it held before the step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    path: PathBuf,
    old: String,
}

/// The cpufreq directory of CPU `cpu` under `root`.
fn dir(root: &Path, cpu: u32) -> PathBuf {
    root.join(format!("sys/devices/system/cpu/cpu{cpu}/cpufreq"))
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The CPU's frequencies, ascending: its list, else its minimum and maximum.
fn available(dir: &Path) -> Vec<u32> {
    let mut freqs: Vec<u32> = read(&dir.join("scaling_available_frequencies"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    if freqs.is_empty() {
        freqs = ["cpuinfo_min_freq", "cpuinfo_max_freq"]
            .iter()
            .filter_map(|f| read(&dir.join(f))?.parse().ok())
            .collect();
    }
    freqs.sort_unstable();
    freqs.dedup();
    freqs
}

/// The writes `req` makes in one CPU's directory, in order.
fn writes(req: &CpuFreq, avail: &[u32]) -> Vec<(&'static str, String)> {
    let khz = |f: Freq| f.khz(avail).map(|k| k.to_string());
    let gov = |g: Governor| ("scaling_governor", g.sysfs().to_string());
    match *req {
        CpuFreq::Governor(g) => vec![gov(g)],
        CpuFreq::One(f) => khz(f)
            .map(|k| vec![gov(Governor::UserSpace), ("scaling_setspeed", k)])
            .unwrap_or_default(),
        CpuFreq::Range(min, max, g) => {
            let mut w = Vec::new();
            if let (Some(lo), Some(hi)) = (khz(min), khz(max)) {
                // The maximum first: a minimum above the old maximum would be refused.
                w.push(("scaling_max_freq", hi));
                w.push(("scaling_min_freq", lo));
            }
            w.extend(g.map(gov));
            w
        }
    }
}

/// Sets `req` on each of `cpus` that has cpufreq files under `root`; returns what to put back.
pub fn apply(root: &Path, cpus: &[u32], req: &CpuFreq) -> Vec<Saved> {
    let mut saved = Vec::new();
    for &cpu in cpus {
        let dir = dir(root, cpu);
        if !dir.is_dir() {
            continue;
        }
        for (file, value) in writes(req, &available(&dir)) {
            let path = dir.join(file);
            let Some(old) = read(&path) else {
                continue;
            };
            match std::fs::write(&path, &value) {
                Ok(()) => saved.push(Saved { path, old }),
                Err(e) => tracing::warn!("--cpu-freq: cannot write {value} to {path:?}: {e}"),
            }
        }
    }
    saved
}

/// Puts the saved settings back, last write first.
pub fn restore(saved: &[Saved]) {
    for s in saved.iter().rev() {
        if let Err(e) = std::fs::write(&s.path, &s.old) {
            tracing::warn!("--cpu-freq: cannot restore {:?}: {e}", s.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(root: &Path, n: u32, files: &[(&str, &str)]) {
        let d = dir(root, n);
        std::fs::create_dir_all(&d).unwrap();
        for (f, v) in files {
            std::fs::write(d.join(f), format!("{v}\n")).unwrap();
        }
    }

    fn get(root: &Path, n: u32, f: &str) -> String {
        read(&dir(root, n).join(f)).unwrap()
    }

    #[test]
    fn settings_apply_to_cpus_with_cpufreq_and_come_back() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let files = [
            ("scaling_available_frequencies", "2000000 800000 1200000"),
            ("scaling_governor", "ondemand"),
            ("scaling_min_freq", "800000"),
            ("scaling_max_freq", "2000000"),
            ("scaling_setspeed", "<unsupported>"),
        ];
        cpu(root, 0, &files);
        cpu(root, 1, &files);
        // CPU 2 has no cpufreq directory: left alone.
        let req = CpuFreq::parse("low-medium:performance").unwrap();
        let saved = apply(root, &[0, 2], &req);
        assert_eq!(get(root, 0, "scaling_min_freq"), "800000");
        assert_eq!(get(root, 0, "scaling_max_freq"), "1200000");
        assert_eq!(get(root, 0, "scaling_governor"), "performance");
        assert_eq!(get(root, 1, "scaling_max_freq"), "2000000", "not asked");
        restore(&saved);
        assert_eq!(get(root, 0, "scaling_max_freq"), "2000000");
        assert_eq!(get(root, 0, "scaling_governor"), "ondemand");
        let one = apply(root, &[1], &CpuFreq::parse("high").unwrap());
        assert_eq!(get(root, 1, "scaling_governor"), "userspace");
        assert_eq!(get(root, 1, "scaling_setspeed"), "2000000");
        restore(&one);
        assert_eq!(get(root, 1, "scaling_setspeed"), "<unsupported>");
    }

    #[test]
    fn the_minimum_and_maximum_stand_in_for_a_missing_list() {
        let root = tempfile::tempdir().unwrap();
        cpu(
            root.path(),
            0,
            &[("cpuinfo_min_freq", "1000"), ("cpuinfo_max_freq", "3000")],
        );
        assert_eq!(available(&dir(root.path(), 0)), vec![1000, 3000]);
    }
}
