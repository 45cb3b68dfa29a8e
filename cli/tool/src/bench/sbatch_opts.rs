//! `sbatch` with 30 options and a 200-line script (issue 10's target: under 10 ms median,
//! process start included): the script's `#SBATCH` directives, the options' checks and the
//! request all on the measured path.

use std::path::Path;
use std::time::Duration;

use super::BenchError;
use super::load::sbatch_runs;
use super::report;

/// The 30 options (held, so the jobs never run and the queue stays still).
pub const OPTIONS: [&str; 30] = [
    "-H",
    "-J",
    "bench-opts",
    "-N",
    "1",
    "-n",
    "2",
    "--cpus-per-task=1",
    "--ntasks-per-node=2",
    "--mem=64MB",
    "-t",
    "0-00:10:00",
    "--open-mode=append",
    "--signal=B:USR1@30",
    "--wckey=bench",
    "--comment=issue10",
    "--requeue",
    "--nice=10",
    "--begin=now",
    "--deadline=now+1day",
    "--kill-on-invalid-dep=no",
    "--export=ALL,BENCH=1",
    "-o",
    "bench-%j-%x.out",
    "-e",
    "bench-%j.err",
    "--network=any",
    "--mincpus=1",
    "--no-kill",
    "--exclusive",
];

/// A script of `lines` lines: a shebang, a few directives, then commands.
pub fn script(lines: usize) -> String {
    let mut text = String::from("#!/bin/bash\n#SBATCH --job-name=bench-script\n");
    text.push_str("#SBATCH --time=5\n#SBATCH --output=bench.out\n# a comment\n");
    let mut n = 5;
    while n < lines {
        text.push_str(&format!("echo \"line {n} of the benchmark script\"\n"));
        n += 1;
    }
    text
}

/// The median wall time of `runs` sbatch runs with [`OPTIONS`] and a 200-line script.
pub fn median(conf: &Path, work: &Path, runs: usize) -> Result<Duration, BenchError> {
    let path = work.join("bench-200-lines.sh");
    std::fs::write(&path, script(200)).map_err(BenchError::TempDir)?;
    let mut args: Vec<&str> = OPTIONS.to_vec();
    let file = path.display().to_string();
    args.push(&file);
    let mut samples = sbatch_runs(conf, work, &args, runs)?;
    Ok(report::median(&mut samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_has_the_lines_asked_for() {
        assert_eq!(script(200).lines().count(), 200);
        assert!(script(200).starts_with("#!/bin/bash\n"));
    }

    /// Every option of the benchmark is one sbatch accepts, so the figure measures a
    /// submission and not a refusal.
    #[test]
    fn sbatch_accepts_every_option() {
        let mut words: Vec<String> = OPTIONS.iter().map(|s| s.to_string()).collect();
        words.push("x.sh".into());
        match sluice_cli::sbatch::args::parse_command_line(&words).unwrap() {
            sluice_cli::sbatch::args::CommandLine::Submit { opts, script, .. } => {
                let mut o = sluice_cli::sbatch::args::SbatchOpts::default();
                for (opt, v) in opts {
                    o.apply(opt, v).unwrap();
                }
                assert_eq!(script.as_deref(), Some("x.sh"));
            }
            other => panic!("{other:?}"),
        }
    }
}
