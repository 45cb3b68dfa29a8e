//! The `SLURM_*` input environment variables srun honours, each as the option it stands for
//! (the command line wins over them).

use super::args::SrOpt;
use crate::jobspec::{EnvOpt, Opt};

/// The input environment variables srun honours.
pub const ENV: &[EnvOpt<SrOpt>] = &[
    EnvOpt {
        var: "SLURM_ACCOUNT",
        id: SrOpt::Job(Opt::Account),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_CLUSTERS",
        id: SrOpt::Job(Opt::Clusters),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_QOS",
        id: SrOpt::Job(Opt::Qos),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_CONSTRAINT",
        id: SrOpt::Job(Opt::Constraint),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_COMPRESS",
        id: SrOpt::Compress,
        flag: false,
    },
    EnvOpt {
        var: "SLURM_CONTAINER",
        id: SrOpt::Job(Opt::Container),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_CPU_BIND",
        id: SrOpt::CpuBind,
        flag: false,
    },
    EnvOpt {
        var: "SLURM_ACCTG_FREQ",
        id: SrOpt::Job(Opt::AcctgFreq),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_CPU_FREQ_REQ",
        id: SrOpt::Job(Opt::CpuFreq),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_MEM_BIND",
        id: SrOpt::Job(Opt::MemBind),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_HINT",
        id: SrOpt::Job(Opt::Hint),
        flag: false,
    },
    EnvOpt {
        var: "SRUN_CPUS_PER_TASK",
        id: SrOpt::Job(Opt::CpusPerTask),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_DEPENDENCY",
        id: SrOpt::Job(Opt::Dependency),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_DISABLE_STATUS",
        id: SrOpt::DisableStatus,
        flag: true,
    },
    EnvOpt {
        var: "SLURM_EXCLUSIVE",
        id: SrOpt::Job(Opt::Exclusive),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_EXPORT_ENV",
        id: SrOpt::Job(Opt::Export),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_JOB_NAME",
        id: SrOpt::Job(Opt::JobName),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_LABELIO",
        id: SrOpt::Label,
        flag: true,
    },
    EnvOpt {
        var: "SLURM_MEM_PER_CPU",
        id: SrOpt::Job(Opt::MemPerCpu),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_MEM_PER_NODE",
        id: SrOpt::Job(Opt::Mem),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_NNODES",
        id: SrOpt::Job(Opt::Nodes),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_NPROCS",
        id: SrOpt::Job(Opt::Ntasks),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_NTASKS",
        id: SrOpt::Job(Opt::Ntasks),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_MPI_TYPE",
        id: SrOpt::Mpi,
        flag: false,
    },
    EnvOpt {
        var: "SLURM_NTASKS_PER_NODE",
        id: SrOpt::Job(Opt::NtasksPerNode),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_OPEN_MODE",
        id: SrOpt::Job(Opt::OpenMode),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_OVERLAP",
        id: SrOpt::Overlap,
        flag: true,
    },
    EnvOpt {
        var: "SLURM_PARTITION",
        id: SrOpt::Job(Opt::Partition),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_STDERRMODE",
        id: SrOpt::Error,
        flag: false,
    },
    EnvOpt {
        var: "SLURM_STDINMODE",
        id: SrOpt::Input,
        flag: false,
    },
    EnvOpt {
        var: "SLURM_STDOUTMODE",
        id: SrOpt::Output,
        flag: false,
    },
    EnvOpt {
        var: "SLURM_OVERCOMMIT",
        id: SrOpt::Job(Opt::Overcommit),
        flag: true,
    },
    EnvOpt {
        var: "SLURM_SPREAD_JOB",
        id: SrOpt::Job(Opt::SpreadJob),
        flag: true,
    },
    EnvOpt {
        var: "SLURM_USE_MIN_NODES",
        id: SrOpt::Job(Opt::UseMinNodes),
        flag: true,
    },
    EnvOpt {
        var: "SLURM_TIMELIMIT",
        id: SrOpt::Job(Opt::Time),
        flag: false,
    },
    EnvOpt {
        var: "SLURM_UNBUFFEREDIO",
        id: SrOpt::Unbuffered,
        flag: true,
    },
    EnvOpt {
        var: "SLURM_WORKING_DIR",
        id: SrOpt::Job(Opt::Chdir),
        flag: false,
    },
    // GRES requests (refused: no GRES here). Sluice never sets these in a job's environment,
    // so an srun inside a job does not meet them by accident.
    other("SLURM_CPUS_PER_GPU", "cpus-per-gpu"),
    other("SLURM_GPUS", "gpus"),
    other("SLURM_GPUS_PER_NODE", "gpus-per-node"),
    other("SLURM_GPUS_PER_TASK", "gpus-per-task"),
    other("SLURM_GRES", "gres"),
    other("SLURM_MEM_PER_GPU", "mem-per-gpu"),
];

const fn other(var: &'static str, long: &'static str) -> EnvOpt<SrOpt> {
    EnvOpt {
        var,
        id: SrOpt::Job(Opt::Other(long)),
        flag: false,
    }
}
