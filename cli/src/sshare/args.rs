//! sshare's command line: `-a`, `-A accounts`, `-l`, `-M clusters`, `-m`, `-n`, `-o fields`,
//! `-p`, `-P`, `-u users`, `-U`, `--help`, `--helpformat`, `--usage`, `-V`. Errors are Slurm's whole text.

use crate::getopt::{self, HasArg, Mode, OptSpec};
use crate::output::OutputMode;

/// An sshare option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShOpt {
    Accounts,
    All,
    Clusters,
    Format,
    Help,
    HelpFormat,
    Long,
    NoHeader,
    Parsable,
    Parsable2,
    Partition,
    Usage,
    Users,
    UsersOnly,
    Verbose,
    Version,
}

const fn o(long: &'static str, short: Option<char>, arg: HasArg, id: ShOpt) -> OptSpec<ShOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// sshare's option table.
pub const TABLE: &[OptSpec<ShOpt>] = &[
    o("accounts", Some('A'), HasArg::Required, ShOpt::Accounts),
    o("all", Some('a'), HasArg::No, ShOpt::All),
    o("clusters", Some('M'), HasArg::Required, ShOpt::Clusters),
    o("format", Some('o'), HasArg::Required, ShOpt::Format),
    o("help", None, HasArg::No, ShOpt::Help),
    o("helpformat", None, HasArg::No, ShOpt::HelpFormat),
    o("long", Some('l'), HasArg::No, ShOpt::Long),
    o("noheader", Some('n'), HasArg::No, ShOpt::NoHeader),
    o("parsable", Some('p'), HasArg::No, ShOpt::Parsable),
    o("parsable2", Some('P'), HasArg::No, ShOpt::Parsable2),
    o("partition", Some('m'), HasArg::No, ShOpt::Partition),
    o("usage", None, HasArg::No, ShOpt::Usage),
    o("users", Some('u'), HasArg::Required, ShOpt::Users),
    o("Users", Some('U'), HasArg::No, ShOpt::UsersOnly),
    o("verbose", Some('v'), HasArg::No, ShOpt::Verbose),
    o("version", Some('V'), HasArg::No, ShOpt::Version),
];

/// What to show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SshareOpts {
    /// `-a`: every user's associations.
    pub all: bool,
    /// `-A`.
    pub accounts: Vec<String>,
    /// `-u`.
    pub users: Vec<String>,
    /// `-U`: user associations only.
    pub users_only: bool,
    /// `-l`.
    pub long: bool,
    /// `-m`: the Partition column.
    pub partition: bool,
    /// `-n`.
    pub no_header: bool,
    /// `-o`: field names as given.
    pub format: Vec<String>,
    /// `-M`: the clusters as written (`None`: the local one).
    pub clusters: Option<String>,
    /// `-p` / `-P`.
    pub mode: OutputMode,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Show shares.
    Run(SshareOpts),
    /// `--help`.
    Help,
    /// `--helpformat`.
    HelpFormat,
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

/// Parses sshare's arguments.
pub fn parse(args: &[String]) -> Result<Invocation, String> {
    let parsed = getopt::parse(TABLE, args, Mode::Permute).map_err(|e| format!("sshare: {e}"))?;
    let mut o = SshareOpts::default();
    for (opt, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match opt {
            ShOpt::Help => return Ok(Invocation::Help),
            ShOpt::HelpFormat => return Ok(Invocation::HelpFormat),
            ShOpt::Clusters => o.clusters = Some(v),
            ShOpt::Usage => return Ok(Invocation::Usage),
            ShOpt::Version => return Ok(Invocation::Version),
            ShOpt::Accounts => o.accounts.extend(list(&v)),
            ShOpt::All => o.all = true,
            ShOpt::Format => o.format.extend(list(&v)),
            ShOpt::Long => o.long = true,
            ShOpt::NoHeader => o.no_header = true,
            ShOpt::Parsable => o.mode = OutputMode::Parsable,
            ShOpt::Parsable2 => o.mode = OutputMode::Parsable2,
            ShOpt::Partition => o.partition = true,
            ShOpt::Users => o.users.extend(list(&v)),
            ShOpt::UsersOnly => o.users_only = true,
            // Slurm's -v logs its plugins loading; there are none to report here.
            ShOpt::Verbose => {}
        }
    }
    if let Some(word) = parsed.operands.first() {
        return Err(format!(
            "sshare: error: Unrecognized option: {word}\n{USAGE}"
        ));
    }
    Ok(Invocation::Run(o))
}

/// `--usage`.
pub const USAGE: &str = "Usage: sshare [-A account[,account]] [-u user[,user]] [-M cluster[,cluster]] [-o format] [-alnmpPUvV]\n";

/// `--help`.
pub const HELP: &str = "Usage: sshare [OPTION]
  Valid OPTIONs are:
    -a or --all            list all users
    -A or --accounts=      display specific accounts (comma separated list)
    -l or --long           include normalized usage in output
    -M or --cluster=       clusters to issue commands to
    -m or --partition      print the partition part of the association
    -n or --noheader       omit header from output
    -o or --format=        comma separated list of fields
    -p or --parsable       '|' delimited output with a trailing '|'
    -P or --parsable2      '|' delimited output without a trailing '|'
    -u or --users=         display specific users (comma separated list)
    -U or --Users          display only user information
    -v or --verbose        display more information
    -V or --version        display tool version number
          --help           display this usage description
          --helpformat     print a list of fields that can be specified with the '--format' option
          --usage          display this usage description
";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_fill_the_request() {
        let Ok(Invocation::Run(o)) = parse(&args(
            "-a -A a,b -u x -U -l -m -n -P -o Account,User -M c1,c2",
        )) else {
            panic!("parse");
        };
        assert!(o.all && o.users_only && o.long && o.partition && o.no_header);
        assert_eq!(o.accounts, ["a", "b"]);
        assert_eq!(o.users, ["x"]);
        assert_eq!(o.format, ["Account", "User"]);
        assert_eq!(o.mode, OutputMode::Parsable2);
        assert_eq!(o.clusters.as_deref(), Some("c1,c2"));
        assert_eq!(parse(&args("--helpformat")), Ok(Invocation::HelpFormat));
        assert!(parse(&args("stray")).is_err());
    }
}
