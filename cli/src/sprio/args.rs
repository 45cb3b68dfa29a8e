//! sprio's command line: `-j jobs`, `-u users`, `-p partitions`, `-M clusters`, `-l`, `-n`,
//! `-w`, `-o fmt`, `-h`, `--help`, `--usage`, `-V`. Errors are Slurm's whole text.

use crate::getopt::{self, HasArg, Mode, OptSpec};

/// An sprio option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrOpt {
    Clusters,
    Format,
    Help,
    Jobs,
    Long,
    NoHeader,
    Norm,
    Partition,
    Usage,
    User,
    Verbose,
    Version,
    Weights,
}

const fn o(long: &'static str, short: Option<char>, arg: HasArg, id: PrOpt) -> OptSpec<PrOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// sprio's option table.
pub const TABLE: &[OptSpec<PrOpt>] = &[
    o("clusters", Some('M'), HasArg::Required, PrOpt::Clusters),
    o("format", Some('o'), HasArg::Required, PrOpt::Format),
    o("help", None, HasArg::No, PrOpt::Help),
    o("jobs", Some('j'), HasArg::Optional, PrOpt::Jobs),
    o("long", Some('l'), HasArg::No, PrOpt::Long),
    o("noheader", Some('h'), HasArg::No, PrOpt::NoHeader),
    o("norm", Some('n'), HasArg::No, PrOpt::Norm),
    o("partition", Some('p'), HasArg::Required, PrOpt::Partition),
    o("usage", None, HasArg::No, PrOpt::Usage),
    o("user", Some('u'), HasArg::Required, PrOpt::User),
    o("verbose", Some('v'), HasArg::No, PrOpt::Verbose),
    o("version", Some('V'), HasArg::No, PrOpt::Version),
    o("weights", Some('w'), HasArg::No, PrOpt::Weights),
];

/// What to show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SprioOpts {
    /// `-j`: job ids (empty: all pending jobs).
    pub jobs: Vec<u32>,
    /// `-j` was given (Slurm then says when nothing matched).
    pub jobs_given: bool,
    /// `-u`: user names.
    pub users: Vec<String>,
    /// `-p`: partitions.
    pub partitions: Vec<String>,
    /// `-l`.
    pub long: bool,
    /// `-n`: normalized factors.
    pub norm: bool,
    /// `-w`: the weights line.
    pub weights: bool,
    /// `-h`.
    pub no_header: bool,
    /// `-o`.
    pub format: Option<String>,
    /// `-M`: the clusters as written (`None`: the local one).
    pub clusters: Option<String>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Show priorities.
    Run(SprioOpts),
    /// `--help`.
    Help,
    /// `--usage`.
    Usage,
    /// `-V`.
    Version,
}

fn list(v: &str) -> impl Iterator<Item = String> + '_ {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// Parses sprio's arguments.
pub fn parse(args: &[String]) -> Result<Invocation, String> {
    let parsed = getopt::parse(TABLE, args, Mode::Permute).map_err(|e| format!("sprio: {e}"))?;
    let mut o = SprioOpts::default();
    for (opt, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match opt {
            PrOpt::Help => return Ok(Invocation::Help),
            PrOpt::Usage => return Ok(Invocation::Usage),
            PrOpt::Version => return Ok(Invocation::Version),
            PrOpt::Format => o.format = Some(v),
            PrOpt::Clusters => o.clusters = Some(v),
            PrOpt::Jobs => {
                o.jobs_given = true;
                for id in list(&v) {
                    let n = id
                        .parse::<u32>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("sprio: error: Invalid job id: {id}"))?;
                    o.jobs.push(n);
                }
            }
            PrOpt::Long => o.long = true,
            PrOpt::NoHeader => o.no_header = true,
            PrOpt::Norm => o.norm = true,
            PrOpt::Partition => o.partitions.extend(list(&v)),
            PrOpt::User => o.users.extend(list(&v)),
            PrOpt::Weights => o.weights = true,
            // Slurm's -v logs its plugins loading; there are none to report here.
            PrOpt::Verbose => {}
        }
    }
    if let Some(word) = parsed.operands.first() {
        return Err(format!(
            "sprio: error: Unrecognized option: {word}\n{USAGE}"
        ));
    }
    Ok(Invocation::Run(o))
}

/// `--usage`.
pub const USAGE: &str = "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n     [-M cluster_name] [--federation] [--local] [--sibling] [--usage] [-hlnvVw]\n";

/// `--help`.
pub const HELP: &str = "Usage: sprio [OPTIONS]
  -h, --noheader                  no headers on output
  -j, --jobs                      comma separated list of jobs
                                  to view, default is all
  -l, --long                      long report
  -M, --cluster=cluster_name      cluster to issue commands to.  Default is
                                  current cluster.  cluster with no name will
                                  reset to default.
  -n, --norm                      display normalized values
  -o, --format=format             format specification
  -p, --partition=partition_name  comma separated list of partitions
                                  to view, default is all partitions
  -u, --user=user_name            comma separated list of users to view
  -v, --verbose                   verbosity level
  -V, --version                   output version information and exit
  -w, --weights                   show the weights for each priority factor

Help options:
  --help                          show this help message
  --usage                         display a brief summary of sprio options
";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_fill_the_request() {
        let Ok(Invocation::Run(o)) =
            parse(&args("-j12,13 -u alice,bob -p debug -l -n -w -h -M c2"))
        else {
            panic!("parse");
        };
        assert_eq!(o.jobs, [12, 13]);
        assert!(o.jobs_given && o.long && o.norm && o.weights && o.no_header);
        assert_eq!(o.users, ["alice", "bob"]);
        assert_eq!(o.partitions, ["debug"]);
        assert_eq!(o.clusters.as_deref(), Some("c2"));
    }

    #[test]
    fn bad_words_are_refused() {
        assert_eq!(
            parse(&args("-jx")),
            Err("sprio: error: Invalid job id: x".into())
        );
        assert!(
            parse(&args("--bogus"))
                .unwrap_err()
                .starts_with("sprio: unrecognized option")
        );
        assert!(parse(&args("stray")).is_err());
        assert_eq!(parse(&args("--help")), Ok(Invocation::Help));
    }
}
