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
mod error;
pub mod export;
pub mod files;
pub mod het;
mod opts;
pub mod request;
pub mod signals;
pub mod values;

use std::io::Write;
use std::path::PathBuf;

use sluice_wire::proto::JobShare;

use crate::getopt::OptSpec;
use values::NodeCount;

pub use error::OptError;
pub use export::Export;
pub use opts::{BATCH_ONLY, COMMON, CONTAINER_NEEDS_INTERACTIVE_STEP, Opt};
pub use request::Submitter;

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
mod tests;
