//! salloc's options: the shared job options plus `-w/--nodelist`, `--ntasks-per-node`,
//! `--signal`, `--no-shell`, `-I/--immediate[=secs]`, `-K/--kill-command[=signal]`,
//! `--bell`/`--no-bell`, and the `SALLOC_*` input environment variables salloc honours.

use crate::getopt::{self, GetoptError, HasArg, Mode, OptSpec};
use crate::jobspec::signals;
use crate::jobspec::{COMMON, EnvOpt, JobOpts, Opt, OptError, catalog, env_options, map_table};

/// A salloc option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaOpt {
    /// A job option shared with sbatch and srun.
    Job(Opt),
    NoShell,
    Immediate,
    KillCommand,
    Bell,
    NoBell,
    Help,
    Usage,
    Version,
}

/// salloc's option table: the implemented job options ([`COMMON`]), salloc's own, and the
/// rest of Slurm 22.05's salloc options from [`catalog`] (refused or ignored as documented
/// there).
pub fn table() -> Vec<OptSpec<SaOpt>> {
    let mut t = map_table(COMMON, SaOpt::Job);
    let others: Vec<_> = catalog::specs(catalog::SALLOC).collect();
    t.extend(map_table(&others, SaOpt::Job));
    let own = |long, short, arg, id| OptSpec {
        long,
        short,
        arg,
        id,
    };
    t.extend([
        own(
            "nodelist",
            Some('w'),
            HasArg::Required,
            SaOpt::Job(Opt::NodeList),
        ),
        own(
            "ntasks-per-node",
            None,
            HasArg::Required,
            SaOpt::Job(Opt::NtasksPerNode),
        ),
        own("signal", None, HasArg::Required, SaOpt::Job(Opt::Signal)),
        own(
            "nodefile",
            Some('F'),
            HasArg::Required,
            SaOpt::Job(Opt::NodeFile),
        ),
        own("qos", Some('q'), HasArg::Required, SaOpt::Job(Opt::Qos)),
        own(
            "get-user-env",
            None,
            HasArg::Optional,
            SaOpt::Job(Opt::GetUserEnv),
        ),
        own(
            "wait-all-nodes",
            None,
            HasArg::Required,
            SaOpt::Job(Opt::WaitAllNodes),
        ),
        own("no-shell", None, HasArg::No, SaOpt::NoShell),
        own("immediate", Some('I'), HasArg::Optional, SaOpt::Immediate),
        own(
            "kill-command",
            Some('K'),
            HasArg::Optional,
            SaOpt::KillCommand,
        ),
        own("bell", None, HasArg::No, SaOpt::Bell),
        own("no-bell", None, HasArg::No, SaOpt::NoBell),
        own("help", Some('h'), HasArg::No, SaOpt::Help),
        own("usage", None, HasArg::No, SaOpt::Usage),
        own("version", Some('V'), HasArg::No, SaOpt::Version),
    ]);
    t
}

/// The input environment variables salloc honours (the command line overrides them).
pub const ENV: &[EnvOpt<SaOpt>] = &[
    env("SALLOC_ACCOUNT", SaOpt::Job(Opt::Account)),
    env("SALLOC_BELL", SaOpt::Bell),
    env("SALLOC_CLUSTERS", SaOpt::Job(Opt::Clusters)),
    env("SLURM_CLUSTERS", SaOpt::Job(Opt::Clusters)),
    env("SALLOC_CONSTRAINT", SaOpt::Job(Opt::Constraint)),
    env("SALLOC_CONTAINER", SaOpt::Job(Opt::Container)),
    env("SALLOC_GET_USER_ENV", SaOpt::Job(Opt::GetUserEnv)),
    env("SALLOC_EXCLUSIVE", SaOpt::Job(Opt::Exclusive)),
    env("SALLOC_IMMEDIATE", SaOpt::Immediate),
    env("SALLOC_KILL_CMD", SaOpt::KillCommand),
    env("SALLOC_MEM_PER_CPU", SaOpt::Job(Opt::MemPerCpu)),
    env("SALLOC_MEM_PER_NODE", SaOpt::Job(Opt::Mem)),
    env("SALLOC_NO_BELL", SaOpt::NoBell),
    EnvOpt {
        var: "SALLOC_OVERCOMMIT",
        id: SaOpt::Job(Opt::Overcommit),
        flag: true,
    },
    env("SALLOC_PARTITION", SaOpt::Job(Opt::Partition)),
    env("SALLOC_SIGNAL", SaOpt::Job(Opt::Signal)),
    EnvOpt {
        var: "SALLOC_SPREAD_JOB",
        id: SaOpt::Job(Opt::SpreadJob),
        flag: true,
    },
    env("SALLOC_TIMELIMIT", SaOpt::Job(Opt::Time)),
    EnvOpt {
        var: "SALLOC_USE_MIN_NODES",
        id: SaOpt::Job(Opt::UseMinNodes),
        flag: true,
    },
    env("SALLOC_WCKEY", SaOpt::Job(Opt::Wckey)),
    // Catalog options (refused or ignored as the options are).
    env("SALLOC_ACCTG_FREQ", SaOpt::Job(Opt::AcctgFreq)),
    env("SALLOC_CPU_FREQ_REQ", SaOpt::Job(Opt::CpuFreq)),
    env("SALLOC_CORE_SPEC", SaOpt::Job(Opt::Other("core-spec"))),
    env(
        "SALLOC_CPUS_PER_GPU",
        SaOpt::Job(Opt::Other("cpus-per-gpu")),
    ),
    env("SALLOC_DELAY_BOOT", SaOpt::Job(Opt::Other("delay-boot"))),
    env("SALLOC_GPU_BIND", SaOpt::Job(Opt::Other("gpu-bind"))),
    env("SALLOC_GPU_FREQ", SaOpt::Job(Opt::Other("gpu-freq"))),
    env("SALLOC_GPUS", SaOpt::Job(Opt::Other("gpus"))),
    env(
        "SALLOC_GPUS_PER_NODE",
        SaOpt::Job(Opt::Other("gpus-per-node")),
    ),
    env(
        "SALLOC_GPUS_PER_TASK",
        SaOpt::Job(Opt::Other("gpus-per-task")),
    ),
    env("SALLOC_GRES", SaOpt::Job(Opt::Other("gres"))),
    env("SALLOC_GRES_FLAGS", SaOpt::Job(Opt::Other("gres-flags"))),
    env("SALLOC_DISTRIBUTION", SaOpt::Job(Opt::Distribution)),
    env("SALLOC_HINT", SaOpt::Job(Opt::Hint)),
    env("SALLOC_MEM_BIND", SaOpt::Job(Opt::MemBind)),
    env("SALLOC_MEM_PER_GPU", SaOpt::Job(Opt::Other("mem-per-gpu"))),
    env("SALLOC_NETWORK", SaOpt::Job(Opt::Other("network"))),
    env("SALLOC_POWER", SaOpt::Job(Opt::Other("power"))),
    env("SALLOC_PROFILE", SaOpt::Job(Opt::Other("profile"))),
    env("SALLOC_QOS", SaOpt::Job(Opt::Qos)),
    env("SALLOC_REQ_SWITCH", SaOpt::Job(Opt::Other("switches"))),
    env("SALLOC_RESERVATION", SaOpt::Job(Opt::Other("reservation"))),
    env("SALLOC_THREAD_SPEC", SaOpt::Job(Opt::Other("thread-spec"))),
    env("SALLOC_THREADS_PER_CORE", SaOpt::Job(Opt::ThreadsPerCore)),
    env("SALLOC_WAIT_ALL_NODES", SaOpt::Job(Opt::WaitAllNodes)),
];

const fn env(var: &'static str, id: SaOpt) -> EnvOpt<SaOpt> {
    EnvOpt {
        var,
        id,
        flag: matches!(id, SaOpt::Bell | SaOpt::NoBell),
    }
}

/// How long `-I/--immediate` lets the allocation wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Immediate {
    /// `-I` without a value: granted at once or not at all.
    Now,
    /// `-I<secs>`: granted within that many seconds.
    Within(u32),
}

/// Everything salloc was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SallocOpts {
    /// The job options.
    pub job: JobOpts,
    /// `--no-shell`: allocate, print the grant and exit, leaving the allocation to run.
    pub no_shell: bool,
    /// `-I/--immediate`.
    pub immediate: Option<Immediate>,
    /// `-K/--kill-command`: the signal sent to the command when the allocation is revoked.
    pub kill_signal: Option<i32>,
    /// `--bell` (ring when the allocation is granted after a wait) or `--no-bell`.
    pub bell: Option<bool>,
    /// The command and its arguments (none: the user's shell).
    pub command: Vec<String>,
    /// A heterogeneous allocation (`salloc A : B`): the job options of the components after
    /// the first, in order.
    pub het: Vec<JobOpts>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    Help,
    Usage,
    Version,
    Run(Box<SallocOpts>),
}

/// Why salloc refuses its arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// Printed as getopt prints it.
    #[error("{0}")]
    Getopt(#[from] GetoptError),
    #[error("{0}")]
    Opt(#[from] OptError),
    #[error("Invalid --immediate value: {0}")]
    Immediate(String),
    #[error("Invalid --kill-command specification: {0}")]
    KillCommand(String),
}

impl SallocOpts {
    fn apply(&mut self, opt: SaOpt, value: Option<String>) -> Result<(), ArgsError> {
        match opt {
            SaOpt::Job(o) => self.job.apply(o, value)?,
            SaOpt::NoShell => self.no_shell = true,
            SaOpt::Immediate => {
                self.immediate = Some(match value.as_deref().map(str::trim) {
                    None | Some("") => Immediate::Now,
                    Some(v) => v
                        .parse()
                        .map(Immediate::Within)
                        .map_err(|_| ArgsError::Immediate(v.to_string()))?,
                });
            }
            SaOpt::KillCommand => {
                // Without a signal: SIGTERM, what Slurm sends a command without a terminal.
                self.kill_signal = Some(match value.as_deref().map(str::trim) {
                    None | Some("") => nix::sys::signal::Signal::SIGTERM as i32,
                    Some(v) => signals::parse(v).ok_or_else(|| ArgsError::KillCommand(v.into()))?,
                });
            }
            SaOpt::Bell => self.bell = Some(true),
            SaOpt::NoBell => self.bell = Some(false),
            SaOpt::Help | SaOpt::Usage | SaOpt::Version => {}
        }
        Ok(())
    }
}

/// Parses salloc's arguments: environment first, then the command line, then the command.
pub fn parse(args: &[String], environ: &[(String, String)]) -> Result<Invocation, ArgsError> {
    // `A : B`: each component's options, then the command.
    let mut comps: Vec<Vec<(SaOpt, Option<String>)>> = Vec::new();
    let mut rest = args.to_vec();
    let operands = loop {
        let parsed = getopt::parse(&table(), &rest, Mode::StopAtOperand)?;
        for (opt, _) in &parsed.opts {
            match opt {
                SaOpt::Help => return Ok(Invocation::Help),
                SaOpt::Usage => return Ok(Invocation::Usage),
                SaOpt::Version => return Ok(Invocation::Version),
                _ => {}
            }
        }
        comps.push(parsed.opts);
        match parsed.operands.split_first() {
            Some((sep, more)) if sep == crate::jobspec::het::SEPARATOR => rest = more.to_vec(),
            _ => break parsed.operands,
        }
    };
    let from_env = env_options(ENV, environ);
    let env_ids: Vec<Opt> = from_env.iter().filter_map(|(o, _)| job_opt(*o)).collect();
    let own: Vec<Vec<(SaOpt, Option<String>)>> = comps
        .iter()
        .map(|c| from_env.iter().cloned().chain(c.iter().cloned()).collect())
        .collect();
    let all = crate::jobspec::het::component_options(&own, |o| job_opt(*o));
    let mut built = Vec::with_capacity(all.len());
    for (k, list) in all.into_iter().enumerate() {
        let mut opts = SallocOpts::default();
        for (opt, value) in list {
            opts.apply(opt, value)?;
        }
        let cli_ids: Vec<Opt> = comps[k].iter().filter_map(|(o, _)| job_opt(*o)).collect();
        opts.job.settle_memory(cli_ids.clone(), env_ids.clone())?;
        opts.job.settle_hint(&cli_ids, false);
        built.push(opts);
    }
    let mut built = built.into_iter();
    let mut opts = built.next().unwrap_or_default();
    opts.het = built.map(|o| o.job).collect();
    opts.command = operands;
    Ok(Invocation::Run(Box::new(opts)))
}

/// The shared job option `o` stands for, if any.
fn job_opt(o: SaOpt) -> Option<Opt> {
    match o {
        SaOpt::Job(j) => Some(j),
        _ => None,
    }
}

/// salloc's usage line.
pub const USAGE: &str = "Usage: salloc [-N numnodes|[min nodes]-[max nodes]] [-n num-processors]
              [-c cpus-per-node] [-p partition] [--hold] [-t minutes]
              [--immediate[=secs]] [-D path] [--oversubscribe] [-J jobname]
              [--verbose] [--clusters=cluster_names] [--mincpus=n] [--mem=MB] [-C list]
              [--account=name] [--dependency=type:jobid[+time]] [--comment=name]
              [--nice[=value]] [--bell] [--no-bell] [--kill-command[=signal]]
              [--nodelist=hosts] [--exclude=hosts] [--no-shell] [--signal=[R:]num[@time]]
              [command [args...]]
";

/// salloc's help text.
pub const HELP: &str = "Usage: salloc [OPTIONS(0)...] [command(0) [args(0)...]]

Parallel run options:
  -A, --account=name          charge job to specified account
  -b, --begin=time            defer job until HH:MM MM/DD/YY
      --bell                  ring the terminal bell when the job is allocated
  -c, --cpus-per-task=ncpus   number of cpus required per task
      --comment=name          arbitrary comment
  -C, --constraint=list       specify a list of constraints
      --contiguous            demand a contiguous range of nodes
  -d, --dependency=type:jobid[:time] defer job until condition on jobid is satisfied
  -D, --chdir=path            change working directory
      --exclusive             allocate nodes in exclusive mode
  -x, --exclude=hosts...      exclude a specific list of hosts
  -H, --hold                  submit job in held state
  -I, --immediate[=secs]      exit if resources not available in \"secs\"
  -J, --job-name=jobname      name of job
  -k, --no-kill[=off]         do not kill job on node failure
  -K, --kill-command[=signal] signal to send terminating job
      --mem=MB                minimum amount of real memory
      --mem-per-cpu=MB        maximum amount of real memory per allocated
                              cpu required by the job.
                              --mem >= --mem-per-cpu if --mem is specified.
      --mincpus=n             minimum number of logical processors per node
      --nice[=value]          decrease scheduling priority by value
      --priority=value        set the priority of the job to value
      --no-bell               do NOT ring the terminal bell
      --no-shell              immediately exit after allocating resources,
                              without running a command
  -n, --ntasks=N              number of processors required
      --ntasks-per-node=n     number of tasks to invoke on each node
  -N, --nodes=N               number of nodes on which to run (N = min[-max])
  -p, --partition=partition   partition requested
  -q, --qos=qos               quality of service
  -Q, --quiet                 quiet mode (suppress informational messages)
  -s, --oversubscribe         oversubscribe resources with other jobs
      --signal=[R:]num[@time] send signal when time limit within time seconds
  -t, --time=minutes          time limit
      --time-min=minutes      minimum time limit (if distinct)
      --tmp=MB                minimum amount of temporary disk
  -v, --verbose               verbose mode (multiple -v's increase verbosity)
      --wckey=wckey           wckey to run job under
  -w, --nodelist=hosts...     request a specific list of hosts

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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn run(args: &str, env: &[(&str, &str)]) -> Result<SallocOpts, ArgsError> {
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
    fn options_stop_at_the_command_and_no_command_is_the_shell() {
        let o = run("-N2 -n 4 -w n[1-2] hostname -n 9", &[]).unwrap();
        assert_eq!(o.job.ntasks, Some(4));
        assert_eq!(o.job.nodelist, vec!["n1", "n2"]);
        assert_eq!(o.command, vec!["hostname", "-n", "9"]);
        assert!(run("-N1", &[]).unwrap().command.is_empty());
    }

    #[test]
    fn salloc_options() {
        let o = run("--no-shell -I -K --bell", &[]).unwrap();
        assert!(o.no_shell);
        assert_eq!(o.immediate, Some(Immediate::Now));
        assert_eq!(o.kill_signal, Some(15));
        assert_eq!(o.bell, Some(true));
        let o = run("--immediate=5 --kill-command=HUP --no-bell true", &[]).unwrap();
        assert_eq!(o.immediate, Some(Immediate::Within(5)));
        assert_eq!(o.kill_signal, Some(1));
        assert_eq!(o.bell, Some(false));
        assert_eq!(run("-K9 true", &[]).unwrap().kill_signal, Some(9));
    }

    #[test]
    fn the_environment_gives_defaults_the_command_line_overrides() {
        let env = [
            ("SALLOC_PARTITION", "big"),
            ("SALLOC_TIMELIMIT", "5"),
            ("SALLOC_IMMEDIATE", "7"),
        ];
        let o = run("true", &env).unwrap();
        assert_eq!(o.job.partition.as_deref(), Some("big"));
        assert_eq!(o.job.time.as_deref(), Some("5"));
        assert_eq!(o.immediate, Some(Immediate::Within(7)));
        assert_eq!(
            run("-p small true", &env).unwrap().job.partition.as_deref(),
            Some("small")
        );
    }

    #[test]
    fn wait_all_nodes_parses_from_the_option_and_the_environment() {
        assert_eq!(
            run("--wait-all-nodes=1 true", &[])
                .unwrap()
                .job
                .wait_all_nodes,
            Some(true)
        );
        let env = [("SALLOC_WAIT_ALL_NODES", "1")];
        let o = run("--wait-all-nodes=0 true", &env).unwrap();
        assert_eq!(o.job.wait_all_nodes, Some(false));
        assert_eq!(run("true", &env).unwrap().job.wait_all_nodes, Some(true));
        assert_eq!(
            run("--wait-all-nodes=x true", &[]).unwrap_err().to_string(),
            "Invalid --wait-all-nodes argument: x"
        );
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        assert_eq!(
            run("-Isoon true", &[]).unwrap_err().to_string(),
            "Invalid --immediate value: soon"
        );
        assert_eq!(
            run("-KNOPE true", &[]).unwrap_err().to_string(),
            "Invalid --kill-command specification: NOPE"
        );
        assert_eq!(
            run("-N 0x true", &[]).unwrap_err().to_string(),
            "\"0x\" is not a valid node count"
        );
        assert_eq!(
            run("--bogus", &[]).unwrap_err().to_string(),
            "unrecognized option '--bogus'"
        );
    }
}
