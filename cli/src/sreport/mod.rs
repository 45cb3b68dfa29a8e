//! `sreport`: usage reports from the accounting daemon's rollups, with Slurm's commands,
//! options, headers, column widths and value formats.
//!
//! * [`args`]: global options; [`conds`]: a report's words; [`fields`]: `format=` fields;
//!   [`units`]: `-t` time formats; [`tres`]: `-T`; [`window`]: the report window.
//! * [`util`], [`assoc`], [`top`], [`sizes`]: the reports, pure renderers over [`data`];
//!   [`render`]: banner and table.
//! * [`session`]: the dbd connection and queries; [`commands`]: running one report.
//!
//! Without a command, sreport reads commands from stdin until `quit`, `exit` or end of input.

pub mod args;
pub mod assoc;
pub mod commands;
pub mod conds;
pub mod data;
pub mod error;
pub mod fields;
pub mod render;
pub mod session;
pub mod sizes;
pub mod top;
pub mod tres;
pub mod units;
pub mod util;
pub mod window;

#[cfg(test)]
mod render_tests;

use std::io::Write;

use crate::output::OutputMode;
use crate::prompt::{Input, Read};
use crate::words::is_keyword;
use crate::words::split_line;
use args::Invocation;
use assoc::Order;
use error::SreportError;
use session::Session;

/// Runs the `sreport` binary: arguments from the process, stdin, stdout and stderr.
pub fn main() -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(
        &crate::cmdutil::args(),
        Input::stdin(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    )
}

/// Runs sreport with `args` (without the program name); returns the exit code.
pub fn run(args: &[String], input: Input, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let (opts, words) = match args::parse(args, &env) {
        Ok(Invocation::Run { opts, words }) => (opts, words),
        Ok(Invocation::Help) => {
            let _ = out.write_all(USAGE.as_bytes());
            return 0;
        }
        Ok(Invocation::Version) => {
            let _ = writeln!(out, "sluice {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 1;
        }
    };
    let Some(rt) = crate::cmdutil::runtime("sreport", err) else {
        return 1;
    };
    let names = render::passwd_proper_name;
    let mut s = Session::new(opts, out, err, crate::cmdutil::now(), &names);
    rt.block_on(async {
        if words.is_empty() {
            interactive(&mut s, input).await;
        } else {
            execute(&mut s, &words).await;
        }
    });
    s.flush();
    s.exit_code
}

/// Reads commands until `quit`, `exit` or end of input (`!!` repeats the last one).
async fn interactive(s: &mut Session<'_>, mut input: Input) {
    let mut last: Vec<String> = Vec::new();
    loop {
        if input.is_terminal() {
            s.out("sreport: ");
        }
        s.flush();
        let line = match input.read(None) {
            Read::Line(line) => line,
            Read::Eof | Read::Timeout => {
                if input.is_terminal() {
                    s.out("\n");
                }
                return;
            }
        };
        if line.starts_with('#') {
            continue;
        }
        let words = if line.trim() == "!!" {
            last.clone()
        } else {
            split_line(&line)
        };
        last = words.clone();
        if execute(s, &words).await == Step::Quit {
            return;
        }
    }
}

/// Whether to go on reading commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Continue,
    Quit,
}

/// Runs one command line.
pub async fn execute(s: &mut Session<'_>, words: &[String]) -> Step {
    let Some(first) = words.first().map(String::as_str) else {
        s.exit_code = 1;
        return Step::Continue;
    };
    let rest = &words[1..];
    let kw = |name: &str, min: usize| is_keyword(first, name, min);
    let report = |s: &mut Session<'_>| {
        if rest.is_empty() {
            if !s.opts.quiet {
                s.fail(&SreportError::TooFewArguments(first.to_string()).to_string());
            } else {
                s.exit_code = 1;
            }
            false
        } else {
            true
        }
    };
    let alone = |s: &mut Session<'_>| {
        if !rest.is_empty() {
            s.fail(&SreportError::TooManyArguments(first.to_string()).to_string());
        }
    };
    if kw("association", 1) {
        // Slurm has no association reports; the keyword is accepted and does nothing.
        report(s);
    } else if kw("cluster", 2) {
        if report(s) {
            cluster_report(s, rest).await;
        }
    } else if kw("help", 2) {
        alone(s);
        s.out(USAGE);
    } else if kw("job", 1) {
        if report(s) {
            job_report(s, rest).await;
        }
    } else if kw("quiet", 4) {
        alone(s);
        s.opts.quiet = true;
    } else if kw("exit", 1) || kw("\\q", 2) || kw("quit", 4) {
        alone(s);
        return Step::Quit;
    } else if kw("nonparsable", 4) {
        alone(s);
        s.opts.mode = OutputMode::Fixed;
    } else if kw("parsable", 8) {
        alone(s);
        s.opts.mode = OutputMode::Parsable;
    } else if kw("parsable2", 9) {
        alone(s);
        s.opts.mode = OutputMode::Parsable2;
    } else if kw("reservation", 2) || kw("resv", 2) {
        if report(s) {
            s.fail(&SreportError::Unsupported(format!("reservation {}", rest[0])).to_string());
        }
    } else if kw("sort", 1) || kw("time", 1) {
        if report(s) {
            let set = if kw("sort", 1) {
                args::sort_by_name(&rest[0]).map(|b| s.opts.sort_by_name = b)
            } else {
                units::TimeFormat::parse(&rest[0]).map(|t| s.opts.time = t)
            };
            if let Err(e) = set {
                s.fail(&e.to_string());
            }
        }
    } else if kw("verbose", 4) {
        alone(s);
    } else if kw("version", 4) {
        alone(s);
        s.out(&format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
    } else if kw("user", 1) {
        if report(s) {
            if starts(&rest[0], "Top", 1) {
                commands::top_usage(s, &rest[1..]).await;
            } else {
                invalid(s, &rest[0], "user", "\"Top\"");
            }
        }
    } else {
        s.fail(&SreportError::InvalidKeyword(first.to_string()).to_string());
    }
    Step::Continue
}

/// `cluster <REPORT>`, matched as Slurm does (fixed-length prefixes).
async fn cluster_report(s: &mut Session<'_>, words: &[String]) {
    let name = words[0].as_str();
    let rest = &words[1..];
    if starts(name, "AccountUtilizationByUser", 21) || starts(name, "AU", 2) {
        commands::association(s, Order::AccountByUser, rest).await;
    } else if starts(name, "AccountUtilizationByQOS", 21) || starts(name, "AQ", 2) {
        s.fail(&SreportError::Unsupported(format!("cluster {name}")).to_string());
    } else if starts(name, "UserUtilizationByAccount", 18) || starts(name, "UA", 2) {
        commands::association(s, Order::UserByAccount, rest).await;
    } else if starts(name, "UserUtilizationByWckey", 18)
        || starts(name, "UW", 2)
        || starts(name, "WCKeyUtilizationByUser", 1)
    {
        s.fail(&SreportError::Unsupported(format!("cluster {name}")).to_string());
    } else if starts(name, "Utilization", 2) {
        commands::utilization(s, rest).await;
    } else {
        invalid(
            s,
            name,
            "cluster",
            "\"AccountUtilizationByUser\", \"UserUtilizationByAccount\", \
             \"UserUtilizationByWckey\", \"Utilization\", and \"WCKeyUtilizationByUser\"",
        );
    }
}

/// `job <REPORT>`.
async fn job_report(s: &mut Session<'_>, words: &[String]) {
    let name = words[0].as_str();
    if is_keyword(name, "SizesByAccount", 1) {
        commands::job_sizes(s, &words[1..]).await;
    } else if is_keyword(name, "SizesByWcKey", 8) || is_keyword(name, "SizesByAccountAndWcKey", 15)
    {
        s.fail(&SreportError::Unsupported(format!("job {name}")).to_string());
    } else {
        invalid(
            s,
            name,
            "job",
            "\"SizesByAccount, SizesByAccountAndWcKey, and  SizesByWckey\"",
        );
    }
}

fn invalid(s: &mut Session<'_>, name: &str, kind: &'static str, valid: &'static str) {
    let e = SreportError::InvalidReport {
        name: name.to_string(),
        kind,
        valid,
    };
    s.fail(&e.to_string());
}

/// C's `strncasecmp(word, keyword, n) == 0` for a fixed `n`: the first `n` characters agree
/// (and the word has at least that many).
fn starts(word: &str, keyword: &str, n: usize) -> bool {
    let (w, k) = (word.as_bytes(), keyword.as_bytes());
    w.len() >= n && k.len() >= n && w[..n].eq_ignore_ascii_case(&k[..n])
}

const USAGE: &str = "\
sreport [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a or --all_clusters: report on every cluster
     -M or --cluster <list>: report on these clusters
     --federation: report on the local cluster's federation, as one cluster
     --local: report on the local cluster only
     -h or --help: print this description of use
     -n or --noheader: print no headers
     -p or --parsable: '|' after every field
     -P or --parsable2: '|' between fields
     -Q or --quiet: print only errors
     -s or --sort <Name|Time>: order of users
     -t <format>: Seconds, Minutes, Hours, Percent, SecPer, MinPer, HourPer
     -T or --tres <list>: the TRES to report (default cpu; ALL for every one)
     -V or --version: print the version

  Without <COMMAND>, sreport reads commands from stdin until quit or exit.

    Valid <COMMAND> values are:
     cluster <REPORT> <OPTIONS>  AccountUtilizationByUser, UserUtilizationByAccount,
                                 Utilization
     job <REPORT> <OPTIONS>      SizesByAccount
     user <REPORT> <OPTIONS>     TopUsage
     exit, quit, help, version, parsable, parsable2, nonparsable, quiet, verbose,
     sort <Name|Time>, time <format>, !! (repeat the last command)

  <OPTIONS>:
     all reports   - All_Clusters, Clusters=, Start=, End=, Format=<field[%width],...>
     cluster       - Accounts=, Users=, Tree (AccountUtilizationByUser)
     user          - Accounts=, Users=, Group, TopCount=
     job           - Accounts=, FlatView, AcctAsParent, Grouping=, PrintJobCount

  Format fields:
     Utilization                - Allocated, Cluster, Count, Down, Energy, Idle,
                                  Overcommitted, PlannedDown, Planned, Reported, TresName
     AccountUtilizationByUser,
     UserUtilizationByAccount   - Accounts, Cluster, Energy, Login, Proper, TresName, Used
     TopUsage                   - Accounts, Cluster, Energy, Login, Proper, TresName, Used
     SizesByAccount             - Account, Cluster
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_prefixes_behave_like_strncasecmp() {
        assert!(starts(
            "accountutilizationbyuser",
            "AccountUtilizationByUser",
            21
        ));
        assert!(starts(
            "AccountUtilizationByUs",
            "AccountUtilizationByUser",
            21
        ));
        assert!(!starts(
            "AccountUtilizationBy",
            "AccountUtilizationByUser",
            21
        ));
        assert!(starts("ut", "Utilization", 2) && starts("utterly", "Utilization", 2));
        assert!(!starts("u", "Utilization", 2));
        assert!(starts("topusage", "Top", 1) && starts("t", "Top", 1));
    }
}
