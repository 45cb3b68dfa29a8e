//! The pure half of `sluice bench vs-slurm`: the command mix, the samples of each side, and
//! the markdown table with the ratios.

use std::time::Duration;

use super::super::report::median;

/// Which system a command runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    /// Sluice's commands and a `sluice up` directory.
    Sluice,
    /// Real Slurm's commands and the oracle's configuration.
    Slurm,
}

/// Where a command is sent: the plain cluster, or the federated one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The cluster outside any federation.
    Single,
    /// A member of a federation.
    Federated,
}

/// One row of the mix: a command line, `{job}` standing for the job id each system gave the
/// job submitted while setting up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The row's label.
    pub label: String,
    /// The command's name (`sbatch`, `squeue`, ...).
    pub program: &'static str,
    /// Its arguments.
    pub args: Vec<String>,
    /// The cluster it talks to.
    pub target: Target,
}

impl Case {
    fn new(program: &'static str, args: &[&str], target: Target) -> Self {
        let mut label = std::iter::once(program)
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        if target == Target::Federated {
            label.push_str(" (federated)");
        }
        Self {
            label,
            program,
            args: args.iter().map(|a| (*a).to_string()).collect(),
            target,
        }
    }

    /// The arguments with `{job}` replaced by `job`.
    pub fn args_for(&self, job: &str) -> Vec<String> {
        self.args.iter().map(|a| a.replace("{job}", job)).collect()
    }
}

/// The command mix of issue 14: a submission (on the plain cluster and, when `federated`, on a
/// federated one) and the queries a user types most.
pub fn mix(federated: bool) -> Vec<Case> {
    let mut cases = vec![Case::new(
        "sbatch",
        &["-o", "/dev/null", "--wrap", "true"],
        Target::Single,
    )];
    if federated {
        cases.push(Case::new(
            "sbatch",
            &["-o", "/dev/null", "--wrap", "true"],
            Target::Federated,
        ));
    }
    cases.extend([
        Case::new("squeue", &[], Target::Single),
        Case::new("sinfo", &[], Target::Single),
        Case::new("scontrol", &["show", "job", "{job}"], Target::Single),
        Case::new("sacct", &["-j", "{job}"], Target::Single),
        Case::new("sacctmgr", &["show", "cluster"], Target::Single),
    ]);
    cases
}

/// The job id in `sbatch --parsable`'s output (`N` or `N;cluster`).
pub fn parsable_job_id(stdout: &str) -> Option<u32> {
    let line = stdout.lines().next()?.trim();
    line.split(';').next()?.parse().ok()
}

/// What one row measured on each side.
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// The row's label.
    pub label: String,
    /// Sluice's wall times.
    pub sluice: Vec<Duration>,
    /// Slurm's wall times (empty without the oracle).
    pub slurm: Vec<Duration>,
    /// Why a side failed, if it did (its first error line).
    pub failure: Option<String>,
}

impl Row {
    /// The medians (Sluice, Slurm) and Slurm's median over Sluice's.
    pub fn figures(&self) -> (Duration, Option<Duration>, Option<f64>) {
        let sluice = median(&mut self.sluice.clone());
        let slurm = (!self.slurm.is_empty()).then(|| median(&mut self.slurm.clone()));
        let ratio = slurm
            .filter(|_| !sluice.is_zero())
            .map(|s| s.as_secs_f64() / sluice.as_secs_f64());
        (sluice, slurm, ratio)
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// The markdown table: each row's medians and how many times faster Sluice is.
pub fn markdown(rows: &[Row], runs: usize) -> String {
    let mut out = format!(
        "| command (median of {runs}, whole process) | Slurm | Sluice | Slurm / Sluice |\n\
         | --- | ---: | ---: | ---: |\n"
    );
    for row in rows {
        let (sluice, slurm, ratio) = row.figures();
        let slurm = slurm.map_or_else(|| "-".to_string(), ms);
        let sluice = if row.sluice.is_empty() {
            "-".to_string()
        } else {
            ms(sluice)
        };
        let ratio = match (&row.failure, ratio) {
            (Some(why), _) => format!("failed: {why}"),
            (None, Some(r)) => format!("{r:.1}x"),
            (None, None) => "-".to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {slurm} | {sluice} | {ratio} |\n",
            row.label
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_names_the_job_it_asks_about() {
        let cases = mix(true);
        let labels: Vec<_> = cases.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            vec![
                "sbatch -o /dev/null --wrap true",
                "sbatch -o /dev/null --wrap true (federated)",
                "squeue",
                "sinfo",
                "scontrol show job {job}",
                "sacct -j {job}",
                "sacctmgr show cluster",
            ]
        );
        assert_eq!(cases[4].args_for("42"), vec!["show", "job", "42"]);
        assert_eq!(mix(false).len(), 6);
    }

    #[test]
    fn parsable_ids_with_and_without_a_cluster() {
        assert_eq!(parsable_job_id("17\n"), Some(17));
        assert_eq!(parsable_job_id("67108881;c1\n"), Some(67_108_881));
        assert_eq!(parsable_job_id("Submitted batch job 5\n"), None);
        assert_eq!(parsable_job_id(""), None);
    }

    #[test]
    fn the_table_gives_medians_and_ratios() {
        let ms = Duration::from_millis;
        let rows = vec![
            Row {
                label: "squeue".into(),
                sluice: vec![ms(2), ms(1), ms(9)],
                slurm: vec![ms(12), ms(10), ms(30)],
                failure: None,
            },
            Row {
                label: "sinfo".into(),
                sluice: vec![ms(1)],
                slurm: Vec::new(),
                failure: None,
            },
            Row {
                label: "sacct -j 1".into(),
                sluice: Vec::new(),
                slurm: vec![ms(5)],
                failure: Some("Sluice: no dbd".into()),
            },
        ];
        let text = markdown(&rows, 3);
        assert!(
            text.starts_with("| command (median of 3, whole process) |"),
            "{text}"
        );
        assert!(
            text.contains("| `squeue` | 12.00 ms | 2.00 ms | 6.0x |"),
            "{text}"
        );
        assert!(text.contains("| `sinfo` | - | 1.00 ms | - |"), "{text}");
        assert!(
            text.contains("| `sacct -j 1` | 5.00 ms | - | failed: Sluice: no dbd |"),
            "{text}"
        );
    }
}
