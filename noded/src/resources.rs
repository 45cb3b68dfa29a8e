//! What the operating system says about this host: CPUs, memory, boot time and name.
//! Read from `/proc` and `/sys`, as Slurm's `slurmd -C` does.

use std::io;

/// The host's online CPUs (`/sys/devices/system/cpu/online`), else the CPUs this process may
/// use; at least 1.
pub fn os_cpus() -> u32 {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| count_cpu_list(s.trim()))
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .and_then(|n| u32::try_from(n.get()).ok())
        })
        .unwrap_or(1)
        .max(1)
}

/// Counts the CPUs of a kernel CPU list such as `0-3,8,10-11`; `None` when malformed.
pub fn count_cpu_list(list: &str) -> Option<u32> {
    let mut total = 0u32;
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let n = match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)?.checked_add(1)?
            }
            None => {
                part.parse::<u32>().ok()?;
                1
            }
        };
        total = total.checked_add(n)?;
    }
    (total > 0).then_some(total)
}

/// Total memory in MB (`MemTotal` of `/proc/meminfo`).
pub fn os_memory_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_total_mb(&text)
}

/// `MemTotal` of a `/proc/meminfo` text, in MB.
pub fn mem_total_mb(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// When the host booted, in unix seconds (`btime` of `/proc/stat`); 0 when unknown.
pub fn boot_time() -> i64 {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("btime "))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// This host's name up to its first dot, as Slurm names nodes by default.
pub fn short_hostname() -> io::Result<String> {
    let full = std::fs::read_to_string("/proc/sys/kernel/hostname")?;
    let short = full
        .trim()
        .split('.')
        .next()
        .unwrap_or_default()
        .to_string();
    if short.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "empty host name"));
    }
    Ok(short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_count_ranges_and_singles() {
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
        assert_eq!(count_cpu_list(""), None);
    }

    #[test]
    fn meminfo_gives_megabytes() {
        let text = "MemFree:  100 kB\nMemTotal:       16384000 kB\n";
        assert_eq!(mem_total_mb(text), Some(16000));
        assert_eq!(mem_total_mb("nothing"), None);
    }

    #[test]
    fn this_host_has_a_boot_time_and_a_name() {
        assert!(boot_time() > 0);
        assert!(!short_hostname().unwrap().contains('.'));
        assert!(os_cpus() >= 1);
    }
}
