//! smd's command line. One action per call, on the job of `-j` (default `SLURM_JOB_ID`):
//! `-q` (all nodes), `-f`/`-F` (failed/failing nodes), `-r NODE` (replace), `-d NODE` (drop),
//! `-D NODE -R REASON` (drain), `-e MINUTES` (extend the time limit), `-w` (print events until
//! the job ends), `-a` (the automatic handling of `SMD_NONSTOP_FAILED`/`_FAILING`). With no
//! arguments at all inside a job, smd does the automatic handling. `-p` prints `|`-separated.

use crate::getopt::{self, GetoptError, HasArg, Mode, OptSpec};

/// An smd option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmdOpt {
    Auto,
    Drain,
    Drop,
    Extend,
    Failed,
    Failing,
    Help,
    Job,
    Parsable,
    Query,
    Reason,
    Replace,
    Usage,
    Version,
    Wait,
}

const fn o(long: &'static str, short: Option<char>, arg: HasArg, id: SmdOpt) -> OptSpec<SmdOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// smd's option table.
pub const TABLE: &[OptSpec<SmdOpt>] = &[
    o("auto", Some('a'), HasArg::No, SmdOpt::Auto),
    o("drain", Some('D'), HasArg::Required, SmdOpt::Drain),
    o("drop", Some('d'), HasArg::Required, SmdOpt::Drop),
    o("extend", Some('e'), HasArg::Required, SmdOpt::Extend),
    o("failed", Some('f'), HasArg::No, SmdOpt::Failed),
    o("failing", Some('F'), HasArg::No, SmdOpt::Failing),
    o("help", Some('h'), HasArg::No, SmdOpt::Help),
    o("jobid", Some('j'), HasArg::Required, SmdOpt::Job),
    o("parsable", Some('p'), HasArg::No, SmdOpt::Parsable),
    o("query", Some('q'), HasArg::No, SmdOpt::Query),
    o("reason", Some('R'), HasArg::Required, SmdOpt::Reason),
    o("replace", Some('r'), HasArg::Required, SmdOpt::Replace),
    o("usage", None, HasArg::No, SmdOpt::Usage),
    o("version", Some('V'), HasArg::No, SmdOpt::Version),
    o("wait", Some('w'), HasArg::No, SmdOpt::Wait),
];

/// Which nodes a query shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Every node of the allocation.
    All,
    /// Failed nodes.
    Failed,
    /// Failing nodes.
    Failing,
}

/// What smd is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The automatic handling driven by the environment.
    Auto,
    /// Show the allocation's nodes.
    Query(Filter),
    /// Replace a node by a spare.
    Replace(String),
    /// Drop a node.
    Drop(String),
    /// Drain a node with a reason.
    Drain { node: String, reason: String },
    /// Extend the time limit by minutes.
    Extend(u32),
    /// Print events as they arrive.
    Wait,
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Print this text and exit 0 (`--help`, `--usage`).
    Print(String),
    /// `--version`.
    Version,
    /// Do `action` on `job`.
    Run {
        job: u32,
        action: Action,
        parsable: bool,
    },
}

/// Why the command line is refused (printed after `smd: error: `, getopt's own way for
/// [`ArgsError::Getopt`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    #[error("{0}")]
    Getopt(#[from] GetoptError),
    #[error("Invalid job id: {0}")]
    JobId(String),
    #[error("Invalid SLURM_JOB_ID in the environment: {0}")]
    EnvJobId(String),
    #[error("No job id: give -j/--jobid or run inside a job (SLURM_JOB_ID)")]
    NoJob,
    #[error(
        "Only one of --auto, --query, --failed, --failing, --replace, --drop, --drain, --extend and --wait may be given"
    )]
    TwoActions,
    #[error("--drain needs --reason")]
    NoReason,
    #[error("--reason is only for --drain")]
    StrayReason,
    #[error("Invalid node name: \"{0}\"")]
    Node(String),
    #[error("Invalid --extend value: {0} (minutes, from 1)")]
    Minutes(String),
    #[error("--parsable does not apply to the automatic handling, whose lines are the guide's")]
    ParsableAuto,
    #[error("Unexpected argument: {0}")]
    Operand(String),
}

/// The help text.
pub const HELP: &str = "\
Usage: smd [OPTIONS]
  -j, --jobid=ID        the job (default: $SLURM_JOB_ID)
  -q, --query           show the job's nodes and how they stand (default with -j)
  -f, --failed          show the job's failed nodes
  -F, --failing         show the job's failing nodes
  -r, --replace=NODE    replace NODE by a hot spare
  -d, --drop=NODE       drop NODE from the job's allocation
  -D, --drain=NODE      drain NODE (with --reason)
  -R, --reason=TEXT     why NODE is drained
  -e, --extend=MINUTES  extend the job's time limit
  -w, --wait            print the job's node events as they happen, until it ends
  -a, --auto            handle failed and failing nodes as SMD_NONSTOP_FAILED and
                        SMD_NONSTOP_FAILING say (the default inside a job, without options)
  -p, --parsable        output fields separated by '|'

Help options:
  -h, --help            show this help message
      --usage           display brief usage message
  -V, --version         output version information and exit

Environment: SMD_NONSTOP_FAILED, SMD_NONSTOP_FAILING (REPLACE, DROP, TIME_LIMIT_DELAY=min,
TIME_LIMIT_EXTEND=min, TIME_LIMIT_DROP=min, EXIT_JOB, joined by ':'); SMD_RETRY_INTERVAL
(seconds between replacement attempts, default 20).
";

/// The usage line.
pub const USAGE: &str = "Usage: smd [-j ID] [-q | -f | -F | -r NODE | -d NODE | -D NODE -R REASON | -e MINUTES | -w | -a] [-p]\n";

/// Parses `args` (without the program name); `env_job` is `SLURM_JOB_ID` if set.
pub fn parse(args: &[String], env_job: Option<&str>) -> Result<Command, ArgsError> {
    let parsed = getopt::parse(TABLE, args, Mode::Permute)?;
    if let Some(word) = parsed.operands.first() {
        return Err(ArgsError::Operand(word.clone()));
    }
    let mut job = None;
    let mut action = None;
    let mut reason = None;
    let mut parsable = false;
    let set = |slot: &mut Option<Action>, a: Action| match slot.replace(a) {
        Some(_) => Err(ArgsError::TwoActions),
        None => Ok(()),
    };
    for (opt, value) in parsed.opts {
        let value = value.unwrap_or_default();
        match opt {
            SmdOpt::Help => return Ok(Command::Print(HELP.to_string())),
            SmdOpt::Usage => return Ok(Command::Print(USAGE.to_string())),
            SmdOpt::Version => return Ok(Command::Version),
            SmdOpt::Job => job = Some(job_id(&value).ok_or(ArgsError::JobId(value))?),
            SmdOpt::Parsable => parsable = true,
            SmdOpt::Reason => reason = Some(value),
            SmdOpt::Auto => set(&mut action, Action::Auto)?,
            SmdOpt::Query => set(&mut action, Action::Query(Filter::All))?,
            SmdOpt::Failed => set(&mut action, Action::Query(Filter::Failed))?,
            SmdOpt::Failing => set(&mut action, Action::Query(Filter::Failing))?,
            SmdOpt::Wait => set(&mut action, Action::Wait)?,
            SmdOpt::Replace => set(&mut action, Action::Replace(node(value)?))?,
            SmdOpt::Drop => set(&mut action, Action::Drop(node(value)?))?,
            SmdOpt::Drain => set(
                &mut action,
                Action::Drain {
                    node: node(value)?,
                    reason: String::new(),
                },
            )?,
            SmdOpt::Extend => {
                let m = value
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|m| *m > 0)
                    .ok_or(ArgsError::Minutes(value))?;
                set(&mut action, Action::Extend(m))?
            }
        }
    }
    let action = match (action, reason) {
        (Some(Action::Drain { node, .. }), Some(r)) if !r.trim().is_empty() => {
            Action::Drain { node, reason: r }
        }
        (Some(Action::Drain { .. }), _) => return Err(ArgsError::NoReason),
        (_, Some(_)) => return Err(ArgsError::StrayReason),
        (Some(a), None) => a,
        // No arguments inside a job: the automatic handling; `-j` alone: a query.
        (None, None) if job.is_none() => Action::Auto,
        (None, None) => Action::Query(Filter::All),
    };
    if parsable && action == Action::Auto {
        return Err(ArgsError::ParsableAuto);
    }
    let job = match (job, env_job) {
        (Some(j), _) => j,
        (None, Some(text)) => job_id(text).ok_or_else(|| ArgsError::EnvJobId(text.to_string()))?,
        (None, None) => return Err(ArgsError::NoJob),
    };
    Ok(Command::Run {
        job,
        action,
        parsable,
    })
}

fn job_id(text: &str) -> Option<u32> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok().filter(|j| *j > 0)
}

fn node(value: String) -> Result<String, ArgsError> {
    let ok = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(value)
    } else {
        Err(ArgsError::Node(value))
    }
}
