//! `sbatch`: submits a batch script, with Slurm's options, directives, checks and messages.
//!
//! * [`args`]: the option table, the `SBATCH_*` environment variables, the command line.
//! * [`script`]: `--wrap`, the script checks, `#SBATCH` directives.
//! * [`pbs`], [`lsf`]: `#PBS` and `#BSUB` directives translated into sbatch's options.
//! * [`submit`]: the request to the controller, retries and the printed result.
//!
//! Options are applied as Slurm applies them: directives first, then the environment, then the
//! command line, so the command line wins.

pub mod args;
pub mod lsf;
pub mod pbs;
pub mod script;
pub mod submit;
pub mod wait;

use std::io::{Read, Write};
use std::path::Path;

use sluice_wire::proto::SubmitJobRequest;

use crate::getopt::{self, Ambiguity, GetoptError, Mode};
use crate::jobspec::clusters::NoCluster;
use crate::jobspec::{self, OptError, Submitter};
use crate::slurm_conf::{CliError, SlurmConf};
use args::{CommandLine, SbOpt, SbatchOpts};

/// Why sbatch stops; the text is Slurm's (printed after `sbatch: error: `).
#[derive(Debug, thiserror::Error)]
pub enum SbatchError {
    /// An option the table does not accept (printed as getopt prints it).
    #[error("{0}")]
    Getopt(#[from] GetoptError),
    /// A bad option value.
    #[error("{0}")]
    Opt(#[from] OptError),
    #[error("Script arguments not permitted with --wrap option")]
    WrapWithArgs,
    #[error("Unable to open file {0}")]
    Open(String),
    #[error("Batch script is empty!")]
    EmptyScript,
    #[error("Batch script contains only whitespace!")]
    BlankScript,
    #[error(
        "This does not look like a batch script.  The first\n\
         line must start with #! followed by the path to an interpreter.\n\
         For instance: #!/bin/sh"
    )]
    NotAScript,
    #[error(
        "Batch script contains DOS line breaks (\\r\\n)\ninstead of expected UNIX line breaks (\\n)."
    )]
    DosLineBreaks,
    #[error("The Slurm controller does not allow scripts that contain a NULL character '\\0'.")]
    NulInScript,
    /// A word in an `#SBATCH` line that is not an option.
    #[error("Invalid directive found in batch script: {0}")]
    Directive(String),
    /// A `#PBS` or `#BSUB` option letter sbatch does not read (printed as getopt prints it).
    #[error("invalid option -- '{0}'")]
    ForeignOption(char),
    /// A directive with an open quote (Slurm treats it as fatal).
    #[error("{file}: line {line}: Unmatched `{quote}` in [{text}]")]
    UnmatchedQuote {
        file: String,
        line: usize,
        quote: char,
        text: String,
    },
    /// The configuration could not be read.
    #[error("{0}")]
    Conf(#[from] CliError),
    /// The controller refused the job.
    #[error("Batch job submission failed: {0}")]
    Submit(String),
    /// `--test-only` found no way to run the job.
    #[error("allocation failure: {0}")]
    TestOnly(String),
    /// `-M` named clusters that cannot be reached (one `sbatch: error:` line each).
    #[error("{0}")]
    Clusters(#[from] NoCluster),
}

impl SbatchError {
    /// sbatch's exit code for this error: 1, but 255 for an unreadable node file (as Slurm's
    /// sbatch exits then).
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Opt(OptError::NodeFile { .. }) => 255,
            _ => 1,
        }
    }

    /// Prints the error as Slurm does; sbatch then exits with [`SbatchError::exit_code`].
    pub fn print(&self, err: &mut dyn Write) {
        match self {
            Self::Getopt(e) => {
                let _ = writeln!(err, "{}", e.usage_text("sbatch", Ambiguity::Listed));
            }
            Self::ForeignOption(_) => {
                let _ = writeln!(err, "sbatch: {self}");
                jobspec::print_error(err, "sbatch", "Unrecognized command line parameter ?");
            }
            Self::UnmatchedQuote { .. } => {
                let _ = writeln!(err, "sbatch: fatal: {self}");
            }
            // Slurm's `slurm_perror`: no program prefix.
            Self::TestOnly(_) => {
                let _ = writeln!(err, "{self}");
            }
            Self::Opt(e) if e.is_fatal() => {
                let _ = writeln!(err, "sbatch: fatal: {e}");
            }
            Self::Opt(e) if e.is_submit_refusal() => {
                jobspec::print_error(err, "sbatch", &format!("Batch job submission failed: {e}"));
            }
            Self::Clusters(NoCluster(lines)) => {
                for line in lines {
                    jobspec::print_error(err, "sbatch", line);
                }
            }
            _ => jobspec::print_error(err, "sbatch", &self.to_string()),
        }
    }
}

/// What sbatch will do once its input is understood.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Print this text on stdout and exit 0 (help, usage, version).
    Print(String),
    /// Send this job.
    Submit(Box<Submission>),
}

/// A checked job and how to report its submission.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// The request for the controller.
    pub request: SubmitJobRequest,
    /// `--parsable`.
    pub parsable: bool,
    /// `-Q`.
    pub quiet: bool,
    /// `-M` was given: the reply's cluster is shown.
    pub clusters_given: bool,
    /// `-W/--wait`: wait for the job to end and exit with its code.
    pub wait: bool,
    /// Lines printed about options dropped as Slurm drops them (see [`jobspec::JobOpts::notes`]).
    pub notes: Vec<&'static str>,
    /// The job's options (the limits to carry are settled once the configuration is read).
    pub job: jobspec::JobOpts,
}

/// Every resource limit (the default `PropagateResourceLimits=ALL`).
fn all_limits() -> Vec<&'static str> {
    sluice_wire::rlimits::LIMITS.iter().map(|l| l.0).collect()
}

/// Puts the `SLURM_RLIMIT_*` variables of `job` into the request: its `--propagate` limits,
/// else `conf_default`.
fn set_rlimits(request: &mut SubmitJobRequest, job: &jobspec::JobOpts, conf_default: &[&str]) {
    request
        .env
        .retain(|e| !e.name.starts_with(sluice_wire::rlimits::PREFIX));
    request.env.extend(job.rlimit_env(conf_default));
}

/// Runs the `sbatch` binary.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let environ = jobspec::process_environ();
    let who = Submitter::current();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(
        &args,
        &environ,
        &who,
        &mut std::io::stdin().lock(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    )
}

/// Runs sbatch with `args` (without the program name); returns the exit code.
pub fn run(
    args: &[String],
    environ: &[(String, String)],
    who: &Submitter,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let submission = match plan(args, environ, who, stdin) {
        Ok(Plan::Print(text)) => {
            let _ = out.write_all(text.as_bytes());
            return 0;
        }
        Ok(Plan::Submit(s)) => {
            for note in &s.notes {
                jobspec::print_error(err, "sbatch", note);
            }
            *s
        }
        Err(e) => {
            e.print(err);
            return e.exit_code();
        }
    };
    let mut submission = submission;
    let conf = match SlurmConf::read(&jobspec::conf_path(environ)) {
        Ok(c) => c,
        Err(e) => {
            SbatchError::Conf(e).print(err);
            return 1;
        }
    };
    set_rlimits(&mut submission.request, &submission.job, &conf.propagate);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            jobspec::print_error(err, "sbatch", &e.to_string());
            return 1;
        }
    };
    runtime.block_on(submit::submit(&conf, &submission, out, err))
}

/// Reads the command line, the script and its directives and the environment into a request,
/// refusing bad input before anything is sent.
pub fn plan(
    args: &[String],
    environ: &[(String, String)],
    who: &Submitter,
    stdin: &mut dyn Read,
) -> Result<Plan, SbatchError> {
    let (cmdline, het_cmdline, script, script_args) = match args::parse_command_line(args)? {
        CommandLine::Help => return Ok(Plan::Print(args::HELP.to_string())),
        CommandLine::Usage => return Ok(Plan::Print(args::USAGE.to_string())),
        CommandLine::Version => {
            return Ok(Plan::Print(format!(
                "sluice {}\n",
                env!("CARGO_PKG_VERSION")
            )));
        }
        CommandLine::Submit {
            opts,
            het,
            script,
            script_args,
        } => (opts, het, script, script_args),
    };
    // `--wrap` may come with any component (Slurm takes it from the last that gives it).
    let wrap = cmdline
        .iter()
        .chain(het_cmdline.iter().flatten())
        .rev()
        .find(|(o, _)| *o == SbOpt::Wrap)
        .and_then(|(_, v)| v.clone());
    type Opts = Vec<(SbOpt, Option<String>)>;
    // Each component's options from the script (its `#SBATCH` section; `#PBS`/`#BSUB` lines
    // go to the first), before the environment and the command line.
    let (body, name, script_opts): (String, String, Vec<Opts>) = if let Some(cmd) = &wrap {
        if script.is_some() {
            return Err(SbatchError::WrapWithArgs);
        }
        (script::wrap(cmd), "wrap".to_string(), vec![Vec::new()])
    } else {
        let bytes = read_script(script.as_deref(), &who.cwd, stdin)?;
        script::check(&bytes)?;
        let body = String::from_utf8_lossy(&bytes).into_owned();
        let file = script.as_deref().unwrap_or("stdin");
        let words = script::directives(file, &body)?;
        let mut sections = Vec::new();
        for part in jobspec::het::split_script_words(words) {
            let parsed = getopt::parse(&args::table(), &part, Mode::StopAtOperand)?;
            if let Some(word) = parsed.operands.first() {
                return Err(SbatchError::Directive(word.clone()));
            }
            sections.push(parsed.opts);
        }
        let ignore_pbs = sections
            .first()
            .into_iter()
            .flatten()
            .chain(&cmdline)
            .any(|(o, _)| *o == SbOpt::IgnorePbs)
            || jobspec::env_options(args::ENV_OWN, environ)
                .iter()
                .any(|(o, _)| *o == SbOpt::IgnorePbs);
        if !ignore_pbs {
            // A script with `#BSUB` lines is read as LSF's, its `#PBS` lines left (as Slurm).
            let lsf = script::directives_of("#BSUB", file, &body)?;
            let foreign = if lsf.is_empty() {
                pbs::options(&script::directives_of("#PBS", file, &body)?)?
            } else {
                lsf::options(&lsf)?
            };
            if let Some(first) = sections.first_mut() {
                first.extend(foreign);
            }
        }
        (body, script::default_name(script.as_deref()), sections)
    };
    let env_opts: Opts = jobspec::env_options(args::ENV, environ)
        .into_iter()
        .chain(jobspec::env_options(args::ENV_CATALOG, environ))
        .map(|(o, v)| (SbOpt::Job(o), v))
        .chain(jobspec::env_options(args::ENV_OWN, environ))
        .collect();
    let env_ids: Vec<jobspec::Opt> = jobspec::env_options(args::ENV, environ)
        .into_iter()
        .map(|(o, _)| o)
        .collect();
    // The components: those of the command line (`A : B`), else the script's sections
    // (`#SBATCH hetjob`); with both, the script's later sections are not read (as Slurm).
    let mut cmdlines: Vec<Opts> = vec![cmdline];
    cmdlines.extend(het_cmdline);
    let count = if cmdlines.len() > 1 {
        cmdlines.len()
    } else {
        script_opts.len()
    };
    let own: Vec<Opts> = (0..count)
        .map(|k| {
            let mut o: Opts = if k == 0 || cmdlines.len() == 1 {
                script_opts.get(k).cloned().unwrap_or_default()
            } else {
                Vec::new()
            };
            o.extend(env_opts.iter().cloned());
            o.extend(cmdlines.get(k).cloned().unwrap_or_default());
            o
        })
        .collect();
    let job_opt = |o: &SbOpt| match o {
        SbOpt::Job(j) => Some(*j),
        _ => None,
    };
    let all = jobspec::het::component_options(&own, job_opt);
    let mut components = Vec::with_capacity(count);
    for (k, list) in all.into_iter().enumerate() {
        let mut opts = SbatchOpts::default();
        for (opt, value) in list {
            opts.apply(opt, value)?;
        }
        let cli_ids: Vec<jobspec::Opt> = cmdlines
            .get(k)
            .into_iter()
            .flatten()
            .filter_map(|(o, _)| job_opt(o))
            .collect();
        opts.job.settle_memory(cli_ids.clone(), env_ids.clone())?;
        opts.job.settle_hint(&cli_ids, false);
        let text = if k == 0 { body.clone() } else { String::new() };
        let mut request = opts.job.to_request(&name, text, who, environ);
        set_rlimits(&mut request, &opts.job, &all_limits());
        request.test_only = opts.test_only;
        if k == 0 {
            request.script_args = script_args.clone();
        }
        components.push((request, opts));
    }
    let mut components = components.into_iter();
    let Some((mut request, opts)) = components.next() else {
        return Err(SbatchError::EmptyScript);
    };
    request.het_components = components.map(|(r, _)| r).collect();
    Ok(Plan::Submit(Box::new(Submission {
        request,
        parsable: opts.parsable,
        quiet: opts.job.quiet,
        clusters_given: opts.job.clusters.is_some(),
        wait: opts.wait && !opts.test_only,
        notes: opts.job.notes.clone(),
        job: opts.job,
    })))
}

/// The script's bytes: the named file (relative to `cwd`) or standard input.
fn read_script(
    path: Option<&str>,
    cwd: &str,
    stdin: &mut dyn Read,
) -> Result<Vec<u8>, SbatchError> {
    let mut bytes = Vec::new();
    match path {
        Some(p) => {
            let full = Path::new(cwd).join(p);
            bytes = std::fs::read(&full).map_err(|_| SbatchError::Open(p.to_string()))?;
        }
        None => {
            stdin
                .read_to_end(&mut bytes)
                .map_err(|_| SbatchError::Open("stdin".to_string()))?;
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_files_pbs;
