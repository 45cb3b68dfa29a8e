//! Sluice's wire protocol.
//!
//! * [`proto`]: the generated messages and gRPC services, one `.proto` file per service under
//!   `proto/` (all in package `sluice.v1`).
//! * [`auth`]: signed requests (`slurm.key` tokens) and their verification.
//! * [`client`]: connecting to a daemon with every request signed.
//! * [`jobacct`]: the wire form of a step's usage.

pub mod auth;
pub mod client;
pub mod jobacct;
pub mod proto;
