//! The integration tests of `cli/`, compiled as one binary: each module was once its own
//! test target; the support modules are compiled once and shared.

mod fake;
mod fed_support;
mod sacct_support;
mod smd_support;
mod sreport_support;
mod srun_support;

mod fed_commands;
mod fed_sacct;
mod format_widths;
mod sacct_dbd;
mod sacct_fake;
mod sacctmgr_offline;
mod sbatch_offline;
mod scancel_offline;
mod scontrol_fake;
mod sinfo_fake;
mod smd_auto;
mod smd_fake;
mod squeue_fake;
mod sreport_dbd;
mod sreport_fake;
mod srun_ending;
mod srun_stream;
