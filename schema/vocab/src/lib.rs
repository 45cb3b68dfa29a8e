//! Sluice's shared vocabulary.
//!
//! The words every Sluice program uses the same way: typed IDs and the federated job-ID
//! arithmetic, the job, node and federation state tables with Slurm's names, hostlist
//! expressions, the `slurm.conf`-style configuration syntax, the cluster configuration and
//! `nonstop.conf`, and job usage (Slurm's TRES usage maps). The wire protocol is `sluice-wire`; the accounting
//! database schema belongs to `sluice-dbd`.

pub mod acctg_freq;
pub mod assoc_limits;
pub mod auth_conf;
pub mod cluster_conf;
pub mod conf;
pub mod counts;
pub mod cpu_bind;
pub mod cpu_freq;
pub mod distribution;
pub mod fairshare;
pub mod hint;
pub mod hostlist;
pub mod ids;
pub mod jobacct;
pub mod mail_type;
pub mod mem_bind;
pub mod node_states;
pub mod nonstop_conf;
pub mod private_data;
pub mod qos;
pub mod states;

pub use ids::{ClusterId, FedJobId, LocalJobId, NodeIdx};
pub use node_states::{NodeFlags, NodeState};
pub use states::{FedState, JobState};
