//! Submission throughput, as issue 14's table measures it: `N` jobs submitted with
//! `sbatch -o /dev/null --wrap true`, one process per job, one at a time or `P` at a time,
//! jobs/s from the first submission to the last answer. The jobs run (`true`), as in that
//! table; each run's jobs are cancelled by name afterwards, so every run starts on an empty
//! queue. Sides alternate (A B A B ...), and each row gives each side's median.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::Side;

/// The job name of the throughput runs' jobs (what `scancel -n` removes after each run).
const JOB_NAME: &str = "vs-slurm-rate";

/// One throughput measure: `jobs` submissions, `parallel` at a time, to `cluster`.
pub(super) struct Rate {
    pub label: String,
    pub cluster: String,
    pub jobs: usize,
    pub parallel: usize,
}

/// One side's jobs/s of each run, or why a run failed.
pub(super) type Figures = Result<Vec<f64>, String>;

/// Each side's jobs/s of every run of `rate` (sides in the order given), alternating.
pub(super) fn measure(rate: &Rate, sides: &[Side], runs: usize) -> Vec<Figures> {
    let mut out: Vec<Figures> = sides.iter().map(|_| Ok(Vec::new())).collect();
    for _ in 0..runs {
        for (side, figures) in sides.iter().zip(out.iter_mut()) {
            let Ok(list) = figures else { continue };
            match once(side, rate) {
                Ok(r) => list.push(r),
                Err(e) => *figures = Err(e),
            }
        }
    }
    out
}

/// One run: the submissions, then the cancellation of their jobs.
fn once(side: &Side, rate: &Rate) -> Result<f64, String> {
    let args: Vec<String> = ["-J", JOB_NAME, "-o", "/dev/null", "--wrap", "true"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let result = std::thread::scope(|s| {
        let workers: Vec<_> = (0..rate.parallel.max(1))
            .map(|_| {
                s.spawn(|| {
                    while next.fetch_add(1, Ordering::Relaxed) < rate.jobs {
                        side.run("sbatch", &args, &rate.cluster)?;
                    }
                    Ok::<(), String>(())
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .unwrap_or_else(|_| Err("submitter panicked".into()))
        })
    });
    let took = started.elapsed();
    let cancel = ["-n", JOB_NAME].map(String::from);
    let _ = side.run("scancel", &cancel, &rate.cluster);
    result.map(|()| rate.jobs as f64 / took.as_secs_f64().max(1e-9))
}

/// The median of `v` (`None` when empty).
pub(super) fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// The markdown table of the throughput rows: each side's median jobs/s and Sluice's over
/// Slurm's (sides in the order Sluice, Slurm).
pub(super) fn markdown(rows: &[(String, Vec<Figures>)], runs: usize) -> String {
    let mut text = format!(
        "\n| submissions (median of {runs} runs, jobs/s) | Slurm | Sluice | Sluice / Slurm |\n\
         | --- | ---: | ---: | ---: |\n"
    );
    for (label, sides) in rows {
        let cell = |i: usize| match sides.get(i) {
            None => (None, "-".to_string()),
            Some(Err(e)) => (None, format!("failed: {e}")),
            Some(Ok(v)) => {
                let m = median(v);
                (m, m.map_or("-".into(), |m| format!("{m:.1}")))
            }
        };
        let (sluice, sluice_text) = cell(0);
        let (slurm, slurm_text) = cell(1);
        let ratio = match (sluice, slurm) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.1}x", a / b),
            _ => "-".into(),
        };
        text.push_str(&format!(
            "| {label} | {slurm_text} | {sluice_text} | {ratio} |\n"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_medians_and_sluices_ratio_over_slurms() {
        let rows = vec![
            (
                "300 jobs, 1 at a time".to_string(),
                vec![Ok(vec![300.0, 100.0, 200.0]), Ok(vec![50.0, 100.0, 150.0])],
            ),
            (
                "300 jobs, 4 at a time".to_string(),
                vec![Ok(vec![400.0]), Err("sbatch: error: x".to_string())],
            ),
        ];
        let text = markdown(&rows, 3);
        assert!(
            text.contains("| 300 jobs, 1 at a time | 100.0 | 200.0 | 2.0x |"),
            "{text}"
        );
        assert!(
            text.contains("| 300 jobs, 4 at a time | failed: sbatch: error: x | 400.0 | - |"),
            "{text}"
        );
        assert_eq!(median(&[]), None);
    }
}
