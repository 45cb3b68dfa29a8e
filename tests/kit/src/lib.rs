//! What Sluice's tests share.
//!
//! * [`fake`]: fake servers of every service, generated: every method is `Unimplemented` unless
//!   the test overrides it.
//! * [`serve`]: runs a fake (or any tonic service) on an ephemeral loopback port.
//! * [`eventually`]: waits for a condition with a bounded number of polls, never a bare sleep.

pub mod fake;
pub mod serve;
pub mod wait;

pub use wait::{eventually, eventually_seen, eventually_within, file_contents, file_gone};
