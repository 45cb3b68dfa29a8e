//! sbatch's options: the shared job options plus `--wrap`, `--parsable`, `--test-only`, and
//! the input environment variables (`SBATCH_*`) that stand for options.

use crate::getopt::{self, GetoptError, HasArg, Mode, OptSpec};
use crate::jobspec::{
    BATCH_ONLY, COMMON, EnvOpt, JobOpts, Opt, OptError, catalog, env_options, map_table,
};

/// An sbatch option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SbOpt {
    /// A job option shared with srun.
    Job(Opt),
    Wrap,
    Parsable,
    TestOnly,
    Wait,
    /// `--ignore-pbs`: `#PBS` lines are not read.
    IgnorePbs,
    Help,
    Usage,
    Version,
}

/// sbatch's option table: the implemented job options ([`COMMON`], [`BATCH_ONLY`]), sbatch's
/// own (`--wrap`, `--parsable`, `--test-only`, help), and the rest of Slurm 22.05's sbatch
/// options from [`catalog`] (refused or ignored as documented there).
pub fn table() -> Vec<OptSpec<SbOpt>> {
    let mut t = map_table(COMMON, SbOpt::Job);
    t.extend(map_table(BATCH_ONLY, SbOpt::Job));
    let others: Vec<_> = catalog::specs(catalog::SBATCH).collect();
    t.extend(map_table(&others, SbOpt::Job));
    let own = |long, short, arg, id| OptSpec {
        long,
        short,
        arg,
        id,
    };
    t.extend([
        own("qos", Some('q'), HasArg::Required, SbOpt::Job(Opt::Qos)),
        own("wrap", None, HasArg::Required, SbOpt::Wrap),
        own("parsable", None, HasArg::Optional, SbOpt::Parsable),
        own("test-only", None, HasArg::No, SbOpt::TestOnly),
        own("wait", Some('W'), HasArg::No, SbOpt::Wait),
        own("ignore-pbs", None, HasArg::No, SbOpt::IgnorePbs),
        own("help", Some('h'), HasArg::No, SbOpt::Help),
        own("usage", Some('u'), HasArg::No, SbOpt::Usage),
        own("version", Some('V'), HasArg::No, SbOpt::Version),
        own("workdir", None, HasArg::Required, SbOpt::Job(Opt::Chdir)),
    ]);
    t
}

/// The input environment variables sbatch honours, in the order Slurm applies them.
pub const ENV: &[EnvOpt<Opt>] = &[
    EnvOpt {
        var: "SBATCH_ACCOUNT",
        id: Opt::Account,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_ARRAY_INX",
        id: Opt::Array,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_CLUSTER_CONSTRAINT",
        id: Opt::ClusterConstraint,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_CLUSTERS",
        id: Opt::Clusters,
        flag: false,
    },
    EnvOpt {
        var: "SLURM_CLUSTERS",
        id: Opt::Clusters,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_CONSTRAINT",
        id: Opt::Constraint,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_DEBUG",
        id: Opt::Verbose,
        flag: true,
    },
    EnvOpt {
        var: "SBATCH_ERROR",
        id: Opt::Error,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_EXCLUSIVE",
        id: Opt::Exclusive,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_EXPORT",
        id: Opt::Export,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_HOLD",
        id: Opt::Hold,
        flag: true,
    },
    EnvOpt {
        var: "SBATCH_JOB_NAME",
        id: Opt::JobName,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_MEM_PER_CPU",
        id: Opt::MemPerCpu,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_MEM_PER_NODE",
        id: Opt::Mem,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_NO_KILL",
        id: Opt::NoKill,
        flag: true,
    },
    EnvOpt {
        var: "SBATCH_NO_REQUEUE",
        id: Opt::NoRequeue,
        flag: true,
    },
    EnvOpt {
        var: "SBATCH_OPEN_MODE",
        id: Opt::OpenMode,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_OUTPUT",
        id: Opt::Output,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_PARTITION",
        id: Opt::Partition,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_REQUEUE",
        id: Opt::Requeue,
        flag: true,
    },
    EnvOpt {
        var: "SBATCH_SIGNAL",
        id: Opt::Signal,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_QOS",
        id: Opt::Qos,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_THREADS_PER_CORE",
        id: Opt::ThreadsPerCore,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_TIMELIMIT",
        id: Opt::Time,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_WCKEY",
        id: Opt::Wckey,
        flag: false,
    },
];

/// The `SBATCH_*` variables of [`catalog`] options (refused or ignored as the options are).
pub const ENV_CATALOG: &[EnvOpt<Opt>] = &[
    EnvOpt {
        var: "SBATCH_ACCTG_FREQ",
        id: Opt::AcctgFreq,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_CPU_FREQ_REQ",
        id: Opt::CpuFreq,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_BATCH",
        id: Opt::Batch,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_CONTAINER",
        id: Opt::Container,
        flag: false,
    },
    other("SBATCH_CORE_SPEC", "core-spec", false),
    other("SBATCH_CPUS_PER_GPU", "cpus-per-gpu", false),
    other("SBATCH_DELAY_BOOT", "delay-boot", false),
    EnvOpt {
        var: "SBATCH_DISTRIBUTION",
        id: Opt::Distribution,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_GET_USER_ENV",
        id: Opt::GetUserEnv,
        flag: false,
    },
    other("SBATCH_GPU_BIND", "gpu-bind", false),
    other("SBATCH_GPU_FREQ", "gpu-freq", false),
    other("SBATCH_GPUS", "gpus", false),
    other("SBATCH_GPUS_PER_NODE", "gpus-per-node", false),
    other("SBATCH_GPUS_PER_TASK", "gpus-per-task", false),
    other("SBATCH_GRES", "gres", false),
    other("SBATCH_GRES_FLAGS", "gres-flags", false),
    EnvOpt {
        var: "SBATCH_HINT",
        id: Opt::Hint,
        flag: false,
    },
    EnvOpt {
        var: "SBATCH_MEM_BIND",
        id: Opt::MemBind,
        flag: false,
    },
    other("SBATCH_MEM_PER_GPU", "mem-per-gpu", false),
    other("SBATCH_NETWORK", "network", false),
    EnvOpt {
        var: "SBATCH_OVERCOMMIT",
        id: Opt::Overcommit,
        flag: true,
    },
    other("SBATCH_POWER", "power", false),
    other("SBATCH_PROFILE", "profile", false),
    other("SBATCH_REQ_SWITCH", "switches", false),
    other("SBATCH_RESERVATION", "reservation", false),
    EnvOpt {
        var: "SBATCH_SPREAD_JOB",
        id: Opt::SpreadJob,
        flag: true,
    },
    other("SBATCH_THREAD_SPEC", "thread-spec", false),
    EnvOpt {
        var: "SBATCH_USE_MIN_NODES",
        id: Opt::UseMinNodes,
        flag: true,
    },
    EnvOpt {
        var: "SBATCH_WAIT_ALL_NODES",
        id: Opt::WaitAllNodes,
        flag: false,
    },
];

/// sbatch's own options set through the environment.
pub const ENV_OWN: &[EnvOpt<SbOpt>] = &[
    EnvOpt {
        var: "SBATCH_IGNORE_PBS",
        id: SbOpt::IgnorePbs,
        flag: true,
    },
    EnvOpt {
        var: "SBATCH_WAIT",
        id: SbOpt::Wait,
        flag: true,
    },
];

const fn other(var: &'static str, long: &'static str, flag: bool) -> EnvOpt<Opt> {
    EnvOpt {
        var,
        id: Opt::Other(long),
        flag,
    }
}

/// Everything sbatch was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SbatchOpts {
    /// The job's options.
    pub job: JobOpts,
    /// `--wrap` command.
    pub wrap: Option<String>,
    /// `--parsable`.
    pub parsable: bool,
    /// `--test-only`.
    pub test_only: bool,
    /// `-W/--wait`: exit when the job ends, with its exit code.
    pub wait: bool,
    /// `--ignore-pbs`.
    pub ignore_pbs: bool,
}

impl SbatchOpts {
    /// Applies one option (help, usage and version are handled by the caller).
    pub fn apply(&mut self, opt: SbOpt, value: Option<String>) -> Result<(), OptError> {
        match opt {
            SbOpt::Job(o) => self.job.apply(o, value)?,
            SbOpt::Wrap => self.wrap = value,
            SbOpt::Parsable => self.parsable = true,
            SbOpt::TestOnly => self.test_only = true,
            SbOpt::Wait => self.wait = true,
            SbOpt::IgnorePbs => self.ignore_pbs = true,
            SbOpt::Help | SbOpt::Usage | SbOpt::Version => {}
        }
        Ok(())
    }

    /// Applies the input environment variables of [`ENV`].
    pub fn apply_env(&mut self, environ: &[(String, String)]) -> Result<(), OptError> {
        for (opt, value) in env_options(ENV, environ) {
            self.job.apply(opt, value)?;
        }
        for (opt, value) in env_options(ENV_CATALOG, environ) {
            self.job.apply(opt, value)?;
        }
        for (opt, value) in env_options(ENV_OWN, environ) {
            self.apply(opt, value)?;
        }
        Ok(())
    }
}

/// What the command line asks for before any script is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    /// Print the help text.
    Help,
    /// Print the usage line.
    Usage,
    /// Print the version.
    Version,
    /// Submit: the options in order, the script file (if any) and its arguments.
    Submit {
        opts: Vec<(SbOpt, Option<String>)>,
        /// The options of the heterogeneous job's further components (`A : B : C`), in order.
        het: Vec<Vec<(SbOpt, Option<String>)>>,
        script: Option<String>,
        script_args: Vec<String>,
    },
}

/// Splits the command line into options, the script file and the script's arguments.
pub fn parse_command_line(args: &[String]) -> Result<CommandLine, GetoptError> {
    let mut comps = Vec::new();
    let mut rest = args.to_vec();
    let operands = loop {
        let parsed = getopt::parse(&table(), &rest, Mode::StopAtOperand)?;
        for (opt, _) in &parsed.opts {
            match opt {
                SbOpt::Help => return Ok(CommandLine::Help),
                SbOpt::Usage => return Ok(CommandLine::Usage),
                SbOpt::Version => return Ok(CommandLine::Version),
                _ => {}
            }
        }
        comps.push(parsed.opts);
        // `A : B`: the options after a lone `:` are the next component's.
        match parsed.operands.split_first() {
            Some((sep, more)) if sep == crate::jobspec::het::SEPARATOR => rest = more.to_vec(),
            _ => break parsed.operands,
        }
    };
    let mut comps = comps.into_iter();
    let mut operands = operands.into_iter();
    Ok(CommandLine::Submit {
        opts: comps.next().unwrap_or_default(),
        het: comps.collect(),
        script: operands.next(),
        script_args: operands.collect(),
    })
}

/// sbatch's usage line.
pub const USAGE: &str = "Usage: sbatch [-N nnodes] [-n ntasks] [-c ncpus] [-p partition]
              [-t minutes] [-J jobname] [-o file] [-e file] [-D path]
              [--mem=MB] [-C list] [-d type:jobid[:time]] [-a array] [-H]
              [--export[=names]] [--parsable] [--test-only] [--wrap=cmd]
              executable [args...]
";

/// sbatch's help text.
pub const HELP: &str = "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]

Parallel run options:
  -a, --array=indexes         job array index values
  -A, --account=name          charge job to specified account
  -b, --begin=time            defer job until HH:MM MM/DD/YY
      --comment=name          arbitrary comment
  -c, --cpus-per-task=ncpus   number of cpus required per task
  -C, --constraint=list       specify a list of constraints
      --contiguous            demand a contiguous range of nodes
      --cluster-constraint=[!]list specify a list of cluster constraints
      --deadline=time         remove the job if no ending is possible before
                              this deadline (start > (deadline - time[-min]))
  -d, --dependency=type:jobid[:time] defer job until condition on jobid is satisfied
  -D, --chdir=directory       set working directory for batch script
  -e, --error=err             file for batch script's standard error
  -x, --exclude=hosts...      exclude a specific list of hosts
      --exclusive             allocate nodes in exclusive mode
      --export[=names]        specify environment variables to export
      --export-file=file|fd   specify environment variables file or file
                              descriptor to export
  -H, --hold                  submit job in held state
      --ignore-pbs            Ignore #PBS and #BSUB options in the batch script
  -i, --input=in              file for batch script's standard input
  -J, --job-name=jobname      name of job
      --kill-on-invalid-dep=<yes|no> kill job if it has an invalid dependency
  -k, --no-kill[=off]         do not kill job on node failure
  -M, --clusters=names        Comma separated list of clusters to issue
                              commands to.
      --mail-type=type        notify on state change: BEGIN, END, FAIL or ALL
      --mail-user=user        who to send email notification for job state
                              changes
      --mem=MB                minimum amount of real memory
      --mem-per-cpu=MB        maximum amount of real memory per allocated
                              cpu required by the job.
                              --mem >= --mem-per-cpu if --mem is specified.
      --mincpus=n             minimum number of logical processors per node
      --nice[=value]          decrease scheduling priority by value
      --priority=value        set the priority of the job to value
      --propagate[=rlimits]   propagate all [or specific list of] rlimits
  -n, --ntasks=ntasks         number of tasks to run
      --no-requeue            if set, do not permit the job to be requeued
  -N, --nodes=N               number of nodes on which to run (N = min[-max])
      --ntasks-per-node=n     number of tasks to invoke on each node
  -w, --nodelist=hosts...     request a specific list of hosts
  -F, --nodefile=filename     request a specific list of hosts
      --open-mode={append|truncate} output and error file open mode
  -o, --output=out            file for batch script's standard output
  -p, --partition=partition   partition requested
      --parsable              outputs only the jobid and cluster name (if present),
                              separated by semicolon, only on successful submission.
      --priority=value        set the priority of the job to value
  -q, --qos=qos               quality of service
  -Q, --quiet                 quiet mode (suppress informational messages)
      --requeue               if set, permit the job to be requeued
  -s, --oversubscribe         over subscribe resources with other jobs
      --signal=[[R][B]:]num[@time] send signal when time limit within time seconds
  -t, --time=minutes          time limit
      --time-min=minutes      minimum time limit (if distinct)
      --tmp=MB                minimum amount of temporary disk
      --test-only             validate job and show when it would start
  -W, --wait                  wait for completion of submitted job
  -v, --verbose               verbose mode (multiple -v's increase verbosity)
      --wckey=wckey           wckey to run job under
      --wrap[=command string] wrap command string in a sh script and submit

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
  -u, --usage                 display brief usage message

Other options:
  -V, --version               output version information and exit
";

#[cfg(test)]
mod tests;
