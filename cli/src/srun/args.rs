//! srun's options: the shared job options plus `-l`, `-X`, `--quit-on-interrupt`, `--jobid`,
//! the step options `--overlap`, `-w/--nodelist`, `--ntasks-per-node` and `--cpu-bind`, the
//! I/O options `-i/-o/-e/-u/--open-mode`, and the `SLURM_*` input environment variables srun
//! honours.

use crate::getopt::{self, GetoptError, HasArg, Mode, OptSpec};
use crate::jobspec::{COMMON, JobOpts, Opt, OptError, catalog, env_options, map_table, values};
use sluice_vocab::cpu_bind::CpuBind;
use sluice_vocab::distribution::Distribution;

pub use super::input_env::ENV;
use super::step_opts::{self, StepOpt, StepOptError, StepOpts};

/// An srun option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrOpt {
    /// A job option shared with sbatch.
    Job(Opt),
    /// `--het-group`: the components of a heterogeneous job the step spans.
    HetGroup,
    Label,
    DisableStatus,
    QuitOnInterrupt,
    JobId,
    Overlap,
    NodeList,
    Input,
    Output,
    Error,
    Unbuffered,
    CpuBind,
    SlurmdDebug,
    ResvPorts,
    Bcast,
    BcastExclude,
    SendLibs,
    Compress,
    Mpi,
    Pty,
    NoAllocate,
    /// One of the step options ([`step_opts`]).
    Step(StepOpt),
    Help,
    Usage,
    Version,
}

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

/// srun's option table: the implemented job options ([`COMMON`]), srun's own, and the rest of
/// Slurm 22.05's srun options from [`catalog`] (refused or ignored as documented there).
pub fn table() -> Vec<OptSpec<SrOpt>> {
    let mut t = map_table(COMMON, SrOpt::Job);
    let others: Vec<_> = catalog::specs(catalog::SRUN).collect();
    t.extend(map_table(&others, SrOpt::Job));
    let own = |long, short, arg, id| OptSpec {
        long,
        short,
        arg,
        id,
    };
    t.extend([
        own("label", Some('l'), HasArg::No, SrOpt::Label),
        own(
            "disable-status",
            Some('X'),
            HasArg::No,
            SrOpt::DisableStatus,
        ),
        own(
            "quit-on-interrupt",
            Some('q'),
            HasArg::No,
            SrOpt::QuitOnInterrupt,
        ),
        own("jobid", None, HasArg::Required, SrOpt::JobId),
        own("qos", None, HasArg::Required, SrOpt::Job(Opt::Qos)),
        own("overlap", None, HasArg::No, SrOpt::Overlap),
        own("het-group", None, HasArg::Required, SrOpt::HetGroup),
        own("nodelist", Some('w'), HasArg::Required, SrOpt::NodeList),
        own("input", Some('i'), HasArg::Required, SrOpt::Input),
        own("output", Some('o'), HasArg::Required, SrOpt::Output),
        own("error", Some('e'), HasArg::Required, SrOpt::Error),
        own("unbuffered", Some('u'), HasArg::No, SrOpt::Unbuffered),
        own("pty", None, HasArg::No, SrOpt::Pty),
        own("no-allocate", Some('Z'), HasArg::No, SrOpt::NoAllocate),
        own("cpu-bind", None, HasArg::Required, SrOpt::CpuBind),
        own("cpu_bind", None, HasArg::Required, SrOpt::CpuBind),
        own("mpi", None, HasArg::Required, SrOpt::Mpi),
        own("resv-ports", None, HasArg::Optional, SrOpt::ResvPorts),
        own("bcast", None, HasArg::Optional, SrOpt::Bcast),
        own("bcast-exclude", None, HasArg::Required, SrOpt::BcastExclude),
        own("send-libs", None, HasArg::Optional, SrOpt::SendLibs),
        own("compress", None, HasArg::Optional, SrOpt::Compress),
        own("slurmd-debug", None, HasArg::Required, SrOpt::SlurmdDebug),
        own(
            "propagate",
            None,
            HasArg::Optional,
            SrOpt::Job(Opt::Propagate),
        ),
        own(
            "kill-on-invalid-dep",
            None,
            HasArg::Required,
            SrOpt::Job(Opt::KillOnInvalidDep),
        ),
        own(
            "open-mode",
            None,
            HasArg::Required,
            SrOpt::Job(Opt::OpenMode),
        ),
        own(
            "ntasks-per-node",
            None,
            HasArg::Required,
            SrOpt::Job(Opt::NtasksPerNode),
        ),
        own("exact", None, HasArg::No, SrOpt::Step(StepOpt::Exact)),
        own("whole", None, HasArg::No, SrOpt::Step(StepOpt::Whole)),
        own(
            "multi-prog",
            None,
            HasArg::No,
            SrOpt::Step(StepOpt::MultiProg),
        ),
        own(
            "kill-on-bad-exit",
            Some('K'),
            HasArg::Optional,
            SrOpt::Step(StepOpt::KillOnBadExit),
        ),
        own(
            "immediate",
            Some('I'),
            HasArg::Optional,
            SrOpt::Step(StepOpt::Immediate),
        ),
        own(
            "relative",
            Some('r'),
            HasArg::Required,
            SrOpt::Step(StepOpt::Relative),
        ),
        own(
            "preserve-env",
            Some('E'),
            HasArg::No,
            SrOpt::Step(StepOpt::PreserveEnv),
        ),
        own(
            "prolog",
            None,
            HasArg::Required,
            SrOpt::Step(StepOpt::Prolog),
        ),
        own(
            "epilog",
            None,
            HasArg::Required,
            SrOpt::Step(StepOpt::Epilog),
        ),
        own(
            "task-prolog",
            None,
            HasArg::Required,
            SrOpt::Step(StepOpt::TaskProlog),
        ),
        own(
            "task-epilog",
            None,
            HasArg::Required,
            SrOpt::Step(StepOpt::TaskEpilog),
        ),
        own(
            "test-only",
            None,
            HasArg::No,
            SrOpt::Step(StepOpt::TestOnly),
        ),
        own(
            "wait",
            Some('W'),
            HasArg::Required,
            SrOpt::Step(StepOpt::Wait),
        ),
        own(
            "threads",
            Some('T'),
            HasArg::Required,
            SrOpt::Step(StepOpt::Threads),
        ),
        own(
            "launch-cmd",
            None,
            HasArg::No,
            SrOpt::Step(StepOpt::LaunchCmd),
        ),
        own("help", Some('h'), HasArg::No, SrOpt::Help),
        own("usage", None, HasArg::No, SrOpt::Usage),
        own("version", Some('V'), HasArg::No, SrOpt::Version),
    ]);
    t
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

/// What `--mpi=list` prints: the MPI plugin types this cluster has.
pub const MPI_LIST: &str = "MPI plugin types are...\n\tnone\n";

/// srun's usage line.
pub const USAGE: &str = "Usage: srun [-N nnodes] [-n ntasks] [-c ncpus] [-p partition] [-t minutes]
            [-J jobname] [-D path] [--mem=MB] [-C list] [-l] [-X]
            [--export[=names]] [--jobid=id] [--overlap] [-w hosts...]
            [-i in] [-o out] [-e err] [-u] [--open-mode=append|truncate]
            [--ntasks-per-node=n] [--cpu-bind=type] [--mpi=type]
            executable [args...]
";

/// `--cpu-bind=help`.
pub const CPU_BIND_HELP: &str = "CPU bind options:
    --cpu-bind=         Bind tasks to CPUs
        q[uiet]         bind quietly before each task runs (the default)
        v[erbose]       report each task's binding on its stderr before it runs
        no[ne]          do not bind
        rank            bind each task to the CPU of its local rank
        map_cpu:<list>  bind local task i to CPU list[i] (ids, decimal or 0x hex; id*count repeats)
        mask_cpu:<list> bind local task i to the CPUs of mask list[i] (hex)
        sockets         bind each task to its socket
        cores           bind each task to its own cores (-c per task)
        threads         bind each task to its own hardware threads (-c per task)
        ldoms           bind each task to its NUMA locality domain
        help            show this help
";

/// srun's help text.
pub const HELP: &str = "Usage: srun [OPTIONS(0)...] executable(0) [args(0)...]

Parallel run options:
  -A, --account=name          charge job to specified account
      --comment=name          arbitrary comment
  -b, --begin=time            defer job until HH:MM MM/DD/YY
  -c, --cpus-per-task=ncpus   number of cpus required per task
      --cpu-bind=             Bind tasks to CPUs
                              ([{quiet|verbose},]{none|rank|map_cpu:<list>|
                              mask_cpu:<list>|cores|threads|sockets|ldoms})
  -C, --constraint=list       specify a list of constraints
      --contiguous            demand a contiguous range of nodes
  -d, --dependency=type:jobid[:time] defer job until condition on jobid is satisfied
  -D, --chdir=path            change remote current working directory
      --deadline=time         remove the job if no ending is possible before
                              this deadline (start > (deadline - time[-min]))
      --exclusive             allocate nodes in exclusive mode
  -x, --exclude=hosts...      exclude a specific list of hosts
  -e, --error=err             location of stderr redirection
  -E, --preserve-env          env vars for node and task counts override
                              command-line flags
      --epilog=program        run \"program\" after launching job step
      --exact                 use only the resources requested for the step
                              (the default)
      --export=env_vars|NONE  environment passed to the tasks
  -H, --hold                  submit job in held state
  -i, --input=in              location of stdin redirection
  -I, --immediate[=secs]      exit if resources not available in \"secs\"
  -J, --job-name=jobname      name of job
      --jobid=id              run under already allocated job
      --kill-on-invalid-dep=<yes|no> kill job if it has an invalid dependency
  -k, --no-kill[=off]         do not kill job on node failure
  -K, --kill-on-bad-exit      kill the job if any task terminates with a
                              non-zero exit code
  -l, --label                 prepend task number to lines of stdout/err
      --mem=MB                minimum amount of real memory
      --mem-per-cpu=MB        maximum amount of real memory per allocated
                              cpu required by the job.
                              --mem >= --mem-per-cpu if --mem is specified.
      --mincpus=n             minimum number of logical processors per node
      --mpi=type              type of MPI being used (only none here)
      --multi-prog            if set the program name specified is the
                              configuration specification for multiple programs
      --nice[=value]          decrease scheduling priority by value
      --priority=value        set the priority of the job to value
      --propagate[=rlimits]   propagate all [or specific list of] rlimits
  -n, --ntasks=ntasks         number of tasks to run
  -N, --nodes=N               number of nodes on which to run (N = min[-max])
      --ntasks-per-node=n     number of tasks to invoke on each node
  -o, --output=out            location of stdout redirection
      --open-mode={append|truncate} append to or truncate output files
      --overlap               Allow other steps to overlap this step
  -p, --partition=partition   partition requested
      --prolog=program        run \"program\" before launching job step
      --priority=value        set the priority of the job to value
  -q, --quit-on-interrupt     quit on single Ctrl-C
      --qos=qos               quality of service
  -Q, --quiet                 quiet mode (suppress informational messages)
  -r, --relative=n            run job step relative to node n of allocation
  -s, --oversubscribe         over subscribe resources with other jobs
  -t, --time=minutes          time limit
  -T, --threads=threads       set srun launch fanout
      --task-epilog=program   run \"program\" after launching task
      --task-prolog=program   run \"program\" before launching task
      --test-only             print expected start of the job and do not run it
      --time-min=minutes      minimum time limit (if distinct)
      --tmp=MB                minimum amount of temporary disk
  -u, --unbuffered            do not line-buffer stdout/err
      --pty                   run task zero in pseudo terminal
  -v, --verbose               verbose mode (multiple -v's increase verbosity)
      --wckey=wckey           wckey to run job under
  -w, --nodelist=hosts...     request a specific list of hosts
  -W, --wait=sec              seconds to wait after first task exits
                              before killing job
      --whole                 use every CPU of the job on the step's nodes
  -X, --disable-status        Disable Ctrl-C status feature
  -Z, --no-allocate           don't allocate nodes (must supply -w)

Consumable resources related options:
  -B --extra-node-info=S[:C[:T]]            Expands to:
       --sockets-per-node=S   number of sockets per node to allocate
       --cores-per-socket=C   number of cores per socket to allocate
       --threads-per-core=T   number of threads per core to allocate
                              each field can be 'min' or wildcard '*'
                              total cpus requested = (N x S x C x T)

      --ntasks-per-core=n     number of tasks to invoke on each core
      --ntasks-per-socket=n   number of tasks to invoke on each socket

Help options:
  -h, --help                  show this help message
      --usage                 display brief usage message

Other options:
  -V, --version               output version information and exit
";

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
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn run(args: &str, env: &[(&str, &str)]) -> Result<SrunOpts, ArgsError> {
        let environ: Vec<(String, String)> = env
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        match parse(&words(args), &environ)? {
            Invocation::Run(o) => Ok(*o),
            other => panic!("expected a run, got {other:?}"),
        }
    }

    #[test]
    fn options_stop_at_the_command() {
        let o = run("-N2 -n 4 -l hostname -n 9", &[]).unwrap();
        assert_eq!(o.job.ntasks, Some(4));
        assert!(o.label);
        assert_eq!(o.command, vec!["hostname", "-n", "9"]);
    }

    #[test]
    fn inside_a_job_the_environment_gives_the_job_and_defaults() {
        let env = [
            ("SLURM_JOB_ID", "77"),
            ("SLURM_NTASKS", "3"),
            ("SLURM_LABELIO", "1"),
        ];
        let o = run("true", &env).unwrap();
        assert_eq!(o.job_id, Some(77));
        assert_eq!(o.job.ntasks, Some(3));
        assert!(o.label);
        let o = run("--jobid=5 -n1 true", &env).unwrap();
        assert_eq!((o.job_id, o.job.ntasks), (Some(5), Some(1)));
    }

    #[test]
    fn sharing_options_and_slurm_exclusive() {
        use sluice_wire::proto::JobShare;
        assert_eq!(run("true", &[]).unwrap().job.share, None);
        let o = run("-s -N1 true", &[]).unwrap();
        assert_eq!(o.job.share, Some(JobShare::Oversubscribe));
        let env = [("SLURM_EXCLUSIVE", "exclusive")];
        assert_eq!(
            run("true", &env).unwrap().job.share,
            Some(JobShare::Exclusive)
        );
        assert_eq!(
            run("--oversubscribe true", &env).unwrap().job.share,
            Some(JobShare::Oversubscribe)
        );
        assert_eq!(
            run("--exclusive=mcs true", &[]).unwrap_err().to_string(),
            "--exclusive=mcs is not supported"
        );
    }

    #[test]
    fn step_options() {
        let o = run("--overlap -w n[1-2],n4 -c2 true", &[]).unwrap();
        assert!(o.overlap);
        assert_eq!(o.nodelist, vec!["n1", "n2", "n4"]);
        assert_eq!(o.job.cpus_per_task, Some(2));
        assert!(run("true", &[("SLURM_OVERLAP", "1")]).unwrap().overlap);
        assert_eq!(
            run("-w n[1- true", &[]).unwrap_err().to_string(),
            "Invalid --nodelist specification"
        );
    }

    #[test]
    fn io_options_and_their_environment() {
        let o = run(
            "--unbuffered --output /p/%j_%t_log.out --error /p/%j_%t_log.err python -u",
            &[],
        )
        .unwrap();
        assert!(o.unbuffered);
        assert_eq!(o.output, IoTarget::File("/p/%j_%t_log.out".into()));
        assert_eq!(
            o.stderr_target(),
            &IoTarget::File("/p/%j_%t_log.err".into())
        );
        assert_eq!(o.command, ["python", "-u"]);
        let o = run("-i0 -o none --open-mode=append true", &[]).unwrap();
        assert_eq!(
            (&o.input, o.stderr_target()),
            (&IoTarget::Task(0), &IoTarget::None)
        );
        assert_eq!(o.job.open_append, Some(true));
        assert!(IoTarget::Task(2).shows(2) && !IoTarget::Task(2).shows(1));
        let env = [
            ("SLURM_STDINMODE", "none"),
            ("SLURM_STDOUTMODE", "out.%t"),
            ("SLURM_STDERRMODE", "1"),
            ("SLURM_UNBUFFEREDIO", "1"),
        ];
        let o = run("true", &env).unwrap();
        assert_eq!(
            (o.input, o.output),
            (IoTarget::None, IoTarget::File("out.%t".into()))
        );
        assert_eq!((o.error, o.unbuffered), (Some(IoTarget::Task(1)), true));
        assert_eq!(run("-i all true", &env).unwrap().input, IoTarget::All);
    }

    #[test]
    fn cpu_bind_help() {
        let words = words("--cpu-bind=help true");
        assert_eq!(parse(&words, &[]), Ok(Invocation::CpuBindHelp));
    }

    #[test]
    fn cpu_bind_and_ntasks_per_node() {
        let o = run("--cpu-bind=q,cores true", &[]).unwrap();
        assert_eq!(
            o.cpu_bind.unwrap().kind,
            sluice_vocab::cpu_bind::BindKind::Cores
        );
        assert!(
            run("true", &[("SLURM_CPU_BIND", "verbose,rank")])
                .unwrap()
                .cpu_bind
                .unwrap()
                .verbose
        );
        assert_eq!(
            run("--cpu-bind=bogus true", &[]).unwrap_err().to_string(),
            "unrecognized --cpu-bind argument \"bogus\""
        );
        let env = [("SLURM_NTASKS", "4"), ("SLURM_JOB_ID", "3")];
        let o = run("--ntasks-per-node=1 true", &env).unwrap();
        assert_eq!((o.job.ntasks, o.job.ntasks_per_node), (None, Some(1)));
        let o = run("-n2 --ntasks-per-node=1 true", &env).unwrap();
        assert_eq!(o.job.ntasks, Some(2));
        let o = run("true", &[("SLURM_NTASKS_PER_NODE", "2")]).unwrap();
        assert_eq!(o.job.ntasks_per_node, Some(2));
    }

    #[test]
    fn step_options_and_their_environment() {
        let o = run(
            "--whole -K -W 5 -I -r 1 -E --prolog /p --epilog none -T 4 --multi-prog conf",
            &[],
        )
        .unwrap();
        assert!(o.step.whole && o.step.multi_prog && o.step.preserve_env);
        assert_eq!(o.step.kill_on_bad_exit, Some(true));
        assert_eq!(
            (o.step.wait, o.step.relative, o.step.threads),
            (Some(5), Some(1), Some(4))
        );
        assert_eq!(o.step.immediate, Some(crate::salloc::args::Immediate::Now));
        assert_eq!(
            (o.step.prolog.as_deref(), o.step.epilog.as_deref()),
            (Some("/p"), Some("none"))
        );
        assert_eq!(o.command, ["conf"]);
        assert!(!run("--whole --exact true", &[]).unwrap().step.whole);
        let o = run(
            "-K0 --immediate=3 --task-prolog tp --task-epilog te true",
            &[],
        )
        .unwrap();
        assert_eq!(o.step.kill_on_bad_exit, Some(false));
        assert_eq!(
            o.step.immediate,
            Some(crate::salloc::args::Immediate::Within(3))
        );
        assert_eq!(
            (o.step.task_prolog.as_deref(), o.step.task_epilog.as_deref()),
            (Some("tp"), Some("te"))
        );
        let env = [
            ("SLURM_KILL_BAD_EXIT", "1"),
            ("SLURM_WAIT", "9"),
            ("SLURM_THREADS", "2"),
            ("SLURM_EXACT", "1"),
            ("SLURM_PROLOG", "/sp"),
            ("SLURM_TASK_EPILOG", "/te"),
        ];
        let o = run("--whole true", &env).unwrap();
        assert!(o.step.whole, "the command line beats SLURM_EXACT");
        assert_eq!(o.step.kill_on_bad_exit, Some(true));
        assert_eq!((o.step.wait, o.step.threads), (Some(9), Some(2)));
        assert_eq!(o.step.prolog.as_deref(), Some("/sp"));
        assert_eq!(o.step.task_epilog.as_deref(), Some("/te"));
        assert_eq!(
            run("-W soon true", &[]).unwrap_err().to_string(),
            "Invalid numeric value \"soon\" for --wait."
        );
        assert_eq!(
            run("--threads=100 true", &[]).unwrap_err().to_string(),
            "Thread value 100 exceeds defined limit 60"
        );
        assert!(run("--test-only true", &[]).unwrap().step.test_only);
        assert!(run("--launch-cmd true", &[]).unwrap().step.launch_cmd);
    }

    /// Every option of Slurm 22.05's srun is in the table: implemented, or in the catalog.
    #[test]
    fn every_slurm_srun_option_is_known() {
        let longs: Vec<&str> = table().iter().map(|s| s.long).collect();
        for long in [
            "accel-bind",
            "bcast",
            "bcast-exclude",
            "compress",
            "cpu-bind",
            "disable-status",
            "epilog",
            "exact",
            "het-group",
            "immediate",
            "input",
            "jobid",
            "kill-on-bad-exit",
            "label",
            "launch-cmd",
            "launcher-opts",
            "mpi",
            "multi-prog",
            "no-allocate",
            "open-mode",
            "overlap",
            "preserve-env",
            "prolog",
            "pty",
            "quit-on-interrupt",
            "relative",
            "resv-ports",
            "send-libs",
            "slurmd-debug",
            "task-epilog",
            "task-prolog",
            "test-only",
            "threads",
            "unbuffered",
            "wait",
            "whole",
        ] {
            assert!(
                longs.contains(&long),
                "--{long} is missing from srun's table"
            );
        }
        assert_eq!(
            run("--accel-bind=g true", &[]).map(|o| o.command),
            Ok(vec!["true".to_string()])
        );
        assert_eq!(
            run("--accel-bind=x true", &[]).unwrap_err().to_string(),
            "Invalid --accel-bind specification: x"
        );
        assert!(run("--launcher-opts=-v true", &[]).is_ok());
    }

    #[test]
    fn refusals() {
        assert_eq!(run("-N 2", &[]), Err(ArgsError::NoCommand));
        assert_eq!(
            run("-n zero true", &[]).unwrap_err().to_string(),
            "Invalid numeric value \"zero\" for --ntasks."
        );
        assert_eq!(
            run("-g true", &[]).unwrap_err().to_string(),
            "invalid option -- 'g'"
        );
        assert_eq!(
            run("--het-group=0,1 true", &[]).unwrap().het_group,
            Some(vec![0, 1])
        );
        assert_eq!(
            run("--het-group=2,0-1 true", &[]).unwrap().het_group,
            Some(vec![0, 1, 2])
        );
        assert_eq!(
            run("--het-group=x true", &[]).unwrap_err().to_string(),
            "_parse_single_range: Invalid range: `x'\nsrun: error: Invalid --het-group value: x"
        );
        assert!(run("-Z -w n1 true", &[]).unwrap().no_allocate);
        assert_eq!(
            run("--mpi=pmi2 true", &[]).unwrap_err().to_string(),
            "invalid MPI type 'pmi2', --mpi=list for acceptable types"
        );
        assert_eq!(
            run("--mpi=none true", &[]).map(|o| o.command),
            Ok(vec!["true".to_string()])
        );
        assert_eq!(
            parse(&["--mpi=list".to_string()], &[]),
            Ok(Invocation::MpiList)
        );
    }

    #[test]
    fn distribution_from_the_command_line_and_the_job() {
        use sluice_vocab::distribution::NodeDist;
        let o = run("-m cyclic:block true", &[]).unwrap();
        let d = o.job.distribution.unwrap();
        assert_eq!(d.nodes, Some(NodeDist::Cyclic));
        assert_eq!(d.env_value(), "cyclic:block");
        let env = [
            ("SLURM_DISTRIBUTION", "plane"),
            ("SLURM_DIST_PLANESIZE", "3"),
        ];
        let o = run("true", &env).unwrap();
        assert_eq!(o.job.distribution.unwrap().nodes, Some(NodeDist::Plane(3)));
        let o = run("--distribution=block true", &env).unwrap();
        assert_eq!(
            o.job.distribution.unwrap().nodes,
            Some(NodeDist::Block),
            "the command line wins"
        );
        assert_eq!(
            run("-m plane true", &[]).unwrap_err().to_string(),
            "Invalid plane size or size not specified"
        );
    }

    #[test]
    fn hints_become_a_binding_unless_an_explicit_option_replaces_them() {
        use sluice_vocab::cpu_bind::BindKind;
        let o = run("--hint=nomultithread true", &[]).unwrap();
        assert_eq!(
            o.cpu_bind.as_ref().map(|b| &b.kind),
            Some(&BindKind::Threads)
        );
        assert_eq!(o.job.topo.threads_per_core, Some(1));
        let o = run("--hint=memory_bound --cpu-bind=verbose true", &[]).unwrap();
        let b = o.cpu_bind.unwrap();
        assert_eq!((b.kind, b.verbose), (BindKind::Cores, true));
        let o = run("--hint=nomultithread --cpu-bind=rank true", &[]).unwrap();
        assert_eq!(o.cpu_bind.unwrap().kind, BindKind::Rank);
        assert_eq!(o.job.hint, None);
        let o = run("--hint=nomultithread --ntasks-per-core=2 true", &[]).unwrap();
        assert_eq!(o.job.topo.threads_per_core, None);
        assert_eq!(
            o.cpu_bind.map(|b| b.kind),
            Some(BindKind::Cores),
            "--ntasks-per-core binds to cores"
        );
        let o = run("true", &[("SLURM_HINT", "compute_bound")]).unwrap();
        assert_eq!(o.cpu_bind.unwrap().kind, BindKind::Cores);
        assert_eq!(parse(&words("--hint=help"), &[]), Ok(Invocation::HintHelp));
        assert_eq!(
            parse(&words("--mem-bind=help"), &[]),
            Ok(Invocation::MemBindHelp)
        );
    }

    #[test]
    fn memory_frequency_and_sampling_options() {
        let o = run(
            "--mem-bind=v,local --cpu-freq=low-high --acctg-freq=task=2 true",
            &[],
        )
        .unwrap();
        assert_eq!(o.job.mem_bind.as_deref(), Some("v,local"));
        assert_eq!(o.job.cpu_freq.unwrap().env_value(), "Low-High");
        assert_eq!(o.job.acctg_freq.as_deref(), Some("task=2"));
        let env = [("SLURM_CPU_FREQ_REQ", "High"), ("SLURM_MEM_BIND", "local")];
        let o = run("true", &env).unwrap();
        assert_eq!(o.job.cpu_freq.unwrap().env_value(), "High");
        assert_eq!(o.job.mem_bind.as_deref(), Some("local"));
        for (bad, words) in [
            (
                "--mem-bind=bogus",
                "unrecognized --mem-bind argument \"bogus\"",
            ),
            ("--cpu-freq=0", "unrecognized --cpu-freq argument \"0\""),
            (
                "--acctg-freq=task=x",
                "Invalid --acctg-freq specification: task=x",
            ),
        ] {
            assert_eq!(
                run(&format!("{bad} true"), &[]).unwrap_err().to_string(),
                words
            );
        }
    }

    #[test]
    fn each_component_has_its_command_or_the_next_ones() {
        let o = run("-n1 -l hostname -s : -n2 date", &[]).unwrap();
        assert_eq!(o.command, words("hostname -s"));
        assert_eq!(o.het_components.len(), 1);
        assert_eq!(o.het_components[0].command, words("date"));
        assert_eq!(o.het_components[0].job.ntasks, Some(2));
        // Slurm's srun: a component without a command runs the next one's.
        let o = run("-n1 : -n2 : -n3 uname -a", &[]).unwrap();
        assert_eq!(o.command, words("uname -a"));
        let later: Vec<_> = o.het_components.iter().map(|c| c.command.clone()).collect();
        assert_eq!(later, vec![words("uname -a"), words("uname -a")]);
        let o = run("-n1 a : -n2 : -n3 b", &[]).unwrap();
        assert_eq!(o.het_components[0].command, words("b"));
        // The last one needs a command.
        assert!(matches!(run("-n1 a : -n2", &[]), Err(ArgsError::NoCommand)));
        assert!(matches!(run("-n1 a :", &[]), Err(ArgsError::NoCommand)));
    }

    #[test]
    fn output_options_pass_on_to_later_components_as_slurms_guide_lists() {
        let o = run("-l -u -o out.%t -K : -n1 : -e err -i none true", &[]).unwrap();
        let [b, c] = &o.het_components[..] else {
            panic!("three components");
        };
        for later in [b, c] {
            assert!(later.label && later.unbuffered, "{later:?}");
            assert_eq!(later.output, IoTarget::File("out.%t".into()));
            assert_eq!(later.step.kill_on_bad_exit, Some(true));
        }
        assert_eq!(c.error, Some(IoTarget::File("err".into())));
        assert_eq!(c.input, IoTarget::None);
        assert_eq!(
            (&o.error, &o.input),
            (&None, &IoTarget::All),
            "not backwards"
        );
        // A later component's own -l applies from it on, not before.
        let o = run("-n1 a : -l -n1 b", &[]).unwrap();
        assert!(!o.label && o.het_components[0].label);
    }
}
