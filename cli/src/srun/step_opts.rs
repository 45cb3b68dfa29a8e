//! srun's options about how its step is created, launched and ended (none of them sbatch's
//! or salloc's): `--exact`/`--whole`, `--multi-prog`, `-K/--kill-on-bad-exit`, `-W/--wait`,
//! `-I/--immediate`, `-r/--relative`, `-E/--preserve-env`, `--prolog`/`--epilog`,
//! `--task-prolog`/`--task-epilog`, `--test-only`, `-T/--threads` and `--launch-cmd`, with the
//! `SLURM_*` variables that stand for them.

use crate::jobspec::{EnvOpt, OptError};
use crate::salloc::args::Immediate;

use super::args::SrOpt;

/// One of srun's step options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOpt {
    Exact,
    Whole,
    MultiProg,
    KillOnBadExit,
    Immediate,
    Relative,
    PreserveEnv,
    Prolog,
    Epilog,
    TaskProlog,
    TaskEpilog,
    TestOnly,
    Wait,
    Threads,
    LaunchCmd,
}

/// Most launch requests srun has in flight at once (Slurm's `MAX_THREADS`), the default.
pub const MAX_THREADS: u32 = 60;

/// What the step options ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepOpts {
    /// `--whole` (the last of `--exact` and `--whole` wins; exact is the default).
    pub whole: bool,
    /// `--multi-prog`: the command is a configuration file of per-task command lines.
    pub multi_prog: bool,
    /// `-K[=0|1]` (`None`: as `KillOnBadExit` in slurm.conf).
    pub kill_on_bad_exit: Option<bool>,
    /// `-I[secs]`.
    pub immediate: Option<Immediate>,
    /// `-r n`.
    pub relative: Option<u32>,
    /// `-E`.
    pub preserve_env: bool,
    /// `--prolog` (`none`: not even `SrunProlog`).
    pub prolog: Option<String>,
    /// `--epilog` (`none`: not even `SrunEpilog`).
    pub epilog: Option<String>,
    /// `--task-prolog`.
    pub task_prolog: Option<String>,
    /// `--task-epilog`.
    pub task_epilog: Option<String>,
    /// `--test-only`.
    pub test_only: bool,
    /// `-W secs` (`None`: as `WaitTime` in slurm.conf; 0 waits for every task).
    pub wait: Option<u32>,
    /// `-T n`: launch requests in flight at once.
    pub threads: Option<u32>,
    /// `--launch-cmd`.
    pub launch_cmd: bool,
}

/// Why a step option's value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepOptError {
    #[error("{0}")]
    Opt(#[from] OptError),
    #[error("Invalid --kill-on-bad-exit specification: {0}")]
    KillOnBadExit(String),
    #[error("Invalid --immediate value: {0}")]
    Immediate(String),
    #[error("Thread value {0} exceeds defined limit {MAX_THREADS}")]
    Threads(u32),
}

impl StepOpts {
    /// Applies `opt` with `value`.
    pub fn apply(&mut self, opt: StepOpt, value: Option<String>) -> Result<(), StepOptError> {
        let text = value.as_deref().map(str::trim);
        match opt {
            StepOpt::Exact => self.whole = false,
            StepOpt::Whole => self.whole = true,
            StepOpt::MultiProg => self.multi_prog = true,
            StepOpt::KillOnBadExit => {
                self.kill_on_bad_exit = Some(match text {
                    None | Some("") => true,
                    Some(v) => {
                        v.parse::<i64>()
                            .map_err(|_| StepOptError::KillOnBadExit(v.to_string()))?
                            != 0
                    }
                });
            }
            StepOpt::Immediate => {
                self.immediate = Some(match text {
                    None | Some("") => Immediate::Now,
                    Some(v) => v
                        .parse()
                        .map(Immediate::Within)
                        .map_err(|_| StepOptError::Immediate(v.to_string()))?,
                });
            }
            StepOpt::Relative => self.relative = Some(count(text, "--relative")?),
            StepOpt::PreserveEnv => self.preserve_env = true,
            StepOpt::Prolog => self.prolog = value,
            StepOpt::Epilog => self.epilog = value,
            StepOpt::TaskProlog => self.task_prolog = value,
            StepOpt::TaskEpilog => self.task_epilog = value,
            StepOpt::TestOnly => self.test_only = true,
            StepOpt::Wait => self.wait = Some(count(text, "--wait")?),
            StepOpt::Threads => {
                let n = crate::jobspec::values::positive(text.unwrap_or_default(), "--threads")?;
                if n > MAX_THREADS {
                    return Err(StepOptError::Threads(n));
                }
                self.threads = Some(n);
            }
            StepOpt::LaunchCmd => self.launch_cmd = true,
        }
        Ok(())
    }

    /// Whether the step ends once a task fails: `-K`, else `KillOnBadExit`.
    pub fn kill_on_bad_exit(&self, conf: bool) -> bool {
        self.kill_on_bad_exit.unwrap_or(conf)
    }

    /// Seconds the other tasks may run on once the first has ended (`-W`, else `WaitTime`);
    /// `None`: they are waited for. `-K` ends a failed step at once whatever this says.
    pub fn wait_after_first(&self, conf: u32) -> Option<u32> {
        Some(self.wait.unwrap_or(conf)).filter(|s| *s > 0)
    }

    /// The program srun runs before (`prolog`) or after the step: the option, else slurm.conf's;
    /// `none` runs nothing.
    pub fn program<'a>(given: Option<&'a str>, conf: Option<&'a str>) -> Option<&'a str> {
        given
            .or(conf)
            .filter(|p| !p.is_empty() && !p.eq_ignore_ascii_case("none"))
    }
}

/// A count that may be 0 (`-r 0`, `-W 0`).
fn count(value: Option<&str>, option: &'static str) -> Result<u32, OptError> {
    let value = value.unwrap_or_default();
    value.parse().map_err(|_| OptError::InvalidNumeric {
        value: value.to_string(),
        option,
    })
}

const fn env(var: &'static str, opt: StepOpt, flag: bool) -> EnvOpt<SrOpt> {
    EnvOpt {
        var,
        id: SrOpt::Step(opt),
        flag,
    }
}

/// The input environment variables of the step options.
pub const ENV: &[EnvOpt<SrOpt>] = &[
    env("SLURM_EXACT", StepOpt::Exact, true),
    env("SLURM_KILL_BAD_EXIT", StepOpt::KillOnBadExit, false),
    env("SLURM_IMMEDIATE", StepOpt::Immediate, false),
    env("SLURM_WAIT", StepOpt::Wait, false),
    env("SLURM_THREADS", StepOpt::Threads, false),
    env("SLURM_PROLOG", StepOpt::Prolog, false),
    env("SLURM_EPILOG", StepOpt::Epilog, false),
    env("SLURM_TASK_PROLOG", StepOpt::TaskProlog, false),
    env("SLURM_TASK_EPILOG", StepOpt::TaskEpilog, false),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(opt: StepOpt, value: Option<&str>) -> Result<StepOpts, StepOptError> {
        let mut o = StepOpts::default();
        o.apply(opt, value.map(String::from))?;
        Ok(o)
    }

    #[test]
    fn kill_on_bad_exit_takes_an_optional_number() {
        assert_eq!(
            apply(StepOpt::KillOnBadExit, None)
                .unwrap()
                .kill_on_bad_exit,
            Some(true)
        );
        let off = apply(StepOpt::KillOnBadExit, Some("0")).unwrap();
        assert_eq!(off.kill_on_bad_exit, Some(false));
        assert!(
            !off.kill_on_bad_exit(true),
            "the option beats KillOnBadExit"
        );
        assert!(StepOpts::default().kill_on_bad_exit(true));
        assert_eq!(
            apply(StepOpt::KillOnBadExit, Some("yes"))
                .unwrap_err()
                .to_string(),
            "Invalid --kill-on-bad-exit specification: yes"
        );
    }

    #[test]
    fn wait_and_its_slurm_conf_default() {
        let w = apply(StepOpt::Wait, Some("5")).unwrap();
        assert_eq!(w.wait_after_first(30), Some(5));
        assert_eq!(StepOpts::default().wait_after_first(30), Some(30));
        assert_eq!(StepOpts::default().wait_after_first(0), None);
        assert_eq!(
            apply(StepOpt::Wait, Some("0")).unwrap().wait_after_first(9),
            None
        );
        assert_eq!(
            apply(StepOpt::Wait, Some("x")).unwrap_err().to_string(),
            "Invalid numeric value \"x\" for --wait."
        );
    }

    #[test]
    fn immediate_threads_and_relative_values() {
        assert_eq!(
            apply(StepOpt::Immediate, None).unwrap().immediate,
            Some(Immediate::Now)
        );
        assert_eq!(
            apply(StepOpt::Immediate, Some("7")).unwrap().immediate,
            Some(Immediate::Within(7))
        );
        assert!(apply(StepOpt::Immediate, Some("soon")).is_err());
        assert_eq!(apply(StepOpt::Threads, Some("4")).unwrap().threads, Some(4));
        assert_eq!(
            apply(StepOpt::Threads, Some("61")).unwrap_err().to_string(),
            "Thread value 61 exceeds defined limit 60"
        );
        assert!(apply(StepOpt::Threads, Some("0")).is_err());
        assert_eq!(
            apply(StepOpt::Relative, Some("0")).unwrap().relative,
            Some(0)
        );
        assert!(apply(StepOpt::Relative, Some("-1")).is_err());
    }

    #[test]
    fn prolog_none_runs_nothing() {
        assert_eq!(StepOpts::program(None, Some("/conf")), Some("/conf"));
        assert_eq!(
            StepOpts::program(Some("/mine"), Some("/conf")),
            Some("/mine")
        );
        assert_eq!(StepOpts::program(Some("none"), Some("/conf")), None);
        assert_eq!(StepOpts::program(None, None), None);
    }
}
