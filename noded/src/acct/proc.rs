//! Reading `/proc`: a process's `stat` line (group, session, CPU times, page faults, memory)
//! and its `io` counters, and the scan for every process of a set of process groups.

use std::collections::HashSet;
use std::path::Path;

/// What one process's `/proc/<pid>/stat` and `/proc/<pid>/io` say, in the kernel's units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// The process.
    pub pid: i32,
    /// Its parent.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
    /// Its session.
    pub session: i32,
    /// Whether it has exited and waits to be reaped (`Z`): its memory is gone, its times stay.
    pub zombie: bool,
    /// Major page faults, its own and its reaped children's.
    pub majflt: u64,
    /// User time in clock ticks, its own plus its reaped children's (`utime + cutime`).
    pub utime: u64,
    /// System time in clock ticks, its own plus its reaped children's (`stime + cstime`).
    pub stime: u64,
    /// Virtual memory size, bytes.
    pub vsize: u64,
    /// Resident set size, pages.
    pub rss_pages: u64,
    /// Bytes read from storage (`read_bytes`; 0 when `io` is not readable).
    pub read_bytes: u64,
    /// Bytes written to storage (`write_bytes`).
    pub write_bytes: u64,
}

/// Parses a `stat` line; `None` when it is not one. The command name may hold spaces and
/// parentheses, so fields are counted from its last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let (head, tail) = text.trim_end().rsplit_once(')')?;
    let pid = head.split_once('(')?.0.trim().parse().ok()?;
    let f: Vec<&str> = tail.split_whitespace().collect();
    // `f[0]` is field 3 (state) of proc(5).
    let n = |field: usize| -> Option<u64> { f.get(field - 3)?.parse().ok() };
    let i = |field: usize| -> Option<i32> { f.get(field - 3)?.parse().ok() };
    Some(ProcStat {
        pid,
        ppid: i(4)?,
        pgrp: i(5)?,
        session: i(6)?,
        zombie: *f.first()? == "Z",
        majflt: n(12)? + n(13)?,
        utime: n(14)? + n(16)?,
        stime: n(15)? + n(17)?,
        vsize: n(23)?,
        rss_pages: n(24)?,
        read_bytes: 0,
        write_bytes: 0,
    })
}

/// `(read_bytes, write_bytes)` of an `io` file.
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
    };
    Some((field("read_bytes")?, field("write_bytes")?))
}

/// Every process under `proc_root` (normally `/proc`) in one of the process groups `groups`.
/// Processes that end while being read are skipped; `io` is read when this daemon may.
pub fn scan(proc_root: &Path, groups: &HashSet<i32>) -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let base = proc_root.join(pid.to_string());
        let Some(mut stat) = std::fs::read_to_string(base.join("stat"))
            .ok()
            .and_then(|t| parse_stat(&t))
        else {
            continue;
        };
        if !groups.contains(&stat.pgrp) {
            continue;
        }
        if let Some((r, w)) = std::fs::read_to_string(base.join("io"))
            .ok()
            .and_then(|t| parse_io(&t))
        {
            (stat.read_bytes, stat.write_bytes) = (r, w);
        }
        found.push(stat);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "4242 (my (odd) prog) R 4200 4242 4100 0 -1 4194304 99 0 7 2 \
        150 30 20 5 20 0 1 0 403005 3133440 412 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 \
        17 1 0 0 0 0 0\n";
    const IO: &str = "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 8192\n\
        write_bytes: 4096\ncancelled_write_bytes: 0\n";

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let s = parse_stat(STAT).unwrap();
        assert_eq!((s.pid, s.ppid, s.pgrp, s.session), (4242, 4200, 4242, 4100));
        assert!(!s.zombie);
        assert_eq!(s.majflt, 9, "own and children's major faults");
        assert_eq!((s.utime, s.stime), (170, 35), "with the reaped children's");
        assert_eq!((s.vsize, s.rss_pages), (3_133_440, 412));
        assert_eq!(parse_stat("12 (x) Z 1 12 12"), None, "truncated");
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn io_gives_storage_bytes() {
        assert_eq!(parse_io(IO), Some((8192, 4096)));
        assert_eq!(parse_io("rchar: 1\n"), None);
    }

    #[test]
    fn a_scan_finds_the_groups_processes_in_a_proc_tree() {
        let root = tempfile::tempdir().unwrap();
        let write = |pid: &str, stat: &str, io: Option<&str>| {
            let dir = root.path().join(pid);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("stat"), stat).unwrap();
            if let Some(io) = io {
                std::fs::write(dir.join("io"), io).unwrap();
            }
        };
        write("4242", STAT, Some(IO));
        write("4243", &STAT.replacen("4242 (", "4243 (", 1), None);
        write("77", &STAT.replace(" 4242 4100 ", " 77 4100 "), None);
        std::fs::create_dir(root.path().join("self")).unwrap();
        let mut found = scan(root.path(), &HashSet::from([4242]));
        found.sort_by_key(|s| s.pid);
        let pids: Vec<i32> = found.iter().map(|s| s.pid).collect();
        assert_eq!(pids, vec![4242, 4243]);
        assert_eq!((found[0].read_bytes, found[1].read_bytes), (8192, 0));
    }
}
