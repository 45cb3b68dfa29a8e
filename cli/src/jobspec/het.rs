//! Heterogeneous jobs on the command line: `sbatch A : B script`, `salloc A : B cmd`, and the
//! components of a batch script separated by `#SBATCH hetjob` (or the older `packjob`).
//!
//! Each component has its own options. As in Slurm, some options given for one component are
//! used by the following ones unless they set their own ([`PROPAGATED`], the list of Slurm's
//! heterogeneous job guide: `--job-name`, `--partition`, `--time`, `--mem`, ...), while the
//! rest (`-n`, `-N`, `-c`, `--mem-per-cpu`, `-w`, ...) start from their defaults again.

use super::Opt;

/// The separator between components on the command line.
pub const SEPARATOR: &str = ":";

/// The `#SBATCH` words that start a new component in a batch script.
pub const SCRIPT_SEPARATORS: &[&str] = &["hetjob", "packjob"];

/// Whether a component's `opt` is used by the components after it.
pub fn propagated(opt: Opt) -> bool {
    match opt {
        Opt::Account
        | Opt::AcctgFreq
        | Opt::Begin
        | Opt::Chdir
        | Opt::ClusterConstraint
        | Opt::Clusters
        | Opt::Comment
        | Opt::Deadline
        | Opt::Dependency
        | Opt::Distribution
        | Opt::Error
        | Opt::Export
        | Opt::ExportFile
        | Opt::Exclude
        | Opt::GetUserEnv
        | Opt::Gid
        | Opt::Hold
        | Opt::Input
        | Opt::JobName
        | Opt::Mem
        | Opt::NoRequeue
        | Opt::Nice
        | Opt::NoKill
        | Opt::OpenMode
        | Opt::Output
        | Opt::Partition
        | Opt::Priority
        | Opt::Propagate
        | Opt::Qos
        | Opt::Quiet
        | Opt::Reboot
        | Opt::Requeue
        | Opt::Signal
        | Opt::Time
        | Opt::Uid
        | Opt::Verbose
        | Opt::WaitAllNodes
        | Opt::Wckey => true,
        Opt::Other(name) => PROPAGATED_OTHERS.contains(&name),
        _ => false,
    }
}

/// The propagated options among those of the catalog (`Opt::Other`).
const PROPAGATED_OTHERS: &[&str] = &[
    "delay-boot",
    "epilog",
    "immediate",
    "kill-on-bad-exit",
    "label",
    "mcs-label",
    "msg-timeout",
    "no-allocate",
    "power",
    "prolog",
    "profile",
    "reservation",
    "unbuffered",
];

/// Splits the words of a script's `#SBATCH` lines into its components' words.
pub fn split_script_words(words: Vec<String>) -> Vec<Vec<String>> {
    let mut parts = vec![Vec::new()];
    for w in words {
        if SCRIPT_SEPARATORS.contains(&w.as_str()) {
            parts.push(Vec::new());
        } else if let Some(last) = parts.last_mut() {
            last.push(w);
        }
    }
    parts
}

/// The options each component is given, in order: for component `k`, the propagated options
/// of every component before it, then its own. `own[k]` are component `k`'s options in the
/// order they apply (script, environment, command line).
pub fn component_options<O: Clone>(
    own: &[Vec<(O, Option<String>)>],
    job_opt: impl Fn(&O) -> Option<Opt>,
) -> Vec<Vec<(O, Option<String>)>> {
    own.iter()
        .enumerate()
        .map(|(k, mine)| {
            let mut all: Vec<(O, Option<String>)> = own[..k]
                .iter()
                .flatten()
                .filter(|(o, _)| job_opt(o).is_some_and(propagated))
                .cloned()
                .collect();
            all.extend(mine.iter().cloned());
            all
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_words_split_at_hetjob_lines() {
        let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            split_script_words(w("-n1 -t5 hetjob -n2 packjob -c2")),
            vec![w("-n1 -t5"), w("-n2"), w("-c2")]
        );
        assert_eq!(split_script_words(w("-n1")), vec![w("-n1")]);
    }

    #[test]
    fn propagated_options_flow_to_later_components_only() {
        let own = vec![
            vec![
                (Opt::JobName, Some("a".to_string())),
                (Opt::Ntasks, Some("4".into())),
            ],
            vec![(Opt::Ntasks, Some("2".to_string()))],
            vec![(Opt::JobName, Some("c".to_string()))],
        ];
        let all = component_options(&own, |o| Some(*o));
        assert_eq!(all[0], own[0]);
        assert_eq!(
            all[1],
            vec![
                (Opt::JobName, Some("a".to_string())),
                (Opt::Ntasks, Some("2".to_string()))
            ]
        );
        // A later component's own value comes last, so it wins.
        assert_eq!(
            all[2],
            vec![
                (Opt::JobName, Some("a".to_string())),
                (Opt::JobName, Some("c".to_string()))
            ]
        );
        assert!(propagated(Opt::Time) && propagated(Opt::Partition) && propagated(Opt::Mem));
        assert!(!propagated(Opt::CpusPerTask) && !propagated(Opt::NodeList));
    }
}
