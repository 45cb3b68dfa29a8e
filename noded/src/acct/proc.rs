//! Reading `/proc`: a process's `stat` line (group, session, CPU times, page faults, memory)
//! and its `io` counters, and the scan for every process of a set of process groups.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

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

/// How long a process's group learnt from its `stat` is believed without reading it again.
/// Two things could make it wrong: the pid ending and being given to a new process (the kernel
/// would have to hand out every pid up to `pid_max` in that time, 32,768 forks at the least),
/// or the process moving into another group with `setpgid` (only within its session, which a
/// task's programs rarely do, and read again this much later).
pub const GROUP_FRESH: Duration = Duration::from_secs(1);

/// Scans of one `/proc` tree for the processes of given process groups. Every process's
/// `stat` must be read to learn its group, which made each sample read every process of the
/// host (a third of the node daemon's CPU under many short jobs); the scanner remembers the
/// groups it learnt, for all the tasks of the node, so a scan reads `stat` only of the
/// processes in the groups it looks for, of the group leaders themselves, and of the
/// processes it has not read in the last [`GROUP_FRESH`].
#[derive(Debug)]
pub struct Scanner {
    root: PathBuf,
    /// pid -> (process group, when read), for the processes of the last listing.
    groups: Mutex<HashMap<i32, (i32, Instant)>>,
}

impl Scanner {
    /// A scanner of the `/proc` tree at `root`, knowing nothing yet.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            groups: Mutex::new(HashMap::new()),
        }
    }

    /// The scanner of this host's `/proc`, shared by all the tasks of the node.
    pub fn host() -> &'static Scanner {
        static HOST: LazyLock<Scanner> = LazyLock::new(|| Scanner::new("/proc"));
        &HOST
    }

    /// Every process in one of the process groups `groups`, as it is at `now`. Processes
    /// that end while being read are skipped; `io` is read when this daemon may.
    pub fn scan(&self, groups: &HashSet<i32>, now: Instant) -> Vec<ProcStat> {
        let Ok(dir) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut known = self.groups.lock().unwrap_or_else(|p| p.into_inner());
        let mut listed = HashMap::with_capacity(known.len());
        let mut found = Vec::new();
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if let Some(&(pgrp, read)) = known.get(&pid)
                && !groups.contains(&pgrp)
                && !groups.contains(&pid)
                && now.saturating_duration_since(read) < GROUP_FRESH
            {
                listed.insert(pid, (pgrp, read));
                continue;
            }
            let base = self.root.join(pid.to_string());
            let Some(mut stat) = std::fs::read_to_string(base.join("stat"))
                .ok()
                .and_then(|t| parse_stat(&t))
            else {
                continue;
            };
            listed.insert(pid, (stat.pgrp, now));
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
        *known = listed;
        found
    }
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
        let mut found = Scanner::new(root.path()).scan(&HashSet::from([4242]), Instant::now());
        found.sort_by_key(|s| s.pid);
        let pids: Vec<i32> = found.iter().map(|s| s.pid).collect();
        assert_eq!(pids, vec![4242, 4243]);
        assert_eq!((found[0].read_bytes, found[1].read_bytes), (8192, 0));
    }

    #[test]
    fn a_scan_reads_again_only_members_leaders_new_and_stale_processes() {
        let root = tempfile::tempdir().unwrap();
        let write = |pid: i32, pgrp: i32, utime: u64| {
            let dir = root.path().join(pid.to_string());
            std::fs::create_dir_all(&dir).unwrap();
            let stat = format!(
                "{pid} (p) S 1 {pgrp} {pgrp} 0 -1 0 0 0 0 0 {utime} 0 0 0 20 0 1 0 1 4096 1 0"
            );
            std::fs::write(dir.join("stat"), stat).unwrap();
        };
        let pids = |found: Vec<ProcStat>| {
            let mut v: Vec<(i32, u64)> = found.iter().map(|s| (s.pid, s.utime)).collect();
            v.sort_unstable();
            v
        };
        let scanner = Scanner::new(root.path());
        let t0 = Instant::now();
        write(10, 10, 1);
        write(11, 10, 1);
        write(20, 20, 1);
        // 30 is read while its parent has not yet put it in a group of its own.
        write(30, 1, 1);
        assert_eq!(
            pids(scanner.scan(&HashSet::from([10]), t0)),
            [(10, 1), (11, 1)]
        );

        // Members are read at every scan; a group's leader although remembered in another.
        write(11, 10, 7);
        write(30, 30, 2);
        assert_eq!(
            pids(scanner.scan(&HashSet::from([10]), t0)),
            [(10, 1), (11, 7)]
        );
        assert_eq!(pids(scanner.scan(&HashSet::from([30]), t0)), [(30, 2)]);

        // A process remembered outside the group is not read again while its group is fresh...
        write(20, 10, 3);
        let soon = t0 + GROUP_FRESH / 2;
        assert_eq!(
            pids(scanner.scan(&HashSet::from([10]), soon)),
            [(10, 1), (11, 7)]
        );
        // ...and is once it is not.
        let later = t0 + GROUP_FRESH;
        assert_eq!(
            pids(scanner.scan(&HashSet::from([10]), later)),
            [(10, 1), (11, 7), (20, 3)]
        );

        // A pid gone from the listing is forgotten: a new process given it is read at once.
        std::fs::remove_dir_all(root.path().join("20")).unwrap();
        write(40, 40, 1);
        assert_eq!(pids(scanner.scan(&HashSet::from([40]), later)), [(40, 1)]);
        std::fs::remove_dir_all(root.path().join("40")).unwrap();
        assert_eq!(
            pids(scanner.scan(&HashSet::from([10]), later)),
            [(10, 1), (11, 7)]
        );
        write(40, 10, 5);
        assert_eq!(
            pids(scanner.scan(&HashSet::from([10]), later)),
            [(10, 1), (11, 7), (40, 5)]
        );
    }
}
