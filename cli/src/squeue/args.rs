//! squeue's options: which jobs (`-j -u -t -p -n -A -w`), how to show them (`-o -O -l -h
//! --json -r -S`), with Slurm's option names, environment variables and error texts.

use sluice_vocab::JobState;
use sluice_vocab::hostlist::Hostlist;

use crate::cmdutil::uid_of;
use crate::getopt::{self, Ambiguity, HasArg, Mode, OptSpec};

/// squeue's default layout.
pub const DEFAULT_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
/// `-l`.
pub const LONG_FORMAT: &str = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
/// The default sort: partition, compact state, priority (descending).
pub const DEFAULT_SORT: &str = "P,t,-p";

/// A job named with `-j`: `123` (a job or every task of array 123) or `123_4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSel {
    /// The job or array id.
    pub id: u32,
    /// The array task, for `123_4`.
    pub task: Option<u32>,
}

/// How the jobs are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `-o` letters.
    Letters(String),
    /// `-O` long names.
    Long(String),
    /// `--json`.
    Json,
}

/// Everything squeue was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqueueOpts {
    /// `-j`.
    pub jobs: Option<Vec<JobSel>>,
    /// `-u` (uids; unknown names are reported and match nothing).
    pub users: Option<Vec<u32>>,
    /// `-t`; `None` = the default (jobs that have not ended); `Some(empty)` = `all`.
    pub states: Option<Vec<JobState>>,
    /// `-p`.
    pub partitions: Option<Vec<String>>,
    /// `-n`.
    pub names: Option<Vec<String>>,
    /// `-A`.
    pub accounts: Option<Vec<String>>,
    /// `-w`.
    pub nodes: Option<Hostlist>,
    /// The layout.
    pub layout: Layout,
    /// `-h`.
    pub no_header: bool,
    /// `-l`: also prints the date line.
    pub long: bool,
    /// `-r`: one line per array task, pending tasks not folded.
    pub array: bool,
    /// `-S`.
    pub sort: String,
    /// Messages Slurm prints and goes on (`Invalid user: x`).
    pub warnings: Vec<String>,
    /// Which clusters to ask (`--local`, `--federation`, `--sibling`, `-M`).
    pub view: View,
}

/// Which clusters squeue asks and how it merges their jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    /// The local controller only (the default, `--local`).
    Local,
    /// Every member of the local cluster's federation, one line per job (`--federation`).
    Federation,
    /// Every member, every sibling copy (`--sibling`).
    Sibling,
    /// Each named cluster on its own, under a `CLUSTER: name` line (`-M a,b|all`).
    Clusters(String),
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// List jobs.
    Run(Box<SqueueOpts>),
    /// `--help` / `--usage`.
    Help,
    /// `-V`.
    Version,
}

/// An squeue option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SqOpt {
    Accounts,
    Clusters,
    Federation,
    Sibling,
    All,
    Array,
    FormatLong,
    Format,
    Help,
    NoHeader,
    Jobs,
    Json,
    Long,
    Local,
    Me,
    Name,
    NodeList,
    Partition,
    Sort,
    States,
    User,
    Verbose,
    Version,
}

const SPECS: &[OptSpec<SqOpt>] = &[
    spec(Some('A'), "accounts", HasArg::Required, SqOpt::Accounts),
    spec(Some('M'), "clusters", HasArg::Required, SqOpt::Clusters),
    spec(None, "cluster", HasArg::Required, SqOpt::Clusters),
    spec(None, "federation", HasArg::No, SqOpt::Federation),
    spec(None, "sibling", HasArg::No, SqOpt::Sibling),
    spec(Some('a'), "all", HasArg::No, SqOpt::All),
    spec(Some('r'), "array", HasArg::No, SqOpt::Array),
    spec(Some('O'), "Format", HasArg::Required, SqOpt::FormatLong),
    spec(Some('o'), "format", HasArg::Required, SqOpt::Format),
    spec(None, "help", HasArg::No, SqOpt::Help),
    spec(None, "usage", HasArg::No, SqOpt::Help),
    spec(Some('h'), "noheader", HasArg::No, SqOpt::NoHeader),
    spec(Some('j'), "jobs", HasArg::Optional, SqOpt::Jobs),
    spec(None, "json", HasArg::Optional, SqOpt::Json),
    spec(Some('l'), "long", HasArg::No, SqOpt::Long),
    spec(None, "local", HasArg::No, SqOpt::Local),
    spec(None, "me", HasArg::No, SqOpt::Me),
    spec(Some('n'), "name", HasArg::Required, SqOpt::Name),
    spec(Some('w'), "nodelist", HasArg::Required, SqOpt::NodeList),
    spec(None, "nodes", HasArg::Required, SqOpt::NodeList),
    spec(Some('p'), "partition", HasArg::Required, SqOpt::Partition),
    spec(None, "partitions", HasArg::Required, SqOpt::Partition),
    spec(Some('S'), "sort", HasArg::Required, SqOpt::Sort),
    spec(Some('t'), "states", HasArg::Required, SqOpt::States),
    spec(Some('u'), "user", HasArg::Required, SqOpt::User),
    spec(None, "users", HasArg::Required, SqOpt::User),
    spec(Some('v'), "verbose", HasArg::No, SqOpt::Verbose),
    spec(Some('V'), "version", HasArg::No, SqOpt::Version),
];

const fn spec(short: Option<char>, long: &'static str, arg: HasArg, id: SqOpt) -> OptSpec<SqOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// Parses squeue's arguments; `env` reads `SQUEUE_FORMAT`, `SQUEUE_FORMAT2`, `SQUEUE_SORT`.
/// The error is the whole text for stderr.
pub fn parse(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    me: u32,
) -> Result<Invocation, String> {
    let parsed = getopt::parse(SPECS, args, Mode::Permute)
        .map_err(|e| e.usage_text("squeue", Ambiguity::Bare))?;
    let mut o = SqueueOpts {
        jobs: None,
        users: None,
        states: None,
        partitions: None,
        names: None,
        accounts: None,
        nodes: None,
        layout: Layout::Letters(DEFAULT_FORMAT.to_string()),
        no_header: false,
        long: false,
        array: false,
        sort: env("SQUEUE_SORT").unwrap_or_else(|| DEFAULT_SORT.to_string()),
        warnings: Vec::new(),
        view: View::Local,
    };
    let (mut local, mut fed, mut sibling) = (false, false, false);
    let mut clusters = env("SQUEUE_CLUSTERS").or_else(|| env("SLURM_CLUSTERS"));
    let (mut format, mut format_long, mut json, mut job_flag) = (None, None, false, false);
    for (id, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match id {
            SqOpt::Help => return Ok(Invocation::Help),
            SqOpt::Version => return Ok(Invocation::Version),
            SqOpt::Accounts => o.accounts = Some(list(&v)),
            SqOpt::Jobs => {
                job_flag = true;
                if !v.is_empty() {
                    o.jobs = Some(job_list(&v)?);
                }
            }
            SqOpt::Name => o.names = Some(list(&v)),
            SqOpt::Partition => o.partitions = Some(list(&v)),
            SqOpt::States => o.states = Some(state_list(&v)?),
            SqOpt::User => o.users = Some(user_list(&v, &mut o.warnings)),
            SqOpt::Me => o.users = Some(vec![me]),
            SqOpt::NodeList => {
                o.nodes =
                    Some(Hostlist::parse(&v).map_err(|_| {
                        format!("squeue: error: '{v}' invalid entry for --nodelist")
                    })?)
            }
            SqOpt::Format if format_long.is_some() => {
                return Err(
                    "squeue: error: -o (--format) is incompatible with -O (--Format)".into(),
                );
            }
            SqOpt::FormatLong if format.is_some() => {
                return Err(
                    "squeue: error: -O (--Format) is incompatible with -o (--format)".into(),
                );
            }
            SqOpt::Format => format = Some(v),
            SqOpt::FormatLong => format_long = Some(v),
            SqOpt::Sort => o.sort = v,
            SqOpt::NoHeader => o.no_header = true,
            SqOpt::Long => o.long = true,
            SqOpt::Array => o.array = true,
            SqOpt::Json => json = true,
            SqOpt::Local => local = true,
            SqOpt::Federation => fed = true,
            SqOpt::Sibling => sibling = true,
            SqOpt::Clusters => clusters = Some(v),
            SqOpt::All | SqOpt::Verbose => {}
        }
    }
    let mut rest = parsed.operands.into_iter();
    if let Some(word) = rest.next() {
        if job_flag && o.jobs.is_none() {
            o.jobs = Some(job_list(&word)?);
        } else {
            return Err(unrecognized(&word));
        }
    }
    if let Some(word) = rest.next() {
        return Err(unrecognized(&word));
    }
    if o.long && format.is_some() {
        return Err("squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.".into());
    }
    // -M overrides the federated view; --local overrides --federation/--sibling.
    o.view = match clusters {
        Some(c) => View::Clusters(c),
        None if local => View::Local,
        None if sibling => View::Sibling,
        None if fed => View::Federation,
        None => View::Local,
    };
    o.layout = if json {
        Layout::Json
    } else if let Some(f) = format {
        Layout::Letters(f)
    } else if let Some(f) = format_long {
        Layout::Long(f)
    } else if o.long {
        Layout::Letters(LONG_FORMAT.to_string())
    } else if let Some(f) = env("SQUEUE_FORMAT") {
        Layout::Letters(f)
    } else if let Some(f) = env("SQUEUE_FORMAT2") {
        Layout::Long(f)
    } else {
        Layout::Letters(DEFAULT_FORMAT.to_string())
    };
    Ok(Invocation::Run(Box::new(o)))
}

fn unrecognized(word: &str) -> String {
    format!("squeue: error: Unrecognized option: {word}\nUsage: squeue [OPTIONS]")
}

fn list(v: &str) -> Vec<String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Parses `-j`: comma-separated `N` or `N_M`. A heterogeneous component `N+K` selects the
/// whole job `N`, as Slurm's squeue does.
pub fn job_list(v: &str) -> Result<Vec<JobSel>, String> {
    let invalid = |s: &str| format!("squeue: error: Invalid job id: {s}");
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(|item| {
            let item = match item.split_once('+') {
                Some((id, k)) if k.parse::<u32>().is_ok() => id,
                _ => item,
            };
            let (id, task) = match item.split_once('_') {
                Some((id, task)) => (id, Some(task)),
                None => (item, None),
            };
            let id = id
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| invalid(item))?;
            let task = match task {
                Some(t) => Some(t.parse::<u32>().map_err(|_| invalid(item))?),
                None => None,
            };
            Ok(JobSel { id, task })
        })
        .collect()
}

/// Parses `-t`: `all`, or comma-separated long or compact state names.
pub fn state_list(v: &str) -> Result<Vec<JobState>, String> {
    if v.eq_ignore_ascii_case("all") {
        return Ok(Vec::new());
    }
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            JobState::parse(s).ok_or_else(|| {
                format!(
                    "squeue: error: Invalid job state specified: {s}\nsqueue: error: Valid job states include: {}\n",
                    valid_states()
                )
            })
        })
        .collect()
}

/// The state names squeue lists when `-t` has a bad one, in Slurm's order.
fn valid_states() -> String {
    use JobState::*;
    [
        Pending,
        Running,
        Suspended,
        Completed,
        Cancelled,
        Failed,
        Timeout,
        NodeFail,
        Preempted,
        BootFail,
        Deadline,
        OutOfMemory,
        Completing,
        Configuring,
        Resizing,
        Requeued,
        RequeueFed,
        RequeueHold,
        Revoked,
        Signaling,
        SpecialExit,
        StageOut,
        Stopped,
    ]
    .iter()
    .map(|s| s.long_name().to_ascii_lowercase())
    .collect::<Vec<_>>()
    .join(",")
}

fn user_list(v: &str, warnings: &mut Vec<String>) -> Vec<u32> {
    let mut uids = Vec::new();
    for user in v.split(',').filter(|s| !s.is_empty()) {
        match uid_of(user) {
            Some(uid) => uids.push(uid),
            None => warnings.push(format!("squeue: error: Invalid user: {user}\n")),
        }
    }
    uids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<SqueueOpts, String> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&a, &|_| None, 1000)? {
            Invocation::Run(o) => Ok(*o),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_listings_that_may_show_finished_jobs_fetch_them() {
        use crate::squeue::select::needs_finished;
        assert!(!needs_finished(&run(&[]).unwrap()));
        assert!(!needs_finished(&run(&["-u", "7", "-p", "debug"]).unwrap()));
        assert!(needs_finished(&run(&["-t", "all"]).unwrap()));
        assert!(needs_finished(&run(&["-t", "PD"]).unwrap()));
        assert!(needs_finished(&run(&["-j", "5"]).unwrap()));
        assert!(needs_finished(&run(&["--federation"]).unwrap()));
    }

    #[test]
    fn defaults_are_slurms() {
        let o = run(&[]).unwrap();
        assert_eq!(o.layout, Layout::Letters(DEFAULT_FORMAT.into()));
        assert_eq!(o.sort, "P,t,-p");
        assert_eq!(o.states, None);
        assert_eq!(
            run(&["-l"]).unwrap().layout,
            Layout::Letters(LONG_FORMAT.into())
        );
    }

    #[test]
    fn job_ids_take_tasks_and_the_positional_form() {
        let o = run(&["-j", "12,13_4"]).unwrap();
        assert_eq!(
            o.jobs,
            Some(vec![
                JobSel { id: 12, task: None },
                JobSel {
                    id: 13,
                    task: Some(4)
                }
            ])
        );
        assert_eq!(
            run(&["-j5"]).unwrap().jobs,
            Some(vec![JobSel { id: 5, task: None }])
        );
        assert_eq!(
            run(&["--jobs=x"]).unwrap_err(),
            "squeue: error: Invalid job id: x"
        );
        assert!(run(&["7"]).unwrap_err().contains("Unrecognized option: 7"));
    }

    #[test]
    fn states_are_long_or_short_or_all() {
        assert_eq!(
            run(&["-t", "pd,RUNNING"]).unwrap().states,
            Some(vec![JobState::Pending, JobState::Running])
        );
        assert_eq!(run(&["-t", "all"]).unwrap().states, Some(vec![]));
        let e = run(&["-t", "bogus"]).unwrap_err();
        assert!(
            e.starts_with("squeue: error: Invalid job state specified: bogus\n"),
            "{e}"
        );
        assert!(e.contains("pending,running,suspended"), "{e}");
    }

    #[test]
    fn format_options_exclude_each_other() {
        assert!(
            run(&["-o", "%i", "-O", "JobID"])
                .unwrap_err()
                .contains("incompatible")
        );
        assert!(
            run(&["-l", "-o", "%i"])
                .unwrap_err()
                .contains("mutually exclusive")
        );
        assert_eq!(run(&["--json"]).unwrap().layout, Layout::Json);
        assert_eq!(
            run(&["-O", "JobID"]).unwrap().layout,
            Layout::Long("JobID".into())
        );
        assert_eq!(run(&["--me"]).unwrap().users, Some(vec![1000]));
    }

    #[test]
    fn cluster_views_follow_slurms_precedence() {
        assert_eq!(run(&[]).unwrap().view, View::Local);
        assert_eq!(run(&["--federation"]).unwrap().view, View::Federation);
        assert_eq!(run(&["--fed", "--sibling"]).unwrap().view, View::Sibling);
        assert_eq!(run(&["--federation", "--local"]).unwrap().view, View::Local);
        assert_eq!(
            run(&["--federation", "-M", "c1,c2"]).unwrap().view,
            View::Clusters("c1,c2".into())
        );
        assert_eq!(
            run(&["--clusters=all"]).unwrap().view,
            View::Clusters("all".into())
        );
    }

    #[test]
    fn unknown_users_warn_and_match_nothing() {
        let o = run(&["-u", "no-such-user-xyz,0"]).unwrap();
        assert_eq!(o.users, Some(vec![0]));
        assert_eq!(
            o.warnings,
            vec!["squeue: error: Invalid user: no-such-user-xyz\n".to_string()]
        );
    }
}
