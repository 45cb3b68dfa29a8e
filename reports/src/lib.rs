//! sreport computations and usage rollups, pure functions over usage data.
//!
//! The accounting daemon stores job runs, node events and cluster capacity; this crate turns
//! them into usage the way Slurm's rollups do, without touching a database or a clock:
//!
//! * [`calendar`]: hour, day and month boundaries in the daemon's time zone;
//! * [`tres`]: the tracked resources (cpu, mem, node) and their counts;
//! * [`usage`]: seconds of each kind (allocated, down, idle...) and how an hour's settle;
//! * [`rollup`]: one hour of one cluster (allocated, down, planned down, idle, planned,
//!   overcommitted, reported) and its per-association allocation, with Slurm's rules;
//! * [`period`]: summing hours into days and days into months, and which days and months a
//!   rolled range closes;
//! * [`table`]: which rollup table a report window reads (Slurm's rule);
//! * [`sizes`]: job-size buckets for `sreport job SizesByAccount`;
//! * [`tree`]: account sub-tree totals for `sreport cluster AccountUtilizationByUser`;
//! * [`purge`]: the `Purge*After` settings and the cut-off times they give.

pub mod calendar;
pub mod period;
pub mod purge;
pub mod rollup;
pub mod sizes;
pub mod table;
pub mod tree;
pub mod tres;
pub mod usage;

pub use calendar::Calendar;
pub use rollup::{Capacity, HourRollup, JobUse, NodeDown, Span, UsageSecs, roll_hour};
pub use table::Period;
pub use tres::{Tres, TresCounts};
