//! The integration tests of `tests/`, compiled as one binary: each module was once its own
//! test target; the support modules are compiled once and shared.

mod common;

mod cluster_batch;
mod cluster_control;
mod cluster_durability;
mod cluster_sched;
mod cluster_srun;
mod cluster_sstat;
mod cluster_stale_reports;
mod cluster_steps;
mod cluster_up;
mod cluster_usage;
mod dbd_daemon;
mod fed_cancel;
mod fed_faults;
mod fed_many;
mod fed_propagation;
mod fed_routing;
mod fed_submit;
mod fed_views;
mod gang_e2e;
mod gang_examples_e2e;
mod message_timeout;
mod node_restart_exit_codes;
mod nonstop_e2e;
mod oversubscribe_e2e;
mod partition_update_e2e;
mod power_e2e;
mod power_srun_e2e;
mod private_access;
mod private_state;
mod prolog_e2e;
mod reconfigure_e2e;
mod sacctmgr_accounts_users;
mod sacctmgr_clusters;
mod sacctmgr_federations;
mod salloc_e2e;
mod sbatch_options_e2e;
mod slurm_differences;
mod srun_bind_e2e;
mod srun_io_e2e;
mod state_lock;
mod up_dbd_only;
mod user_credentials;
