//! The soak's jobs: drawn from the seeded generator, each with the exit code it must end with,
//! some depending (`afterok`) on an earlier job meant to succeed, some running an `srun` step;
//! and the ledger of what every `sbatch` told its client.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rand::Rng;
use rand::rngs::StdRng;

/// Exit codes the jobs end with (0 more often: `afterok` dependants need successful parents).
const EXIT_CODES: &[i32] = &[0, 0, 0, 0, 1, 2, 3, 42];

/// How many recent successful jobs a dependant picks its parent from.
const PARENTS: usize = 8;

/// One job to submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSpec {
    /// Its sequence number in the soak, also its name (`soak-<seq>`) and run marker file.
    pub seq: u32,
    /// The cluster it is submitted to (index).
    pub cluster: usize,
    /// How long its script sleeps, in milliseconds.
    pub sleep_ms: u32,
    /// The exit code its script ends with.
    pub exit: i32,
    /// Whether it runs an `srun` step first.
    pub srun: bool,
    /// The job it depends on with `afterok` (one meant to exit 0).
    pub after: Option<u32>,
}

impl JobSpec {
    /// Its job name.
    pub fn name(&self) -> String {
        job_name(self.seq)
    }

    /// Its batch script: records the run's start in `runs/<seq>`, maybe runs a step, sleeps,
    /// exits with its code.
    pub fn script(&self, runs: &Path) -> String {
        let marker = runs.join(self.seq.to_string());
        let step = if self.srun { "srun -n1 true; " } else { "" };
        format!(
            "echo $SLURM_JOB_ID >> {marker}; {step}sleep {secs}.{ms:03}; exit {exit}",
            marker = marker.display(),
            secs = self.sleep_ms / 1000,
            ms = self.sleep_ms % 1000,
            exit = self.exit
        )
    }

    /// The `sbatch` arguments submitting it.
    pub fn sbatch_args(&self, runs: &Path) -> Vec<String> {
        let mut args = vec![
            "--parsable".to_string(),
            "-J".into(),
            self.name(),
            "-o".into(),
            "/dev/null".into(),
        ];
        if let Some(parent) = self.after {
            args.push(format!("--dependency=afterok:{parent}"));
        }
        args.extend(["--wrap".to_string(), self.script(runs)]);
        args
    }
}

/// Job `seq` on `node` of `cluster`, whose `srun` step runs long enough for its node daemon
/// to be killed under it: the step leaves `steps/<seq>` once it runs; the job must end with
/// exit code 0, which it only does when srun got its step's true exit (0) after the node
/// daemon came back. Drawn from nothing, so the seed's schedule stays the same.
pub fn long_step_args(seq: u32, cluster: usize, node: &str, work: &Path) -> (JobSpec, Vec<String>) {
    let spec = JobSpec {
        seq,
        cluster,
        sleep_ms: 0,
        exit: 0,
        srun: true,
        after: None,
    };
    let marker = work.join("runs").join(seq.to_string());
    let started = step_marker(work, seq);
    let script = format!(
        "echo $SLURM_JOB_ID >> {marker}; srun -n1 sh -c 'touch {started}; sleep 3; exit 0' || exit {LOST_STEP}; exit 0",
        marker = marker.display(),
        started = started.display(),
    );
    // Its output (srun's messages) is kept beside the marker, to tell what became of the step.
    let mut out = started.clone().into_os_string();
    out.push(".out");
    let args = vec![
        "--parsable".to_string(),
        "-J".into(),
        spec.name(),
        "-o".into(),
        out.to_string_lossy().into_owned(),
        "-w".into(),
        node.to_string(),
        "--wrap".into(),
        script,
    ];
    (spec, args)
}

/// The exit code of a job whose long step lost its true exit.
pub const LOST_STEP: i32 = 99;

/// The file a long step leaves once it runs.
pub fn step_marker(work: &Path, seq: u32) -> std::path::PathBuf {
    work.join("steps").join(seq.to_string())
}

/// The name of job `seq`.
pub fn job_name(seq: u32) -> String {
    format!("soak-{seq}")
}

/// The sequence number in a soak job's name.
pub fn seq_of(name: &str) -> Option<u32> {
    name.strip_prefix("soak-")?.parse().ok()
}

/// What became of every submission.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// Accepted jobs: job id → (seq, exit code it must end with).
    pub accepted: BTreeMap<u32, (u32, i32)>,
    /// Submissions the client was told failed (by seq), with what it was told.
    pub refused: BTreeMap<u32, String>,
    /// Submissions whose outcome the client never learnt (the driver killed a hung sbatch).
    pub unknown: BTreeSet<u32>,
    /// Accepted jobs submitted with an `afterok` dependency.
    pub dependants: usize,
    /// Accepted jobs running an `srun` step.
    pub with_steps: usize,
    /// Steps running while their node daemon was killed (and started again).
    pub steps_cut: usize,
}

impl Ledger {
    /// Every submission made.
    pub fn submitted(&self) -> usize {
        self.accepted.len() + self.refused.len() + self.unknown.len()
    }
}

/// Draws job `seq` for a site of `clusters` clusters; a dependant's parent is a recent
/// accepted job meant to succeed.
pub fn draw(rng: &mut StdRng, seq: u32, clusters: usize, ledger: &Ledger) -> JobSpec {
    let parents: Vec<u32> = ledger
        .accepted
        .iter()
        .rev()
        .filter(|(_, (_, exit))| *exit == 0)
        .take(PARENTS)
        .map(|(id, _)| *id)
        .collect();
    // The same draws whatever became of earlier submissions, so a seed replays the same
    // schedule even when a different submission failed.
    let wants_parent = rng.random_bool(0.2);
    let pick = rng.random_range(0..PARENTS);
    let after = match parents.len() {
        0 => None,
        n => wants_parent.then(|| parents[pick % n]),
    };
    JobSpec {
        seq,
        cluster: rng.random_range(0..clusters),
        sleep_ms: rng.random_range(100..1500),
        exit: EXIT_CODES[rng.random_range(0..EXIT_CODES.len())],
        srun: rng.random_bool(0.25),
        after,
    }
}

/// The job id `sbatch --parsable` printed (`N` or `N;cluster`).
pub fn parse_job_id(out: &str) -> Option<u32> {
    out.trim().split(';').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_same_seed_draws_the_same_jobs() {
        let draw_all = |seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut ledger = Ledger::default();
            (0..20)
                .map(|seq| {
                    let spec = draw(&mut rng, seq, 2, &ledger);
                    ledger.accepted.insert(100 + seq, (seq, spec.exit));
                    spec
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw_all(7), draw_all(7));
        assert_ne!(draw_all(7), draw_all(8));
    }

    #[test]
    fn a_dependant_waits_for_a_job_meant_to_succeed() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut ledger = Ledger::default();
        ledger.accepted.insert(5, (0, 3));
        ledger.accepted.insert(6, (1, 0));
        for seq in 2..200 {
            let spec = draw(&mut rng, seq, 1, &ledger);
            assert!(spec.after.is_none() || spec.after == Some(6), "{spec:?}");
        }
    }

    #[test]
    fn the_script_records_its_run_and_exits_with_its_code() {
        let spec = JobSpec {
            seq: 4,
            cluster: 0,
            sleep_ms: 250,
            exit: 3,
            srun: true,
            after: Some(9),
        };
        let runs = Path::new("/w/runs");
        assert_eq!(
            spec.script(runs),
            "echo $SLURM_JOB_ID >> /w/runs/4; srun -n1 true; sleep 0.250; exit 3"
        );
        let args = spec.sbatch_args(runs);
        assert!(args.contains(&"--dependency=afterok:9".to_string()));
        assert!(args.contains(&"soak-4".to_string()));
        assert_eq!(seq_of("soak-4"), Some(4));
        assert_eq!(parse_job_id("67108865;cluster1\n"), Some(67108865));
    }
}
