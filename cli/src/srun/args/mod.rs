//! srun's options: the shared job options plus `-l`, `-X`, `--quit-on-interrupt`, `--jobid`,
//! the step options `--overlap`, `-w/--nodelist`, `--ntasks-per-node` and `--cpu-bind`, the
//! I/O options `-i/-o/-e/-u/--open-mode`, and the `SLURM_*` input environment variables srun
//! honours.

use crate::getopt::{self, GetoptError, Mode};
use crate::jobspec::{JobOpts, Opt, OptError, env_options, values};
use sluice_vocab::cpu_bind::CpuBind;
use sluice_vocab::distribution::Distribution;

pub use super::input_env::ENV;
use super::step_opts::{self, StepOpt, StepOptError, StepOpts};
pub use help::{CPU_BIND_HELP, HELP, MPI_LIST, USAGE};

mod help;
mod table;

pub use table::{SrOpt, table};

/// Where one of a step's standard streams goes (`-i/-o/-e`): Slurm's `all`, `none`, a task
/// id, or a file name pattern.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum IoTarget {
    /// Every task, through srun (the default).
    #[default]
    All,
    /// `/dev/null`.
    None,
    /// Only this task, through srun.
    Task(u32),
    /// A file on the nodes, named by a pattern.
    File(String),
}

impl IoTarget {
    /// The option's value as Slurm reads it: digits are a task id.
    pub fn parse(value: &str) -> Self {
        match value {
            "" | "all" => Self::All,
            "none" => Self::None,
            v if v.bytes().all(|b| b.is_ascii_digit()) => v
                .parse()
                .map_or_else(|_| Self::File(v.to_string()), Self::Task),
            v => Self::File(v.to_string()),
        }
    }

    /// The target for a step of `ntasks` tasks: a task id beyond them names a file, as
    /// Slurm's srun takes it.
    pub fn within(&self, ntasks: u32) -> Self {
        match self {
            Self::Task(t) if *t >= ntasks => Self::File(t.to_string()),
            other => other.clone(),
        }
    }

    /// Whether srun shows what `task` sends on this stream (with a file or `none` only the
    /// task's failure to open it arrives).
    pub fn shows(&self, task: u32) -> bool {
        match self {
            Self::Task(t) => *t == task,
            Self::All | Self::None | Self::File(_) => true,
        }
    }
}

/// Everything srun was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SrunOpts {
    /// The job (or step) options.
    pub job: JobOpts,
    /// `-l`.
    pub label: bool,
    /// `-X`.
    pub disable_status: bool,
    /// `--quit-on-interrupt`.
    pub quit_on_interrupt: bool,
    /// `--het-group`: the components (offsets, ascending) of the heterogeneous job the step
    /// spans.
    pub het_group: Option<Vec<u32>>,
    /// `srun A : B cmd`: the options of the components after the first, in order (a step
    /// across a heterogeneous allocation's components, or srun's own heterogeneous job).
    pub het_components: Vec<SrunOpts>,
    /// `--jobid`, else `SLURM_JOB_ID`: run as a step of this job.
    pub job_id: Option<u32>,
    /// `--overlap`: the step shares its CPUs with every other step of the job.
    pub overlap: bool,
    /// `-w/--nodelist`, expanded: nodes of the allocation the step must use.
    pub nodelist: Vec<String>,
    /// `-i/--input`.
    pub input: IoTarget,
    /// `-o/--output`.
    pub output: IoTarget,
    /// `-e/--error` (`None`: as `-o`).
    pub error: Option<IoTarget>,
    /// `-u/--unbuffered`: output shown as it comes rather than line by line.
    pub unbuffered: bool,
    /// `--cpu-bind`.
    pub cpu_bind: Option<CpuBind>,
    /// `--pty`: task 0 runs on a pseudo-terminal, srun's terminal in raw mode.
    pub pty: bool,
    /// `--slurmd-debug`: how much the node daemons tell about the step on srun's stderr
    /// (0: nothing; at most [`MAX_SLURMD_DEBUG`]).
    pub slurmd_debug: u32,
    /// `--slurmd-debug` asked for more than [`MAX_SLURMD_DEBUG`] (srun says so).
    pub slurmd_debug_capped: bool,
    /// `--compress` of a type Slurm does not know: its line, printed once the options are
    /// read (the copies then go uncompressed).
    pub compress_unknown: Option<String>,
    /// `--resv-ports=<count>`: ports the step asks to reserve for its MPI (see
    /// [`RESV_PORTS_REFUSED`]); `--resv-ports` without a count asks for none.
    pub resv_ports: Option<u32>,
    /// `--bcast`, `--send-libs`, `--bcast-exclude`.
    pub bcast: super::bcast::Bcast,
    /// `-Z/--no-allocate`: run on the `-w` nodes without a job (root and SlurmUser only,
    /// see [`super::no_alloc`]).
    pub no_allocate: bool,
    /// How the step is created, launched and ended.
    pub step: StepOpts,
    /// The command and its arguments.
    pub command: Vec<String>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    Help,
    Usage,
    Version,
    /// `--cpu-bind=help`.
    CpuBindHelp,
    /// `--mpi=list`.
    MpiList,
    /// `--hint=help`.
    HintHelp,
    /// `--mem-bind=help`.
    MemBindHelp,
    Run(Box<SrunOpts>),
}

/// Why srun refuses its arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// Printed as getopt prints it.
    #[error("{0}")]
    Getopt(#[from] GetoptError),
    #[error("{0}")]
    Opt(#[from] OptError),
    #[error("{0}")]
    Step(#[from] StepOptError),
    #[error("No command given to execute.")]
    NoCommand,
    /// `--mpi=` names a plugin this cluster lacks (only `none` is here: tasks are started
    /// without a PMI server, as Slurm's `MpiDefault=none`).
    #[error("invalid MPI type '{0}', --mpi=list for acceptable types")]
    Mpi(String),
    /// `--het-group` that is no list of offsets (Slurm's two lines).
    #[error(
        "_parse_single_range: Invalid range: `{0}'\nsrun: error: Invalid --het-group value: {0}"
    )]
    HetGroup(String),
}

/// Parses `--het-group`: offsets and ranges (`0,2-3`), ascending and each once.
pub fn het_group(value: &str) -> Result<Vec<u32>, ArgsError> {
    let bad = || ArgsError::HetGroup(value.to_string());
    let num = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
            .ok_or_else(bad)
    };
    let mut out = Vec::new();
    for part in value.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi || hi - lo > 1024 {
            return Err(bad());
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

impl SrunOpts {
    fn apply(&mut self, opt: SrOpt, value: Option<String>) -> Result<(), ArgsError> {
        match opt {
            SrOpt::Job(o) => self.job.apply(o, value)?,
            SrOpt::Label => self.label = true,
            SrOpt::DisableStatus => self.disable_status = true,
            SrOpt::QuitOnInterrupt => self.quit_on_interrupt = true,
            SrOpt::JobId => {
                self.job_id = Some(values::positive(&value.unwrap_or_default(), "--jobid")?);
            }
            SrOpt::Overlap => self.overlap = true,
            SrOpt::HetGroup => self.het_group = Some(het_group(&value.unwrap_or_default())?),
            SrOpt::NodeList => {
                self.nodelist = sluice_vocab::hostlist::expand(&value.unwrap_or_default())
                    .map_err(|_| OptError::NodeList)?;
            }
            SrOpt::Input => self.input = IoTarget::parse(&value.unwrap_or_default()),
            SrOpt::Output => self.output = IoTarget::parse(&value.unwrap_or_default()),
            SrOpt::Error => self.error = Some(IoTarget::parse(&value.unwrap_or_default())),
            SrOpt::Unbuffered => self.unbuffered = true,
            SrOpt::Pty => self.pty = true,
            SrOpt::NoAllocate => self.no_allocate = true,
            SrOpt::Bcast => self.bcast.dest = Some(value.unwrap_or_default()),
            SrOpt::BcastExclude => {
                let v = value.unwrap_or_default();
                self.bcast.exclude = Some(v.split(',').map(String::from).collect());
            }
            SrOpt::Compress => match super::bcast::compression(value.as_deref()) {
                Ok(on) => {
                    self.bcast.compress = on;
                    self.compress_unknown = None;
                }
                Err(line) => {
                    self.bcast.compress = false;
                    self.compress_unknown = Some(line);
                }
            },
            SrOpt::SendLibs => {
                let v = value.as_deref();
                self.bcast.send_libs =
                    super::bcast::send_libs(v).ok_or_else(|| OptError::InvalidValue {
                        option: "send-libs",
                        value: v.unwrap_or_default().to_string(),
                    })?;
            }
            SrOpt::ResvPorts => {
                self.resv_ports = match value.as_deref() {
                    None | Some("") => None,
                    Some(v) => Some(values::positive(v, "--resv-ports")?),
                };
            }
            SrOpt::SlurmdDebug => {
                let asked = debug_level(&value.unwrap_or_default());
                self.slurmd_debug_capped = asked.is_none_or(|l| l > MAX_SLURMD_DEBUG);
                self.slurmd_debug = asked.unwrap_or(MAX_SLURMD_DEBUG).min(MAX_SLURMD_DEBUG);
            }
            SrOpt::Step(o) => self.step.apply(o, value)?,
            SrOpt::CpuBind => {
                let bind = CpuBind::parse(&value.unwrap_or_default()).map_err(OptError::from)?;
                self.cpu_bind = Some(bind);
            }
            // Checked in `parse` (a refusal of its own, not an option value error).
            SrOpt::Mpi => {}
            SrOpt::Help | SrOpt::Usage | SrOpt::Version => {}
        }
        Ok(())
    }

    /// Where stderr goes: `-e`, else with stdout (as srun sends it to the `-o` file).
    pub fn stderr_target(&self) -> &IoTarget {
        self.error.as_ref().unwrap_or(&self.output)
    }
}

/// Parses srun's arguments: environment first, then the command line, then the command.
///
/// `A cmd1 : B cmd2` (or `A : B cmd`): a heterogeneous step (or allocation), each component
/// with its options and its command; as Slurm's srun, a component without a command runs the
/// next one's, and `:` always separates components (it is never one of a command's words).
pub fn parse(args: &[String], environ: &[(String, String)]) -> Result<Invocation, ArgsError> {
    let mut comps: Vec<Vec<(SrOpt, Option<String>)>> = Vec::new();
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut rest = args.to_vec();
    loop {
        let parsed = getopt::parse(&table(), &rest, Mode::StopAtOperand)?;
        if let Some(special) = special(&parsed.opts) {
            return Ok(special);
        }
        comps.push(parsed.opts);
        let mut operands = parsed.operands;
        match operands
            .iter()
            .position(|w| w == crate::jobspec::het::SEPARATOR)
        {
            Some(at) => {
                rest = operands.split_off(at + 1);
                operands.pop();
                commands.push(operands);
            }
            None => {
                commands.push(operands);
                break;
            }
        }
    }
    // Slurm's `_copy_args`: a component without a command takes the next given one.
    let mut next: Option<Vec<String>> = None;
    for command in commands.iter_mut().rev() {
        match (&next, command.is_empty()) {
            (Some(n), true) => command.clone_from(n),
            (_, false) => next = Some(command.clone()),
            (None, true) => return Err(ArgsError::NoCommand),
        }
    }
    let all = crate::jobspec::het::component_options(&comps, |o| propagation_id(*o));
    let mut built = Vec::with_capacity(all.len());
    for (list, command) in all.into_iter().zip(commands) {
        let mut opts = parse_component(list, environ)?;
        opts.command = command;
        built.push(opts);
    }
    let mut built = built.into_iter();
    let Some(mut opts) = built.next() else {
        return Err(ArgsError::NoCommand);
    };
    opts.het_components = built.collect();
    Ok(Invocation::Run(Box::new(opts)))
}

/// The option `o` stands for in Slurm's list of the options a heterogeneous job's component
/// passes on to the following ones ([`crate::jobspec::het::propagated`]): the job options,
/// and srun's own `-l`, `-u`, `-i/-o/-e`, `-K`, `-I`, `-Z`, `--prolog` and `--epilog`.
fn propagation_id(o: SrOpt) -> Option<Opt> {
    match o {
        SrOpt::Job(j) => Some(j),
        SrOpt::Label => Some(Opt::Other("label")),
        SrOpt::Unbuffered => Some(Opt::Other("unbuffered")),
        SrOpt::NoAllocate => Some(Opt::Other("no-allocate")),
        SrOpt::Input => Some(Opt::Input),
        SrOpt::Output => Some(Opt::Output),
        SrOpt::Error => Some(Opt::Error),
        SrOpt::Step(StepOpt::KillOnBadExit) => Some(Opt::Other("kill-on-bad-exit")),
        SrOpt::Step(StepOpt::Immediate) => Some(Opt::Other("immediate")),
        SrOpt::Step(StepOpt::Prolog) => Some(Opt::Other("prolog")),
        SrOpt::Step(StepOpt::Epilog) => Some(Opt::Other("epilog")),
        _ => None,
    }
}

/// What srun prints instead of running anything (help, usage, version, `list`s), if any of
/// `opts` asks for it.
fn special(opts: &[(SrOpt, Option<String>)]) -> Option<Invocation> {
    for (opt, value) in opts {
        match opt {
            SrOpt::Help => return Some(Invocation::Help),
            SrOpt::CpuBind if value.as_deref() == Some("help") => {
                return Some(Invocation::CpuBindHelp);
            }
            SrOpt::Mpi if value.as_deref() == Some("list") => return Some(Invocation::MpiList),
            SrOpt::Job(Opt::Hint) if value.as_deref() == Some("help") => {
                return Some(Invocation::HintHelp);
            }
            SrOpt::Job(Opt::MemBind) if value.as_deref() == Some("help") => {
                return Some(Invocation::MemBindHelp);
            }
            SrOpt::Usage => return Some(Invocation::Usage),
            SrOpt::Version => return Some(Invocation::Version),
            _ => {}
        }
    }
    None
}

/// One component's options: the environment's, then `list` (the options passed on from the
/// components before it, then its own).
fn parse_component(
    list: Vec<(SrOpt, Option<String>)>,
    environ: &[(String, String)],
) -> Result<SrunOpts, ArgsError> {
    let parsed = getopt::Parsed {
        opts: list,
        operands: Vec::new(),
    };
    let mut opts = SrunOpts::default();
    if let Some((_, id)) = environ.iter().find(|(k, _)| k == "SLURM_JOB_ID") {
        opts.job_id = id.trim().parse().ok();
    }
    let from_env: Vec<_> = env_options(ENV, environ)
        .into_iter()
        .chain(env_options(step_opts::ENV, environ))
        .collect();
    let env_ids: Vec<Opt> = from_env.iter().filter_map(|(o, _)| job_opt(*o)).collect();
    for (opt, value) in from_env {
        check_mpi(opt, value.as_deref())?;
        opts.apply(opt, value)?;
    }
    // --ntasks-per-node on the command line outweighs a task count from the environment
    // (the batch script's SLURM_NTASKS): the step then has that many tasks per node.
    let given = |o: Opt| parsed.opts.iter().any(|(id, _)| *id == SrOpt::Job(o));
    if given(Opt::NtasksPerNode) && !given(Opt::Ntasks) {
        opts.job.ntasks = None;
    }
    // `SLURM_DISTRIBUTION` as sbatch and salloc leave it (`plane` with its size apart).
    let var = |name: &str| {
        environ
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if let Some(d) = Distribution::from_env(var("SLURM_DISTRIBUTION"), var("SLURM_DIST_PLANESIZE"))
    {
        opts.job.distribution = Some(d);
    }
    let cli_ids: Vec<Opt> = parsed
        .opts
        .iter()
        .filter_map(|(o, _)| job_opt(*o))
        .collect();
    let bind_type = parsed
        .opts
        .iter()
        .any(|(o, v)| *o == SrOpt::CpuBind && names_a_binding(v.as_deref().unwrap_or_default()));
    for (opt, value) in parsed.opts {
        check_mpi(opt, value.as_deref())?;
        opts.apply(opt, value)?;
    }
    opts.job.settle_memory(cli_ids.clone(), env_ids)?;
    if let Some(effect) = opts.job.settle_hint(&cli_ids, bind_type) {
        // The hint's binding, keeping a `verbose` given with --cpu-bind.
        let verbose = opts.cpu_bind.as_ref().is_some_and(|b| b.verbose);
        let words = format!("{},{}", if verbose { "v" } else { "q" }, effect.cpu_bind);
        opts.cpu_bind = Some(CpuBind::parse(&words).map_err(OptError::from)?);
    } else if opts.job.topo.ntasks_per_core.is_some() && !bind_type {
        // Seen on Slurm 22.05: `srun --ntasks-per-core=2` binds its tasks to cores.
        let verbose = opts.cpu_bind.as_ref().is_some_and(|b| b.verbose);
        let words = if verbose { "v,cores" } else { "q,cores" };
        opts.cpu_bind = Some(CpuBind::parse(words).map_err(OptError::from)?);
    }
    Ok(opts)
}

/// `--resv-ports`: Slurm reserves ports for a step only from `MpiParams=ports=<range>`, which
/// Sluice does not read (no cluster here has a port range). Seen on Slurm 22.05 without it:
/// `srun --resv-ports true` runs, the task has no `SLURM_STEP_RESV_PORTS`; `srun
/// --resv-ports=2 true` gets its allocation, then fails with `Unable to create step for job
/// N: ` and these words (exit 1).
pub const RESV_PORTS_REFUSED: &str = "Requires more ports than can be reserved";

/// The most `--slurmd-debug` adds to the step daemons' level, as in Slurm's srun.
pub const MAX_SLURMD_DEBUG: u32 = 4;

/// What srun says when `--slurmd-debug` asks for more (or for a level it cannot read: Slurm's
/// srun takes that as the most too, as seen with `--slurmd-debug=bogus`).
pub const SLURMD_DEBUG_CAPPED: &str = "Using srun's max debug increment of 4";

/// A log level as Slurm reads it: a number, or `quiet`, `fatal`, `error`, `info`, `verbose`,
/// `debug`, `debug2`...`debug5`.
fn debug_level(value: &str) -> Option<u32> {
    if let Ok(n) = value.trim().parse::<u32>() {
        return Some(n);
    }
    let words = [
        "quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4",
        "debug5",
    ];
    let lower = value.trim().to_ascii_lowercase();
    words
        .iter()
        .position(|w| *w == lower)
        .and_then(|p| u32::try_from(p).ok())
}

/// Whether a `--cpu-bind` value names a binding type (not only `verbose`/`quiet`): one that
/// takes `--hint`'s place.
fn names_a_binding(value: &str) -> bool {
    value.split(',').any(|w| {
        !matches!(
            w.to_ascii_lowercase().as_str(),
            "q" | "quiet" | "v" | "verbose"
        )
    })
}

/// The shared job option `o` stands for, if any.
fn job_opt(o: SrOpt) -> Option<Opt> {
    match o {
        SrOpt::Job(j) => Some(j),
        _ => None,
    }
}

/// `--mpi=` (and `SLURM_MPI_TYPE`): only `none` exists here.
fn check_mpi(opt: SrOpt, value: Option<&str>) -> Result<(), ArgsError> {
    match (opt, value) {
        (SrOpt::Mpi, Some(v)) if !v.eq_ignore_ascii_case("none") => {
            Err(ArgsError::Mpi(v.to_string()))
        }
        _ => Ok(()),
    }
}

/// The options of an srun run of `args` (words split at whitespace, no environment): what
/// the other modules' tests start from.
#[cfg(test)]
pub(crate) fn run_opts(args: &str) -> SrunOpts {
    let words: Vec<String> = args.split_whitespace().map(String::from).collect();
    match parse(&words, &[]).unwrap() {
        Invocation::Run(o) => *o,
        other => panic!("expected a run, got {other:?}"),
    }
}

#[cfg(test)]
mod tests;
