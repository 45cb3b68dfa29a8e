//! `--cpu-bind`: a task starts bound to its CPUs. A child inherits the CPU affinity of the
//! thread that creates it, so the spawning thread narrows its own affinity to the task's CPUs,
//! spawns, and widens it back: the task is bound before its first instruction, without code
//! between fork and exec.

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

/// The CPUs this thread may run on (the daemon's own), ascending; empty when unknown.
pub fn available_cpus() -> Vec<u32> {
    let Ok(set) = sched_getaffinity(Pid::from_raw(0)) else {
        return Vec::new();
    };
    (0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .filter_map(|c| u32::try_from(c).ok())
        .collect()
}

/// Spawns `cmd` bound to `cpus` (`None`: with the daemon's affinity).
pub fn spawn_bound(cmd: &mut Command, cpus: Option<&[u32]>) -> std::io::Result<Child> {
    let Some(cpus) = cpus else {
        return cmd.spawn();
    };
    let here = Pid::from_raw(0);
    let saved = sched_getaffinity(here).map_err(std::io::Error::from)?;
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c as usize).map_err(std::io::Error::from)?;
    }
    sched_setaffinity(here, &set).map_err(std::io::Error::from)?;
    let spawned = cmd.spawn();
    if let Err(e) = sched_setaffinity(here, &saved) {
        tracing::error!("cannot restore the daemon thread's CPU affinity: {e}");
    }
    spawned
}
