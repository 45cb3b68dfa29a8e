//! srun's options by name: [`SrOpt`] and the table getopt reads them from.

use crate::getopt::{HasArg, OptSpec};
use crate::jobspec::{COMMON, Opt, catalog, map_table};
use crate::srun::step_opts::StepOpt;

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
    /// One of the step options ([`crate::srun::step_opts`]).
    Step(StepOpt),
    Help,
    Usage,
    Version,
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
