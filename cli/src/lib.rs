//! Slurm-compatible commands. The `sluice` tool lives apart, in `cli/tool` (`sluice-tool`).
//!
//! * [`slurm_conf`]: finding the cluster's configuration and the accounting daemon (`SLURM_CONF`).
//! * [`output`]: rendering rows as Slurm-style fixed-width columns or parsable text.
//! * [`sacctmgr`]: the accounting manager command.
//! * [`jobspec`]: the job options `sbatch` and `srun` share; [`sbatch`], [`srun`], [`scancel`];
//!   [`sattach`] attaches to a running step.
//! * [`squeue`], [`sinfo`], [`scontrol`], [`sacct`]: the job, node and accounting views;
//!   [`timefmt`]: Slurm's duration and timestamp formats; [`cmdutil`]: what they share.
//! * [`getopt`]: the commands' option parser, a `getopt_long` work-alike with glibc's texts.
//! * [`sreport`]: usage reports over the dbd's rollups.
//! * [`rpc_error`]: Slurm's words for a failed request, for every command.
//! * [`words`], [`prompt`]: interactive lines (split into words, keyword prefixes) and stdin,
//!   for sacctmgr, sreport and scontrol.
//! * [`smd`]: failure management (hot spares, replace/drop/drain nodes, time extension,
//!   events) through libsmd (`sluice-smd`).
//! * [`sprio`], [`sshare`]: job priority factors (controller) and fair share (dbd usage).
//! * [`multicluster`]: `-M` and `--federation`: other clusters' controllers through the dbd.

pub mod acct;
pub mod cmdutil;
pub mod getopt;
pub mod interrupts;
pub mod jobspec;
pub mod multicluster;
pub mod output;
pub mod prompt;
pub mod rpc_error;
pub mod sacct;
pub mod sacctmgr;
pub mod salloc;
pub mod sattach;
pub mod sbatch;
pub mod scancel;
pub mod scontrol;
pub mod sinfo;
pub mod slurm_conf;
pub mod smd;
pub mod sprio;
pub mod squeue;
pub mod sreport;
pub mod srun;
pub mod sshare;
pub mod sstat;
pub mod timefmt;
pub mod timespec;
pub mod words;
