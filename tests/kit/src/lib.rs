//! What Sluice's tests share.
//!
//! * [`cmd`]: the built command and daemon binaries, run with a bounded wait.
//! * [`site`]: a local site (clusters, a federation) started with the real `sluice up`.
//! * [`dbd`]: a real accounting daemon in process on a fresh SQLite, MariaDB or PostgreSQL
//!   database ([`dbd::TestDbd`]), or only the database ([`dbd::TestDatabase`]).
//! * [`fake`]: fake servers of every service, generated: every method is `Unimplemented` unless
//!   the test overrides it.
//! * [`munged`]: a private MUNGE daemon for `AuthType=auth/munge`.
//! * [`serve`]: runs a fake (or any tonic service) on an ephemeral loopback port.
//! * [`eventually`]: waits for a condition with a bounded number of polls, never a bare sleep.

pub mod cmd;
pub mod dbd;
pub mod fake;
pub mod munged;
pub mod serve;
pub mod site;
pub mod wait;

pub use wait::{eventually, eventually_seen, eventually_within, file_contents, file_gone};
