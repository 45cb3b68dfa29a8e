//! Row types, one file per table, each with the queries that table needs. Query functions take
//! the connection; the rules that combine them live one level up.

pub mod accounts;
pub mod associations;
pub mod bulk;
pub mod clusters;
pub mod cursors;
pub mod fed_events;
pub mod fed_jobs;
pub mod federations;
pub mod job_spans;
pub mod jobs;
pub mod keyed;
pub mod node_events;
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
