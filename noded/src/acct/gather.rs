//! One task's usage over its samples: the largest memory seen, and counters (CPU time, page
//! faults, disk bytes) that keep what ended processes used.
//!
//! A process's counters include its reaped children's (`cutime`, `cmajflt`, the `io` of
//! waited-for children), so a process that disappears while its parent is still one of the
//! task's processes is taken as reaped by that parent and not counted twice; one whose parent
//! is gone (an orphan reaped by init) keeps its last sampled counters. What a process used
//! after its last sample is lost: hence the final sample of the task's top process as a
//! zombie, after it exited and before it is reaped (see [`super::exited`]).

use std::collections::HashMap;

use sluice_vocab::jobacct::TaskUsage;

use super::proc::ProcStat;

/// Cumulative counters of a process (or of processes gone), in kernel units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counters {
    utime: u64,
    stime: u64,
    majflt: u64,
    read: u64,
    write: u64,
}

impl Counters {
    fn of(s: &ProcStat) -> Self {
        Self {
            utime: s.utime,
            stime: s.stime,
            majflt: s.majflt,
            read: s.read_bytes,
            write: s.write_bytes,
        }
    }

    fn add(&mut self, o: &Self) {
        self.utime += o.utime;
        self.stime += o.stime;
        self.majflt += o.majflt;
        self.read += o.read;
        self.write += o.write;
    }
}

/// Unit conversions of this host: clock ticks per second and bytes per page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units {
    /// `sysconf(_SC_CLK_TCK)`.
    pub ticks_per_sec: u64,
    /// `sysconf(_SC_PAGE_SIZE)`.
    pub page_size: u64,
}

impl Units {
    /// This host's units (Linux's usual 100 Hz and 4 KiB when `sysconf` cannot say).
    pub fn host() -> Self {
        use nix::unistd::{SysconfVar, sysconf};
        let get = |var, default: u64| {
            sysconf(var)
                .ok()
                .flatten()
                .and_then(|v| u64::try_from(v).ok())
                .filter(|&v| v > 0)
                .unwrap_or(default)
        };
        Self {
            ticks_per_sec: get(SysconfVar::CLK_TCK, 100),
            page_size: get(SysconfVar::PAGE_SIZE, 4096),
        }
    }
}

/// A task's usage so far.
#[derive(Debug, Clone)]
pub struct TaskGather {
    task: u32,
    node: u32,
    units: Units,
    live: HashMap<i32, (i32, Counters)>,
    gone: Counters,
    max_rss_pages: u64,
    max_vsize: u64,
}

impl TaskGather {
    /// Nothing measured yet for task `task` on the step's node `node`.
    pub fn new(task: u32, node: u32, units: Units) -> Self {
        Self {
            task,
            node,
            units,
            live: HashMap::new(),
            gone: Counters::default(),
            max_rss_pages: 0,
            max_vsize: 0,
        }
    }

    /// Takes in one sample: every process of the task found now.
    pub fn sample(&mut self, procs: &[ProcStat]) {
        let now: HashMap<i32, (i32, Counters)> = procs
            .iter()
            .map(|p| (p.pid, (p.ppid, Counters::of(p))))
            .collect();
        for (pid, (ppid, last)) in &self.live {
            if !now.contains_key(pid) && !now.contains_key(ppid) {
                self.gone.add(last);
            }
        }
        self.live = now;
        let rss: u64 = procs.iter().map(|p| p.rss_pages).sum();
        let vsize: u64 = procs.iter().map(|p| p.vsize).sum();
        self.max_rss_pages = self.max_rss_pages.max(rss);
        self.max_vsize = self.max_vsize.max(vsize);
    }

    /// The task's processes seen at the last sample.
    pub fn pids(&self) -> impl Iterator<Item = i32> + '_ {
        self.live.keys().copied()
    }

    /// The task's usage so far.
    pub fn usage(&self) -> TaskUsage {
        let mut total = self.gone;
        for (_, c) in self.live.values() {
            total.add(c);
        }
        let ms = |ticks: u64| ticks.saturating_mul(1000) / self.units.ticks_per_sec;
        TaskUsage {
            task: self.task,
            node: self.node,
            user_ms: ms(total.utime),
            sys_ms: ms(total.stime),
            rss: self.max_rss_pages.saturating_mul(self.units.page_size),
            vmem: self.max_vsize,
            pages: total.majflt,
            read: total.read,
            write: total.write,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNITS: Units = Units {
        ticks_per_sec: 100,
        page_size: 4096,
    };

    fn proc(pid: i32, ppid: i32, utime: u64, rss_pages: u64) -> ProcStat {
        ProcStat {
            pid,
            ppid,
            pgrp: 10,
            utime,
            stime: 1,
            rss_pages,
            vsize: rss_pages * 8192,
            read_bytes: 100,
            ..Default::default()
        }
    }

    #[test]
    fn memory_is_the_largest_sum_seen_and_cpu_keeps_ended_processes() {
        let mut g = TaskGather::new(3, 1, UNITS);
        // The script (10) runs a child (11) and an orphaned background process (12, parent 1).
        g.sample(&[
            proc(10, 5, 50, 100),
            proc(11, 10, 20, 50),
            proc(12, 1, 30, 10),
        ]);
        // 11 was reaped by 10 (its 20 ticks now in 10's cutime), 12 ended unreaped by us.
        g.sample(&[proc(10, 5, 75, 20)]);
        let u = g.usage();
        assert_eq!((u.task, u.node), (3, 1));
        assert_eq!(
            u.user_ms,
            (75 + 30) * 10,
            "no double count of the reaped child"
        );
        assert_eq!(u.sys_ms, 20, "10's own and 12's banked");
        assert_eq!(u.rss, 160 * 4096);
        assert_eq!(u.vmem, 160 * 8192);
        assert_eq!(u.read, 200);
    }

    #[test]
    fn a_zombie_sample_keeps_the_memory_seen_before() {
        let mut g = TaskGather::new(0, 0, UNITS);
        g.sample(&[proc(10, 5, 1, 300)]);
        g.sample(&[ProcStat {
            zombie: true,
            ..proc(10, 5, 90, 0)
        }]);
        let u = g.usage();
        assert_eq!((u.user_ms, u.rss), (900, 300 * 4096));
        assert_eq!(TaskGather::new(0, 0, UNITS).usage().user_ms, 0);
    }
}
