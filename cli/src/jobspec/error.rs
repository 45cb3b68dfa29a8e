//! [`OptError`]: a bad job option value, worded as Slurm words it.

use super::values;

/// A bad option value, worded as Slurm words it (after `prog: error: `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptError {
    /// `--bbf` names a file that cannot be read.
    #[error("Invalid --bbf specification")]
    InvalidBbf,
    /// Not a positive whole number.
    #[error("Invalid numeric value \"{value}\" for {option}.")]
    InvalidNumeric { value: String, option: &'static str },
    /// A number beyond what Slurm stores.
    #[error("Numeric argument ({value}) too large for {option}.")]
    TooLarge { value: i64, option: &'static str },
    /// One side of `-N` is not a count.
    #[error("\"{0}\" is not a valid node count")]
    NodeCount(String),
    /// `-N min-max` with `max < min`.
    #[error("Maximum node count {max} is less than minimum node count {min}")]
    NodeRange { min: u32, max: u32 },
    /// `--mem` is not a size.
    #[error("Invalid --mem specification")]
    Mem,
    /// `--mem-per-cpu` is not a size.
    #[error("Invalid --mem-per-cpu specification")]
    MemPerCpu,
    /// A socket, core or thread count (`-B`, `--sockets-per-node`, ...) that is not one.
    #[error("Invalid --{0} specification")]
    Spec(&'static str),
    /// `--propagate` names a limit Slurm does not know.
    #[error("--propagate={0} is not valid.")]
    Propagate(String),
    /// `--uid` from a user other than root.
    #[error("--uid only permitted by root user")]
    UidNotRoot,
    /// `--uid` names no user.
    #[error("Invalid --uid specification")]
    Uid,
    /// `--gid` from a user other than root.
    #[error("--gid only permitted by root user")]
    GidNotRoot,
    /// `--gid` names no group.
    #[error("Invalid --gid specification")]
    Gid,
    /// `--tmp` is not a size.
    #[error("Invalid --tmp specification")]
    Tmp,
    /// `--mem` and `--mem-per-cpu` both on the command line (Slurm's fatal error).
    #[error("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")]
    MemExclusive,
    /// Both memory variables in the environment (Slurm's fatal error).
    #[error("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.")]
    MemEnvExclusive,
    /// `-t` is not a time.
    #[error("Invalid --time specification")]
    Time,
    /// `--time-min` is not a time.
    #[error("Invalid --time-min specification")]
    TimeMin,
    /// `--exclusive=` with a value Slurm does not know.
    #[error("Invalid --exclusive specification")]
    Exclusive,
    /// `--exclusive=user|mcs|topo`: Slurm's, but not Sluice's.
    #[error("--exclusive={0} is not supported")]
    ExclusiveUnsupported(String),
    /// `--wait-all-nodes` not starting with a digit.
    #[error("Invalid --wait-all-nodes argument: {0}")]
    WaitAllNodes(String),

    /// `-w/--nodelist` is not a hostlist.
    #[error("Invalid --nodelist specification")]
    NodeList,
    /// `-F/--nodefile` (or `-w` naming a file) cannot be read: Slurm's two lines.
    #[error(
        "slurm_allocate_resources error opening file {path}, {reason}\nInvalid --nodefile node file"
    )]
    NodeFile { path: String, reason: String },
    /// `--export-file` cannot be read.
    #[error("Could not open user environment file {0}")]
    ExportFile(String),
    /// `-x/--exclude` is not a hostlist.
    #[error("Invalid --exclude specification")]
    Exclude,
    /// `--begin` is not one of Slurm's time forms.
    #[error("Invalid --begin specification")]
    Begin,
    /// `--nice` is not a number or beyond Slurm's range.
    #[error("Invalid --nice value: {0}")]
    Nice(String),
    /// `--nice` beyond Slurm's range.
    #[error("Nice value out of range (+/- 2147483645). Value ignored")]
    NiceRange,
    /// `--open-mode` is neither `append` nor `truncate`.
    #[error("Invalid --open-mode argument: {0}. Ignored")]
    OpenMode(String),
    /// `--mail-type` names an event Slurm does not know.
    #[error("--mail-type={0} invalid")]
    MailType(String),
    /// `--deadline` is not one of Slurm's time forms.
    #[error("Invalid --deadline specification")]
    Deadline,
    /// `--kill-on-invalid-dep` is neither `yes` nor `no`.
    #[error("Invalid --kill-on-invalid-dep specification")]
    KillOnInvalidDep,
    /// `--priority` below zero.
    #[error("Priority must be >= 0")]
    PriorityNegative,
    /// `--priority` at or above Slurm's `NO_VAL`.
    #[error("Priority must be < {}", values::PRIORITY_NO_VAL)]
    PriorityTooLarge,
    /// `--signal` is not `[{R|B}:]sig[@time]`.
    #[error("Invalid --signal specification")]
    Signal,
    /// An option Slurm's controller refuses on this cluster: printed as the command's
    /// submission failure (`Batch job submission failed: ...`).
    #[error("{0}")]
    Refused(&'static str),
    /// A Slurm option Sluice does not implement.
    #[error("--{0} is not supported")]
    Unsupported(&'static str),
    /// A value Slurm's command checks and refuses.
    #[error("Invalid --{option} specification: {value}")]
    InvalidValue { option: &'static str, value: String },
    /// `--cpu-bind` is not one of Slurm's bindings.
    #[error(transparent)]
    CpuBind(#[from] sluice_vocab::cpu_bind::CpuBindError),
    /// `-m/--distribution` is not one of Slurm's layouts.
    #[error(transparent)]
    Distribution(#[from] sluice_vocab::distribution::DistributionError),
    /// `--hint` names an unknown hint.
    #[error(transparent)]
    Hint(#[from] sluice_vocab::hint::HintError),
    /// `--mem-bind` is not one of Slurm's policies.
    #[error(transparent)]
    MemBind(#[from] sluice_vocab::mem_bind::MemBindError),
    /// `--cpu-freq` is not a frequency, range or allowed governor.
    #[error(transparent)]
    CpuFreq(#[from] sluice_vocab::cpu_freq::CpuFreqError),
    /// `--acctg-freq` has an item Slurm does not read.
    #[error(transparent)]
    AcctgFreq(#[from] sluice_vocab::acctg_freq::AcctgFreqError),
}

impl OptError {
    /// Whether Slurm refuses this at submission (the command prints its submission failure
    /// line) rather than while reading its options.
    pub fn is_submit_refusal(&self) -> bool {
        matches!(self, Self::Refused(_))
    }

    /// Whether Slurm's command stops with `fatal:` rather than `error:` for this.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::MemExclusive | Self::MemEnvExclusive)
    }
}
