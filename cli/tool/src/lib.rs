//! The `sluice` tool, apart from the Slurm commands it starts and measures.
//!
//! * [`up`]: `sluice up` / `sluice down`, a local federation in one command.
//! * [`bench`]: `sluice bench`, the speed targets measured on real daemons (it runs the command
//!   binaries, as a user would).
//! * [`soak`]: `sluice soak`, the fault suite: jobs with known outcomes under injected faults.
//! * [`swf`]: `sluice import swf` / `sluice gen swf`, Standard Workload Format traces.
//!
//! From `sluice-cli` it takes only what every Slurm-facing program shares: finding
//! `slurm.conf` and the daemons ([`sluice_cli::slurm_conf`]), Slurm's time words
//! ([`sluice_cli::timefmt`], [`sluice_cli::timespec`]) and the clock ([`sluice_cli::cmdutil::now`]).

pub mod bench;
pub mod soak;
pub mod swf;
pub mod up;
