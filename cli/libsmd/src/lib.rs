//! libsmd: the client of Sluice's failure management (Slurm's smd library), for a running job
//! whose nodes fail: which of its nodes failed or are failing, replace one by a hot spare, drop
//! one, drain one, extend the time limit, and follow the job's node events as they happen.
//!
//! * [`endpoint`]: where the controller's `Nonstop` service is (slurm.conf, or nonstop.conf's
//!   `ControlAddr`/`BackupAddr`:`Port`) and how long a request may wait (`MessageTimeout`).
//! * [`model`]: the allocation, its nodes and the events, as plain Rust types.
//! * [`client`]: [`Client`], the blocking API every caller uses (the `smd` command too).
//! * [`error`]: [`SmdError`] and the stable numeric codes of the C ABI.
//! * [`ffi`]: the C ABI (`include/smd.h`): an opaque handle, `smd_*` functions, error codes,
//!   `smd_strerror`, and free functions for what it returns. The only module with unsafe code.
//!
//! The library is under the workspace's licence (Apache-2.0): a program links it without taking
//! on a copyleft licence.

#![deny(unsafe_code)]

pub mod client;
pub mod endpoint;
pub mod error;
pub mod ffi;
pub mod model;

pub use client::{Client, Subscription};
pub use endpoint::Endpoint;
pub use error::{ErrorCode, SmdError};
pub use model::{Allocation, Event, EventKind, Node, NodeState};
