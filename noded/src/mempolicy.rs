//! `--mem-bind`: a task starts with its NUMA memory policy. A child inherits the memory
//! policy of the thread that forks it (and keeps it across `exec`), so, as with CPU affinity
//! ([`crate::affinity`]), the spawning thread sets the task's policy on itself, spawns, and
//! sets its own back.
//!
//! `set_mempolicy`/`get_mempolicy` have no wrapper in nix: this module holds the two raw
//! system calls, one unsafe block each, over buffers it owns.
#![allow(unsafe_code)]

use std::path::Path;

use nix::libc;
use tokio::process::{Child, Command};

/// Bits of a node mask this daemon reads and writes (1024 NUMA nodes, as the kernel's
/// default `MAX_NUMNODES` allows at most).
const MASK_BITS: usize = 1024;
const WORD_BITS: usize = u64::BITS as usize;

/// The NUMA nodes of this machine with their CPUs (ascending), from
/// `/sys/devices/system/node` under `root`; a machine without that directory is one node 0
/// with every CPU in `cpus`.
pub fn numa_nodes(root: &Path, cpus: &[u32]) -> Vec<(u32, Vec<u32>)> {
    let dir = root.join("sys/devices/system/node");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![(0, cpus.to_vec())];
    };
    let mut nodes: Vec<(u32, Vec<u32>)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_prefix("node")?.parse::<u32>().ok()?;
            let list = std::fs::read_to_string(e.path().join("cpulist")).unwrap_or_default();
            Some((id, cpu_list(list.trim())))
        })
        .collect();
    nodes.sort();
    if nodes.is_empty() {
        vec![(0, cpus.to_vec())]
    } else {
        nodes
    }
}

/// `0-3,8,10-11` as CPU ids (bad parts are skipped).
fn cpu_list(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(lo), Ok(hi)) = (lo.parse::<u32>(), hi.parse::<u32>()) {
            out.extend(lo..=hi);
        }
    }
    out
}

/// A memory policy: the kernel's mode and its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `MPOL_*`.
    pub mode: i32,
    /// NUMA node ids.
    pub nodes: Vec<u32>,
}

fn mask_of(nodes: &[u32]) -> [u64; MASK_BITS / WORD_BITS] {
    let mut mask = [0u64; MASK_BITS / WORD_BITS];
    for &n in nodes {
        let n = n as usize;
        if n < MASK_BITS {
            mask[n / WORD_BITS] |= 1 << (n % WORD_BITS);
        }
    }
    mask
}

fn set(policy: &Policy) -> std::io::Result<()> {
    let mask = mask_of(&policy.nodes);
    let (ptr, maxnode) = if policy.nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), MASK_BITS as libc::c_ulong)
    };
    // SAFETY: `mask` outlives the call and holds `maxnode` bits; the kernel only reads it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            libc::c_long::from(policy.mode),
            ptr,
            maxnode,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// This thread's policy.
fn get() -> std::io::Result<Policy> {
    let mut mode: libc::c_int = 0;
    let mut mask = [0u64; MASK_BITS / WORD_BITS];
    // SAFETY: `mode` and `mask` are live and writable for the call, `mask` of `MASK_BITS`
    // bits as passed; address 0 and flags 0 ask for the thread's own policy.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            std::ptr::from_mut(&mut mode),
            mask.as_mut_ptr(),
            MASK_BITS as libc::c_ulong,
            0usize,
            0usize,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let nodes = (0..MASK_BITS)
        .filter(|n| mask[n / WORD_BITS] & (1 << (n % WORD_BITS)) != 0)
        .filter_map(|n| u32::try_from(n).ok())
        .collect();
    Ok(Policy { mode, nodes })
}

/// Spawns `cmd` (through `spawn`, which may bind its CPUs too) with memory `policy` (`None`:
/// the daemon's own).
pub fn spawn_with(
    cmd: &mut Command,
    policy: Option<&Policy>,
    spawn: impl FnOnce(&mut Command) -> std::io::Result<Child>,
) -> std::io::Result<Child> {
    let Some(policy) = policy else {
        return spawn(cmd);
    };
    let saved = get()?;
    set(policy)?;
    let spawned = spawn(cmd);
    // A default policy reads back with an empty mask, which is how it is set again.
    if let Err(e) = set(&saved) {
        tracing::error!("cannot restore the daemon thread's memory policy: {e}");
    }
    spawned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_a_machine_without_numa_directories() {
        assert_eq!(cpu_list("0-2,5,7-8"), vec![0, 1, 2, 5, 7, 8]);
        assert_eq!(cpu_list(""), Vec::<u32>::new());
        let none = tempfile::tempdir().unwrap();
        assert_eq!(numa_nodes(none.path(), &[0, 1]), vec![(0, vec![0, 1])]);
        let dir = none.path().join("sys/devices/system/node");
        for (n, cpus) in [("node1", "2-3"), ("node0", "0-1")] {
            std::fs::create_dir_all(dir.join(n)).unwrap();
            std::fs::write(dir.join(n).join("cpulist"), format!("{cpus}\n")).unwrap();
        }
        std::fs::create_dir_all(dir.join("power")).unwrap();
        assert_eq!(
            numa_nodes(none.path(), &[]),
            vec![(0, vec![0, 1]), (1, vec![2, 3])]
        );
    }

    /// The thread's policy is set for the spawn and is the daemon's again after it.
    #[test]
    fn the_spawning_thread_gets_its_policy_back() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let before = get().unwrap();
            let mut cmd = Command::new("true");
            let policy = Policy {
                mode: sluice_vocab::mem_bind::MPOL_BIND,
                nodes: vec![0],
            };
            let seen = std::cell::Cell::new(None);
            let child = spawn_with(&mut cmd, Some(&policy), |c| {
                seen.set(get().ok());
                c.spawn()
            });
            assert!(child.is_ok());
            assert_eq!(seen.take(), Some(policy));
            assert_eq!(get().unwrap(), before);
        });
    }
}
