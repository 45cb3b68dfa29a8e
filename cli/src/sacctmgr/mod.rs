//! `sacctmgr`, Slurm's accounting manager: clusters, federations, accounts and users, with
//! Slurm's syntax, output and messages.
//!
//! * [`args`]: options, words, keyword prefixes; [`fields`]: `format=` fields.
//! * [`cluster`], [`federation`], [`account`], [`user`]: parse an entity's words, call the dbd,
//!   render Slurm's messages and tables; [`assoc`]: `show association`.
//! * [`session`]: output streams, the dbd connection and the commit flow; [`crate::prompt`]: stdin.

pub mod account;
pub mod args;
pub mod assoc;
pub mod assoc_qos;
pub mod cluster;
pub mod coordinator;
pub mod error;
pub mod federation;
pub mod fields;
pub mod limits;
pub mod qos;
pub mod session;
pub mod shares;
pub mod user;
pub mod verify;

#[cfg(test)]
mod render_tests;

use std::io::Write;

use crate::prompt::{Input, Read};
use crate::words::{is_keyword, split_line};
use args::{Invocation, parse_invocation};
use error::SacctmgrError;
use session::{Done, Outcome, Session};

/// The verbs sacctmgr knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Add,
    List,
    Modify,
    Delete,
}

/// Runs the `sacctmgr` binary: arguments from the process, stdin, stdout and stderr.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(
        &args,
        Input::stdin(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    )
}

/// Runs sacctmgr with `args` (without the program name); returns the exit code.
pub fn run(args: &[String], input: Input, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let (opts, words) = match parse_invocation(args) {
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
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "sacctmgr: error: {e}");
            return 1;
        }
    };
    let mut session = Session::new(opts, out, err, input);
    let code = runtime.block_on(async {
        if words.is_empty() {
            interactive(&mut session).await
        } else {
            match execute(&mut session, &words).await {
                Step::Quit(code) | Step::Continue(code) => code,
            }
        }
    });
    session.flush();
    code
}

/// Whether to go on reading commands, and the command's exit code.
enum Step {
    Continue(i32),
    Quit(i32),
}

/// Reads commands from stdin until `quit`, `exit` or end of input; exits with the last
/// failure's code, as sacctmgr does.
async fn interactive(s: &mut Session<'_>) -> i32 {
    let mut code = 0;
    loop {
        if s.input.is_terminal() {
            s.out("sacctmgr: ");
        }
        s.flush();
        let line = match s.input.read(None) {
            Read::Line(line) => line,
            Read::Eof | Read::Timeout => {
                if s.input.is_terminal() {
                    s.out("\n");
                }
                return code;
            }
        };
        if line.trim_start().starts_with('#') {
            continue;
        }
        let words = split_line(&line);
        if words.is_empty() {
            continue;
        }
        match execute(s, &words).await {
            Step::Continue(0) => {}
            Step::Continue(c) => code = c,
            Step::Quit(c) => return if c != 0 { c } else { code },
        }
    }
}

/// Runs one command line.
async fn execute(s: &mut Session<'_>, words: &[String]) -> Step {
    let first = words[0].as_str();
    let rest = &words[1..];
    let verb = if is_keyword(first, "exit", 4)
        || is_keyword(first, "\\q", 2)
        || is_keyword(first, "quit", 4)
    {
        if !rest.is_empty() {
            s.err(&format!(
                "{}\n",
                SacctmgrError::TooManyArguments(first.to_string())
            ));
            return Step::Quit(1);
        }
        return Step::Quit(0);
    } else if is_keyword(first, "add", 3) || is_keyword(first, "create", 3) {
        Verb::Add
    } else if is_keyword(first, "show", 3) || is_keyword(first, "list", 3) {
        Verb::List
    } else if is_keyword(first, "modify", 1) || is_keyword(first, "update", 1) {
        Verb::Modify
    } else if is_keyword(first, "delete", 3) || is_keyword(first, "remove", 3) {
        Verb::Delete
    } else if is_keyword(first, "help", 2) {
        s.out(USAGE);
        return Step::Continue(0);
    } else if is_keyword(first, "version", 4) {
        s.out(&format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
        return Step::Continue(0);
    } else {
        s.err(&format!(
            "{}\n",
            SacctmgrError::InvalidKeyword(first.to_string())
        ));
        return Step::Continue(1);
    };
    let code = match dispatch(s, verb, rest).await {
        Ok(Done::Ok) => 0,
        Ok(Done::Failed) => 1,
        Err(e) => {
            s.err(&format!("{e}\n"));
            1
        }
    };
    Step::Continue(code)
}

/// The entity words each verb accepts, with Slurm's minimum prefixes.
async fn dispatch(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    let verb_name = match verb {
        Verb::Add => "add",
        Verb::List => "list",
        Verb::Modify => "modify",
        Verb::Delete => "delete",
    };
    let Some(entity) = words.first() else {
        return Err(SacctmgrError::NoEntity { verb: verb_name });
    };
    let args = &words[1..];
    let e = entity.as_str();
    let (acct_min, cluster_min, fed_word) = match verb {
        Verb::Add => (1, 2, "Federation"),
        Verb::List => (2, 2, "Federation"),
        Verb::Modify => (1, 5, "Federation"),
        Verb::Delete => (1, 2, "Federations"),
    };
    if is_keyword(e, "Accounts", acct_min) || is_keyword(e, "Acct", 4) {
        account::run(s, verb, args).await
    } else if is_keyword(e, "Clusters", cluster_min) {
        cluster::run(s, verb, args).await
    } else if is_keyword(e, fed_word, 1) {
        federation::run(s, verb, args).await
    } else if is_keyword(e, "Users", 1) {
        user::run(s, verb, args).await
    } else if is_keyword(e, "Associations", 2) {
        assoc::run(s, verb, args).await
    } else if is_keyword(e, "Coordinators", 2) {
        coordinator::run(s, verb, args).await
    } else if is_keyword(e, "QOS", 1) {
        qos::run(s, verb, args).await
    } else {
        Err(SacctmgrError::NoEntity { verb: verb_name })
    }
}

const USAGE: &str = "\
sacctmgr [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -h or --help: print this description of use
     -i or --immediate: commit changes without asking
     -n or --noheader: print no header lines
     -p or --parsable: '|' after every field
     -P or --parsable2: '|' between fields
     -Q or --quiet: print only errors
     -v or --verbose: more detail
     -V or --version: print the version

  Without <COMMAND>, sacctmgr reads commands from stdin until quit or exit.

  Valid <COMMAND> values are:
     add <ENTITY> <SPECS>     add entities
     delete <ENTITY> <SPECS>  delete entities
     list <ENTITY> [<SPECS>]  show entities (show is the same)
     modify <ENTITY> <SPECS>  modify entities (where ... set ...)
     exit, quit               leave interactive mode
     help, version

  <ENTITY> may be \"account\", \"cluster\", \"coordinator\", \"federation\", \"qos\" or
  \"user\".

  <SPECS>:
     cluster     - Names=, Federation=, FedState=, Features[+-]=, WithFed, WOLimits,
                   WithDeleted, Format=
     federation  - Names=, Clusters[+-]=, Tree, WithDeleted, Format=
     account     - Names=, Cluster=, Description=, Organization=, Parent=, WithCoord,
                   Format=
     coordinator - (add and delete) Names=, Accounts=
     user        - Names=, Account=, DefaultAccount=, AdminLevel=, Cluster=, WithAssoc,
                   WithCoord, Format=
     association - (list only) Clusters=, Accounts=, Users=, Tree, Format=
     qos         - Names=, Description=, Priority=, Flags=, MaxWall=, MaxTRES[PerJob]=,
                   MaxTRESMins[PerJob]=, MaxTRESPerUser=, MaxJobsPerUser=,
                   MaxSubmitJobsPerUser=, MaxTRESPerAccount=, MaxJobsPerAccount=,
                   MaxSubmitJobsPerAccount=, MinTRESPerJob=, MaxTRESPerNode=, GrpTRES=,
                   GrpTRESMins=, GrpJobs=, GrpSubmitJobs=, WithDeleted, Format=
     user/account (modify) also QOS[+-]=, DefaultQOS=
";
