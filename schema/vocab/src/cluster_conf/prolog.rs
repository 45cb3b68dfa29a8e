//! The prolog and epilog programs Slurm runs around a job (`Prolog`, `Epilog`,
//! `PrologSlurmctld`, `EpilogSlurmctld`, `TaskProlog`, `TaskEpilog`), when the node prolog runs
//! (`PrologFlags`) and how long any of them may take (`PrologEpilogTimeout`).
//!
//! Programs are absolute paths (Slurm runs them without a search path). `PrologFlags` takes
//! Slurm's flag names: `Alloc` runs the node prolog when the job is allocated rather than at its
//! first step; `Contain` implies `Alloc` (Sluice has no step container to create). The other
//! flags Slurm knows are accepted with a warning that they are not applied; a flag Slurm does
//! not know is an error naming file, line and key. `PrologEpilogTimeout` defaults to Slurm's
//! "wait for ever"; a script still running after it is killed and counts as failed.

use std::path::PathBuf;

use super::exclusions::comma_list as list;
use super::{ConfWarning, non_empty, warning};
use crate::conf::{ConfError, ConfFile, Pair};

/// Flags Slurm 22.05 knows that Sluice reads but does not apply.
const NOT_APPLIED: [&str; 6] = [
    "DeferBatch",
    "ForceRequeueOnFail",
    "NoHold",
    "RunInJob",
    "Serial",
    "X11",
];

/// `PrologFlags`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrologFlags {
    /// `Alloc` (or `Contain`): the node prolog runs at allocation on every node of the job.
    pub alloc: bool,
    /// `Contain` was given.
    pub contain: bool,
    /// The value as written, for `scontrol show config` (`None` when not given).
    pub text: Option<String>,
}

/// The prolog and epilog settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrologConf {
    /// `Prolog`: run by each node daemon before the job's first process there.
    pub prolog: Option<PathBuf>,
    /// `Epilog`: run by each node daemon after the job ends there.
    pub epilog: Option<PathBuf>,
    /// `PrologSlurmctld`: run by the controller before it launches a job.
    pub prolog_slurmctld: Option<PathBuf>,
    /// `EpilogSlurmctld`: run by the controller after a job ends.
    pub epilog_slurmctld: Option<PathBuf>,
    /// `TaskProlog`: run as the user before each task; its output adjusts the task's environment.
    pub task_prolog: Option<PathBuf>,
    /// `TaskEpilog`: run as the user after each task.
    pub task_epilog: Option<PathBuf>,
    /// `PrologFlags`.
    pub flags: PrologFlags,
    /// `PrologEpilogTimeout` in seconds; `None` (the default) waits for ever.
    pub timeout_secs: Option<u32>,
}

impl PrologConf {
    /// Applies one top-level pair; `false` when the key is not one of these.
    pub(crate) fn apply(
        &mut self,
        file: &ConfFile,
        p: &Pair,
        warnings: &mut Vec<ConfWarning>,
    ) -> Result<bool, ConfError> {
        let slot = match p.key.to_ascii_lowercase().as_str() {
            "prolog" => &mut self.prolog,
            "epilog" => &mut self.epilog,
            "prologslurmctld" => &mut self.prolog_slurmctld,
            "epilogslurmctld" => &mut self.epilog_slurmctld,
            "taskprolog" => &mut self.task_prolog,
            "taskepilog" => &mut self.task_epilog,
            "prologflags" => {
                self.flags = flags(file, p, warnings)?;
                return Ok(true);
            }
            "prologepilogtimeout" => {
                // Slurm's 65534 (NO_VAL16 - 1) and 0 both mean "no limit".
                self.timeout_secs = match file.number::<u32>(p)? {
                    0 | 65534.. => None,
                    n => Some(n),
                };
                return Ok(true);
            }
            _ => return Ok(false),
        };
        *slot = Some(program(file, p)?);
        Ok(true)
    }
}

fn program(file: &ConfFile, p: &Pair) -> Result<PathBuf, ConfError> {
    let v = non_empty(file, p)?;
    if !v.starts_with('/') {
        return Err(file.bad_value(p, "expected an absolute path"));
    }
    Ok(PathBuf::from(v))
}

fn flags(
    file: &ConfFile,
    p: &Pair,
    warnings: &mut Vec<ConfWarning>,
) -> Result<PrologFlags, ConfError> {
    let mut f = PrologFlags {
        text: Some(p.value.trim().to_string()).filter(|t| !t.is_empty()),
        ..PrologFlags::default()
    };
    for flag in list(&p.value) {
        match flag.to_ascii_lowercase().as_str() {
            "alloc" => f.alloc = true,
            "contain" => (f.alloc, f.contain) = (true, true),
            "none" => {}
            low => match NOT_APPLIED.iter().find(|k| k.eq_ignore_ascii_case(low)) {
                Some(_) => warnings.push(ConfWarning {
                    key: format!("{}={flag}", p.key),
                    note: Some("Sluice does not apply this prolog flag"),
                    ..warning(file, p)
                }),
                None => {
                    let known = "Alloc, Contain, DeferBatch, ForceRequeueOnFail, NoHold, \
                                 RunInJob, Serial or X11";
                    return Err(file.bad_value(p, format!("unknown flag {flag}, expected {known}")));
                }
            },
        }
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_conf::CtldConf;
    use std::path::Path;

    const BASE: &str = "ClusterName=a\nSlurmctldHost=ctl\n";

    fn read(extra: &str) -> Result<(PrologConf, Vec<ConfWarning>), ConfError> {
        let text = format!("{BASE}{extra}");
        CtldConf::parse(Path::new("slurm.conf"), &text).map(|(c, w)| (c.prolog, w))
    }

    #[test]
    fn nothing_runs_and_nothing_times_out_by_default() {
        let (p, w) = read("").unwrap();
        assert!(w.is_empty());
        assert_eq!(p, PrologConf::default());
        assert_eq!(p.timeout_secs, None);
    }

    #[test]
    fn reads_every_program_flag_and_the_timeout() {
        let text = "Prolog=/p\nEpilog=/e\nPrologSlurmctld=/pc\nepilogslurmctld=/ec\n\
                    TaskProlog=/tp\nTaskEpilog=/te\nPrologFlags=alloc\nPrologEpilogTimeout=20\n";
        let (p, w) = read(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let paths = [
            &p.prolog,
            &p.epilog,
            &p.prolog_slurmctld,
            &p.epilog_slurmctld,
            &p.task_prolog,
            &p.task_epilog,
        ];
        let got: Vec<&str> = paths
            .iter()
            .map(|x| x.as_deref().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(got, ["/p", "/e", "/pc", "/ec", "/tp", "/te"]);
        assert!(p.flags.alloc && !p.flags.contain);
        assert_eq!(p.flags.text.as_deref(), Some("alloc"));
        assert_eq!(p.timeout_secs, Some(20));
        assert_eq!(
            read("PrologEpilogTimeout=65534\n").unwrap().0.timeout_secs,
            None
        );
    }

    #[test]
    fn contain_implies_alloc_and_other_slurm_flags_are_warnings() {
        let (p, w) = read("PrologFlags=Contain,X11,NoHold\n").unwrap();
        assert!(p.flags.alloc && p.flags.contain);
        let keys: Vec<&str> = w.iter().map(|w| w.key.as_str()).collect();
        assert_eq!(keys, ["PrologFlags=X11", "PrologFlags=NoHold"]);
        assert!(w.iter().all(|w| w.note.is_some() && w.line == 3));
    }

    #[test]
    fn bad_values_name_file_line_and_key() {
        for (bad, key, why) in [
            (
                "PrologFlags=Alloc,Bogus",
                "PrologFlags",
                "unknown flag Bogus",
            ),
            ("Prolog=prolog.sh", "Prolog", "absolute path"),
            ("EpilogSlurmctld=", "EpilogSlurmctld", "empty value"),
            ("PrologEpilogTimeout=soon", "PrologEpilogTimeout", ""),
        ] {
            let e = read(&format!("{bad}\n"))
                .map(|_| ())
                .unwrap_err()
                .to_string();
            let head = format!("slurm.conf:3: invalid value for {key}: ");
            assert!(e.starts_with(&head), "{bad}: {e}");
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
