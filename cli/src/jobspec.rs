//! The job options `sbatch` and `srun` share, checked as Slurm checks them, and their
//! translation into a [`SubmitJobRequest`].
//!
//! * [`clusters`]: `-M a,b`: the cluster that would start the job soonest.
//! * [`values`]: counts, node ranges, memory sizes, time limits, flag environment variables.
//! * [`export`]: the `--export` selection.
//! * [`files`]: the options that name files read at submission (`--export-file`, `-F`).
//! * [`het`]: heterogeneous jobs: components separated by `:` or `#SBATCH hetjob`, and the
//!   options one component passes on to the next.
//! * [`request`]: who submits and the request sent to the controller.
//! * [`signals`]: signal names, numbers and descriptions.
//! * [`catalog`]: the rest of Slurm's job options: refused as Slurm refuses them here, ignored
//!   as Slurm ignores them here (with the reason), or refused by name as not implemented.

pub mod catalog;
pub mod clusters;
pub mod export;
pub mod files;
pub mod het;
pub mod request;
pub mod signals;
pub mod values;

use std::io::Write;
use std::path::PathBuf;

use sluice_wire::proto::JobShare;

use crate::getopt::{HasArg, OptSpec};
use values::NodeCount;

pub use export::Export;
pub use request::Submitter;

/// An option shared by the job-submitting commands (named after its long option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    Account,
    Bb,
    Bbf,
    AcctgFreq,
    Array,
    Batch,
    Begin,
    Chdir,
    ClusterConstraint,
    Clusters,
    Comment,
    Constraint,
    Container,
    Contiguous,
    CoresPerSocket,
    CpuFreq,
    CpusPerTask,
    Deadline,
    Dependency,
    Distribution,
    Error,
    Exclusive,
    Exclude,
    ExtraNodeInfo,
    Export,
    ExportFile,
    GetUserEnv,
    Gid,
    Hint,
    Hold,
    Input,
    JobName,
    KillOnInvalidDep,
    MailType,
    MailUser,
    Mem,
    MemBind,
    MemPerCpu,
    MinCpus,
    Nice,
    NoKill,
    NoRequeue,
    NodeFile,
    NodeList,
    Nodes,
    Ntasks,
    NtasksPerCore,
    NtasksPerNode,
    NtasksPerSocket,
    OpenMode,
    Output,
    Overcommit,
    OverSubscribe,
    Partition,
    Priority,
    Qos,
    Propagate,
    Quiet,
    Reboot,
    Requeue,
    Signal,
    SocketsPerNode,
    SpreadJob,
    ThreadsPerCore,
    Time,
    TimeMin,
    Tmp,
    Uid,
    UseMinNodes,
    Verbose,
    WaitAllNodes,
    Wckey,
    /// An option of [`catalog`], by its long name.
    Other(&'static str),
}

const fn spec(long: &'static str, short: Option<char>, arg: HasArg, id: Opt) -> OptSpec<Opt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// salloc's refusal of `--container` (Slurm 22.05's words): its command would run in the
/// container only through an interactive step, and Sluice, like Slurm's default
/// `LaunchParameters`, runs salloc's command on the login host.
pub const CONTAINER_NEEDS_INTERACTIVE_STEP: &str =
    "--container requires LaunchParameters=use_interactive_step";

/// Options `sbatch`, `srun` and `salloc` take, all implemented: each reaches the job (the
/// request to the controller) with Slurm's meaning. The rest of Slurm's job options are in
/// [`catalog`].
pub const COMMON: &[OptSpec<Opt>] = &[
    spec("account", Some('A'), HasArg::Required, Opt::Account),
    spec("bb", None, HasArg::Required, Opt::Bb),
    spec("bbf", None, HasArg::Required, Opt::Bbf),
    spec("begin", Some('b'), HasArg::Required, Opt::Begin),
    spec("chdir", Some('D'), HasArg::Required, Opt::Chdir),
    spec("cluster", None, HasArg::Required, Opt::Clusters),
    spec(
        "cluster-constraint",
        None,
        HasArg::Required,
        Opt::ClusterConstraint,
    ),
    spec("clusters", Some('M'), HasArg::Required, Opt::Clusters),
    spec("comment", None, HasArg::Required, Opt::Comment),
    spec(
        "distribution",
        Some('m'),
        HasArg::Required,
        Opt::Distribution,
    ),
    spec("hint", None, HasArg::Required, Opt::Hint),
    spec("acctg-freq", None, HasArg::Required, Opt::AcctgFreq),
    spec("cpu-freq", None, HasArg::Required, Opt::CpuFreq),
    spec("mem-bind", None, HasArg::Required, Opt::MemBind),
    spec("constraint", Some('C'), HasArg::Required, Opt::Constraint),
    spec("container", None, HasArg::Required, Opt::Container),
    spec("contiguous", None, HasArg::No, Opt::Contiguous),
    spec(
        "cores-per-socket",
        None,
        HasArg::Required,
        Opt::CoresPerSocket,
    ),
    spec(
        "cpus-per-task",
        Some('c'),
        HasArg::Required,
        Opt::CpusPerTask,
    ),
    spec("deadline", None, HasArg::Required, Opt::Deadline),
    spec("dependency", Some('d'), HasArg::Required, Opt::Dependency),
    spec("exclude", Some('x'), HasArg::Required, Opt::Exclude),
    spec("exclusive", None, HasArg::Optional, Opt::Exclusive),
    spec("export", None, HasArg::Required, Opt::Export),
    spec(
        "extra-node-info",
        Some('B'),
        HasArg::Required,
        Opt::ExtraNodeInfo,
    ),
    spec("gid", None, HasArg::Required, Opt::Gid),
    spec("hold", Some('H'), HasArg::No, Opt::Hold),
    spec("job-name", Some('J'), HasArg::Required, Opt::JobName),
    spec("mail-type", None, HasArg::Required, Opt::MailType),
    spec("mail-user", None, HasArg::Required, Opt::MailUser),
    spec("mem", None, HasArg::Required, Opt::Mem),
    spec("mem-per-cpu", None, HasArg::Required, Opt::MemPerCpu),
    spec("mincpus", None, HasArg::Required, Opt::MinCpus),
    spec("nice", None, HasArg::Optional, Opt::Nice),
    spec("no-kill", Some('k'), HasArg::Optional, Opt::NoKill),
    spec("nodes", Some('N'), HasArg::Required, Opt::Nodes),
    spec("ntasks", Some('n'), HasArg::Required, Opt::Ntasks),
    spec(
        "ntasks-per-core",
        None,
        HasArg::Required,
        Opt::NtasksPerCore,
    ),
    spec(
        "ntasks-per-socket",
        None,
        HasArg::Required,
        Opt::NtasksPerSocket,
    ),
    spec("overcommit", Some('O'), HasArg::No, Opt::Overcommit),
    spec("oversubscribe", Some('s'), HasArg::No, Opt::OverSubscribe),
    spec("partition", Some('p'), HasArg::Required, Opt::Partition),
    spec("priority", None, HasArg::Required, Opt::Priority),
    spec("quiet", Some('Q'), HasArg::No, Opt::Quiet),
    spec("reboot", None, HasArg::No, Opt::Reboot),
    spec(
        "sockets-per-node",
        None,
        HasArg::Required,
        Opt::SocketsPerNode,
    ),
    spec("spread-job", None, HasArg::No, Opt::SpreadJob),
    spec("tasks", None, HasArg::Required, Opt::Ntasks),
    spec(
        "threads-per-core",
        None,
        HasArg::Required,
        Opt::ThreadsPerCore,
    ),
    spec("time", Some('t'), HasArg::Required, Opt::Time),
    spec("time-min", None, HasArg::Required, Opt::TimeMin),
    spec("tmp", None, HasArg::Required, Opt::Tmp),
    spec("uid", None, HasArg::Required, Opt::Uid),
    spec("use-min-nodes", None, HasArg::No, Opt::UseMinNodes),
    spec("verbose", Some('v'), HasArg::No, Opt::Verbose),
    spec("wckey", None, HasArg::Required, Opt::Wckey),
];

/// Options only `sbatch` takes in this form, all implemented (srun and salloc have their own
/// `-w`, `--ntasks-per-node`, `-o/-e`, `--open-mode` and `--signal` entries).
pub const BATCH_ONLY: &[OptSpec<Opt>] = &[
    spec("array", Some('a'), HasArg::Required, Opt::Array),
    spec("batch", None, HasArg::Required, Opt::Batch),
    spec("error", Some('e'), HasArg::Required, Opt::Error),
    spec("export-file", None, HasArg::Required, Opt::ExportFile),
    spec("get-user-env", None, HasArg::Optional, Opt::GetUserEnv),
    spec("input", Some('i'), HasArg::Required, Opt::Input),
    spec(
        "kill-on-invalid-dep",
        None,
        HasArg::Required,
        Opt::KillOnInvalidDep,
    ),
    spec("no-requeue", None, HasArg::No, Opt::NoRequeue),
    spec("nodefile", Some('F'), HasArg::Required, Opt::NodeFile),
    spec("nodelist", Some('w'), HasArg::Required, Opt::NodeList),
    spec(
        "ntasks-per-node",
        None,
        HasArg::Required,
        Opt::NtasksPerNode,
    ),
    spec("open-mode", None, HasArg::Required, Opt::OpenMode),
    spec("output", Some('o'), HasArg::Required, Opt::Output),
    spec("propagate", None, HasArg::Optional, Opt::Propagate),
    spec("requeue", None, HasArg::No, Opt::Requeue),
    spec("signal", None, HasArg::Required, Opt::Signal),
    spec("wait-all-nodes", None, HasArg::Required, Opt::WaitAllNodes),
];

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

/// The shared job options as the user gave them (directives, environment, command line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobOpts {
    /// `-A`.
    pub account: Option<String>,
    /// `-a/--array`, passed through for the controller to parse.
    pub array: Option<String>,
    /// sbatch `--batch`: features the batch host should have, passed through (the controller
    /// checks they are within `--constraint`).
    pub batch: Option<String>,
    /// `-b/--begin`, as unix seconds (resolved when given).
    pub begin: Option<i64>,
    /// `-D`.
    pub chdir: Option<String>,
    /// `-M`.
    pub clusters: Option<String>,
    /// `--cluster-constraint=[!]feature,...`, passed through (the federation checks it).
    pub cluster_constraint: Option<String>,
    /// `--comment`.
    pub comment: Option<String>,
    /// `--bb`: a burst buffer request, kept with the job and shown by `scontrol show job`.
    /// Sluice has no burst buffer plugin, so, as in a Slurm configured without one, nothing
    /// stages data in or out for it.
    pub burst_buffer: Option<String>,
    /// `--reboot`: recorded (`Reboot=1`). Without a `RebootProgram` (Sluice reads none) a
    /// Slurm controller starts the job on its nodes as they are, and so does Sluice's.
    pub reboot: bool,
    /// `--container`: an OCI bundle, recorded (`Container=`) and given to the job as
    /// `SLURM_CONTAINER`; without `oci.conf` (Sluice has no container runtime support) Slurm
    /// runs the job on the node directly, as Sluice does. salloc refuses it (see
    /// [`CONTAINER_NEEDS_INTERACTIVE_STEP`]).
    pub container: Option<String>,
    /// `-C`.
    pub constraint: Option<String>,
    /// `--contiguous`: the nodes must be consecutive in the node table.
    pub contiguous: bool,
    /// `-B`, `--sockets-per-node`, `--cores-per-socket`, `--threads-per-core`,
    /// `--ntasks-per-core`, `--ntasks-per-socket`.
    pub topo: values::Topo,
    /// `-c`.
    pub cpus_per_task: Option<u32>,
    /// `--deadline`, as unix seconds.
    pub deadline: Option<i64>,
    /// `-d`, passed through.
    pub dependency: Option<String>,
    /// `-m/--distribution`: how a step's tasks are laid out (srun), carried to the job's
    /// steps in `SLURM_DISTRIBUTION` (sbatch, salloc).
    pub distribution: Option<sluice_vocab::distribution::Distribution>,
    /// `--hint`: a binding and threads-per-core choice (see [`JobOpts::settle_hint`]).
    pub hint: Option<sluice_vocab::hint::Hint>,
    /// `--mem-bind` as given (checked): the tasks' NUMA memory policy.
    pub mem_bind: Option<String>,
    /// `--cpu-freq`: the tasks' CPU frequency or governor.
    pub cpu_freq: Option<sluice_vocab::cpu_freq::CpuFreq>,
    /// `--acctg-freq` as given (checked): how often the steps' usage is sampled.
    pub acctg_freq: Option<String>,
    /// `-e` pattern.
    pub error: Option<String>,
    /// `-s/--oversubscribe` or `--exclusive` (the last one given wins, as in Slurm).
    pub share: Option<JobShare>,
    /// `-O/--overcommit`: one task's CPUs per node, the tasks sharing them
    /// (`SLURM_OVERCOMMIT=1` in the job's environment).
    pub overcommit: bool,
    /// `--use-min-nodes`: with `-N min-max`, the minimum rather than as many as are free.
    pub use_min_nodes: bool,
    /// `--spread-job`: as many nodes as are free (one per task), the tasks spread evenly.
    pub spread_job: bool,
    /// `--wait-all-nodes=0|1` (sbatch, salloc): whether the script or salloc's command waits
    /// for every node to boot.
    pub wait_all_nodes: Option<bool>,
    /// `--get-user-env[=timeout][mode]` (sbatch): the batch host loads the user's login
    /// environment under the job's (`SLURM_GET_USER_ENV=1`). As in Slurm 22.05, whose node
    /// daemon waits up to 120 s in login mode whatever was given, the timeout and mode are
    /// read and have no effect.
    pub get_user_env: bool,
    /// `-x/--exclude`, expanded.
    pub exclude: Vec<String>,
    /// `--export` as written.
    pub export: Option<String>,
    /// `--export-file`: the variables read from the file (or descriptor), added to the
    /// submitting environment before the `--export` selection, as Slurm does.
    pub export_file: Vec<(String, String)>,
    /// sbatch `-i/--input`: the batch script's stdin pattern (`/dev/null` when not given).
    pub input: Option<String>,
    /// `--gid` (root only): the group the job runs as.
    pub gid: Option<u32>,
    /// `-H`.
    pub hold: bool,
    /// `-k/--no-kill` (`--no-kill=off` turns it off again).
    pub no_kill: bool,
    /// `-J`.
    pub job_name: Option<String>,
    /// `--kill-on-invalid-dep=yes|no`.
    pub kill_invalid_dep: Option<bool>,
    /// `--mail-type`, checked, as written.
    pub mail_type: Option<String>,
    /// `--mail-user`.
    pub mail_user: Option<String>,
    /// `--mem` in megabytes (per node).
    pub mem_mb: Option<u64>,
    /// `--mem-per-cpu` in megabytes (see [`JobOpts::settle_memory`] for how it and `--mem`
    /// exclude each other).
    pub mem_per_cpu_mb: Option<u64>,
    /// `--mincpus`.
    pub mincpus: Option<u32>,
    /// `--nice[=N]` (100 without a value).
    pub nice: Option<i32>,
    /// `-w/--nodelist`, expanded.
    pub nodelist: Vec<String>,
    /// `-N`.
    pub nodes: Option<NodeCount>,
    /// `-n`.
    pub ntasks: Option<u32>,
    /// `--ntasks-per-node`.
    pub ntasks_per_node: Option<u32>,
    /// `--open-mode`: `Some(true)` append, `Some(false)` truncate.
    pub open_append: Option<bool>,
    /// `-o` pattern.
    pub output: Option<String>,
    /// `-p`.
    pub partition: Option<String>,
    /// `--priority` (`TOP` is Slurm's `NO_VAL - 1`).
    pub priority: Option<u32>,
    /// `--qos` (`-q` in sbatch and salloc).
    pub qos: Option<String>,
    /// `--propagate[=limits]`: the limits the user asked to carry (`None`: every one, as
    /// `PropagateResourceLimits=ALL`, Slurm's default, carries them without the request).
    pub propagate: Option<Vec<&'static str>>,
    /// `-Q`.
    pub quiet: bool,
    /// `--requeue` (true) / `--no-requeue` (false).
    pub requeue: Option<bool>,
    /// `--signal=[{R|B}:]sig[@time]`, checked.
    pub signal: Option<values::JobSignal>,
    /// `-t` as written (checked; the controller parses it).
    pub time: Option<String>,
    /// `--time-min` as written (checked; the controller parses it).
    pub time_min: Option<String>,
    /// `--tmp` in megabytes: temporary disk (`TmpDisk`) each node must have.
    pub tmp_mb: Option<u64>,
    /// `--uid` (root only): the user the job is submitted for and runs as.
    pub uid: Option<request::RunAs>,
    /// `-v` count.
    pub verbose: u8,
    /// `--wckey`.
    pub wckey: Option<String>,
    /// Lines the command prints (after `prog: error: `) about options it drops as Slurm's
    /// does (`-S` without `AllowSpecResourcesUsage`), once each.
    pub notes: Vec<&'static str>,
}

impl JobOpts {
    /// Applies one option; later calls override earlier ones, as in Slurm.
    pub fn apply(&mut self, opt: Opt, value: Option<String>) -> Result<(), OptError> {
        // `--exclusive` alone differs from `--exclusive=`: keep what was given.
        let given = value.clone();
        let v = value.unwrap_or_default();
        match opt {
            Opt::Account => self.account = Some(v),
            Opt::Array => self.array = Some(v),
            Opt::Batch => self.batch = Some(v),
            Opt::Begin => self.begin = Some(values::begin(&v)?),
            Opt::Chdir => self.chdir = Some(v),
            Opt::Clusters => self.clusters = Some(v),
            Opt::ClusterConstraint => self.cluster_constraint = Some(v),
            Opt::Comment => self.comment = Some(v),
            Opt::Bb => self.burst_buffer = Some(v),
            // The file must be readable; its contents go only to a burst buffer plugin, and
            // with none configured Slurm keeps nothing of them (seen on Slurm 22.05: the job
            // shows no `BurstBuffer=`), so they are dropped here too.
            Opt::Bbf => {
                std::fs::read(&v).map_err(|_| OptError::InvalidBbf)?;
            }
            Opt::Container => self.container = Some(v),
            Opt::Reboot => self.reboot = true,
            Opt::Constraint => self.constraint = Some(v),
            Opt::Contiguous => self.contiguous = true,
            Opt::CoresPerSocket => {
                self.topo.cores_per_socket = values::layout_count(&v, "cores-per-socket")?;
            }
            Opt::ExtraNodeInfo => self.topo.extra_node_info(&v)?,
            Opt::NtasksPerCore => {
                self.topo.ntasks_per_core = Some(values::positive(&v, "--ntasks-per-core")?);
            }
            Opt::NtasksPerSocket => {
                self.topo.ntasks_per_socket = Some(values::positive(&v, "--ntasks-per-socket")?);
            }
            Opt::SocketsPerNode => {
                self.topo.sockets_per_node = values::layout_count(&v, "sockets-per-node")?;
            }
            Opt::ThreadsPerCore => {
                self.topo.threads_per_core = values::layout_count(&v, "threads-per-core")?;
            }
            Opt::CpusPerTask => self.cpus_per_task = Some(values::positive(&v, "--cpus-per-task")?),
            Opt::Deadline => {
                self.deadline = Some(values::begin(&v).map_err(|_| OptError::Deadline)?);
            }
            Opt::Dependency => self.dependency = Some(v),
            Opt::Distribution => {
                self.distribution = Some(sluice_vocab::distribution::Distribution::parse(&v)?);
            }
            Opt::Hint => self.hint = Some(sluice_vocab::hint::Hint::parse(&v)?),
            Opt::MemBind => {
                sluice_vocab::mem_bind::MemBind::parse(&v)?;
                self.mem_bind = Some(v);
            }
            Opt::CpuFreq => self.cpu_freq = Some(sluice_vocab::cpu_freq::CpuFreq::parse(&v)?),
            Opt::AcctgFreq => {
                sluice_vocab::acctg_freq::AcctgFreq::parse(&v)?;
                self.acctg_freq = Some(v);
            }
            Opt::Error => self.error = Some(v),
            Opt::Exclusive => self.share = Some(values::exclusive(given.as_deref())?),
            Opt::Exclude => self.exclude = values::hostlist(&v).ok_or(OptError::Exclude)?,
            Opt::Export => self.export = Some(v),
            Opt::ExportFile => self.export_file = files::export_file(&v)?,
            Opt::Input => self.input = Some(v),
            Opt::NodeFile => self.nodelist = files::node_file(&v)?,
            Opt::Gid => self.gid = Some(request::gid_of(&v)?),
            Opt::GetUserEnv => self.get_user_env = true,
            Opt::Hold => self.hold = true,
            Opt::JobName => self.job_name = Some(v),
            Opt::KillOnInvalidDep => self.kill_invalid_dep = Some(values::yes_no(&v)?),
            Opt::MailType => {
                sluice_vocab::mail_type::MailTypes::parse(&v)
                    .ok_or_else(|| OptError::MailType(v.clone()))?;
                self.mail_type = Some(v);
            }
            Opt::MailUser => self.mail_user = Some(v),
            Opt::Mem => self.mem_mb = Some(values::mem_mb(&v)?),
            Opt::MemPerCpu => {
                self.mem_per_cpu_mb = Some(values::mem_mb(&v).map_err(|_| OptError::MemPerCpu)?);
            }
            Opt::MinCpus => self.mincpus = Some(values::positive(&v, "--mincpus")?),
            Opt::Nice => self.nice = Some(values::nice(given.as_deref())?),
            Opt::NoKill => {
                self.no_kill = !given.is_some_and(|v| v.eq_ignore_ascii_case("off"));
            }
            Opt::NoRequeue => self.requeue = Some(false),
            // Slurm reads a `-w` value with a `/` in it as a node file.
            Opt::NodeList if v.contains('/') => self.nodelist = files::node_file(&v)?,
            Opt::NodeList => self.nodelist = values::hostlist(&v).ok_or(OptError::NodeList)?,
            Opt::Nodes => self.nodes = Some(values::node_count(&v)?),
            Opt::Ntasks => self.ntasks = Some(values::positive(&v, "--ntasks")?),
            Opt::NtasksPerNode => {
                self.ntasks_per_node = Some(values::positive(&v, "--ntasks-per-node")?);
            }
            Opt::OpenMode => self.open_append = Some(values::open_mode(&v)?),
            Opt::Output => self.output = Some(v),
            Opt::Overcommit => self.overcommit = true,
            Opt::OverSubscribe => self.share = Some(JobShare::Oversubscribe),
            Opt::SpreadJob => self.spread_job = true,
            Opt::UseMinNodes => self.use_min_nodes = true,
            Opt::WaitAllNodes => self.wait_all_nodes = Some(values::wait_all_nodes(&v)?),
            Opt::Partition => self.partition = Some(v),
            Opt::Priority => self.priority = Some(values::priority(&v)?),
            Opt::Qos => self.qos = Some(v),
            Opt::Propagate => {
                self.propagate = Some(
                    sluice_wire::rlimits::parse(given.as_deref())
                        .ok_or_else(|| OptError::Propagate(v.clone()))?,
                );
            }
            Opt::Quiet => self.quiet = true,
            Opt::Requeue => self.requeue = Some(true),
            Opt::Signal => self.signal = Some(values::JobSignal::parse(&v)?),
            Opt::Time => self.time = Some(values::time_limit(&v)?),
            Opt::TimeMin => {
                self.time_min = Some(values::time_limit(&v).map_err(|_| OptError::TimeMin)?);
            }
            Opt::Tmp => self.tmp_mb = Some(values::mem_mb(&v).map_err(|_| OptError::Tmp)?),
            Opt::Uid => self.uid = Some(request::RunAs::of(&v)?),
            Opt::Verbose => self.verbose = self.verbose.saturating_add(1),
            Opt::Wckey => self.wckey = Some(v),
            Opt::Other(long) => {
                if let Some(note) = catalog::apply(long, given.as_deref())?
                    && !self.notes.contains(&note)
                {
                    self.notes.push(note);
                }
            }
        }
        Ok(())
    }

    /// Slurm's rules for `--mem` and `--mem-per-cpu` together, once every source was applied
    /// (`cli`: the options given on the command line, `env`: those set by input environment
    /// variables). Both on the command line is fatal; one there drops the other from the
    /// directives and environment; else both from the environment is fatal; else (directives,
    /// or one from each) `--mem-per-cpu` is the one the job asks, as Slurm's request carries
    /// it over a per-node size.
    pub fn settle_memory(
        &mut self,
        cli: impl IntoIterator<Item = Opt>,
        env: impl IntoIterator<Item = Opt>,
    ) -> Result<(), OptError> {
        let kinds = |opts: &mut dyn Iterator<Item = Opt>| {
            let (mut node, mut cpu) = (false, false);
            for o in opts {
                node |= o == Opt::Mem;
                cpu |= o == Opt::MemPerCpu;
            }
            (node, cpu)
        };
        match kinds(&mut cli.into_iter()) {
            (true, true) => return Err(OptError::MemExclusive),
            (true, false) => self.mem_per_cpu_mb = None,
            (false, true) => self.mem_mb = None,
            (false, false) => {
                if kinds(&mut env.into_iter()) == (true, true) {
                    return Err(OptError::MemEnvExclusive);
                }
                if self.mem_per_cpu_mb.is_some() {
                    self.mem_mb = None;
                }
            }
        }
        Ok(())
    }

    /// The `--export` selection (ALL when not given).
    pub fn export(&self) -> Export {
        self.export
            .as_deref()
            .map(Export::parse)
            .unwrap_or_default()
    }
}

/// An input environment variable standing for an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvOpt<O> {
    /// The variable's name.
    pub var: &'static str,
    /// The option it sets.
    pub id: O,
    /// Whether the option is a flag (then the value only switches it on, see
    /// [`values::env_flag_on`]).
    pub flag: bool,
}

/// The options set by the variables of `table` found in `environ`, in table order.
pub fn env_options<O: Copy>(
    table: &[EnvOpt<O>],
    environ: &[(String, String)],
) -> Vec<(O, Option<String>)> {
    let mut out = Vec::new();
    for entry in table {
        let Some((_, value)) = environ.iter().find(|(k, _)| k == entry.var) else {
            continue;
        };
        if entry.flag {
            if values::env_flag_on(value) {
                out.push((entry.id, None));
            }
        } else {
            out.push((entry.id, Some(value.clone())));
        }
    }
    out
}

/// A shared option table with its ids wrapped in a command's own option type.
pub fn map_table<O>(table: &[OptSpec<Opt>], wrap: impl Fn(Opt) -> O) -> Vec<OptSpec<O>> {
    table
        .iter()
        .map(|s| OptSpec {
            long: s.long,
            short: s.short,
            arg: s.arg,
            id: wrap(s.id),
        })
        .collect()
}

/// Writes `msg` as Slurm prints errors: every line prefixed with `prog: error: `.
pub fn print_error(err: &mut dyn Write, prog: &str, msg: &str) {
    for line in msg.lines() {
        let _ = writeln!(err, "{prog}: error: {line}");
    }
}

/// The configuration file `SLURM_CONF` names in `environ`, else Slurm's default.
pub fn conf_path(environ: &[(String, String)]) -> PathBuf {
    environ
        .iter()
        .find(|(k, v)| k == "SLURM_CONF" && !v.is_empty())
        .map_or_else(
            || PathBuf::from(crate::slurm_conf::DEFAULT_SLURM_CONF),
            |(_, v)| PathBuf::from(v),
        )
}

/// The process environment as name/value pairs (values that are not UTF-8 are converted
/// lossily), with `SLURM_UMASK` (the umask in effect, as four octal digits) added unless it is
/// set, as Slurm's submitting commands do: the job's files are created with it.
pub fn process_environ() -> Vec<(String, String)> {
    let mut environ: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    if !environ.iter().any(|(k, _)| k == UMASK_VAR)
        && let Some(mask) = std::fs::read_to_string("/proc/self/status")
            .ok()
            .as_deref()
            .and_then(umask_of_status)
    {
        environ.push((UMASK_VAR.to_string(), mask));
    }
    environ
}

/// The variable carrying the submitter's umask to the job.
const UMASK_VAR: &str = "SLURM_UMASK";

/// The `Umask:` of a `/proc/<pid>/status` text (`0022`).
fn umask_of_status(status: &str) -> Option<String> {
    let value = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))?
        .trim();
    u32::from_str_radix(value, 8)
        .ok()
        .filter(|m| *m <= 0o777)
        .map(|m| format!("{m:04o}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_umask_is_read_from_proc_status() {
        assert_eq!(
            umask_of_status("Name:\tsbatch\nUmask:\t0027\nState:\tR\n").as_deref(),
            Some("0027")
        );
        assert_eq!(umask_of_status("Name:\tx\n"), None);
        assert_eq!(umask_of_status("Umask:\tzz\n"), None);
        let environ = process_environ();
        let mask = environ.iter().find(|(k, _)| k == UMASK_VAR);
        assert!(mask.is_some_and(|(_, v)| v.len() == 4), "{mask:?}");
    }

    #[test]
    fn later_values_override_earlier_ones() {
        let mut o = JobOpts::default();
        o.apply(Opt::Partition, Some("a".into())).unwrap();
        o.apply(Opt::Partition, Some("b".into())).unwrap();
        o.apply(Opt::Verbose, None).unwrap();
        o.apply(Opt::Verbose, None).unwrap();
        o.apply(Opt::Requeue, None).unwrap();
        o.apply(Opt::NoRequeue, None).unwrap();
        assert_eq!(o.partition.as_deref(), Some("b"));
        assert_eq!(o.verbose, 2);
        assert_eq!(o.requeue, Some(false));
    }

    #[test]
    fn bad_values_carry_slurm_messages() {
        let mut o = JobOpts::default();
        let e = o.apply(Opt::CpusPerTask, Some("two".into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid numeric value \"two\" for --cpus-per-task."
        );
        assert_eq!(o.apply(Opt::Time, Some("soon".into())), Err(OptError::Time));
        assert_eq!(o.apply(Opt::Mem, Some("lots".into())), Err(OptError::Mem));
        assert_eq!(o, JobOpts::default(), "nothing is set by a bad value");
    }

    #[test]
    fn memory_per_cpu_tmp_and_contiguous_parse() {
        let mut o = JobOpts::default();
        o.apply(Opt::MemPerCpu, Some("2G".into())).unwrap();
        o.apply(Opt::Tmp, Some("500".into())).unwrap();
        o.apply(Opt::Contiguous, None).unwrap();
        assert_eq!(
            (o.mem_per_cpu_mb, o.tmp_mb, o.contiguous),
            (Some(2048), Some(500), true)
        );
        let mut bad = JobOpts::default();
        for (opt, text) in [
            (Opt::MemPerCpu, "Invalid --mem-per-cpu specification"),
            (Opt::Tmp, "Invalid --tmp specification"),
        ] {
            let e = bad.apply(opt, Some("lots".into())).unwrap_err();
            assert_eq!(e.to_string(), text);
            assert!(!e.is_fatal());
        }
        assert_eq!(bad, JobOpts::default());
    }

    #[test]
    fn socket_core_and_thread_options_parse_as_slurm_reads_them() {
        let mut o = JobOpts::default();
        o.apply(Opt::ExtraNodeInfo, Some("2:*:1".into())).unwrap();
        assert_eq!(
            (
                o.topo.sockets_per_node,
                o.topo.cores_per_socket,
                o.topo.threads_per_core
            ),
            (Some(2), None, Some(1))
        );
        // A later option overrides one field; a range counts by its minimum.
        o.apply(Opt::CoresPerSocket, Some("4-8".into())).unwrap();
        o.apply(Opt::NtasksPerCore, Some("1".into())).unwrap();
        o.apply(Opt::NtasksPerSocket, Some("3".into())).unwrap();
        assert_eq!(o.topo.cores_per_socket, Some(4));
        assert_eq!(
            o.topo_vars(),
            [
                ("SLURM_NTASKS_PER_CORE", 1),
                ("SLURM_NTASKS_PER_SOCKET", 3),
                ("SLURM_THREADS_PER_CORE", 1)
            ]
        );
        let mut bad = JobOpts::default();
        for (opt, v, text) in [
            (
                Opt::ExtraNodeInfo,
                "1:2:3:4",
                "Invalid --extra-node-info specification",
            ),
            (
                Opt::ExtraNodeInfo,
                "x",
                "Invalid --extra-node-info specification",
            ),
            (
                Opt::SocketsPerNode,
                "0",
                "Invalid --sockets-per-node specification",
            ),
            (
                Opt::NtasksPerCore,
                "two",
                "Invalid numeric value \"two\" for --ntasks-per-core.",
            ),
        ] {
            assert_eq!(
                bad.apply(opt, Some(v.into())).unwrap_err().to_string(),
                text
            );
        }
        assert_eq!(bad, JobOpts::default());
    }

    #[test]
    fn memory_per_node_and_per_cpu_exclude_each_other_as_in_slurm() {
        let both = || JobOpts {
            mem_mb: Some(100),
            mem_per_cpu_mb: Some(10),
            ..JobOpts::default()
        };
        // Both on the command line: fatal.
        let e = both()
            .settle_memory([Opt::Mem, Opt::MemPerCpu], [])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."
        );
        assert!(e.is_fatal());
        // One on the command line drops the other (from a directive or the environment).
        let mut o = both();
        o.settle_memory([Opt::Mem], [Opt::MemPerCpu]).unwrap();
        assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (Some(100), None));
        let mut o = both();
        o.settle_memory([Opt::MemPerCpu, Opt::Partition], [Opt::Mem])
            .unwrap();
        assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (None, Some(10)));
        // Both from the environment: fatal.
        let e = both()
            .settle_memory([Opt::Partition], [Opt::MemPerCpu, Opt::Mem])
            .unwrap_err();
        assert_eq!(e, OptError::MemEnvExclusive);
        assert!(e.is_fatal());
        // Both from directives: memory per CPU is what the job asks.
        let mut o = both();
        o.settle_memory([], []).unwrap();
        assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (None, Some(10)));
        // One alone stays.
        let mut o = JobOpts {
            mem_mb: Some(5),
            ..JobOpts::default()
        };
        o.settle_memory([], [Opt::Mem]).unwrap();
        assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (Some(5), None));
    }

    #[test]
    fn environment_flags_and_values() {
        const TABLE: &[EnvOpt<Opt>] = &[
            EnvOpt {
                var: "X_HOLD",
                id: Opt::Hold,
                flag: true,
            },
            EnvOpt {
                var: "X_PART",
                id: Opt::Partition,
                flag: false,
            },
            EnvOpt {
                var: "X_REQ",
                id: Opt::Requeue,
                flag: true,
            },
        ];
        let environ = vec![
            ("X_PART".to_string(), "debug".to_string()),
            ("X_HOLD".to_string(), "yes".to_string()),
            ("X_REQ".to_string(), "no".to_string()),
        ];
        assert_eq!(
            env_options(TABLE, &environ),
            vec![(Opt::Hold, None), (Opt::Partition, Some("debug".into()))]
        );
    }
}
