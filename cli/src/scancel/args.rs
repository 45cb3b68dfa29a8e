//! scancel's command line: job ids (`N`, `N_M`, `N_[1-3,5]`), filters and the signal.

use nix::unistd::{User, getuid};
use sluice_vocab::JobState;
use sluice_wire::proto::CancelRequest;

use super::ScancelError;
use crate::getopt::{self, HasArg, Mode, OptSpec};
use crate::jobspec::signals;

/// Largest `N_[a-b]` expansion accepted (Slurm's largest `MaxArraySize`).
const MAX_ARRAY_ELEMENTS: u64 = 4_000_001;

/// A scancel option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScOpt {
    Batch,
    Clusters,
    Help,
    Hurry,
    Me,
    Name,
    Partition,
    Quiet,
    Sibling,
    Signal,
    State,
    Usage,
    User,
    Verbose,
    Version,
}

const fn o(long: &'static str, short: Option<char>, arg: HasArg, id: ScOpt) -> OptSpec<ScOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// scancel's option table.
pub const TABLE: &[OptSpec<ScOpt>] = &[
    o("batch", Some('b'), HasArg::No, ScOpt::Batch),
    o("cluster", None, HasArg::Required, ScOpt::Clusters),
    o("clusters", Some('M'), HasArg::Required, ScOpt::Clusters),
    o("help", None, HasArg::No, ScOpt::Help),
    o("hurry", Some('H'), HasArg::No, ScOpt::Hurry),
    o("jobname", None, HasArg::Required, ScOpt::Name),
    o("me", None, HasArg::No, ScOpt::Me),
    o("name", Some('n'), HasArg::Required, ScOpt::Name),
    o("partition", Some('p'), HasArg::Required, ScOpt::Partition),
    o("quiet", Some('Q'), HasArg::No, ScOpt::Quiet),
    o("sibling", None, HasArg::Required, ScOpt::Sibling),
    o("signal", Some('s'), HasArg::Required, ScOpt::Signal),
    o("state", Some('t'), HasArg::Required, ScOpt::State),
    o("usage", None, HasArg::No, ScOpt::Usage),
    o("user", Some('u'), HasArg::Required, ScOpt::User),
    o("verbose", Some('v'), HasArg::No, ScOpt::Verbose),
    o("version", Some('V'), HasArg::No, ScOpt::Version),
];

/// What scancel was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Print this text and exit 0.
    Print(&'static str),
    /// Print the version and exit 0.
    Version,
    /// Send this request.
    Cancel {
        request: Box<CancelRequest>,
        verbose: bool,
        quiet: bool,
        /// `-M a,b|all`: send the request to each of these clusters.
        clusters: Option<String>,
    },
}

/// Parses scancel's arguments (options may come before or after the ids).
pub fn parse(args: &[String]) -> Result<Command, ScancelError> {
    let parsed = getopt::parse(TABLE, args, Mode::Permute)?;
    let mut req = CancelRequest::default();
    let (mut verbose, mut quiet) = (false, false);
    let mut clusters = None;
    for (opt, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match opt {
            ScOpt::Help => return Ok(Command::Print(HELP)),
            ScOpt::Usage => return Ok(Command::Print(USAGE)),
            ScOpt::Version => return Ok(Command::Version),
            ScOpt::Batch => req.batch_only = true,
            ScOpt::Clusters => clusters = Some(v),
            ScOpt::Sibling => req.sibling = v,
            ScOpt::Hurry => {}
            ScOpt::Me => req.uids.push(getuid().as_raw()),
            ScOpt::Name => req.names.extend(list(&v)),
            ScOpt::Partition => req.partitions.extend(list(&v)),
            ScOpt::Quiet => quiet = true,
            ScOpt::Signal => {
                req.signal = Some(signals::parse(&v).ok_or(ScancelError::Signal(v))?);
            }
            ScOpt::State => req.states.push(state(&v)?.stored()),
            ScOpt::User => {
                for name in list(&v) {
                    req.uids.push(uid(&name)?);
                }
            }
            ScOpt::Verbose => verbose = true,
        }
    }
    for id in &parsed.operands {
        add_job(&mut req, id)?;
    }
    let filtered = !(req.uids.is_empty()
        && req.names.is_empty()
        && req.partitions.is_empty()
        && req.states.is_empty());
    if req.job_ids.is_empty() && req.job_tasks.is_empty() && req.job_steps.is_empty() && !filtered {
        return Err(ScancelError::NoJobs);
    }
    Ok(Command::Cancel {
        request: Box::new(req),
        verbose,
        quiet,
        clusters,
    })
}

fn list(v: &str) -> impl Iterator<Item = String> + '_ {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// `-t`: only the states a job can be cancelled in.
fn state(v: &str) -> Result<JobState, ScancelError> {
    match JobState::parse(v.trim()) {
        Some(s @ (JobState::Pending | JobState::Running | JobState::Suspended)) => Ok(s),
        _ => Err(ScancelError::State(v.to_string())),
    }
}

/// `-u`: a user name or a numeric uid.
fn uid(name: &str) -> Result<u32, ScancelError> {
    if let Ok(n) = name.parse::<u32>() {
        return Ok(n);
    }
    match User::from_name(name) {
        Ok(Some(u)) => Ok(u.uid.as_raw()),
        _ => Err(ScancelError::User(name.to_string())),
    }
}

/// Adds one job id as written: `N`, `N_M`, `N_[list]`, a heterogeneous component `N+K`, or a
/// step `N.S` / `N_M.S`.
pub fn add_job(req: &mut CancelRequest, text: &str) -> Result<(), ScancelError> {
    let bad = || ScancelError::JobId(text.to_string());
    if let Some((job, step)) = text.split_once('.') {
        let (id, task) = match job.split_once('_') {
            Some((id, task)) => (id, Some(task)),
            None => (job, None),
        };
        number(id).ok_or_else(bad)?;
        if let Some(task) = task {
            number(task).ok_or_else(bad)?;
        }
        number(step).ok_or_else(bad)?;
        req.job_steps.push(text.to_string());
        return Ok(());
    }
    // `N+K`: one component of heterogeneous job N.
    if let Some((job, offset)) = text.split_once('+') {
        let job = number(job).ok_or_else(bad)?;
        let offset = offset.parse::<u32>().map_err(|_| bad())?;
        req.job_tasks.push(format!("{job}+{offset}"));
        return Ok(());
    }
    let Some((job, task)) = text.split_once('_') else {
        req.job_ids.push(number(text).ok_or_else(bad)?);
        return Ok(());
    };
    let job = number(job).ok_or_else(bad)?;
    match task.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        None => req
            .job_tasks
            .push(format!("{job}_{}", number(task).ok_or_else(bad)?)),
        Some(list) => {
            let mut count = 0u64;
            for part in list.split(',') {
                let (lo, hi) = match part.split_once('-') {
                    Some((a, b)) => (number(a).ok_or_else(bad)?, number(b).ok_or_else(bad)?),
                    None => {
                        let n = number(part).ok_or_else(bad)?;
                        (n, n)
                    }
                };
                count += u64::from(hi.checked_sub(lo).ok_or_else(bad)?) + 1;
                if count > MAX_ARRAY_ELEMENTS {
                    return Err(bad());
                }
                req.job_tasks
                    .extend((lo..=hi).map(|t| format!("{job}_{t}")));
            }
        }
    }
    Ok(())
}

fn number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// scancel's usage line.
pub const USAGE: &str = "Usage: scancel [-n job_name] [-u user] [-p partition] [-Q] [-s signal]
               [-t PENDING | RUNNING | SUSPENDED] [--batch] [-v] [--me]
               [job_id[_array_id][.step_id]]
";

/// scancel's help text.
pub const HELP: &str = "Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]
  -b, --batch                     signal batch shell for specified job
  -H, --hurry                     avoid burst buffer stage out
  -M, --clusters                  clusters to issue commands to.
                                  NOTE: SlurmDBD must be up.
      --me                        cancel jobs of the current user
  -n, --name=job_name             act only on jobs with this name
  -p, --partition=partition       act only on jobs in this partition
  -Q, --quiet                     disable warnings
  -s, --signal=name | integer     signal to send to job, default is SIGKILL
      --sibling=cluster_name      remove an active sibling job from a
                                  federated job
  -t, --state=states              act only on jobs in this state.  Valid job
                                  states are PENDING, RUNNING and SUSPENDED
  -u, --user=user_name            act only on jobs of this user
  -V, --version                   output version information and exit
  -v, --verbose                   verbosity level

Help options:
  --help                          show this help message
  --usage                         display brief usage message
";
