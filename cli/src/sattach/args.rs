//! sattach's command line (Slurm 22.05): `sattach [options] <jobid.stepid>` with
//! `--input-filter`, `--output-filter`, `--error-filter`, `-l/--label`, `--layout`, `--pty`,
//! `-Q/--quiet`, `-u/--unbuffered`, `-v/--verbose`, `-h/--help`, `--usage`, `-V/--version`.

use crate::getopt::{self, Ambiguity, HasArg, Mode, OptSpec};

/// A sattach option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaOpt {
    ErrorFilter,
    Help,
    InputFilter,
    Label,
    Layout,
    OutputFilter,
    Pty,
    Quiet,
    Unbuffered,
    Usage,
    Verbose,
    Version,
}

const fn o(long: &'static str, short: Option<char>, arg: HasArg, id: SaOpt) -> OptSpec<SaOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// sattach's option table.
pub const TABLE: &[OptSpec<SaOpt>] = &[
    o("error-filter", None, HasArg::Required, SaOpt::ErrorFilter),
    o("help", Some('h'), HasArg::No, SaOpt::Help),
    o("input-filter", None, HasArg::Required, SaOpt::InputFilter),
    o("label", Some('l'), HasArg::No, SaOpt::Label),
    o("layout", None, HasArg::No, SaOpt::Layout),
    o("output-filter", None, HasArg::Required, SaOpt::OutputFilter),
    o("pty", None, HasArg::No, SaOpt::Pty),
    o("quiet", Some('Q'), HasArg::No, SaOpt::Quiet),
    o("unbuffered", Some('u'), HasArg::No, SaOpt::Unbuffered),
    o("usage", None, HasArg::No, SaOpt::Usage),
    o("verbose", Some('v'), HasArg::No, SaOpt::Verbose),
    o("version", Some('V'), HasArg::No, SaOpt::Version),
];

/// What sattach was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SattachOpts {
    /// The step: job and step id.
    pub job_id: u32,
    pub step_id: u32,
    /// `--input-filter`: only this task reads sattach's stdin.
    pub input_filter: Option<u32>,
    /// `--output-filter`: only this task's stdout is shown.
    pub output_filter: Option<u32>,
    /// `--error-filter`: only this task's stderr is shown.
    pub error_filter: Option<u32>,
    /// `-l`.
    pub label: bool,
    /// `--layout`: print the step's task layout and exit.
    pub layout: bool,
    /// `--pty`: attach to task 0's pseudo-terminal.
    pub pty: bool,
    /// `-Q`.
    pub quiet: bool,
    /// `-u`.
    pub unbuffered: bool,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Attach (or show the layout).
    Run(SattachOpts),
    Help,
    Usage,
    Version,
}

/// Parses sattach's arguments; `Err` is the whole text to print (exit 1).
pub fn parse(args: &[String]) -> Result<Invocation, String> {
    let parsed = getopt::parse(TABLE, args, Mode::Permute)
        .map_err(|e| e.usage_text("sattach", Ambiguity::Listed))?;
    let mut o = SattachOpts::default();
    for (opt, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match opt {
            SaOpt::Help => return Ok(Invocation::Help),
            SaOpt::Usage => return Ok(Invocation::Usage),
            SaOpt::Version => return Ok(Invocation::Version),
            SaOpt::ErrorFilter => o.error_filter = Some(task(&v)?),
            SaOpt::InputFilter => o.input_filter = Some(task(&v)?),
            SaOpt::OutputFilter => o.output_filter = Some(task(&v)?),
            SaOpt::Label => o.label = true,
            SaOpt::Layout => o.layout = true,
            SaOpt::Pty => o.pty = true,
            SaOpt::Quiet => o.quiet = true,
            SaOpt::Unbuffered => o.unbuffered = true,
            // Slurm's -v adds debug logging of its own libraries; there is none to add here.
            SaOpt::Verbose => {}
        }
    }
    let filtered =
        o.input_filter.is_some() || o.output_filter.is_some() || o.error_filter.is_some();
    if o.pty && (filtered || o.label) {
        return Err(
            "sattach: fatal: --pty is not compatible with --label, --input-filter, \
             --output-filter or --error-filter"
                .into(),
        );
    }
    let [step] = parsed.operands.as_slice() else {
        return Err(if parsed.operands.is_empty() {
            "sattach: fatal: Must supply a job step ID (jobid.stepid)".into()
        } else {
            format!(
                "sattach: fatal: Only one job step ID may be given, not {}",
                parsed.operands.join(" ")
            )
        });
    };
    (o.job_id, o.step_id) = step_id(step)?;
    Ok(Invocation::Run(o))
}

/// `jobid.stepid`, both numbers.
fn step_id(word: &str) -> Result<(u32, u32), String> {
    let bad = || format!("sattach: fatal: Invalid job step ID: {word} (expected jobid.stepid)");
    let (job, step) = word.split_once('.').ok_or_else(bad)?;
    Ok((
        job.parse().map_err(|_| bad())?,
        step.parse().map_err(|_| bad())?,
    ))
}

fn task(v: &str) -> Result<u32, String> {
    v.parse()
        .map_err(|_| format!("sattach: fatal: Invalid task number: {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &str) -> Result<Invocation, String> {
        let words: Vec<String> = args.split_whitespace().map(String::from).collect();
        parse(&words)
    }

    #[test]
    fn options_and_the_step_parse() {
        let Ok(Invocation::Run(o)) =
            p("-l -Q -u --output-filter=1 --error-filter 2 --input-filter=0 12.3")
        else {
            panic!("should parse");
        };
        assert_eq!((o.job_id, o.step_id), (12, 3));
        assert_eq!(
            (o.output_filter, o.error_filter, o.input_filter),
            (Some(1), Some(2), Some(0))
        );
        assert!(o.label && o.quiet && o.unbuffered && !o.layout && !o.pty);
        assert_eq!(p("--usage 1.0"), Ok(Invocation::Usage));
        let Ok(Invocation::Run(o)) = p("--layout 5.0") else {
            panic!("should parse");
        };
        assert!(o.layout);
    }

    #[test]
    fn bad_command_lines_are_named() {
        assert!(p("").unwrap_err().contains("Must supply a job step ID"));
        assert!(p("12").unwrap_err().contains("Invalid job step ID: 12"));
        assert!(p("12.x").unwrap_err().contains("Invalid job step ID"));
        assert!(p("1.0 2.0").unwrap_err().contains("Only one"));
        assert!(
            p("--output-filter=a 1.0")
                .unwrap_err()
                .contains("Invalid task number: a")
        );
        assert!(p("--pty -l 1.0").unwrap_err().contains("not compatible"));
        assert!(
            p("--bogus 1.0")
                .unwrap_err()
                .contains("unrecognized option '--bogus'")
        );
    }
}
