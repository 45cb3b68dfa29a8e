//! srun's `--help`, `--usage`, `--cpu-bind=help` and `--mpi=list` texts.

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
