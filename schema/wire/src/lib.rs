//! Sluice's wire protocol.
//!
//! * [`proto`]: the generated messages and gRPC services, one `.proto` file per service under
//!   `proto/` (all in package `sluice.v1`).
//! * [`auth`]: signed requests (`slurm.key` tokens) and their verification.
//! * [`protocol`]: the protocol version every request carries and every daemon checks.
//! * [`client`]: connecting to a daemon with every request signed.
//! * [`bcast`]: the compression of `srun --bcast` copies (`--compress`).
//! * [`daemon`]: the daemons' shared process start-up (listener, pid and port files, signals,
//!   logging).
//! * [`jobacct`]: the wire form of a step's usage.
//! * [`login_env`]: a user's login environment (`--get-user-env`).
//! * [`rlimits`]: resource limits carried from the submitting host to a job's processes.

pub mod auth;
pub mod bcast;
pub mod client;
pub mod daemon;
pub mod deadline;
pub mod jobacct;
pub mod login_env;
pub mod proto;
pub mod protocol;
pub mod rlimits;
