//! Sluice's shared vocabulary.
//!
//! Everything two Sluice programs must agree on lives here: typed IDs and the federated job-ID
//! arithmetic, the job and federation state tables with Slurm's names, hostlist expressions,
//! the `slurm.conf`-style configuration syntax, request authentication, the protobuf wire
//! schema and the accounting database schema with its migrations.

pub mod auth;
pub mod client;
pub mod cluster_conf;
pub mod conf;
pub mod db;
pub mod hostlist;
pub mod ids;
pub mod jobacct;
pub mod node_states;
pub mod proto;
pub mod states;

pub use ids::{ClusterId, FedJobId, LocalJobId, NodeIdx};
pub use node_states::{NodeFlags, NodeState};
pub use states::{FedState, JobState};
