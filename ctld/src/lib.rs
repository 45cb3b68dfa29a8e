//! The Sluice cluster controller.
//!
//! - [`conf`]: the cluster's `slurm.conf` (nodes, partitions, controller keys, time formats),
//!   read by `sluice_vocab::cluster_conf` so node daemons and commands share it.
//! - [`core`]: the pure controller core: node, partition and job managers and the scheduler,
//!   driven by handler functions in simulated time, talking to the world through an
//!   [`core::Outbox`]. No sockets, no clock, no locks.
//! - [`error`]: the crate's error type, with Slurm's error texts.
//! - [`store`]: the durable state under `StateSaveLocation` (jobs, nodes, id source and the
//!   accounting outbox, in one SQLite file); [`shipper`]: the task sending the outbox to the dbd.
//! - [`runtime`]: the thread owning the core, its group commit, node commands, job-id leases;
//!   [`fed_client`]: the federation client (registration, the dbd's event log, the start lock);
//!   [`service`]: the `Controller` gRPC service over it.
//! - [`testkit`]: builders for scenario tests and benchmarks.

pub use sluice_vocab::cluster_conf as conf;
pub mod core;
pub mod error;
pub mod fed_client;
pub mod runtime;
pub mod service;
pub mod shipper;
pub mod store;
pub mod testkit;

pub use error::CtldError;
