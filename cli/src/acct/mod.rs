//! Accounting lines as the commands show them, shared by `sacct` (recorded jobs and steps) and
//! `sstat` (running steps): the `-j job[.step]` selection ([`jobsel`]), a job or step line and
//! its plain values ([`values`]), and the usage fields measured by `jobacct_gather` ([`usage`]).

pub mod jobsel;
pub mod usage;
pub mod values;

use crate::timefmt::Zone;
use values::Line;

/// What a value may depend on besides the line.
#[derive(Debug, Clone, Copy)]
pub struct Cx {
    /// The zone timestamps are shown in.
    pub zone: Zone,
    /// Now, for running jobs' elapsed times.
    pub now: i64,
    /// `--noconvert`: sizes in the unit they are kept in (`2048M`, bytes), not reduced.
    pub noconvert: bool,
}

/// One field.
pub struct Field {
    /// Slurm's name (matched case-insensitively, by prefix).
    pub name: &'static str,
    /// The default width.
    pub width: i32,
    /// The value.
    pub value: fn(&Line, &Cx) -> String,
}
