//! The accounting daemon: owns clusters, federations, accounts, users and associations, hands
//! out job-id leases, and (in later issues) arbitrates federated jobs and keeps job history.
//!
//! * [`config`]: reading `slurmdbd.conf`.
//! * [`store`]: the diesel storage layer over SQLite, MariaDB/MySQL and PostgreSQL.
//! * [`service`]: the gRPC service; it only decodes, checks permissions, calls the store, encodes.
//! * [`daemon`]: binding, serving, logging and graceful shutdown.

pub mod config;
pub mod daemon;
pub mod db;
pub mod service;
pub mod store;
