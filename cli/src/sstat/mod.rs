//! `sstat`: what running jobs' steps have used so far, read live from the node daemons
//! ([`fetch`]), shown with sacct's usage formats ([`fields`]). Slurm prints the header first and
//! an error per job it cannot show (unknown, finished, no such step) and still exits 0; bad
//! options and fields exit 1.
//!
//! * [`args`]: options; [`fields`]: the field table and `-o`; [`fetch`]: the questions asked.

pub mod args;
pub mod fetch;
pub mod fields;

use std::io::Write;

use sluice_wire::proto::JobRow;

use crate::acct::Cx;
use crate::acct::values::Line;
use crate::cmdutil;
use crate::output::Printer;
use crate::slurm_conf::SlurmConf;
use crate::timefmt::Zone;
use args::{Invocation, SstatOpts};
use fetch::{Found, LiveRecord};
use fields::{Chosen, Row};

const USAGE: &str = "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n";

const HELP: &str = "sstat [<OPTION>] -j <job(.stepid)>\n\
Shows what running job steps have used so far. Options:\n\
  -a, --allsteps        every running step of a job given without a step\n\
  -e, --helpformat      list the fields -o accepts\n\
  -h, --help            this text\n\
  -i, --pidformat       the fields JobID,Nodelist,Pids\n\
  -j, --jobs=job[.step] the jobs or steps to show, comma-separated (required); without a\n\
                        step, the lowest numbered srun step; `batch` names the batch step\n\
  -n, --noheader        no header line\n\
  -o, --format=fields   the fields to show, each as name[%width]\n\
  -p, --parsable        fields ended by '|'\n\
  -P, --parsable2       fields separated by '|'\n\
      --usage           a short usage line\n\
  -V, --version         the version\n";

/// Runs the `sstat` binary.
pub fn main() -> i32 {
    let code = run(
        &cmdutil::args(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    let _ = std::io::stdout().flush();
    code
}

/// Runs sstat with `args` against the cluster named by `SLURM_CONF`.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let fail = |err: &mut dyn Write, text: &str| {
        let _ = writeln!(err, "{text}");
        1
    };
    let opts = match args::parse(args) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => return print(out, HELP),
        Ok(Invocation::Usage) => return print(out, USAGE),
        Ok(Invocation::HelpFormat) => return print(out, &fields::help_format()),
        Ok(Invocation::Version) => {
            return print(out, &format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
        }
        Err(text) => return fail(err, &text),
    };
    let cols = match fields::parse_format(&opts.format) {
        Ok(c) => c,
        Err(text) => return fail(err, &text),
    };
    let conf = match SlurmConf::from_env() {
        Ok(c) => c,
        Err(e) => return fail(err, &format!("sstat: error: {e}")),
    };
    let Some(rt) = cmdutil::runtime("sstat", err) else {
        return 1;
    };
    rt.block_on(show(&conf, &opts, &cols, out, err))
}

fn print(out: &mut dyn Write, text: &str) -> i32 {
    let _ = out.write_all(text.as_bytes());
    0
}

/// Prints the header, then each job's steps or the error Slurm prints for it.
async fn show(
    conf: &SlurmConf,
    opts: &SstatOpts,
    cols: &[Chosen],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let printer = Printer::new(opts.mode, cols.iter().map(|(_, c)| c.clone()).collect());
    if !opts.no_header {
        let _ = printer.print_header(out);
    }
    let cx = Cx {
        zone: Zone::Local,
        now: cmdutil::now(),
        noconvert: opts.noconvert,
    };
    for sel in &opts.jobs {
        let mut warnings = Vec::new();
        let found = fetch::job(conf, sel.id, &mut warnings).await;
        for w in &warnings {
            let _ = writeln!(err, "{w}");
        }
        let shown = match found {
            Err(text) => {
                let _ = out.flush();
                return fail_rpc(err, &text);
            }
            Ok(Found::Unknown) => Err(fetch::unknown(sel.id)),
            // Named steps are "not found running", the job "has no steps running".
            Ok(Found::NotRunning) => fetch::select(sel, false, &[]).map(|_| Vec::new()),
            Ok(Found::Running(job, steps)) => fetch::select(sel, opts.all_steps, &steps)
                .map(|chosen| rows(&printer, cols, &job, &chosen, &cx)),
        };
        match shown {
            Ok(lines) => lines.iter().for_each(|l| {
                let _ = writeln!(out, "{l}");
            }),
            Err(text) => {
                let _ = out.flush();
                let _ = writeln!(err, "{text}");
            }
        }
    }
    0
}

fn fail_rpc(err: &mut dyn Write, text: &str) -> i32 {
    let _ = writeln!(err, "sstat: error: {text}");
    1
}

/// The printed rows of `steps`.
pub fn rows(
    printer: &Printer,
    cols: &[Chosen],
    job: &JobRow,
    steps: &[&LiveRecord],
    cx: &Cx,
) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let row = Row {
                line: Line::Step(job, &s.record),
                pids: &s.pids,
            };
            let values: Vec<String> = cols.iter().map(|(f, _)| f.value(&row, cx)).collect();
            printer.format_row(&values)
        })
        .collect()
}
