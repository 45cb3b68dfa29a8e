//! The generated protobuf types and gRPC stubs (`proto/*.proto`, one file per service, package `sluice.v1`).
//!
//! Generated code stays behind this module; the daemons convert to domain types at their edge.

#![allow(missing_docs, clippy::all, clippy::pedantic)]

tonic::include_proto!("sluice.v1");

/// The default port of `sluice-dbd` (Slurm's `DbdPort` default).
pub const DEFAULT_DBD_PORT: u16 = 6819;
