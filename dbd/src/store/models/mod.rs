//! Row types, one file per table, each with the queries that table needs. Query functions take
//! the connection; the rules that combine them live one level up.
//!
//! Lookups by key end in `.get_result(conn)`, not diesel's `.first(conn)`: `first` adds
//! `LIMIT ?`, and SQLite marks a statement whose LIMIT is a bound parameter to be prepared
//! again whenever that parameter is bound, so a cached statement was parsed and planned anew
//! at every run (a sixth of the dbd's CPU under federated submissions). A key matches at most
//! one row, so the limit added nothing. Pages keep their limit where the backend needs it
//! (see [`fed_events::after`]).

pub mod accounts;
pub mod assoc_limits;
pub mod associations;
pub mod bulk;
pub mod cached;
pub mod clusters;
pub mod coordinators;
pub mod cursors;
pub mod fed_events;
pub mod fed_jobs;
pub mod federations;
pub mod job_het;
pub mod job_resizes;
pub mod job_spans;
pub mod job_wckeys;
pub mod jobs;
pub mod keyed;
pub mod node_events;
pub mod qos;
pub mod record_cursors;
pub mod steps;
pub mod users;

/// A stored integer as `u32`; a negative value (never written by us) reads as 0.
pub(crate) fn to_u32(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// A `u32` for an INTEGER column; values above `i32::MAX` are clamped (ports, versions and
/// fed states are far below it).
pub(crate) fn to_i32(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// A stored BIGINT holding a `u32`; out-of-range values (never written by us) read as 0.
pub(crate) fn u32_of(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// A `u64` for a BIGINT column, clamped at `i64::MAX`.
pub(crate) fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
